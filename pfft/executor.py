"""Runs a stage chain on one device's block, inside ``shard_map`` (or on one MPI rank).

The block keeps a *physical* axis order of its own: every local FFT runs on
trailing (contiguous) axes, and the reordering each FFT needs is folded into the
packing and unpacking that an all-to-all needs anyway, so no stage pays for a
separate transpose. Only the final block is put back into numpy's axis order.
Strided engines (native) keep numpy's order throughout; where the engine and the
transport allow, exchanges move pieces that the FFTs (and the DCTs and
DSTs, where the engine runs them by DUCC) pack and unpack (:mod:`pfft.pieces`).

The sign of every transform is chosen by ``inverse``; scaling is applied once, in
the first copy the chain makes anyway. Real stages run real-to-complex or
complex-to-real as the chain says, whatever the sign (the other sign is a
conjugation), and ``weighted`` applies the Hermitian bin weights of a transposed
real transform (see :mod:`pfft.autodiff`).
"""
from __future__ import annotations

import math

import jax
import jax.numpy as jnp
from jax import lax

from .engines import r2r as r2r_engine
from .engines import xla as xla_engine
from . import pieces as pieces_path
from .pieces import Pieces
from .planner import Chain
from .transports import xla as xla_transport
from .stages import Exchange, Gather, LocalFFT, LocalR2R, RealFFT, Resize, Scatter

__all__ = ["run_chain"]

class Block:
    """A local block and the logical axis held at each of its physical positions."""

    def __init__(self, data: jax.Array, order: tuple[int, ...]):
        self.data = data
        self.order = tuple(order)
        self.scale = 1.0            # pending factor, applied inside the next copy

    def take_scale(self) -> float:
        """The pending factor, for an engine that fuses it into its transform."""
        scale, self.scale = self.scale, 1.0
        return scale

    def _scaled(self):
        data = self.data
        if self.scale != 1.0:
            data = data * jnp.asarray(self.scale, dtype=jnp.finfo(data.dtype).dtype)
            self.scale = 1.0
        return data

    def permute(self, order) -> None:
        """Reorder physically so that ``order`` lists the logical axes."""
        order = tuple(order)
        if order == self.order:
            return
        perm = tuple(self.order.index(a) for a in order)
        self.data = jnp.transpose(self._scaled(), perm)
        self.order = order


def _order_for(order, last, *, exact: bool = False) -> tuple[int, ...]:
    """``order`` with the axes ``last`` moved to the end: in their current order, or
    ``exact``-ly as listed (a real transform's halved axis must be innermost)."""
    tail = tuple(last) if exact else tuple(a for a in order if a in last)
    return tuple(a for a in order if a not in last) + tail


def _fft(block: Block, axes, inverse: bool, engine, first: bool) -> None:
    if engine.capabilities.strided:   # where the axes lie; the pending scale fused in
        pos = tuple(block.order.index(a) for a in axes)
        block.data = engine.fft(block.data, pos, inverse, scale=block.take_scale(),
                                inplace=not first)
        return
    # a pending scale rides on the reorder if there is one, else stays pending
    # (FFTs are linear) until the next copy the chain makes anyway
    block.permute(_order_for(block.order, axes))
    block.data = engine.fft_trailing(block.data, len(axes), inverse)


def _real_fft(block: Block, st: RealFFT, inverse: bool, weighted: bool, engine) -> None:
    """Real-to-complex or complex-to-real stage (``inverse`` flips the sign)."""
    if not engine.capabilities.strided:
        block.permute(_order_for(block.order, st.axes, exact=True))
    data = block.data
    pos = tuple(block.order.index(a) for a in st.axes)
    weights = None
    if weighted:
        w = st.transposed_weights()
        shape = [1] * data.ndim
        shape[pos[-1]] = w.size
        weights = jnp.asarray(w.reshape(shape), dtype=jnp.finfo(data.dtype).dtype)
    if engine.capabilities.strided:
        if st.to_complex:
            data = engine.rfft(data, pos, inverse=inverse, scale=block.take_scale())
            block.data = data if weights is None else data * weights
        else:
            data = data if weights is None else data * weights
            block.data = engine.irfft(data, pos, st.n, inverse=inverse,
                                      scale=block.take_scale())
        return
    if st.to_complex:
        data = engine.rfft_trailing(data, len(st.axes))
        if weights is not None:
            data = data * weights
        if inverse:                   # real input: the + sign transform is the conjugate
            data = jnp.conj(data)
    else:
        if weights is not None:
            data = data * weights
        if not inverse:               # Hermitian input: the - sign transform of z is that of conj(z)
            data = jnp.conj(data)
        data = engine.irfft_trailing(data, len(st.axes), st.n)
    block.data = data


def _r2r(block: Block, st: LocalR2R, inverse: bool, engine) -> None:
    """A DCT or DST along one whole axis, its scaling included; a pending scale stays
    pending. By DUCC where the engine has it (native, CPU), in place along the axis;
    else through ``lax.fft`` (:mod:`pfft.engines.r2r`)."""
    op = st.op_for(inverse)
    if engine.capabilities.r2r:
        block.data = engine.r2r(block.data, op, block.order.index(st.axis))
        return
    if engine.capabilities.strided:   # numpy's order kept: the axis moves last and back
        block.data = r2r_engine.apply(block.data, op, block.order.index(st.axis))
        return
    block.permute(_order_for(block.order, st.axes))
    block.data = r2r_engine.apply_last(block.data, op)


def _resize_spectrum(block: Block, st: Resize) -> None:
    """Keep (or zero-pad back) the low frequencies along a local axis."""
    pos = block.order.index(st.axis)
    data = block.data
    small, big = sorted((st.n_from, st.n_to))
    low, high = (small, 0) if st.halved else (-(-small // 2), small // 2)
    if st.n_to < st.n_from:                          # truncate
        parts = [lax.slice_in_dim(data, 0, low, axis=pos)]
        if high:
            parts.append(lax.slice_in_dim(data, big - high, big, axis=pos))
        block.data = jnp.concatenate(parts, axis=pos) if len(parts) > 1 else parts[0]
    else:                                            # zero-pad: the transpose
        pad = [(0, 0)] * data.ndim
        pad[pos] = (0, big - small)
        head = lax.slice_in_dim(data, 0, low, axis=pos)
        if not high:
            block.data = jnp.pad(head, pad)
            return
        zeros_shape = list(data.shape)
        zeros_shape[pos] = big - small
        tail = lax.slice_in_dim(data, low, small, axis=pos)
        block.data = jnp.concatenate([head, jnp.zeros(zeros_shape, data.dtype), tail], axis=pos)


def _pad_axis(data: jax.Array, pos: int, length: int) -> jax.Array:
    """Zero-pad physical axis ``pos`` of ``data`` at its end to ``length``."""
    if data.shape[pos] == length:
        return data
    pad = [(0, 0)] * data.ndim
    pad[pos] = (0, length - data.shape[pos])
    return jnp.pad(data, pad)


def _next_fft(stages, i) -> LocalFFT | RealFFT | LocalR2R | None:
    for stage in stages[i + 1:]:
        if isinstance(stage, (LocalFFT, RealFFT, LocalR2R)):
            return stage
    return None


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


def _exchange(block: Block, st: Exchange, shape, next_fft, transport,
              engine_strided: bool = False, balanced: bool = False) -> None:
    """All-to-all ``st`` with the packing and unpacking reorders folded in
    (``balanced``: uneven axes are cut as :func:`pfft.layout.block_bounds` says)."""
    p, g, s = st.size, st.gather, st.scatter
    data = block._scaled()
    pos_s = block.order.index(s)
    chunk = -(-data.shape[pos_s] // p)                       # s's block: whole, or even
    data = _cut(data, pos_s, p, balanced)                    # pad the axis to be split
    extent_g = gathered_extent(st, shape)
    uneven = balanced and extent_g % p != 0
    if engine_strided and transport.capabilities.splits and not uneven:
        # the collective cuts s into chunks and stacks the received blocks along g
        # itself (XLA:CPU copies the chunks anyway): no pack, no unpack, order kept
        pos_g = block.order.index(g)
        data = transport.all_to_all(data, st.mesh_axis, split=pos_s, merge=pos_g)
        if data.shape[pos_g] != extent_g:
            data = lax.slice_in_dim(data, 0, extent_g, axis=pos_g)
        block.data = data
        return
    # split s into (p, chunk) and put p first, the rest in the order wanted afterwards
    if engine_strided:            # g outermost: the unpack is a free reshape
        after = (g,) + tuple(a for a in block.order if a != g)
    else:                         # the next FFT's axes innermost
        after = (_order_for(block.order, (g,)) if next_fft is None else
                 _order_for(block.order, next_fft.axes, exact=isinstance(next_fft, RealFFT)))
    data = data.reshape(data.shape[:pos_s] + (p, chunk) + data.shape[pos_s + 1:])
    dim = {ax: (i if i < pos_s else i + 1) for i, ax in enumerate(block.order)}
    data = jnp.transpose(data, (pos_s,) + tuple(dim[a] for a in after))
    data = transport.all_to_all(data, st.mesh_axis)          # leading axis: source device
    # unpack: put the source-device axis right before g's block, merge, crop padding
    pos_g = after.index(g)
    perm = tuple(range(1, pos_g + 1)) + (0,) + tuple(range(pos_g + 1, len(after) + 1))
    data = jnp.transpose(data, perm)
    new_shape = list(data.shape[:pos_g]) + [p * data.shape[pos_g + 1]] + list(data.shape[pos_g + 2:])
    data = _join(data.reshape(new_shape), pos_g, extent_g, p, balanced)
    block.data, block.order = data, after


def gathered_extent(st: Exchange, shape) -> int:
    """Length of the block along ``st.gather`` after the exchange: the whole axis
    (padding cropped), or an even share where it keeps other mesh axes."""
    return shape[st.gather] // st.gather_keep


def _gather(block: Block, st: Gather, shape, transport, balanced: bool) -> None:
    pos = block.order.index(st.axis)
    data = transport.all_gather(block._scaled(), st.mesh_axis, pos)
    block.data = _join(data, pos, shape[st.axis], st.size, balanced)


def _scatter(block: Block, st: Scatter, shape, transport, balanced: bool) -> None:
    pos = block.order.index(st.axis)
    data = _cut(block._scaled(), pos, st.size, balanced)
    chunk = data.shape[pos] // st.size
    start = transport.axis_index(st.mesh_axis) * chunk
    block.data = lax.dynamic_slice_in_dim(data, start, chunk, axis=pos)


def _natural_scale(chain: Chain, inverse: bool, engine) -> float:
    """The factor the engine's own transforms apply along ``chain``."""
    factor = 1.0
    shape = list(chain.in_layout.shape)
    for st in chain.stages:
        if isinstance(st, LocalFFT):
            factor *= engine.natural_scale(inverse, math.prod(shape[a] for a in st.axes))
        elif isinstance(st, RealFFT):
            shape[st.axis] = st.n
            factor *= engine.natural_scale(not st.to_complex,
                                           math.prod(shape[a] for a in st.axes))
        elif isinstance(st, Resize) and not st.halved:
            shape[st.axis] = st.n_to
    return factor


def run_chain(x: jax.Array, chain: Chain, *, inverse: bool, scale: float,
              weighted: bool = False, engine=xla_engine, transport=xla_transport) -> jax.Array:
    """Apply ``chain`` to the local block ``x`` (numpy axis order in and out).

    ``scale`` multiplies the result; it is applied inside the first copy that the
    chain makes anyway (a pack, or the final reorder), not as a pass of its own.
    ``weighted`` applies the transposed real stage's bin weights.
    """
    shape = list(chain.in_layout.shape)       # logical global shape, updated by real stages
    block = Block(x, tuple(range(x.ndim)))
    block.scale = scale / _natural_scale(chain, inverse, engine)
    stages = chain.stages
    balanced = chain.in_layout.balanced
    use_pieces = pieces_path.enabled(engine, transport)
    if use_pieces and balanced:  # pragma: no cover - a defect: pieces are ceil-sized
        raise RuntimeError("pieces path: balanced blocks are cut by the executor only")
    kw = dict(engine=engine, transport=transport)

    def as_pieces(st):                  # how exchange st moves pieces (None: it does not)
        return pieces_path.as_pieces(st, engine, transport, x.size * x.dtype.itemsize)

    for i, st in enumerate(stages):
        nxt = stages[i + 1] if i + 1 < len(stages) else None
        if use_pieces:
            # pfft.pieces: exchanges move pieces the FFTs pack and unpack;
            # the block keeps numpy's axis order, as with any strided engine
            if block.order != tuple(range(x.ndim)):  # pragma: no cover - a defect
                raise RuntimeError(f"pieces path: block in axis order {block.order}")
            # FFT stages, and DCT/DST stages by DUCC: one kernel pass reads and writes pieces
            if pieces_path.fused(st, engine) and (isinstance(block.data, Pieces)
                                                   or as_pieces(nxt)):
                block.data = pieces_path.transform(
                    block.data, st, inverse=inverse, weighted=weighted,
                    scale=block.take_scale(), shape=shape,
                    exchange=as_pieces(nxt), **kw)
                if isinstance(st, RealFFT):
                    shape[st.axis] = st.half if st.to_complex else st.n
                continue
            send = as_pieces(st)
            if send:
                if not pieces_path.ready_for(block.data, send):
                    block.data = pieces_path.pack(block.data, send, scale=block.take_scale(),
                                                  **kw)
                block.data = pieces_path.exchange(block.data, send, gathered_extent(st, shape),
                                                  transport)
                continue
            if isinstance(block.data, Pieces):
                block.data = pieces_path.assemble(block.data, scale=block.take_scale(), **kw)
        if isinstance(st, LocalFFT):
            _fft(block, st.axes, inverse, engine, first=(i == 0))
        elif isinstance(st, RealFFT):
            _real_fft(block, st, inverse, weighted, engine)
            shape[st.axis] = st.half if st.to_complex else st.n
        elif isinstance(st, LocalR2R):
            _r2r(block, st, inverse, engine)
        elif isinstance(st, Resize):
            _resize_spectrum(block, st)
            shape[st.axis] = st.n_to
        elif isinstance(st, Exchange):
            _exchange(block, st, shape, _next_fft(stages, i), transport,
                      engine.capabilities.strided, balanced)
        elif isinstance(st, Gather):
            _gather(block, st, shape, transport, balanced)
        elif isinstance(st, Scatter):
            _scatter(block, st, shape, transport, balanced)
        else:  # pragma: no cover
            raise TypeError(f"unknown stage {st!r}")
    if isinstance(block.data, Pieces):
        block.data = pieces_path.assemble(block.data, scale=block.take_scale(), engine=engine,
                                          transport=transport)
    block.permute(tuple(range(x.ndim)))
    return block._scaled()
