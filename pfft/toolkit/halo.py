"""Halo exchange on sharded arrays and its exact adjoint, the halo reduction.

Each device's block of a global array, extended by ``h`` cells on both sides of each
axis with the edges of its neighbours' blocks, is what stencils and particle-mesh
painting (cloud-in-cell, TSC) need. :func:`halo_exchange` builds these extended
blocks with ``jax.lax.ppermute`` inside ``jax.shard_map``, one axis after another so
that corners (and edges) come from the diagonal neighbours too. :func:`halo_reduce`
is its linear transpose: it adds each halo back onto the block that owns it.

No custom differentiation rule is needed: JAX transposes ``ppermute`` to the inverse
permutation and ``concatenate`` to slices, so the VJP of :func:`halo_exchange` is
exactly :func:`halo_reduce` (the tests check it bit for bit) and JVPs, ``vmap`` and
``jax.linear_transpose`` work as for any JAX function.
"""
from __future__ import annotations

import functools
import operator
from typing import Sequence

import jax
import jax.numpy as jnp
from jax import lax
from jax.sharding import Mesh, PartitionSpec

from ..blocks import Blocks, blocks_of
from ..transports import xla as xla_transport

__all__ = ["halo_exchange", "halo_reduce"]


def _check_halo(halo, ndim: int, where: str) -> tuple[int, ...]:
    try:
        halo = (operator.index(halo),) * ndim
    except TypeError:
        pass
    try:
        halo = tuple(operator.index(h) for h in halo)
    except TypeError:
        raise TypeError(f"{where}: halo must be an int or a sequence of ints, "
                        f"got {halo!r}") from None
    if len(halo) != ndim:
        raise ValueError(f"{where}: halo {halo} must have one entry per array axis "
                         f"({ndim})")
    if any(h < 0 for h in halo):
        raise ValueError(f"{where}: halo entries must be non-negative, got {halo}")
    return halo


def _shift(piece, names, parts: int, step: int, periodic: bool):
    """Send ``piece`` to the block ``step`` (+1 or -1) further along a split axis.

    Blocks past the edge of a non-periodic domain receive zeros.
    """
    pairs = [(i, i + step) for i in range(parts)]
    if periodic:
        pairs = [(i, j % parts) for i, j in pairs]
    else:
        pairs = [(i, j) for i, j in pairs if 0 <= j < parts]
    return xla_transport.permute(piece, names, pairs)


def _take(block, axis: int, start: int, stop: int):
    return lax.slice_in_dim(block, start, stop, axis=axis)


# ``shift(axis, piece, step)`` moves ``piece`` to the block ``step`` (+1 or -1) further
# along ``axis`` (zeros past a non-periodic edge), or returns ``None`` when ``axis`` is
# whole on this block. The XLA transport shifts with ppermute, the MPI one with
# sendrecv; the block algorithm below serves both.

def exchange_blockwise(block, halo, periodic: bool, shift):
    """One block extended by its neighbours' edges, one axis after another."""
    for axis, h in enumerate(halo):
        if h == 0:
            continue
        n = block.shape[axis]
        first, last = _take(block, axis, 0, h), _take(block, axis, n - h, n)
        left = shift(axis, last, +1)                 # my lower neighbour's end
        if left is not None:
            right = shift(axis, first, -1)           # my upper neighbour's start
        elif periodic:
            left, right = last, first
        else:
            left, right = jnp.zeros_like(last), jnp.zeros_like(first)
        block = jnp.concatenate([left, block, right], axis=axis)
    return block


def reduce_blockwise(block, halo, periodic: bool, shift):
    """The transpose of :func:`exchange_blockwise`: halos added back onto their owners."""
    for axis in reversed(range(len(halo))):
        h = halo[axis]
        if h == 0:
            continue
        n = block.shape[axis] - 2 * h
        left = _take(block, axis, 0, h)
        core = _take(block, axis, h, h + n)
        right = _take(block, axis, h + n, n + 2 * h)
        moved = shift(axis, left, -1)                # back to its owner's end
        if moved is not None:
            left, right = moved, shift(axis, right, +1)   # back to its owner's start
        elif not periodic:
            block = core                             # halos beyond the edge
            continue
        pad_end = [(0, 0)] * block.ndim
        pad_start = [(0, 0)] * block.ndim
        pad_end[axis] = (n - h, 0)
        pad_start[axis] = (0, n - h)
        block = core + jnp.pad(left, pad_end) + jnp.pad(right, pad_start)
    return block


def _mesh_shift(blocks: Blocks, periodic: bool):
    def shift(axis, piece, step):
        parts = blocks.parts[axis]
        if parts == 1:
            return None
        return _shift(piece, blocks.split[axis], parts, step, periodic)
    return shift


@functools.lru_cache(maxsize=128)
def _compiled(blocks: Blocks, halo: tuple[int, ...], periodic: bool, reduce: bool):
    body = reduce_blockwise if reduce else exchange_blockwise
    shift = _mesh_shift(blocks, periodic)
    return jax.jit(blocks.shard_map(lambda b: body(b, halo, periodic, shift)))


def _check_sizes(shape, blocks: Blocks, halo, reduce: bool, where: str):
    for axis, h in enumerate(halo):
        local = shape[axis] // blocks.parts[axis]
        if reduce:
            local -= 2 * h
            if local < max(h, 1) and h:
                raise ValueError(
                    f"{where}: halo[{axis}]={h} does not fit axis {axis}: its blocks of "
                    f"{shape[axis] // blocks.parts[axis]} (over {blocks.parts[axis]} "
                    f"devices) must hold at least 3*halo = {3 * h} cells")
        elif h > local:
            raise ValueError(
                f"{where}: halo[{axis}]={h} exceeds the local block size {local} of axis "
                f"{axis} (size {shape[axis]} over {blocks.parts[axis]} devices); a halo "
                f"comes from the nearest neighbour only")


def halo_exchange(x, halo: int | Sequence[int], periodic: bool = True, *,
                  mesh: Mesh | None = None, spec: PartitionSpec | None = None) -> jax.Array:
    """Extend every local block of a sharded array by its neighbours' edges.

    Along each array axis ``a`` split over ``p`` blocks of size ``n``, each block
    becomes ``[h cells of the previous block | the block | h cells of the next
    block]`` (``h = halo[a]``); along an axis that is whole on every device the block
    is extended by its own periodic wrap (or zeros). Axes are treated one after
    another, so the corners and edges of the halo come from the diagonal neighbours.

    Parameters
    ----------
    x
        A global array (numpy, or a ``jax.Array`` sharded on a 1-D or 2-D mesh by a
        :class:`~jax.sharding.NamedSharding`), inside or outside ``jit``.
    halo
        Halo width per array axis, ``(hx, hy, hz)`` for a 3-D array, or one int for
        every axis. ``0`` leaves an axis as it is. Each width is at most the local
        block size of its axis.
    periodic
        Whether the domain wraps around. If ``False`` the halos beyond the domain's
        edges are zeros.
    mesh
        The mesh; default ``x``'s own (pass it inside ``jit`` on an Auto mesh).
    spec
        How ``x`` is split; default ``x``'s own sharding (or, where that is unknown:
        numpy input, an Auto mesh inside ``jit``, the pencil of :func:`pfft.device_put`).

    Returns
    -------
    jax.Array
        The blocks with halos, as one global array sharded like ``x``: axis ``a``
        has size ``x.shape[a] + 2 * halo[a] * parts[a]``, ``parts[a]`` being the
        number of blocks the axis is split into (1 if whole). Each device's shard is
        its extended block.

    Raises
    ------
    ValueError
        If ``halo`` has the wrong length, a negative entry, or an entry larger than
        its axis's local block.

    See Also
    --------
    halo_reduce : the adjoint (and the gradient of this function).

    Examples
    --------
    >>> mesh = pfft.make_mesh((2, 4))                                 # doctest: +SKIP
    >>> x = pfft.device_put(np.zeros((16, 16, 16)), mesh)             # doctest: +SKIP
    >>> pfft.halo_exchange(x, (1, 1, 1)).shape  # blocks 8x4x16 -> 10x6x18  # doctest: +SKIP
    (20, 24, 18)
    """
    x, blocks = blocks_of(x, mesh, spec, where="halo_exchange")
    halo = _check_halo(halo, x.ndim, "halo_exchange")
    _check_sizes(x.shape, blocks, halo, False, "halo_exchange")
    if not any(halo):
        return jnp.asarray(x)
    return _compiled(blocks, halo, bool(periodic), False)(x)


def halo_reduce(y, halo: int | Sequence[int], periodic: bool = True, *,
                mesh: Mesh | None = None, spec: PartitionSpec | None = None) -> jax.Array:
    """Add every halo back onto the block that owns it; the adjoint of :func:`halo_exchange`.

    ``y`` holds extended blocks as :func:`halo_exchange` returns them (for instance
    particle masses painted into the halos of each block). Each halo is sent back to
    the neighbour it came from and added onto the cells it copies; halos beyond the
    edge of a non-periodic domain are dropped. This is exactly the linear transpose
    of :func:`halo_exchange` with the same arguments: for all ``x`` and ``y``,
    ``vdot(y, halo_exchange(x)) == vdot(halo_reduce(y), x)``.

    Parameters
    ----------
    y
        The global array of extended blocks, sharded like :func:`halo_exchange`'s
        output.
    halo, periodic, mesh, spec
        As for :func:`halo_exchange`.

    Returns
    -------
    jax.Array
        The un-haloed array: axis ``a`` has size ``y.shape[a] - 2 * halo[a] * parts[a]``.
    """
    y, blocks = blocks_of(y, mesh, spec, where="halo_reduce")
    halo = _check_halo(halo, y.ndim, "halo_reduce")
    _check_sizes(y.shape, blocks, halo, True, "halo_reduce")
    if not any(halo):
        return jnp.asarray(y)
    return _compiled(blocks, halo, bool(periodic), True)(y)
