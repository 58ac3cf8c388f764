"""Tuning over MPI: the process grid that runs one problem fastest, kept as wisdom.

The same candidates, timing and wisdom as :func:`pfft.tune` (:mod:`pfft.tuning`),
with the MPI transport's two differences: a candidate's time is the slowest rank's,
and every rank must time the same candidates in the same order, so the decision to
stop at the budget is rank 0's, broadcast. Wisdom is filed with
``transport="mpi"`` (one rank per device can prefer another grid than one process).
"""
from __future__ import annotations

from typing import Sequence

import jax
import jax.numpy as jnp
from mpi4py import MPI

from .. import tuning
from .grid import ProcessGrid

__all__ = ["tune", "tuned_grid"]


def _devices(grid: ProcessGrid) -> list:
    """The grid's devices as wisdom counts them: one per rank, of this rank's kind."""
    return [jax.local_devices()[0]] * grid.size


def tune(shape: Sequence[int], dtype, grid: ProcessGrid, *, kind: str = "c2c",
         axes: Sequence[int] | None = None, norm: str = "backward",
         spectra: Sequence[str] = ("numpy",), budget_s: float = 60.0, repeats: int = 3,
         progress: bool = True, kinds: Sequence[str] | None = None,
         orthogonalize: bool | None = None):
    """Time every slab and pencil process grid of ``grid``'s ranks for one problem and
    return the fastest plan (collective: every rank calls it with the same arguments).

    Parameters are :func:`pfft.tune`'s, with ``grid`` (a
    :class:`~pfft.mpi.ProcessGrid`) for the devices; ``progress`` shows on rank 0.
    Each candidate's time is the median over ``repeats`` of the slowest rank's.

    Returns
    -------
    MPIPlan
        The fastest plan, on the process grid it was timed on; the result is kept as
        wisdom (:func:`pfft.save_wisdom`), used by ``pfft.mpi.plan(..., tune="wisdom")``.
    """
    from .plan import get_plan

    if not isinstance(grid, ProcessGrid):
        raise TypeError(f"pfft.mpi.tune: grid must be a pfft.mpi.ProcessGrid, got "
                        f"{type(grid).__name__}")
    shape, cdtype, axes, norm, kinds, kind, orthogonalize = tuning.problem_arguments(
        shape, dtype, axes, norm, kind, kinds, orthogonalize, "pfft.mpi.tune")
    tuning.check_budget(budget_s, repeats, "pfft.mpi.tune")
    candidates = tuning.problem_candidates(grid.size, kind, spectra)
    host = tuning.random_input(shape, cdtype, kind)
    comm = grid.comm

    def slowest(seconds: float) -> float:
        return comm.allreduce(seconds, op=MPI.MAX)

    def time_one(dims, spectrum):
        plan = get_plan(shape, cdtype, grid.regrid(dims), axes, norm, kind=kind,
                        spectrum=spectrum, kinds=kinds, orthogonalize=orthogonalize)
        x = jnp.asarray(host[plan.local_in_slices])
        comm.Barrier()
        return plan, tuning.time_forward(plan, x, repeats, sync=slowest)

    title = f"pfft.mpi.tune {shape} {cdtype.name} {tuning.problem_name(kind, kinds)}"
    bar = tuning.Progress(len(candidates), progress and grid.rank == 0, title)
    return tuning.time_candidates(
        candidates, time_one, budget_s, bar,
        key=tuning.wisdom_key(shape, cdtype, kind, axes, norm, _devices(grid), "mpi",
                              kinds=kinds, orthogonalize=orthogonalize),
        agree=lambda over: comm.bcast(over, root=0))


def tuned_grid(shape, dtype, grid: ProcessGrid, *, kind: str, axes, norm: str,
               spectrum: str, mode: str, kinds=None, orthogonalize=None) -> ProcessGrid:
    """The process grid wisdom prefers for this problem on ``grid``'s ranks (tuning
    first for ``mode="measure"`` where there is none); ``grid`` if there is none."""
    devices = _devices(grid)
    problem = dict(kinds=kinds, orthogonalize=orthogonalize)
    entry = tuning.lookup(shape, dtype, kind, axes, norm, devices, "mpi", **problem)
    if entry is None and mode == "measure":
        tune(shape, dtype, grid, kind=kind, axes=axes, norm=norm, spectra=(spectrum,),
             **problem)
        entry = tuning.lookup(shape, dtype, kind, axes, norm, devices, "mpi", **problem)
    # every rank must take the same grid: rank 0's wisdom decides
    dims = grid.comm.bcast(None if entry is None else tuple(entry["grid"]), root=0)
    return grid if dims is None else grid.regrid(dims)
