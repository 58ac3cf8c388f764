"""Timing under ``mpirun``: barriers that sleep, and the slowest rank's time of a call."""
from __future__ import annotations

import time
from typing import Callable, Sequence

from mpi4py import MPI


def quiet_barrier(comm: MPI.Comm) -> None:
    """A barrier that sleeps instead of spinning (the ranks share cores, or a device)."""
    req = comm.Ibarrier()
    while not req.Test():
        time.sleep(0.002)


def slowest_rank_times(fns: Sequence[Callable[[], object]], repeats: int, comm: MPI.Comm,
                       warmup: int = 1) -> list[list[float]]:
    """Seconds each of ``fns`` takes on the slowest rank, ``repeats`` times.

    Each ``fn`` must wait for its own result (``block_until_ready``). After ``warmup``
    calls of each, the calls are interleaved (call 1 of each, call 2 of each, ...) so that
    all see the same background load, and each starts after a barrier.
    """
    for fn in fns:
        for _ in range(warmup):
            fn()
    times: list[list[float]] = [[] for _ in fns]
    for _ in range(repeats):
        for fn, out in zip(fns, times):
            quiet_barrier(comm)
            start = time.perf_counter()
            fn()
            out.append(comm.allreduce(time.perf_counter() - start, op=MPI.MAX))
    return times
