"""A rank that raises before a collective must end the job, not hang it.

Usage: ``mpirun -n 2 python fault.py [hook|nohook]``. Rank 1 raises while rank 0 waits
in the plan's all-to-all. With ``hook`` (the default) pfft.mpi's excepthook calls
``MPI_Abort``; with ``nohook`` only the launcher can end the job.
"""
import sys

from _common import COMM, RANK

import pfft.mpi  # noqa: E402

mode = sys.argv[1] if len(sys.argv) > 1 else "hook"
grid = pfft.mpi.ProcessGrid(COMM, abort_on_exception=(mode == "hook"))
plan = pfft.mpi.plan((8, 8, 8), "complex64", grid)
if RANK == 1:
    raise RuntimeError("deliberate failure on rank 1 before the all-to-all")
plan.forward(plan.zeros_input()).block_until_ready()       # rank 0 waits here
print("PFFT_MPI_UNREACHABLE", flush=True)
