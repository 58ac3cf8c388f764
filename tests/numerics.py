"""The error measure every test uses: shared by the pytest suite (conftest) and the
scripts ``tests/test_mpi.py`` runs under ``mpirun`` (mpi_scripts/_common)."""
import numpy as np


def rel_err(got, want) -> float:
    """Relative L2 error of ``got`` against ``want``, in complex128 (absolute if ``want`` is 0)."""
    got = np.asarray(got, dtype=np.complex128)
    want = np.asarray(want, dtype=np.complex128)
    assert got.shape == want.shape, (got.shape, want.shape)
    scale = np.linalg.norm(want)
    return float(np.linalg.norm(got - want) / (scale if scale else 1.0))
