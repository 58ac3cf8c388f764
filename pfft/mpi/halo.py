"""Halo exchange over MPI ranks and its exact adjoint, the halo reduction.

The MPI-transport counterpart of :func:`pfft.halo_exchange` / :func:`pfft.halo_reduce`:
each rank holds one block of a global array whose axes are split over the axes of a
:class:`~pfft.mpi.ProcessGrid`, and gets it back extended by ``h`` cells on both sides
of each axis with the edges of its neighbours' blocks. Along each split axis in turn
(so that corners and edges come from the diagonal neighbours too) the first and last
``h`` planes go to the lower and upper neighbour with ``mpi4jax.sendrecv`` on the
grid's sub-communicator of that axis; an axis that is whole on the rank is padded
locally (its own periodic wrap, or zeros).

``mpi4jax``'s ``sendrecv`` has no autodiff rules, so both functions carry a
``jax.custom_vjp``: the backward of :func:`halo_exchange` is :func:`halo_reduce` and
vice versa (each is the other's exact linear transpose). Both are jittable; forward
mode (``jvp``) and ``vmap`` are not supported.
"""
from __future__ import annotations

import weakref
from typing import Sequence

import jax
import jax.numpy as jnp
import mpi4jax
from mpi4py import MPI

from ..toolkit.halo import _check_halo, exchange_blockwise, reduce_blockwise
from .grid import ProcessGrid

__all__ = ["halo_exchange", "halo_reduce"]

_UP, _DOWN = 11, 12          # message tags: towards higher / lower coordinates


def _check_split(split, ndim: int, grid: ProcessGrid, where: str) -> tuple:
    ndims = len(grid.dims)
    if split is None:
        if ndim < ndims:
            raise ValueError(f"{where}: the block has {ndim} axes, fewer than the grid's "
                             f"{ndims} dims; pass split")
        return tuple(range(ndims)) + (None,) * (ndim - ndims)
    try:
        split = tuple(split)
    except TypeError:
        raise TypeError(f"{where}: split must be a sequence (per array axis: a grid dim "
                        f"index or None), got {split!r}") from None
    if len(split) != ndim:
        raise ValueError(f"{where}: split {split} must have one entry per array axis ({ndim})")
    out = []
    for s in split:
        if s is not None:
            if isinstance(s, bool) or not isinstance(s, int) or not 0 <= s < ndims:
                raise ValueError(f"{where}: split entries must be None or a grid dim index "
                                 f"in range({ndims}) (grid dims {grid.dims}), got {split}")
        out.append(s)
    used = [s for s in out if s is not None]
    if len(used) != len(set(used)):
        raise ValueError(f"{where}: split {split} uses a grid dim for more than one axis")
    return tuple(out)


def _axes(grid: ProcessGrid, split) -> tuple:
    """Per array axis: ``(sub-communicator, parts)``, or ``(None, 1)`` if whole here."""
    out = []
    for s in split:
        if s is None or grid.dims[s] == 1:
            out.append((None, 1))
        else:
            out.append((grid.comms[grid.names[s]], grid.dims[s]))
    return tuple(out)


def _check_sizes(shape, grid: ProcessGrid, axes, halo, reduce: bool, where: str):
    # every rank sees every rank's shape (a collective: all ranks call this together),
    # so all raise the same error and none is left waiting in a sendrecv
    shapes = grid.comm.allgather(tuple(shape))
    for axis, (comm, parts) in enumerate(axes):
        if comm is not None and len({s[axis] if axis < len(s) else None for s in shapes}) > 1:
            sizes = sorted({s[axis] for s in shapes if axis < len(s)})
            raise ValueError(
                f"{where}: the ranks' blocks differ in size along axis {axis} ({sizes}); "
                f"uneven blocks are not supported (the global size must be a multiple of "
                f"the {parts} ranks along it)")
    for axis, h in enumerate(halo):
        local = shape[axis]
        if reduce:
            if local - 2 * h < max(h, 1) and h:
                raise ValueError(
                    f"{where}: halo[{axis}]={h} does not fit axis {axis}: the block with "
                    f"halos has {local} cells, it must hold at least 3*halo = {3 * h}")
        elif h > local:
            raise ValueError(
                f"{where}: halo[{axis}]={h} exceeds the local block size {local} of axis "
                f"{axis}; a halo comes from the nearest neighbour only")


def _neighbours(comm, periodic: bool) -> tuple[int, int]:
    """(lower, upper) ranks in ``comm``; ``MPI.PROC_NULL`` past a non-periodic edge."""
    r, p = comm.Get_rank(), comm.Get_size()
    if periodic:
        return (r - 1) % p, (r + 1) % p
    return (r - 1 if r > 0 else MPI.PROC_NULL), (r + 1 if r < p - 1 else MPI.PROC_NULL)


def _sendrecv(piece, comm, source: int, dest: int, tag: int):
    """Send ``piece`` to ``dest``, receive the same shape from ``source`` (zeros if none)."""
    got = mpi4jax.sendrecv(piece, piece, source, dest, sendtag=tag, recvtag=tag, comm=comm)
    return jnp.zeros_like(piece) if source == MPI.PROC_NULL else got


def _rank_shift(axes, periodic: bool):
    """``shift`` for :func:`pfft.toolkit.halo.exchange_blockwise`: sendrecv along the
    sub-communicator of a split axis (``None`` for an axis whole on this rank)."""
    def shift(axis, piece, step):
        comm = axes[axis][0]
        if comm is None:
            return None
        lower, upper = _neighbours(comm, periodic)
        if step > 0:
            return _sendrecv(piece, comm, lower, upper, _UP)
        return _sendrecv(piece, comm, upper, lower, _DOWN)
    return shift


def _make(axes, halo, periodic: bool):
    """``(exchange, reduce)``: jitted, each with the other as its custom VJP."""

    shift = _rank_shift(axes, periodic)

    def ex(x):
        return exchange_blockwise(x, halo, periodic, shift)

    def red(y):
        return reduce_blockwise(y, halo, periodic, shift)

    exchange, reduce = jax.custom_vjp(ex), jax.custom_vjp(red)
    exchange.defvjp(lambda x: (ex(x), None), lambda _, g: (red(g),))
    reduce.defvjp(lambda y: (red(y), None), lambda _, g: (ex(g),))
    return jax.jit(exchange), jax.jit(reduce)


_CACHE: "weakref.WeakKeyDictionary[ProcessGrid, dict]" = weakref.WeakKeyDictionary()


def _functions(grid: ProcessGrid, split, halo, periodic: bool):
    per_grid = _CACHE.setdefault(grid, {})
    key = (split, halo, periodic)
    if key not in per_grid:
        per_grid[key] = _make(_axes(grid, split), halo, periodic)
    return per_grid[key]


def _prepare(x, grid, halo, split, reduce: bool, where: str):
    if not isinstance(grid, ProcessGrid):
        raise TypeError(f"{where}: grid must be a pfft.mpi.ProcessGrid, got "
                        f"{type(grid).__name__}")
    x = x if isinstance(x, jax.Array) else jnp.asarray(x)
    split = _check_split(split, x.ndim, grid, where)
    halo = _check_halo(halo, x.ndim, where)
    _check_sizes(x.shape, grid, _axes(grid, split), halo, reduce, where)
    return x, split, halo


def halo_exchange(block, grid: ProcessGrid, halo: int | Sequence[int],
                  periodic: bool = True, *, split: Sequence[int | None] | None = None
                  ) -> jax.Array:
    """Extend this rank's block by its neighbours' edges (MPI ``sendrecv``).

    Along each array axis ``a`` split over ``p`` ranks, the block becomes ``[h cells
    of the lower neighbour's block | the block | h cells of the upper neighbour's
    block]`` (``h = halo[a]``); along an axis that is whole on the rank the block is
    extended by its own periodic wrap (or zeros). Axes are treated one after another,
    so the corners and edges of the halo come from the diagonal neighbours. Every rank
    of ``grid`` must call it together, with the same arguments.

    Parameters
    ----------
    block
        This rank's block of the global array (a ``jax.Array`` or numpy array, inside
        or outside ``jit``). Blocks must all have the same shape: uneven blocks are not
        supported (``ValueError``).
    grid
        The :class:`~pfft.mpi.ProcessGrid` the global array is distributed over.
    halo
        Halo width per array axis, ``(hx, hy, hz)`` for a 3-D array, or one int for
        every axis. ``0`` leaves an axis as it is. Each width is at most the local
        block size of its axis.
    periodic
        Whether the domain wraps around. If ``False`` the halos beyond the domain's
        edges are zeros.
    split
        Per array axis, the index of the grid dim it is split over, or ``None`` if
        whole. Default: axis 0 over grid dim 0 and, on a 2-D grid, axis 1 over grid
        dim 1 (the default input pencil of :func:`pfft.mpi.plan` for evenly divisible
        shapes).

    Returns
    -------
    jax.Array
        The extended block: axis ``a`` has size ``block.shape[a] + 2 * halo[a]``.

    Raises
    ------
    ValueError
        If ``halo`` has the wrong length, a negative entry, or an entry larger than
        its axis's local block; if ``split`` is malformed; or if the ranks' blocks
        differ in size along a split axis.

    See Also
    --------
    halo_reduce : the adjoint (and the gradient of this function).
    pfft.halo_exchange : the same on a sharded array (XLA transport).

    Examples
    --------
    >>> grid = pfft.mpi.ProcessGrid(MPI.COMM_WORLD, (2, 2))          # doctest: +SKIP
    >>> block = jnp.zeros((8, 8, 16))    # of a 16x16x16 array        # doctest: +SKIP
    >>> pfft.mpi.halo_exchange(block, grid, (1, 1, 1)).shape          # doctest: +SKIP
    (10, 10, 18)
    """
    block, split, halo = _prepare(block, grid, halo, split, False, "halo_exchange")
    if not any(halo):
        return block
    return _functions(grid, split, halo, bool(periodic))[0](block)


def halo_reduce(block_with_halos, grid: ProcessGrid, halo: int | Sequence[int],
                periodic: bool = True, *, split: Sequence[int | None] | None = None
                ) -> jax.Array:
    """Add every halo back onto the rank that owns it; the adjoint of :func:`halo_exchange`.

    ``block_with_halos`` is an extended block as :func:`halo_exchange` returns it (for
    instance particle masses painted into the halos). Each halo is sent back to the
    neighbour it came from and added onto the cells it copies; halos beyond the edge
    of a non-periodic domain are dropped. This is exactly the linear transpose of
    :func:`halo_exchange` with the same arguments: summed over ranks,
    ``vdot(y, halo_exchange(x)) == vdot(halo_reduce(y), x)``.

    Parameters
    ----------
    block_with_halos
        This rank's extended block: axis ``a`` has size ``n_a + 2 * halo[a]``.
    grid, halo, periodic, split
        As for :func:`halo_exchange`.

    Returns
    -------
    jax.Array
        The block without halos: axis ``a`` has size ``block_with_halos.shape[a] -
        2 * halo[a]``.

    Raises
    ------
    ValueError
        As :func:`halo_exchange`, and if an axis is shorter than ``3 * halo``.
    """
    y, split, halo = _prepare(block_with_halos, grid, halo, split, True, "halo_reduce")
    if not any(halo):
        return y
    return _functions(grid, split, halo, bool(periodic))[1](y)
