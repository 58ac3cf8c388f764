"""Runs a stage chain on one device's block, inside ``shard_map`` (or on one MPI rank).

The chain runs as a loop over its stages, one step per kind of stage
(:data:`_STEPS`), nothing carried from one stage to the next but the block. Before
the loop the chain is rewritten once (:func:`_prepared`): on an engine with the
pieces kernels, exchanges next to transforms become the pieces path's stages
(:func:`pfft.pieces.rewrite`: the packing and unpacking ride on the FFTs), and DCT/DST
stages in a row become one group.

The block keeps a *physical* axis order of its own. An engine that transforms any
axes where they lie (``keeps_order``: native, auto) keeps numpy's order throughout;
for one that transforms only the innermost axes (xla) every local transform runs on
trailing axes, and the reordering it needs is folded into the packing and unpacking
that an all-to-all needs anyway, so no stage pays for a separate transpose. Only the
final block is put back into numpy's axis order.

The sign of every transform is chosen by ``inverse``; scaling is applied once, fused
into a transform where the engine can, else in the first copy the chain makes anyway.
Real stages run real-to-complex or complex-to-real as the chain says, whatever the
sign, and ``weighted`` applies the Hermitian bin weights of a transposed real
transform (see :mod:`pfft.autodiff`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, NamedTuple

import jax
import jax.numpy as jnp
from jax import lax

from . import pieces as pieces_path
from .engines import xla as xla_engine
from .interfaces import Engine
from .chain_search import Chain
from .stages import Exchange, Gather, LocalFFT, LocalR2R, RealFFT, Resize, Scatter
from .transports import xla as xla_transport

__all__ = ["run_chain", "Block"]


class Block:
    """A local block, the logical axis held at each of its physical positions, and the
    factor still owed to it (applied inside the next copy, or fused into a transform)."""

    def __init__(self, data, order: tuple[int, ...], scale: float = 1.0):
        self.data = data
        self.order = tuple(order)
        self.scale = scale

    def take_scale(self) -> float:
        """The owed factor, for a step that applies it."""
        scale, self.scale = self.scale, 1.0
        return scale

    def scaled(self) -> jax.Array:
        """The data with the owed factor applied (a multiply XLA fuses into the copy
        that reads it)."""
        scale, data = self.take_scale(), self.data
        if scale != 1.0:
            data = data * jnp.asarray(scale, dtype=jnp.finfo(data.dtype).dtype)
        return data

    def permute(self, order) -> None:
        """Reorder physically so that ``order`` lists the logical axes."""
        order = tuple(order)
        if order == self.order:
            return
        perm = tuple(self.order.index(a) for a in order)
        self.data = jnp.transpose(self.scaled(), perm)
        self.order = order

    def positions(self, axes, engine: Engine, *, exact: bool = False) -> tuple[int, ...]:
        """The physical positions of logical ``axes``, where ``engine`` can transform
        them: innermost (``exact``-ly in the order listed: a real transform's halved
        axis last) for an engine that does not keep the order."""
        if not engine.keeps_order:
            self.permute(_order_for(self.order, axes, exact=exact))
        return tuple(self.order.index(a) for a in axes)


def _order_for(order, last, *, exact: bool = False) -> tuple[int, ...]:
    """``order`` with the axes ``last`` moved to the end: in their current order, or
    ``exact``-ly as listed."""
    tail = tuple(last) if exact else tuple(a for a in order if a in last)
    return tuple(a for a in order if a not in last) + tail


@dataclass(frozen=True)
class R2RGroup:
    """DCT/DST stages in a row, run by one engine call (which may group them into one
    multi-axis FFT: :func:`pfft.engines.r2r.apply_along`)."""

    stages: tuple[LocalR2R, ...]

    @property
    def axes(self) -> tuple[int, ...]:
        return tuple(st.axis for st in self.stages)


class _Run(NamedTuple):
    """What every step reads; nothing in it changes while a chain runs."""

    inverse: bool
    weighted: bool
    engine: Any
    transport: Any
    balanced: bool          # uneven axes cut as pfft.layout.block_bounds says
    argument: Any           # the chain's input array


class _At(NamedTuple):
    """A stage where the chain runs it: the logical global shape before it, and the
    next local transform after it (what an exchange orders the block for)."""

    stage: Any
    shape: tuple[int, ...]
    next_transform: Any


# -- local transforms -------------------------------------------------------------------

def _fft(run: _Run, block: Block, at: _At) -> None:
    """A complex transform, in its input's buffer where that is dead after it (any
    block the chain made: not the argument, which the caller may still hold)."""
    pos = block.positions(at.stage.axes, run.engine)
    block.data, block.scale = run.engine.fft(block.data, pos, run.inverse, scale=block.scale,
                                             inplace=block.data is not run.argument)


def _real_fft(run: _Run, block: Block, at: _At) -> None:
    """Real-to-complex or complex-to-real (``inverse`` flips the sign), the transposed
    transform's bin weights on the complex side where ``weighted``."""
    st = at.stage
    pos = block.positions(st.axes, run.engine, exact=True)
    weights = None
    if run.weighted:
        w = st.transposed_weights()
        shape = [1] * block.data.ndim
        shape[pos[-1]] = w.size
        weights = jnp.asarray(w.reshape(shape), dtype=jnp.finfo(block.data.dtype).dtype)
    if st.to_complex:
        data, block.scale = run.engine.rfft(block.data, pos, inverse=run.inverse,
                                            scale=block.scale)
        block.data = data if weights is None else data * weights
    else:
        data = block.data if weights is None else block.data * weights
        block.data, block.scale = run.engine.irfft(data, pos, st.n, inverse=run.inverse,
                                                   scale=block.scale)


def _r2r(run: _Run, block: Block, at: _At) -> None:
    """DCT/DST stages along whole axes, their scaling included; the owed factor stays
    owed."""
    group = at.stage
    pos = block.positions(group.axes, run.engine)
    ops = [st.op_for(run.inverse) for st in group.stages]
    block.data = run.engine.r2r(block.data, ops, pos)


def _resize(run: _Run, block: Block, at: _At) -> None:
    """Keep (or zero-pad back) the low frequencies along a local axis."""
    st = at.stage
    pos = block.order.index(st.axis)
    data = block.data
    small, big = sorted((st.n_from, st.n_to))
    low, high = (small, 0) if st.halved else (-(-small // 2), small // 2)
    if st.n_to < st.n_from:                          # truncate
        parts = [lax.slice_in_dim(data, 0, low, axis=pos)]
        if high:
            parts.append(lax.slice_in_dim(data, big - high, big, axis=pos))
        block.data = jnp.concatenate(parts, axis=pos) if len(parts) > 1 else parts[0]
        return
    pad = [(0, 0)] * data.ndim                       # zero-pad: the transpose
    pad[pos] = (0, big - small)
    head = lax.slice_in_dim(data, 0, low, axis=pos)
    if not high:
        block.data = jnp.pad(head, pad)
        return
    zeros_shape = list(data.shape)
    zeros_shape[pos] = big - small
    tail = lax.slice_in_dim(data, low, small, axis=pos)
    block.data = jnp.concatenate([head, jnp.zeros(zeros_shape, data.dtype), tail], axis=pos)


# -- exchanges --------------------------------------------------------------------------

def _pad_axis(data: jax.Array, pos: int, length: int) -> jax.Array:
    """Zero-pad physical axis ``pos`` of ``data`` at its end to ``length``."""
    if data.shape[pos] == length:
        return data
    pad = [(0, 0)] * data.ndim
    pad[pos] = (0, length - data.shape[pos])
    return jnp.pad(data, pad)


def _cut(data: jax.Array, pos: int, p: int, balanced: bool) -> jax.Array:
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


def _join(data: jax.Array, pos: int, n: int, p: int, balanced: bool) -> jax.Array:
    """The inverse of :func:`_cut`: ``p`` padded blocks laid end to end along ``pos``
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


def _order_after(run: _Run, block: Block, at: _At) -> tuple[int, ...]:
    """The block's axis order after exchange ``at``: the gathered axis outermost (its
    unpack a free reshape) where the engine keeps numpy's order, else the next
    transform's axes innermost."""
    g, after = at.stage.gather, at.next_transform
    if run.engine.keeps_order:
        return (g,) + tuple(a for a in block.order if a != g)
    if after is None:
        return _order_for(block.order, (g,))
    return _order_for(block.order, after.axes, exact=isinstance(after, RealFFT))


def _exchange(run: _Run, block: Block, at: _At) -> None:
    """All-to-all with the packing and unpacking reorders folded in."""
    st, balanced = at.stage, run.balanced
    p, g, s = st.size, st.gather, st.scatter
    data = block.scaled()
    pos_s = block.order.index(s)
    chunk = -(-data.shape[pos_s] // p)                       # s's block: whole, or even
    data = _cut(data, pos_s, p, balanced)                    # pad the axis to be split
    extent_g = st.gathered_extent(at.shape)
    if (run.engine.keeps_order and run.transport.capabilities.splits
            and not (balanced and extent_g % p)):
        # the collective cuts s into chunks and stacks the received blocks along g
        # itself (XLA:CPU copies the chunks anyway): no pack, no unpack, order kept
        pos_g = block.order.index(g)
        data = run.transport.all_to_all(data, st.mesh_axis, split=pos_s, merge=pos_g)
        if data.shape[pos_g] != extent_g:
            data = lax.slice_in_dim(data, 0, extent_g, axis=pos_g)
        block.data = data
        return
    # split s into (p, chunk), p first, the rest in the order wanted afterwards
    after = _order_after(run, block, at)
    data = data.reshape(data.shape[:pos_s] + (p, chunk) + data.shape[pos_s + 1:])
    dim = {ax: (i if i < pos_s else i + 1) for i, ax in enumerate(block.order)}
    data = jnp.transpose(data, (pos_s,) + tuple(dim[a] for a in after))
    data = run.transport.all_to_all(data, st.mesh_axis)      # leading axis: source device
    # unpack: the source-device axis right before g's block, merged, padding cropped
    pos_g = after.index(g)
    perm = tuple(range(1, pos_g + 1)) + (0,) + tuple(range(pos_g + 1, len(after) + 1))
    data = jnp.transpose(data, perm)
    merged = data.shape[:pos_g] + (p * data.shape[pos_g + 1],) + data.shape[pos_g + 2:]
    block.data = _join(data.reshape(merged), pos_g, extent_g, p, balanced)
    block.order = after


def _gather(run: _Run, block: Block, at: _At) -> None:
    st = at.stage
    if not run.engine.keeps_order:
        # the gathered axis outermost: else XLA:CPU may lay out the gather, and the FFT
        # before it, with that axis outermost in memory, a layout its FFT refuses
        # (a RET_CHECK in fft_thunk at run time)
        block.permute((st.axis,) + tuple(a for a in block.order if a != st.axis))
    pos = block.order.index(st.axis)
    data = run.transport.all_gather(block.scaled(), st.mesh_axis, pos)
    block.data = _join(data, pos, at.shape[st.axis], st.size, run.balanced)


def _scatter(run: _Run, block: Block, at: _At) -> None:
    st = at.stage
    pos = block.order.index(st.axis)
    data = _cut(block.scaled(), pos, st.size, run.balanced)
    chunk = data.shape[pos] // st.size
    start = run.transport.axis_index(st.mesh_axis) * chunk
    block.data = lax.dynamic_slice_in_dim(data, start, chunk, axis=pos)


# -- the chain --------------------------------------------------------------------------

# one step per kind of stage, the pieces path's included
_STEPS: dict[type, Callable[[_Run, Block, _At], None]] = {
    LocalFFT: _fft, RealFFT: _real_fft, R2RGroup: _r2r, Resize: _resize,
    Exchange: _exchange, Gather: _gather, Scatter: _scatter,
    pieces_path.FusedTransform: pieces_path.run_fused,
    pieces_path.PiecesExchange: pieces_path.run_exchange,
}
_TRANSFORMS = (LocalFFT, RealFFT, R2RGroup)


def _natural_scale(stages, shapes, inverse: bool, engine: Engine) -> float:
    """The factor the engine's own transforms apply along ``stages`` (``shapes``: the
    logical shape before each)."""
    factor = 1.0
    for st, shape in zip(stages, shapes):
        if isinstance(st, LocalFFT):
            factor *= engine.natural_scale(inverse, math.prod(shape[a] for a in st.axes))
        elif isinstance(st, RealFFT):      # the real side's points, whichever side it starts
            points = math.prod(st.n if a == st.axis else shape[a] for a in st.axes)
            factor *= engine.natural_scale(not st.to_complex, points)
    return factor


def _grouped(stages: list) -> list:
    """``stages`` with each run of DCT/DST stages (up to three) as one :class:`R2RGroup`."""
    out: list = []
    for st in stages:
        if (isinstance(st, LocalR2R) and out and isinstance(out[-1], R2RGroup)
                and len(out[-1].stages) < 3):
            out[-1] = R2RGroup(out[-1].stages + (st,))
        else:
            out.append(R2RGroup((st,)) if isinstance(st, LocalR2R) else st)
    return out


def _prepared(stages, shapes, engine: Engine, transport, block_bytes: int) -> list[_At]:
    """The stages the loop runs, each with its logical shape (``shapes``: before each of
    ``stages``) and the next transform: the pieces path's rewrite first (where the
    engine and transport have it), then DCT/DST runs grouped."""
    stages = list(stages)
    if pieces_path.enabled(engine, transport):
        stages = pieces_path.rewrite(stages, engine, transport, block_bytes)
    grouped = _grouped(stages)
    out, i = [], 0                   # i: the first original stage of grouped[k]
    for k, st in enumerate(grouped):
        nxt = next((s for s in grouped[k + 1:] if isinstance(s, _TRANSFORMS)), None)
        out.append(_At(st, tuple(shapes[i]), nxt))
        i += len(st.stages) if isinstance(st, R2RGroup) else 1
    return out


def run_chain(x: jax.Array, chain: Chain, *, inverse: bool, scale: float,
              weighted: bool = False, engine: Engine = xla_engine.ENGINE,
              transport=xla_transport) -> jax.Array:
    """Apply ``chain`` to the local block ``x`` (numpy axis order in and out).

    ``scale`` multiplies the result: fused into a transform where the engine can,
    else applied inside the first copy that the chain makes anyway (a pack, or the
    final reorder), not as a pass of its own. ``weighted`` applies the transposed real
    stage's bin weights.
    """
    run = _Run(inverse, weighted, engine, transport, chain.in_layout.balanced, x)
    shapes = [layout.shape for layout in (chain.in_layout,) + chain.layouts()]
    block = Block(x, tuple(range(x.ndim)),
                  scale / _natural_scale(chain.stages, shapes, inverse, engine))
    for at in _prepared(chain.stages, shapes, engine, transport, x.size * x.dtype.itemsize):
        _STEPS[type(at.stage)](run, block, at)
    block.permute(tuple(range(x.ndim)))
    return block.scaled()
