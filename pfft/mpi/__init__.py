"""pfft over MPI: one process per device, local blocks in and out.

The same planner, executor and local FFT engines as :func:`pfft.plan`; only the data
movement differs: ``mpi4jax.alltoall`` on the sub-communicators of a Cartesian
communicator instead of ``jax.lax.all_to_all`` inside ``shard_map``.

>>> from mpi4py import MPI                                        # doctest: +SKIP
>>> import jax, pfft.mpi                                          # doctest: +SKIP
>>> grid = pfft.mpi.ProcessGrid(MPI.COMM_WORLD)                   # doctest: +SKIP
>>> plan = pfft.mpi.plan((256, 256, 256), "complex64", grid)      # doctest: +SKIP
>>> k = jax.jit(plan.forward)(plan.zeros_input())                 # doctest: +SKIP

Needs ``mpi4py`` and ``mpi4jax``: ``pip install "pfft[mpi]"``, then
``pip install --no-build-isolation mpi4jax`` (``docs/mpi.md#install``).
"""
import importlib.util as _util

_missing = [m for m in ("mpi4py", "mpi4jax") if _util.find_spec(m) is None]
if _missing:
    # the one place the commands are explained is docs/mpi.md#install
    raise ImportError(
        f"pfft.mpi needs {' and '.join(_missing)}. Install with:\n"
        '    pip install "pfft[mpi]"\n'
        "    pip install --no-build-isolation mpi4jax\n"
        "(the second builds mpi4jax against mpi4py's MPI, so the first must come first; "
        "where CUDA is installed run it as `CUDA_PATH=/usr/local/cuda pip install "
        "--no-build-isolation mpi4jax`; see docs/mpi.md#install)")

from .checks import (MPITransportWarning, check_cuda_mpi, check_local_devices,
                     cuda_mpi_problem, install_excepthook, mpi_cuda_support)
from .grid import ProcessGrid
from .halo import halo_exchange, halo_reduce
from .rank_plan import MPIPlan, clear_plan_cache, mpi_layout, plan_cache_info
from .make_plan import plan
from .tuning import tune

__all__ = ["ProcessGrid", "plan", "tune", "MPIPlan", "mpi_layout", "clear_plan_cache", "plan_cache_info",
           "install_excepthook", "check_local_devices", "check_cuda_mpi", "cuda_mpi_problem",
           "mpi_cuda_support", "MPITransportWarning", "halo_exchange", "halo_reduce"]
