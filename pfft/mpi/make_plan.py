"""``pfft.mpi.plan``: the front door to MPI plans.

Check a plan's arguments (as :func:`pfft.plan` does), place its process grid (the
grid as given, or the one that wisdom or tuning now prefers, ``tune=``), and fetch
the cached :class:`~pfft.mpi.MPIPlan`. It sits above :mod:`pfft.mpi.tuning`
(``tune="measure"`` tunes first), which sits above the plans (:mod:`pfft.mpi.rank_plan`).
"""
from __future__ import annotations

from dataclasses import replace
from typing import Sequence

from .. import wisdom
from ..arguments import check_plan_kinds, check_tune
from ..plan_core import layout_of_spec, plan_arguments
from ..make_plan import mark_promoted, real_without_kind, warn_real_without_kind
from .grid import ProcessGrid
from .rank_plan import MPIPlan, get_plan
from .tuning import tune, wisdom_devices

__all__ = ["plan"]


def plan(shape, dtype, grid: ProcessGrid, *, axes=None, norm: str = "backward",
         in_sharding=None, kind: str | None = None, spectrum: str = "numpy", padding: float = 1.0,
         tune: str | None = None, engine=None, fuse_exchanges: bool | str = "auto",
         kinds: Sequence[str] | None = None,
         orthogonalize: bool | None = None) -> MPIPlan:
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
        :func:`pfft.plan`), or an engine module.
    fuse_exchanges
        As for :func:`pfft.plan`; MPI exchanges are ``MPI_Alltoall``, never pieces, so
        it changes nothing here but the cache key.
    kinds
        The transform along each axis of ``axes``, as for :func:`pfft.plan`:
        ``"fft"``, ``"rfft"`` (at most one, the halved axis), ``"dct1"`` ...
        ``"dct4"``, ``"dst1"`` ... ``"dst4"`` (scipy's, with ``norm``). Each
        real-to-real axis is transformed where it is whole, so the zero padding of
        uneven blocks never enters it. ``wavenumbers()`` gives this rank's block of
        each axis's own values (:func:`pfft.plan_core.r2r_frequencies` on a DCT/DST axis).
        Not with ``tune`` yet.
    orthogonalize
        scipy's ``orthogonalize`` for the real-to-real axes (default: ``norm ==
        "ortho"``).

    Returns
    -------
    MPIPlan
        Cached: the same arguments (and the same grid object) return the same plan.
    """
    if not isinstance(grid, ProcessGrid):
        raise TypeError(f"pfft.mpi.plan: grid must be a pfft.mpi.ProcessGrid, got "
                        f"{type(grid).__name__}")
    promoted = real_without_kind(dtype, kind, kinds)
    kinds, kind, orthogonalize = check_plan_kinds(shape, axes, kind or "c2c", kinds,
                                                  orthogonalize, "pfft.mpi.plan")
    given = dtype
    shape, dtype, axes, norm, dealiased = plan_arguments(shape, dtype, axes, norm, kind,
                                                         spectrum, padding, "pfft.mpi.plan",
                                                         kinds)
    if promoted:
        warn_real_without_kind(shape, given, dtype, "pfft.mpi.plan")
    check_tune(tune, "pfft.mpi.plan", in_sharding)
    layout = None
    if in_sharding is not None:
        layout = replace(layout_of_spec(shape, in_sharding, grid.mesh_shape, grid.names,
                                        "pfft.mpi.plan", even=False), balanced=True)
    if tune is not None:
        grid = _tuned_grid(shape, dtype, grid, kind=kind, axes=axes, norm=norm,
                           spectrum=spectrum, mode=tune, kinds=kinds,
                           orthogonalize=orthogonalize)
    made = get_plan(shape, dtype, grid, axes, norm, layout, kind=kind, spectrum=spectrum,
                    dealiased=dealiased, engine=engine, fuse_exchanges=fuse_exchanges,
                    kinds=kinds, orthogonalize=orthogonalize)
    if promoted:
        mark_promoted(made, given)
    return made


def _tuned_grid(shape, dtype, grid: ProcessGrid, *, kind: str, axes, norm: str,
                spectrum: str, mode: str, kinds=None, orthogonalize=None) -> ProcessGrid:
    """The process grid wisdom prefers for this problem on ``grid``'s ranks (tuning
    first for ``mode="measure"`` where there is none); ``grid`` if there is none."""
    devices = wisdom_devices(grid)
    problem = dict(kinds=kinds, orthogonalize=orthogonalize)
    entry = wisdom.lookup(shape, dtype, kind, axes, norm, devices, "mpi", **problem)
    if entry is None and mode == "measure":
        tune(shape, dtype, grid, kind=kind, axes=axes, norm=norm, spectra=(spectrum,),
             **problem)
        entry = wisdom.lookup(shape, dtype, kind, axes, norm, devices, "mpi", **problem)
    # every rank must take the same grid: rank 0's wisdom decides
    dims = grid.comm.bcast(None if entry is None else tuple(entry["grid"]), root=0)
    return grid if dims is None else grid.regrid(dims)
