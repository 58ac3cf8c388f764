"""A rank that raises before a collective must end the job, not hang it.

Usage: ``mpirun -n 2 python fault.py [hook|install|nohook]``. Rank 1 raises while rank 0
waits in the plan's all-to-all. With ``hook`` (the default) the ``ProcessGrid`` installs
pfft.mpi's excepthook, with ``install`` ``pfft.mpi.install_excepthook()`` does; it calls
``MPI_Abort``. With ``nohook`` only the launcher can end the job (mpich's waits for ever:
not run by the tests).
"""
import sys

from _common import COMM, RANK

import pfft.mpi  # noqa: E402

mode = sys.argv[1] if len(sys.argv) > 1 else "hook"
grid = pfft.mpi.ProcessGrid(COMM, abort_on_exception=(mode == "hook"))
if mode == "install":
    pfft.mpi.install_excepthook()
plan = pfft.mpi.plan((8, 8, 8), "complex64", grid)
if RANK == 1:
    raise RuntimeError("deliberate failure on rank 1 before the all-to-all")
plan.forward(plan.zeros_input()).block_until_ready()       # rank 0 waits here
print("PFFT_MPI_UNREACHABLE", flush=True)
