"""Distributed ``fftshift``/``ifftshift``: rolls of sharded arrays by collective permutes.

``jnp.fft.fftshift`` of an array split along a shifted axis makes XLA move the whole
axis (on CPU it compiles to an all-gather or to several collective permutes of the
whole block plus dynamic slicing, depending on the layout). A roll needs much less:
along an axis of ``n = p * b`` points split into ``p`` blocks of ``b``, a roll by
``k = q * b + r`` (``0 <= r < b``) makes output block ``j`` from the last ``r``
points of input block ``j - q - 1`` followed by the first ``b - r`` of block ``j - q``.
So each device sends its tail ``q + 1`` places on and its head ``q`` places on: at most
two ``jax.lax.ppermute`` per axis, one where ``r == 0`` (a pure permutation of blocks,
which ``fftshift`` always is on an even number of blocks), and the pure permutations
of all split axes go together as one permute over all their mesh axes. Axes that are
whole on every device roll locally.

An axis that its devices do not divide is never split in a JAX array (pfft pads uneven
sizes only inside its plans), so every split axis here is split evenly.

JAX transposes ``ppermute`` to the inverse permutation, so gradients, JVPs and
``vmap`` need no rule of their own: the VJP of :func:`fftshift` is :func:`ifftshift`.
"""
from __future__ import annotations

import functools
import math
import operator
from typing import Sequence

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from ..arguments import check_axis
from ..blocks import Blocks, blocks_of
from ..sharding import place_output
from ..transports import xla as xla_transport

__all__ = ["fftshift", "ifftshift"]


def _check_axes(axes, ndim: int, where: str) -> tuple[int, ...]:
    """numpy's ``axes`` of ``fftshift``: ``None`` (all), an int or a sequence of ints;
    repeated axes roll repeatedly, as in :func:`numpy.roll`."""
    if axes is None:
        return tuple(range(ndim))
    try:
        axes = (operator.index(axes),)
    except TypeError:
        try:
            axes = tuple(operator.index(a) for a in axes)
        except TypeError:
            raise TypeError(f"{where}: axes must be None, an int or a sequence of ints, "
                            f"got {axes!r}") from None
    return tuple(check_axis(a, ndim, where) for a in axes)


def _shifts(shape, axes, inverse: bool) -> tuple[tuple[int, int], ...]:
    """``(axis, k)``: roll each axis by ``k`` points (``0 <= k < n``), numpy's shifts."""
    total: dict[int, int] = {}
    for a in axes:
        n = shape[a]
        total[a] = total.get(a, 0) + (-(n // 2) if inverse else n // 2)
    return tuple((a, k % shape[a]) for a, k in sorted(total.items()) if shape[a] and k % shape[a])


def _permute_by(piece, names, parts: int, step: int):
    """Send ``piece`` ``step`` blocks on (cyclically) along the mesh axes ``names``."""
    step %= parts
    if step == 0:
        return piece
    return xla_transport.permute(piece, names, [(i, (i + step) % parts) for i in range(parts)])


def roll_blockwise(block, shifts, blocks: Blocks, shape):
    """One device's block of ``roll(x, k, axis)`` for every ``(axis, k)`` of ``shifts``
    (inside ``shard_map``; on the whole array where ``blocks`` has one block)."""
    pure, partial, local = [], [], []
    for a, k in shifts:
        p = blocks.parts[a]
        if p == 1:
            local.append((a, k))
            continue
        b = shape[a] // p
        q, r = divmod(k, b)
        (pure if r == 0 else partial).append((a, q, r))
    if pure:
        # pure block permutations of several axes: one permute over all their mesh axes
        names = sum((blocks.split[a] for a, _, _ in pure), ())
        sizes = [blocks.parts[a] for a, _, _ in pure]
        steps = [q for _, q, _ in pure]
        count = math.prod(sizes)
        pairs = []
        for i in range(count):
            index = np.unravel_index(i, sizes)
            to = [(j + s) % n for j, s, n in zip(index, steps, sizes)]
            pairs.append((i, int(np.ravel_multi_index(to, sizes))))
        if any(i != j for i, j in pairs):
            block = xla_transport.permute(block, names, pairs)
    for a, q, r in partial:
        p, b = blocks.parts[a], shape[a] // blocks.parts[a]
        tail = lax.slice_in_dim(block, b - r, b, axis=a)      # goes q + 1 blocks on
        head = lax.slice_in_dim(block, 0, b - r, axis=a)      # goes q blocks on
        block = jnp.concatenate([_permute_by(tail, blocks.split[a], p, q + 1),
                                 _permute_by(head, blocks.split[a], p, q)], axis=a)
    for a, k in local:
        block = _local_roll(block, k, a)
    return block


def _local_roll(block, k: int, axis: int):
    """``jnp.roll`` along a whole axis. Along the innermost axis XLA:CPU's concatenate
    of two slices runs at a fraction of a copy's speed (2x a copy at 256 points, 6x at
    255), so there a half roll swaps the halves (``rev`` of a length-2 axis, 1.25x a copy)
    and any other roll gathers."""
    n = block.shape[axis]
    if axis != block.ndim - 1:
        return jnp.roll(block, k, axis=axis)
    if 2 * k == n:
        halves = block.reshape(block.shape[:-1] + (2, k))
        return lax.rev(halves, (block.ndim - 1,)).reshape(block.shape)
    return jnp.take(block, (np.arange(n) - k) % n, axis=axis, mode="clip",
                    unique_indices=True)


@functools.lru_cache(maxsize=128)
def _compiled(blocks: Blocks, shifts, shape):
    return jax.jit(blocks.shard_map(lambda b: roll_blockwise(b, shifts, blocks, shape)))


def _shift(x, axes, inverse: bool, mesh, spec, out_sharding, where: str):
    x, blocks = blocks_of(x, mesh, spec, where=where)
    shifts = _shifts(x.shape, _check_axes(axes, x.ndim, where), inverse)
    y = _compiled(blocks, shifts, tuple(x.shape))(x) if shifts else jnp.asarray(x)
    return place_output(y, out_sharding, blocks.mesh if blocks.mesh is not None else mesh, where)


def fftshift(x, axes: int | Sequence[int] | None = None, *, mesh: Mesh | None = None,
             spec: PartitionSpec | None = None,
             out_sharding: NamedSharding | PartitionSpec | None = None) -> jax.Array:
    """Shift the zero frequency to the centre (:func:`numpy.fft.fftshift`) of a
    (possibly sharded) array, without gathering it.

    Each axis of ``axes`` of length ``n`` is rolled by ``n // 2``. Along a split axis
    that is a permutation of whole blocks when ``n // 2`` is a multiple of the block
    (always, on an even number of blocks: one collective permute, shared by every such
    axis), else each device sends its block's head and tail to two neighbours (two
    collective permutes). Whole axes roll locally. The result has ``x``'s sharding.

    Parameters
    ----------
    x
        numpy array or (sharded) ``jax.Array`` of any dtype, inside or outside ``jit``.
    axes
        As in :func:`numpy.fft.fftshift`: ``None`` (every axis), an int or ints
        (repeated axes roll repeatedly).
    mesh
        The mesh; default ``x``'s own (pass it inside ``jit`` on an Auto mesh).
    spec
        How ``x`` is split; default ``x``'s own sharding (or, where that is unknown:
        numpy input, an Auto mesh inside ``jit``, the pencil of :func:`pfft.device_put`).
    out_sharding
        Where to put the result (a ``NamedSharding``, or a ``PartitionSpec`` on the
        mesh); default ``x``'s sharding.

    Returns
    -------
    jax.Array
        ``x``'s shape and dtype.

    Raises
    ------
    numpy.exceptions.AxisError
        An axis out of range (a ``ValueError`` and an ``IndexError``).
    TypeError
        Non-integer ``axes``, ``mesh`` or ``spec`` of the wrong type.
    ValueError
        A ``spec`` that does not split ``x`` evenly or names unknown mesh axes.

    Examples
    --------
    >>> mesh = pfft.make_mesh((2, 4))                                    # doctest: +SKIP
    >>> k = pfft.fftn(pfft.device_put(np.ones((8, 8, 8)), mesh))         # doctest: +SKIP
    >>> centred = pfft.fftshift(k)             # one collective permute  # doctest: +SKIP
    """
    return _shift(x, axes, False, mesh, spec, out_sharding, "fftshift")


def ifftshift(x, axes: int | Sequence[int] | None = None, *, mesh: Mesh | None = None,
              spec: PartitionSpec | None = None,
              out_sharding: NamedSharding | PartitionSpec | None = None) -> jax.Array:
    """The inverse of :func:`fftshift` (:func:`numpy.fft.ifftshift`): each axis of
    length ``n`` rolled by ``-(n // 2)``; arguments and communication as there."""
    return _shift(x, axes, True, mesh, spec, out_sharding, "ifftshift")
