"""``pfft.mpi.plan``: the front door to MPI plans.

Check a plan's arguments into its :class:`~pfft.problem.Problem` (as :func:`pfft.plan`
does: :mod:`pfft.front_door`), place its process grid (the grid as given, or the one
that wisdom or tuning now prefers, ``tune=``), and fetch the cached
:class:`~pfft.mpi.MPIPlan`. It sits above :mod:`pfft.mpi.tuning`
(``tune="measure"`` tunes first), which sits above the plans (:mod:`pfft.mpi.rank_plan`).
"""
from __future__ import annotations

import functools
from dataclasses import replace
from typing import Sequence

from ..arguments import check_tune
from ..front_door import PlanArguments, preferred_grid
from ..plan_core import layout_of_spec
from ..problem import Problem
from .grid import ProcessGrid
from .rank_plan import MPIPlan, get_plan
from .tuning import tune, wisdom_devices

__all__ = ["plan"]


def plan(shape, dtype, grid: ProcessGrid, *, axes=None, norm: str = "backward",
         in_sharding=None, kind: str | None = None, spectrum: str = "numpy", padding: float = 1.0,
         tune: str | None = None, engine=None, fuse_exchanges: bool | str = "auto",
         kinds: Sequence[str] | None = None,
         orthogonalize: bool | None = None, overwrite_x: bool = False) -> MPIPlan:
    """Plan a distributed ``fftn``, ``rfftn``, ``dctn``/``dstn`` or a mixed transform
    (and its inverse) over MPI ranks.

    The arguments and their checks are :func:`pfft.plan`'s (one plan core: the same
    errors, dtypes and features); only the grid differs.

    Parameters
    ----------
    shape
        Global shape of the input (real for ``kind="r2c"``; the spectral grid ``N``
        for ``padding > 1``).
    dtype
        Input dtype, promoted to complex as numpy does (``"float32"`` computes in
        complex64); a real dtype stays real for a plan whose axes are all
        real-to-real (``kinds``). A real dtype without ``kind`` plans the complex
        ``fftn``, and says so as :func:`pfft.plan` does (a ``UserWarning`` once per
        shape and dtype, and ``print(plan)``): ``kind="r2c"`` plans ``rfftn``.
    grid
        The :class:`~pfft.mpi.ProcessGrid` of the ranks taking part.
    axes
        Axes to transform; default all of them (as numpy). Others are batch axes.
    norm
        ``"backward"``, ``"ortho"`` or ``"forward"``, as in numpy.
    in_sharding
        A :class:`~jax.sharding.PartitionSpec` over the grid's axis names
        (``grid.names``) saying how the input blocks are cut (balanced where uneven);
        by default :func:`mpi_layout`'s pencil.
    kind
        ``"c2c"`` (the default) or ``"r2c"`` (:meth:`MPIPlan.forward` is ``rfftn``,
        ``backward`` ``irfftn``).
    spectrum
        ``"numpy"``: output blocks of numpy's spectrum (``n//2 + 1`` on the halved
        axis). ``"padded"`` (``r2c`` only): the chain's blocks as they are, the same
        shape on every rank (no crop and pad per call; see :class:`MPIPlan`).
    padding
        Dealiasing factor, as for :func:`pfft.plan`: the input is the finer grid
        ``ceil(padding * N)``, the spectrum keeps the lowest ``N`` frequencies.
    tune
        ``None``: plan on ``grid``. ``"wisdom"``: use the process grid
        :func:`pfft.mpi.tune` found fastest for this problem on these ranks (wisdom
        filed for the MPI transport), if any; ``"measure"``: tune now where there is
        no wisdom. The plan's :attr:`~MPIPlan.grid` is then that grid; take blocks
        from ``plan.local_in_slices``.
    engine
        Local FFT engine: ``"auto"`` (default), ``"native"``, ``"xla"``, ``"cufft"`` (as for
        :func:`pfft.plan`), or an engine object (:class:`pfft.interfaces.Engine`).
    fuse_exchanges
        As for :func:`pfft.plan`; MPI exchanges are ``MPI_Alltoall``, never pieces, so
        it changes nothing here but the cache key.
    kinds
        The transform along each axis of ``axes``, as for :func:`pfft.plan`:
        ``"fft"``, ``"rfft"`` (at most one, the halved axis), ``"dct1"`` ...
        ``"dct4"``, ``"dst1"`` ... ``"dst4"`` (scipy's, with ``norm``). Each
        real-to-real axis is transformed where it is whole, so the zero padding of
        uneven blocks never enters it. ``wavenumbers()`` gives this rank's block of
        each axis's own values (:func:`pfft.r2rfreq` on a DCT/DST axis).
        Not with ``tune`` yet.
    orthogonalize
        scipy's ``orthogonalize`` for the real-to-real axes (default: ``norm ==
        "ortho"``).
    overwrite_x
        As for :func:`pfft.plan`.

    Returns
    -------
    MPIPlan
        Cached: the same arguments (and the same grid object) return the same plan.
    """
    if not isinstance(grid, ProcessGrid):
        raise TypeError(f"pfft.mpi.plan: grid must be a pfft.mpi.ProcessGrid, got "
                        f"{type(grid).__name__}")
    problem = PlanArguments(shape, dtype, axes, norm, kind, spectrum, padding, engine,
                            fuse_exchanges, kinds, orthogonalize,
                            overwrite_x).problem("pfft.mpi.plan")
    check_tune(tune, "pfft.mpi.plan", in_sharding)
    if in_sharding is not None:
        layout = layout_of_spec(problem.shape, in_sharding, grid.mesh_shape, grid.names,
                                "pfft.mpi.plan", even=False)
        problem = replace(problem, in_layout=replace(layout, balanced=True))
    if tune is not None:
        grid = _tuned_grid(problem, grid, tune)
    return get_plan(problem, grid)


def _tuned_grid(problem: Problem, grid: ProcessGrid, mode: str) -> ProcessGrid:
    """The process grid wisdom prefers for ``problem`` on ``grid``'s ranks (tuning
    first for ``mode="measure"`` where there is none); ``grid`` if there is none."""
    measure = functools.partial(tune, grid=grid) if mode == "measure" else None
    dims = preferred_grid(problem, wisdom_devices(grid), "mpi", measure)
    # every rank must take the same grid: rank 0's wisdom decides
    dims = grid.comm.bcast(dims, root=0)
    return grid if dims is None else grid.regrid(dims)
