"""The MPI transport's environment checks. Usage: ``mpirun -n 1 python env_checks.py``.

Run with ``XLA_FLAGS=--xla_force_host_platform_device_count=2`` so that the
local-device check has something to refuse; every other check raises before it.
"""
import os
import warnings

import mpi4py

mpi4py.rc.initialize = False                  # the "MPI not initialised" check first

from mpi4py import MPI  # noqa: E402

import jax  # noqa: E402

import pfft.mpi  # noqa: E402
from pfft.mpi import checks  # noqa: E402


def raises(kind, fragment, fn, *args, **kwargs):
    try:
        fn(*args, **kwargs)
    except kind as err:
        assert fragment in str(err), f"{kind.__name__} without {fragment!r}: {err}"
        print(f"ok: {kind.__name__}: {str(err)[:100]}")
        return
    raise AssertionError(f"{fn.__name__}{args} did not raise {kind.__name__}")


def main():
    raises(RuntimeError, "MPI is not initialised", pfft.mpi.ProcessGrid, MPI.COMM_WORLD)
    MPI.Init()
    comm = MPI.COMM_WORLD
    assert comm.Get_size() == 1, "run env_checks.py on one rank"
    raises(ValueError, "make 4 ranks, but the communicator has 1", pfft.mpi.ProcessGrid, comm,
           (2, 2))
    raises(ValueError, "one (slab) or two (pencil) sizes", pfft.mpi.ProcessGrid, comm, (1, 1, 1))
    raises(TypeError, "intracommunicator", pfft.mpi.ProcessGrid, "COMM_WORLD")

    # more than one local device: an error naming the fix
    assert len(jax.local_devices()) == 2, jax.local_devices()
    raises(RuntimeError, "sees 2 local JAX devices", pfft.mpi.ProcessGrid, comm)
    raises(RuntimeError, "one device per rank", checks.check_local_devices)
    checks.check_local_devices(jax.local_devices()[:1])          # one device: fine

    # GPU runs: staging through the host, or a CUDA flag over an MPI that is not CUDA-aware
    assert checks.cuda_mpi_problem("cpu", "", False) is None
    assert "host" in checks.cuda_mpi_problem("gpu", "", False)
    assert "not CUDA-aware" in checks.cuda_mpi_problem("cuda", "", False)
    assert checks.cuda_mpi_problem("gpu", "0", False) is None    # staging chosen explicitly
    assert "reports no CUDA support" in checks.cuda_mpi_problem("gpu", "1", False)
    assert checks.cuda_mpi_problem("gpu", "1", True) is None
    assert checks.cuda_mpi_problem("gpu", "1", None) is None     # cannot tell: trust the user
    # this MPI (the mpich wheel) answers MPIX_Query_cuda_support: not CUDA-aware
    assert checks.mpi_cuda_support() is False, checks.mpi_cuda_support()
    # on a (pretended) GPU backend, check_cuda_mpi warns
    real_backend = jax.default_backend
    try:
        jax.default_backend = lambda: "gpu"
        for value, expect in (("", "host"), ("1", "reports no CUDA support")):
            os.environ["MPI4JAX_USE_CUDA_MPI"] = value
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                checks.check_cuda_mpi()
            assert len(caught) == 1 and caught[0].category is pfft.mpi.MPITransportWarning, caught
            assert expect in str(caught[0].message), caught[0].message
            print(f"ok: warning with MPI4JAX_USE_CUDA_MPI={value!r}")
        os.environ["MPI4JAX_USE_CUDA_MPI"] = "0"
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            checks.check_cuda_mpi()
    finally:
        jax.default_backend = real_backend
        os.environ.pop("MPI4JAX_USE_CUDA_MPI", None)
    print("PFFT_MPI_OK checks on 1 ranks", flush=True)


if __name__ == "__main__":
    main()
