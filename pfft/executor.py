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
from dataclasses import dataclass, replace
from typing import Callable, NamedTuple

import jax
import jax.numpy as jnp
from jax import lax

from .engines import r2r as r2r_engine
from .engines import xla as xla_engine
from . import pieces as pieces_path
from .pieces import Pieces
from .pipeline import Window, pipelined
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
        self.view = None            # the block's shape where ``data`` keeps another one

    @property
    def shape(self) -> tuple[int, ...]:
        """The block's shape (its axes in physical order)."""
        return self.data.shape if self.view is None else self.view

    def settle(self) -> None:
        """``data`` in the block's shape. A window that wrote its pieces over its input
        leaves the block in the input's shape (:attr:`view` the block's): a reshape
        between that window's writes and the next in-place step over the same buffer
        (a window's, a strided complex FFT's, which see it in its shape) would cost XLA
        a copy of the block; any other step reshapes it first."""
        if self.view is not None:
            self.data, self.view = self.data.reshape(self.view), None

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


def _fft(block: Block, axes, inverse: bool, engine, inplace: bool,
         overwrite: bool = False) -> None:
    """A complex transform over ``axes``: in place where ``inplace`` (its input dead
    after it), on a kernel that can where ``overwrite`` (the plan's ``overwrite_x``)."""
    if engine.capabilities.strided:   # where the axes lie; the pending scale fused in,
        pos = tuple(block.order.index(a) for a in axes)   # the block seen in its shape
        block.data = engine.fft(block.data, pos, inverse, scale=block.take_scale(),
                                inplace=inplace, prefer_inplace=overwrite, shape=block.view)
        return
    block.settle()
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


def _r2r_group(run: "_Run", start: int, stop: int) -> tuple:
    """The DCT/DST stages from ``start`` (before ``stop``) that run as one multi-axis
    FFT (:func:`pfft.engines.r2r.apply_trailing`): two or three in a row, all of type
    II or all of type III, on an engine that runs them through ``lax.fft`` (DUCC's own r2r,
    where the engine has it, needs no FFT of the whole group). Empty where there is no
    such group."""
    if run.engine.capabilities.r2r:
        return ()
    group = []
    for st in run.stages[start:stop]:
        if not isinstance(st, LocalR2R) or len(group) == 3:
            break
        group.append(st)
    while len(group) > 1 and not r2r_engine.groupable([st.op_for(run.inverse) for st in group]):
        group.pop()
    return tuple(group) if len(group) > 1 else ()


def _r2r_grouped(block: Block, group: tuple, inverse: bool, engine) -> None:
    """The DCT/DST stages ``group`` at once, their axes trailing: moved there (and, on a
    strided engine, which keeps numpy's order, back) where they are not."""
    axes = {st.axis: st for st in group}
    if engine.capabilities.strided:
        positions = sorted(block.order.index(a) for a in axes)
        ops = [axes[block.order[p]].op_for(inverse) for p in positions]
        tail = tuple(range(block.data.ndim - len(positions), block.data.ndim))
        data = jnp.moveaxis(block.data, positions, tail)
        block.data = jnp.moveaxis(r2r_engine.apply_trailing(data, ops), tail, positions)
        return
    block.permute(_order_for(block.order, axes))
    ops = [axes[a].op_for(inverse) for a in block.order[-len(axes):]]
    block.data = r2r_engine.apply_trailing(block.data, ops)


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


@dataclass
class _Run:
    """One application of a chain to a block: what every step reads, and the logical
    global shape so far (real stages and resizes change it)."""

    stages: tuple
    inverse: bool
    weighted: bool
    engine: object
    transport: object
    balanced: bool
    shape: list
    block_bytes: int          # the input block's: pfft.pieces decides by it
    pieces: bool              # whether exchanges may move pieces (pfft.pieces.enabled)
    argument: object = None   # the chain's input array
    overwrite: bool = False   # whether the argument's buffer may be worked in

    def next(self, i: int):
        """The stage after stage ``i`` (``None`` after the last)."""
        return self.stages[i + 1] if i + 1 < len(self.stages) else None

    def as_pieces(self, st) -> pieces_path.Send | None:
        """How exchange ``st`` moves pieces (``None``: it does not, or is no exchange)."""
        if not self.pieces:
            return None
        return pieces_path.as_pieces(st, self.engine, self.transport, self.block_bytes)

    def assemble(self, block: Block) -> None:
        """A block held as pieces as one array again, for a step that takes arrays."""
        if isinstance(block.data, Pieces):
            block.data = pieces_path.assemble(block.data, scale=block.take_scale(),
                                              engine=self.engine, transport=self.transport)

    def next_transform(self, i: int):
        """The first local transform after stage ``i`` (``None`` if there is none)."""
        return next((st for st in self.stages[i + 1:] if _STEPS[type(st)].transforms), None)


def _local_transform(local):
    """The step of a local transform stage: one kernel pass of :mod:`pfft.pieces` where
    its input is pieces or the exchange after it moves pieces (FFT stages, and DCT/DST
    stages where the engine runs them), else ``local(run, block, st, i)`` on an array."""
    def step(run: _Run, block: Block, st, i: int) -> None:
        send = run.as_pieces(run.next(i))
        if run.pieces and pieces_path.fused(st, run.engine) and (
                isinstance(block.data, Pieces) or send):
            block.data = pieces_path.transform(
                block.data, st, inverse=run.inverse, weighted=run.weighted,
                scale=block.take_scale(), shape=run.shape, exchange=send,
                engine=run.engine, transport=run.transport)
            return
        run.assemble(block)
        local(run, block, st, i)
    return step


def _on_array(local):
    """The step of a stage that runs on one array: pieces are assembled first."""
    def step(run: _Run, block: Block, st, i: int) -> None:
        run.assemble(block)
        local(run, block, st, i)
    return step


def _exchange_step(run: _Run, block: Block, st: Exchange, i: int) -> None:
    """An exchange: of pieces where :mod:`pfft.pieces` moves it so (packed first unless
    the transform before wrote them), else one all-to-all with its reorders folded in."""
    send = run.as_pieces(st)
    if send:
        if not pieces_path.ready_for(block.data, send):
            block.data = pieces_path.pack(block.data, send, scale=block.take_scale(),
                                          engine=run.engine, transport=run.transport)
        block.data = pieces_path.exchange(block.data, send, gathered_extent(st, run.shape),
                                          run.transport)
        return
    run.assemble(block)
    _exchange(block, st, run.shape, run.next_transform(i), run.transport,
              run.engine.capabilities.strided, run.balanced)


def _set(axis_of, length_of):
    """A change of the logical shape: ``shape[axis_of(st)] = length_of(st)``."""
    def reshape(st, shape) -> None:
        shape[axis_of(st)] = length_of(st)
    return reshape


class _Step(NamedTuple):
    """The executor's rules for one kind of stage, all in one place.

    ``run(run, block, st, i)`` applies stage ``st`` (number ``i``); ``reshape(st,
    shape)`` updates the logical global shape after it; ``natural(st, shape,
    inverse)``, for a transform the engine may scale by itself, gives the direction
    and the points it scales by (:func:`_natural_scale`); ``transforms``: a local
    transform (what the pack before it orders the block for)."""

    run: Callable
    reshape: Callable | None = None
    natural: Callable | None = None
    transforms: bool = False


_STEPS: dict[type, _Step] = {
    LocalFFT: _Step(
        _local_transform(lambda run, block, st, i: _fft(
            block, st.axes, run.inverse, run.engine,
            inplace=i > 0 or run.overwrite, overwrite=run.overwrite)),
        natural=lambda st, shape, inverse: (inverse, math.prod(shape[a] for a in st.axes)),
        transforms=True),
    RealFFT: _Step(
        _local_transform(lambda run, block, st, i: _real_fft(block, st, run.inverse,
                                                             run.weighted, run.engine)),
        reshape=_set(lambda st: st.axis, lambda st: st.half if st.to_complex else st.n),
        # the real side's points, whichever side the stage starts from
        natural=lambda st, shape, inverse: (not st.to_complex, math.prod(
            st.n if a == st.axis else shape[a] for a in st.axes)),
        transforms=True),
    LocalR2R: _Step(
        _local_transform(lambda run, block, st, i: _r2r(block, st, run.inverse, run.engine)),
        transforms=True),
    Resize: _Step(_on_array(lambda run, block, st, i: _resize_spectrum(block, st)),
                  reshape=_set(lambda st: st.axis, lambda st: st.n_to)),
    Exchange: _Step(_exchange_step),
    Gather: _Step(_on_array(lambda run, block, st, i: _gather(
        block, st, run.shape, run.transport, run.balanced))),
    Scatter: _Step(_on_array(lambda run, block, st, i: _scatter(
        block, st, run.shape, run.transport, run.balanced))),
}


def _step(st) -> _Step:
    try:
        return _STEPS[type(st)]
    except KeyError:  # pragma: no cover - a defect: every stage kind has its step
        raise TypeError(f"unknown stage {st!r}") from None


def _natural_scale(chain: Chain, inverse: bool, engine) -> float:
    """The factor the engine's own transforms apply along ``chain``."""
    factor = 1.0
    shape = list(chain.in_layout.shape)
    for st in chain.stages:
        rules = _step(st)
        if rules.natural is not None:
            factor *= engine.natural_scale(*rules.natural(st, shape, inverse))
        if rules.reshape is not None:
            rules.reshape(st, shape)
    return factor


def _run_stages(run: _Run, block: Block, start: int, stop: int) -> None:
    """Stages ``start`` to ``stop - 1``, each by its kind's step, except DCT/DST stages
    in a row that run as one group (:func:`_r2r_group`). A block a window left in its
    input's shape (:meth:`Block.settle`) stays so for a complex FFT on a strided engine,
    which sees it in its own shape (so XLA copies nothing to transform it in place)."""
    i = start
    while i < stop:
        if run.pieces and block.order != tuple(range(len(block.order))):  # pragma: no cover
            raise RuntimeError(f"pieces path: block in axis order {block.order}")  # a defect
        if not (isinstance(run.stages[i], LocalFFT) and run.engine.capabilities.strided
                and not run.pieces):
            block.settle()
        group = _r2r_group(run, i, stop)
        if group:
            run.assemble(block)
            _r2r_grouped(block, group, run.inverse, run.engine)
            i += len(group)
            continue
        st = run.stages[i]
        rules = _step(st)
        rules.run(run, block, st, i)
        if rules.reshape is not None:
            rules.reshape(st, run.shape)
        i += 1


def _take_piece(data: jax.Array, pos: int, lo: int, hi: int, chunks: int) -> jax.Array:
    """Points ``lo..hi`` along physical axis ``pos`` of ``data``, of each of its
    ``chunks`` equal chunks (one chunk: a plain slice)."""
    if chunks == 1:
        return lax.slice_in_dim(data, lo, hi, axis=pos)
    shape = data.shape
    split = data.reshape(shape[:pos] + (chunks, shape[pos] // chunks) + shape[pos + 1:])
    part = lax.slice_in_dim(split, lo, hi, axis=pos + 1)
    return part.reshape(shape[:pos] + (chunks * (hi - lo),) + shape[pos + 1:])


def _join_pieces(parts: list, pos: int, chunks: int) -> jax.Array:
    """The inverse of :func:`_take_piece` over consecutive pieces: each piece's
    points of each chunk laid side by side again."""
    if chunks == 1:
        return jnp.concatenate(parts, axis=pos)
    split = [p.reshape(p.shape[:pos] + (chunks, p.shape[pos] // chunks) + p.shape[pos + 1:])
             for p in parts]
    whole = jnp.concatenate(split, axis=pos + 1)
    shape = whole.shape
    return whole.reshape(shape[:pos] + (shape[pos] * shape[pos + 1],) + shape[pos + 2:])


def _rows_transform(run: _Run, st, order: tuple[int, ...], shape, axis: int):
    """The block axes of stage ``st`` where it can run on rows of logical ``axis``
    where they lie in the whole block (``fft_of_rows``/``fft_into_rows``: a complex
    transform over axes ending right before it, or with every axis before it of one
    point, on an engine with rows transforms), for a piece of ``shape`` in axis
    ``order``; else None."""
    if not (isinstance(st, LocalFFT) and run.engine.capabilities.rows):
        return None
    positions = tuple(order.index(a) for a in st.axes)
    if not run.engine.rows_for(positions, tuple(shape), order.index(axis)):
        return None
    return positions


class _InPlace(NamedTuple):
    """How a window writes its pieces over the block it takes them from
    (:func:`_in_place`): its exchange, and the block axes of the transform after it."""

    exchange: Exchange
    positions: tuple[int, ...]


def _in_place(run: _Run, block: Block, window: Window,
              concatenated: bool) -> _InPlace | None:
    """Whether ``window`` can run over its own input block, and how.

    The form that qualifies: an exchange then a transform, cut within the chunks of the
    scattered axis, the gathered axis outermost (a slab's forward window), on an engine
    with rows transforms and chunk copies, the exchange padding nothing. Each piece is
    taken out of the block with its chunks first (``take_chunks``, the layout the
    all-to-all sends), exchanged, and its transform writes its rows into the block
    (``fft_into_rows``). The piece lands on the bytes it was taken from: counted in runs
    of the axes after the cut axis (the same on both sides, as the block keeps its
    axis order), the runs whose index modulo the chunk size is in the piece's range.

    Where :func:`_may_write_over` allows.
    """
    if (not _may_write_over(run, block, concatenated)
            or window.stop - window.start != 2 or window.chunks < 2
            or not window.chunked_at_start):
        return None
    exchange, transform = run.stages[window.start], run.stages[window.stop - 1]
    if not (isinstance(exchange, Exchange) and window.chunks == exchange.size
            and window.axis == exchange.scatter):
        return None
    shape, order = block.shape, block.order
    p, pos_s, pos_g = exchange.size, order.index(exchange.scatter), order.index(exchange.gather)
    if pos_g != 0 or shape[pos_s] % p or gathered_extent(exchange, run.shape) != p * shape[0]:
        return None                  # the gathered axis not outermost, or padded or cropped
    piece = list(shape)              # the widest piece, after the exchange
    piece[0] *= p
    piece[pos_s] = -(-shape[pos_s] // p // window.pieces)
    positions = _rows_transform(run, transform, order, piece, window.axis)
    return None if positions is None else _InPlace(exchange, positions)


def _run_window_in_place(run: _Run, block: Block, window: Window, how: _InPlace) -> None:
    """``window`` over its own input block, as :func:`_in_place` found it can run.

    The block's end layout is its start layout reshaped (the same axis order, the
    exchange's axes resized): the pieces are written into the block seen so, the block
    itself kept in its start shape until the last piece is in (a reshape between two
    writes in place would cost XLA a copy). Piece ``m - 1`` is written after piece
    ``m`` has been taken: the write waits for the take (``after``), so XLA orders the
    two and writes in place with no copy of the block, and piece ``m``'s exchange can
    run beside piece ``m - 1``'s transform."""
    p = how.exchange.size
    pos = block.order.index(window.axis)
    start_shape = block.shape
    end_shape = list(start_shape)
    end_shape[0] *= p
    end_shape[pos] //= p
    q, r = divmod(end_shape[pos], window.pieces)
    joined = block.data                             # in the shape it came in throughout
    pending, lo = None, 0                           # the piece received last, its start

    def write(received, start: int, after=()):
        piece = received.reshape((p * received.shape[1],) + received.shape[2:])
        return run.engine.fft_into_rows(joined, piece, how.positions, run.inverse, axis=pos,
                                        start=start, shape=tuple(end_shape),
                                        scale=block.scale, after=after)

    for k in range(window.pieces):
        hi = lo + q + (k < r)
        send = run.engine.take_chunks(joined, pos, p, lo, hi, shape=start_shape)
        if pending is not None:
            joined = write(*pending, after=(send,))
        pending = (run.transport.all_to_all(send, how.exchange.mesh_axis), lo)
        lo = hi
    joined = write(*pending)
    block.data, block.scale, block.view = joined, 1.0, tuple(end_shape)


def _may_write_over(run: _Run, block: Block, concatenated: bool = False) -> bool:
    """Whether a window may write its pieces over its input block: a block the chain
    made, or the chain's argument where the chain may overwrite it (else the caller
    may still hold it, and XLA would copy it first).

    A block a window joined its pieces into is written over too: the chain's input
    kept, that holds the transform in two blocks (not three). Where the input is a
    donated argument that the chain may not overwrite, it costs the block the input's
    buffer would have given to a new one (jit aliases that buffer to the output, and
    XLA copies the result there): ``overwrite_x=True`` is then the way to one block.
    Not a block a window concatenated from its pieces (``concatenated``): it was made
    with every piece held, and a new block for the next window's pieces costs no more
    (measured)."""
    if concatenated:
        return False
    return block.data is not run.argument or run.overwrite


def _lands_where_read(start_shape, end_shape, pos: int, at_end: int) -> bool:
    """Whether rows ``lo..hi`` of an axis, at physical position ``pos`` of a block of
    ``start_shape`` and ``at_end`` of one of ``end_shape``, lie on the same bytes in
    both: the axis at the same position with as many points, as many elements before
    it, the blocks of one size."""
    return (pos == at_end and start_shape[pos] == end_shape[pos]
            and math.prod(start_shape) == math.prod(end_shape)
            and math.prod(start_shape[:pos]) == math.prod(end_shape[:pos]))


def _put_view(start_shape, piece_shape, pos: int, chunks: int,
              width: int) -> tuple[int, ...] | None:
    """The shape a piece of a window cut within its end's chunks (``width`` points of
    each of ``chunks`` chunks along physical axis ``pos``, chunk by chunk) is seen as
    to go where it lies in the joined block seen as the block of ``start_shape`` (one
    chunk along ``pos``): points ``lo..hi`` of ``pos`` there, the very bytes the piece
    was read from, as the one chunk of a ``put_chunks`` piece. The chunk index is then
    the low digit of the leading axis, so the axis must come right after it, and the
    leading axis be the one the chunks came out of. None where the piece is not so."""
    if (pos != 1 or piece_shape[0] * chunks != start_shape[0]
            or piece_shape[1] != chunks * width
            or tuple(piece_shape[2:]) != tuple(start_shape[2:])):
        return None
    return (1, start_shape[0], width) + tuple(start_shape[2:])


def _run_window(run: _Run, block: Block, window: Window, concatenated: bool = False) -> bool:
    """Stages ``window.start`` to ``window.stop - 1`` on each of ``window.pieces``
    pieces of the block cut along ``window.axis`` (within its chunks where the window
    says so), the pieces joined again afterwards (:mod:`pfft.pipeline`).

    Where the axis holds one chunk at the window's start (a cut along an axis the
    window leaves alone, or within chunks on the exchange's sharded side) and the first
    stage is a transform the engine runs on rows where they lie, each piece's first
    stage reads its rows from the whole block (no cut); where it holds one chunk at the
    end and the last stage is such a transform, each piece's last stage writes its rows
    into the joined block (no join); where the window ends with an exchange that puts
    each piece's points in every chunk of the axis, and the joined block seen as the
    start block has them on points ``lo..hi`` of the axis, each piece is copied there
    (``put_chunks``, no join). Where the pieces are read where they lie, piece
    ``m - 1`` is written once piece ``m`` has been read (the write waits for it), and
    piece ``m + 1`` read once piece ``m - 1`` is written: piece ``m``'s exchange runs
    beside both, and no more pieces than that are held at a time.

    Where the pieces land on the bytes they were read from (the cut axis in the same
    place at both ends, :func:`_lands_where_read`; or put back so, :func:`_put_view`)
    they are written over the block they are read from (:func:`_may_write_over`),
    which XLA then does in place: by the last transform where it writes rows, else
    (on an engine with chunk copies) by copying each transformed piece back
    (``put_chunks``: XLA's FFT of a middle axis on ``auto``); where they may not, into
    a new block that the first piece's write or copy makes. Where :func:`_in_place`
    allows, a window cut within its exchange's chunks on its start side goes over its
    block too (:func:`_run_window_in_place`). ``concatenated``: the block is one a
    window concatenated from its pieces. Returns whether this one did.
    """
    run.assemble(block)
    how = _in_place(run, block, window, concatenated)
    if how is not None:
        _run_window_in_place(run, block, window, how)
        return False
    writable = _may_write_over(run, block, concatenated)
    axis = window.axis
    pos = block.order.index(axis)
    start_shape = block.shape       # the block's, its buffer kept in the shape it has

    def seen(data):                 # a buffer read in the block's shape
        return data if data.shape == start_shape else data.reshape(start_shape)
    chunks_in = window.chunks if window.chunked_at_start else 1
    chunks_out = 1 if window.chunked_at_start else window.chunks
    extent = start_shape[pos] // chunks_in         # the points of a chunk
    q, r = divmod(extent, window.pieces)
    bounds, at = [], 0
    for k in range(window.pieces):
        bounds.append((at, at + q + (k < r)))
        at = bounds[-1][1]
    first, last = run.stages[window.start], run.stages[window.stop - 1]
    whole = run.shape[axis]
    # pieces whole along the cut axis are read by a kernel (a rows transform, or a
    # copy where the first stage is no such transform) where the engine has them
    by_kernel = run.engine.capabilities.rows and chunks_in == 1
    parts, joined, end_shape = [], None, None
    writes_rows = None          # the last transform's block axes, where it writes rows
    puts = None                 # whether pieces cut within the end's chunks are put back
    over = None                 # whether the pieces go over the block (first piece decides)
    pending = None              # the last piece's write, made once the next is read
    written = False             # whether ``joined`` holds a piece written already

    def joined_at(part: Block) -> tuple[int, tuple[int, ...]]:
        """Where the pieces go in a window whose end holds one chunk: the cut axis's
        place in the joined block and that block's shape. The first piece decides for
        all whether it is the block they were read from (they land on the bytes they
        were read from, and it may be written over) or a new one, made by the first
        write (``joined`` None until then)."""
        nonlocal over, joined, end_shape
        at_end = part.order.index(axis)
        shape = list(part.data.shape)
        shape[at_end] = extent
        shape = tuple(shape)
        if over is None:
            over = (writable and chunks_in == 1 and part.data.dtype == block.data.dtype
                    and _lands_where_read(start_shape, shape, pos, at_end))
            joined, end_shape = (block.data if over else None), shape
        return at_end, shape

    for lo, hi in bounds:
        sub = replace(run, shape=list(run.shape))
        if window.chunks > 1:         # the piece's logical extent, for its exchange
            sub.shape[axis] = whole // extent * (hi - lo)
        start, stop = window.start, window.stop
        piece = list(start_shape)
        piece[pos] = hi - lo
        reads = (_rows_transform(run, first, block.order, piece, axis)
                 if chunks_in == 1 else None)
        source = seen(joined if over else block.data)
        wait = (joined,) if written and not over else ()
        if reads is not None:
            part = Block(run.engine.fft_of_rows(source, reads, run.inverse, axis=pos,
                                                start=lo, stop=hi, scale=block.scale,
                                                after=wait),
                         block.order)
            start += 1
        else:
            if by_kernel:   # it waits, and it is no slice XLA could merge into the
                #             exchange's own slices of it (those would read the block
                #             behind the value a write over it waits for); kept in the
                #             copy's shape, seen in the piece's (an FFT of it in place)
                part = Block(run.engine.take_chunks(source, pos, 1, lo, hi, after=wait),
                             block.order)
                part.view = tuple(piece)
            else:
                part = Block(_take_piece(source, pos, lo, hi, chunks_in), block.order)
            part.scale = block.scale
        if pending is not None:
            joined, written = pending(after=(part.data,)), True
            pending = None
        if chunks_out == 1 and start < stop and writes_rows is not False:
            _run_stages(sub, part, start, stop - 1)
            part.settle()
            if writes_rows is None:       # decided on the first piece, the same for all
                writes_rows = _rows_transform(run, last, part.order, part.data.shape, axis)
            if writes_rows is not None:
                at_end, shape = joined_at(part)

                def write(after=(), into=joined, data=part.data, lo=lo, shape=shape,
                          scale=part.take_scale()):
                    return run.engine.fft_into_rows(into, data, writes_rows, run.inverse,
                                                    axis=at_end, start=lo, shape=shape,
                                                    scale=scale, after=after)
                if by_kernel:
                    pending = write
                else:
                    joined, written = write(), True
                continue
            writes_rows = False
            _run_stages(sub, part, stop - 1, stop)
        else:
            _run_stages(sub, part, start, stop)
        part.settle()
        if chunks_out == 1 and by_kernel:
            # a piece whose last transform writes no rows (a middle axis on ``auto``, a
            # real transform) is copied where it goes: back over the block where it
            # lands on the bytes it was read from, else into a new block (the first
            # piece making it)
            at_end, _ = joined_at(part)

            def put(after=(), into=joined, data=part._scaled(), lo=lo, at=at_end):
                return run.engine.put_chunks(into, data.reshape((1,) + data.shape), at,
                                             1, lo, shape=end_shape, after=after)
            pending = put
            continue
        if chunks_out > 1 and puts is not False and by_kernel:
            view = None
            if part.order.index(axis) == pos and part.data.dtype == block.data.dtype:
                view = _put_view(start_shape, part.data.shape, pos, chunks_out, hi - lo)
            if puts is None:              # decided on the first piece, the same for all
                puts = view is not None
                over = puts and writable
                if puts:                  # over the block, else a new one seen as it
                    joined = block.data if over else None   # (made by the first put)
                end_shape = tuple(n // chunks_out if i == 0 else n * chunks_out if i == pos
                                  else n for i, n in enumerate(start_shape))
            if puts:
                def put(after=(), into=joined, data=part._scaled().reshape(view), lo=lo):
                    return run.engine.put_chunks(into, data, pos, 1, lo, shape=start_shape,
                                                 after=after)
                pending = put
                continue
        parts.append(part)
    if pending is not None:
        joined = pending()
    if joined is not None:
        block.data, block.order, block.scale = joined, part.order, 1.0
        # a block written over, or put into, keeps the shape it was made in
        block.view = end_shape if joined.shape != end_shape else None
    else:
        # every piece ran the same steps: the same order and pending factor
        block.order, block.scale = parts[0].order, parts[0].scale
        block.data = _join_pieces([part.data for part in parts], block.order.index(axis),
                                  chunks_out)
        block.view = None
    run.shape[:] = sub.shape
    run.shape[axis] = whole
    return joined is None


def run_chain(x: jax.Array, chain: Chain, *, inverse: bool, scale: float,
              weighted: bool = False, engine=xla_engine, transport=xla_transport,
              pipeline: int = 1, overwrite: bool = False) -> jax.Array:
    """Apply ``chain`` to the local block ``x`` (numpy axis order in and out).

    ``scale`` multiplies the result; it is applied inside the first copy that the
    chain makes anyway (a pack, or the final reorder), not as a pass of its own.
    ``weighted`` applies the transposed real stage's bin weights. Each stage runs by
    its kind's step (:data:`_STEPS`); where the engine and the transport allow,
    exchanges move pieces the transforms pack and unpack (:mod:`pfft.pieces`), the
    block in numpy's axis order throughout. ``pipeline > 1`` cuts the stages around
    each exchange into that many pieces where some axis allows
    (:func:`pfft.pipeline.pipelined`); such a chain does not move pieces.
    ``overwrite``: the chain may work in ``x``'s buffer (its first FFT in place, a
    window written over it); else ``x`` is only read. Only where the result is a block
    of ``x``'s size and dtype: a donated buffer XLA can alias to no output (a real
    transform's) is one it copies before writing over it.
    """
    overwrite = overwrite and chain.real_stage is None and (
        math.prod(chain.out_layout.local_shape) == x.size)
    chain, windows = pipelined(chain, pipeline)
    starts = {w.start: w for w in windows}
    block = Block(x, tuple(range(x.ndim)))
    block.scale = scale / _natural_scale(chain, inverse, engine)
    run = _Run(tuple(chain.stages), inverse, weighted, engine, transport,
               chain.in_layout.balanced, list(chain.in_layout.shape),
               x.size * x.dtype.itemsize,
               pieces_path.enabled(engine, transport) and not windows,
               argument=x, overwrite=overwrite)
    if run.pieces and run.balanced:  # pragma: no cover - a defect: pieces are ceil-sized
        raise RuntimeError("pieces path: balanced blocks are cut by the executor only")
    # the chain in runs: each window on its pieces, the stages between windows as they are
    bounds = sorted({0, len(run.stages)} | {b for w in windows for b in (w.start, w.stop)})
    concatenated = False    # whether the block is one a window concatenated from pieces
    for start, stop in zip(bounds, bounds[1:]):
        if start in starts:
            concatenated = _run_window(run, block, starts[start], concatenated)
        else:
            _run_stages(run, block, start, stop)
            concatenated = False
    block.settle()
    run.assemble(block)
    block.permute(tuple(range(x.ndim)))
    return block._scaled()
