"""Tuning over MPI: the process grid that runs one problem fastest, kept as wisdom.

The same candidates, timing and wisdom as :func:`pfft.tune` (:mod:`pfft.tuning`),
with the MPI transport's two differences: a candidate's time is the slowest rank's,
and every rank must time the same candidates in the same order, so the decision to
stop at the budget is rank 0's, broadcast. Wisdom is filed with
``transport="mpi"`` (one rank per device can prefer another grid than one process).
"""
from __future__ import annotations

from dataclasses import replace
from typing import Sequence

import jax
import jax.numpy as jnp
from mpi4py import MPI

from .. import tuning, wisdom
from ..front_door import PlanArguments
from ..stage_tuning import tune_stages
from .grid import ProcessGrid
from .rank_plan import get_plan

__all__ = ["tune", "wisdom_devices"]


def wisdom_devices(grid: ProcessGrid) -> list:
    """The grid's devices as wisdom counts them: one per rank, of this rank's kind."""
    return [jax.local_devices()[0]] * grid.size


def tune(shape: Sequence[int], dtype, grid: ProcessGrid, *, kind: str = "c2c",
         axes: Sequence[int] | None = None, norm: str = "backward",
         spectra: Sequence[str] = ("numpy",), budget_s: float = 60.0, repeats: int = 3,
         progress: bool = True, kinds: Sequence[str] | None = None,
         orthogonalize: bool | None = None, stages: bool = True):
    """Time every slab and pencil process grid of ``grid``'s ranks for one problem and
    return the fastest plan (collective: every rank calls it with the same arguments).

    Parameters are :func:`pfft.tune`'s, with ``grid`` (a
    :class:`~pfft.mpi.ProcessGrid`) for the devices; ``progress`` shows on rank 0;
    with ``stages`` each rank times its own device's FFT steps.
    Each candidate's time is the median over ``repeats`` of the slowest rank's.

    Returns
    -------
    MPIPlan
        The fastest plan, on the process grid it was timed on; the result is kept as
        wisdom (:func:`pfft.save_wisdom`), used by ``pfft.mpi.plan(..., tune="wisdom")``.
    """
    if not isinstance(grid, ProcessGrid):
        raise TypeError(f"pfft.mpi.tune: grid must be a pfft.mpi.ProcessGrid, got "
                        f"{type(grid).__name__}")
    problem = PlanArguments(shape, dtype, axes, norm, kind, kinds=kinds,
                            orthogonalize=orthogonalize).problem("pfft.mpi.tune")
    tuning.check_budget(budget_s, repeats, "pfft.mpi.tune")
    candidates = tuning.problem_candidates(grid.size, problem.kind, spectra)
    host = tuning.random_input(problem)
    comm = grid.comm

    def slowest(seconds: float) -> float:
        return comm.allreduce(seconds, op=MPI.MAX)

    def time_one(dims, spectrum):
        candidate, place = replace(problem, spectrum=spectrum), grid.regrid(dims)
        plan = get_plan(candidate, place)
        # each rank times its own device's steps: engines may differ between ranks,
        # the exchanges do not
        if stages and tune_stages(plan, jax.local_devices()[0], repeats):
            plan = get_plan(candidate, place)
        x = jnp.asarray(host[plan.local_in_slices])
        comm.Barrier()
        return plan, tuning.time_forward(plan, x, repeats, sync=slowest)

    bar = tuning.Progress(len(candidates), progress and grid.rank == 0,
                          tuning.problem_name(problem, "pfft.mpi.tune"))
    return tuning.time_candidates(
        candidates, time_one, budget_s, bar,
        key=wisdom.wisdom_key(problem, wisdom_devices(grid), "mpi"),
        agree=lambda over: comm.bcast(over, root=0))
