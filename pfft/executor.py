"""Runs a plan's program on one device's block, inside ``shard_map`` (or on one MPI rank).

The program (:mod:`pfft.program`) was resolved when the plan was made: every engine,
every exchange's form, every axis order and where each factor goes. The loop here
runs its steps in order and chooses nothing; the functions below are the data
movements of the exchange steps (cutting an axis into padded blocks, joining them
back, packing and unpacking an all-to-all) and of the spectral truncation.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
from jax import lax

__all__ = ["run_program", "scaled", "exchange", "resize", "cut", "join"]


def run_program(x: jax.Array, program, transport) -> jax.Array:
    """Run ``program``'s steps on the local block ``x`` (numpy axis order in and out)
    over ``transport``."""
    data = x
    for step in program.steps:
        data = step.run(data, transport)
    return data


def scaled(data: jax.Array, scale: float) -> jax.Array:
    """``data`` times ``scale`` (a multiply XLA fuses into the copy that reads it): the
    real factor in ``data``'s own dtype, as JAX's standard promotion would convert it,
    so that every dtype-promotion mode (``strict`` too) runs the same program."""
    if scale == 1.0:
        return data
    return data * jnp.asarray(scale, dtype=data.dtype)


def resize(data: jax.Array, st, pos: int) -> jax.Array:
    """Keep (``st.n_to < st.n_from``), or zero-pad back, the low frequencies of
    :class:`pfft.stages.Resize` ``st`` along physical axis ``pos``."""
    small, big = sorted((st.n_from, st.n_to))
    low, high = (small, 0) if st.halved else (-(-small // 2), small // 2)
    if st.n_to < st.n_from:                          # truncate
        parts = [lax.slice_in_dim(data, 0, low, axis=pos)]
        if high:
            parts.append(lax.slice_in_dim(data, big - high, big, axis=pos))
        return jnp.concatenate(parts, axis=pos) if len(parts) > 1 else parts[0]
    pad = [(0, 0)] * data.ndim                       # zero-pad: the transpose
    pad[pos] = (0, big - small)
    head = lax.slice_in_dim(data, 0, low, axis=pos)
    if not high:
        return jnp.pad(head, pad)
    zeros_shape = list(data.shape)
    zeros_shape[pos] = big - small
    tail = lax.slice_in_dim(data, low, small, axis=pos)
    return jnp.concatenate([head, jnp.zeros(zeros_shape, data.dtype), tail], axis=pos)


def _pad_axis(data: jax.Array, pos: int, length: int) -> jax.Array:
    """Zero-pad physical axis ``pos`` of ``data`` at its end to ``length``."""
    if data.shape[pos] == length:
        return data
    pad = [(0, 0)] * data.ndim
    pad[pos] = (0, length - data.shape[pos])
    return jnp.pad(data, pad)


def cut(data: jax.Array, pos: int, p: int, balanced: bool) -> jax.Array:
    """Physical axis ``pos`` (its whole extent) cut into ``p`` blocks of
    ``ceil(n/p)`` points each, laid end to end: a balanced cut's shorter blocks are
    zero-padded at their ends, a ceil-sized cut's last ones."""
    n = data.shape[pos]
    q, r = divmod(n, p)
    if not balanced or r == 0:
        return _pad_axis(data, pos, -(-n // p) * p)
    head = lax.slice_in_dim(data, 0, r * (q + 1), axis=pos)        # r blocks of q + 1
    tail = lax.slice_in_dim(data, r * (q + 1), n, axis=pos)        # p - r blocks of q
    tail = tail.reshape(tail.shape[:pos] + (p - r, q) + tail.shape[pos + 1:])
    tail = _pad_axis(tail, pos + 1, q + 1)
    tail = tail.reshape(tail.shape[:pos] + ((p - r) * (q + 1),) + tail.shape[pos + 2:])
    return jnp.concatenate([head, tail], axis=pos)


def join(data: jax.Array, pos: int, n: int, p: int, balanced: bool) -> jax.Array:
    """The inverse of :func:`cut`: ``p`` padded blocks laid end to end along ``pos``
    back to the ``n`` points they hold."""
    if data.shape[pos] == n:
        return data
    q, r = divmod(n, p)
    if not balanced or r == 0:
        return lax.slice_in_dim(data, 0, n, axis=pos)
    c = data.shape[pos] // p
    head = lax.slice_in_dim(data, 0, r * c, axis=pos)
    tail = lax.slice_in_dim(data, r * c, p * c, axis=pos)
    tail = tail.reshape(tail.shape[:pos] + (p - r, c) + tail.shape[pos + 1:])
    tail = lax.slice_in_dim(tail, 0, q, axis=pos + 1)
    tail = tail.reshape(tail.shape[:pos] + ((p - r) * q,) + tail.shape[pos + 2:])
    return jnp.concatenate([head, tail], axis=pos)


def exchange(data: jax.Array, step, transport) -> jax.Array:
    """An :class:`pfft.program.AllToAll` step: the owed factor applied, the scattered
    axis cut into padded blocks, then either the collective cutting and stacking the
    axes itself (``step.split``) or a pack with the device axis in front and the axes
    in the order wanted after (``step.order_after``), the unpack after it, padding
    cropped."""
    st, p = step.stage, step.stage.size
    order = step.order_before
    data = scaled(data, step.scale)
    pos_s = order.index(st.scatter)
    chunk = -(-data.shape[pos_s] // p)                       # s's block: whole, or even
    data = cut(data, pos_s, p, step.balanced)
    if step.split:
        pos_g = order.index(st.gather)
        data = transport.all_to_all(data, st.mesh_axis, split=pos_s, merge=pos_g)
        if data.shape[pos_g] != step.extent:
            data = lax.slice_in_dim(data, 0, step.extent, axis=pos_g)
        return data
    # split s into (p, chunk), p first, the rest in the order wanted afterwards
    after = step.order_after
    data = data.reshape(data.shape[:pos_s] + (p, chunk) + data.shape[pos_s + 1:])
    dim = {ax: (i if i < pos_s else i + 1) for i, ax in enumerate(order)}
    data = jnp.transpose(data, (pos_s,) + tuple(dim[a] for a in after))
    data = transport.all_to_all(data, st.mesh_axis)      # leading axis: source device
    # unpack: the source-device axis right before g's block, merged, padding cropped
    pos_g = after.index(st.gather)
    perm = tuple(range(1, pos_g + 1)) + (0,) + tuple(range(pos_g + 1, len(after) + 1))
    data = jnp.transpose(data, perm)
    merged = data.shape[:pos_g] + (p * data.shape[pos_g + 1],) + data.shape[pos_g + 2:]
    return join(data.reshape(merged), pos_g, step.extent, p, step.balanced)
