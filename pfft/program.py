"""A plan's program: the steps one device's block goes through, resolved once.

A plan is made in three steps, each a value: the problem (shape, dtype, axes, kinds,
mesh), the chain of stages the planner finds (:mod:`pfft.chain_search`: which
transforms and exchanges, from which layout to which), and here the *program* of each
way the chain runs (a :class:`pfft.autodiff.Variant`): every decision the chain leaves
open, taken when the plan is made,

- which engine runs each FFT stage (``engine="auto"`` on GPUs chooses per stage:
  :meth:`pfft.engines.per_stage.PerStageEngine.choose`) and the physical axes it
  transforms (an engine that transforms only innermost axes gets a transpose first);
- the form of each exchange: XLA's all-to-all cutting and stacking the axes itself,
  or packed into a leading device axis first (with the reorder the next transform
  wants folded in), or, on the native CPU engine, pieces the FFTs write and read
  (one swap, or cyclic shifts: :mod:`pfft.pieces`);
- which DCT/DST stages run as one group;
- where each factor is applied: fused into a transform, or in the next copy (a
  transpose, a pack), or in a multiply at the end;
- the block's axis order and shape before and after each step.

:func:`resolve` makes it; :func:`pfft.executor.run_program` runs it, step by step,
choosing nothing; ``print(plan)`` prints it (:meth:`Program.lines`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import executor, pieces as pieces_path
from .chain_search import Chain
from .stages import Exchange, Gather, LocalFFT, LocalR2R, RealFFT, Resize, Scatter

__all__ = ["Program", "resolve", "Reorder", "Fft", "RealFft", "R2rGroup", "Truncate",
           "AllToAll", "AllGather", "Slice", "FusedPasses", "PiecesMove", "Rescale"]


def _factor(scale: float) -> str:
    return "" if scale == 1.0 else f", x {scale:.6g}"


# -- the steps ----------------------------------------------------------------------------
# Each is an immutable value: what it runs (``run(data, transport)``, in
# :mod:`pfft.executor`'s loop) and how it prints (``__str__``). Positions are physical:
# the block's axes as they lie in memory.

@dataclass(frozen=True)
class Reorder:
    """Transpose the block (``perm`` as ``jnp.transpose`` takes it), the factor
    ``scale`` applied in that copy."""

    perm: tuple[int, ...]
    scale: float = 1.0

    def run(self, data, transport):
        import jax.numpy as jnp

        return jnp.transpose(executor.scaled(data, self.scale), self.perm)

    def __str__(self) -> str:
        return f"transpose {self.perm}{_factor(self.scale)}"


@dataclass(frozen=True)
class Fft:
    """A complex FFT over physical ``positions`` by ``engine`` (its sign ``inverse``),
    ``scale`` passed to it (fused where the engine fuses factors); ``inplace``: the
    input is dead after it."""

    stage: LocalFFT
    positions: tuple[int, ...]
    engine: Any
    inverse: bool
    scale: float
    inplace: bool

    def run(self, data, transport):
        return self.engine.fft(data, self.positions, self.inverse, scale=self.scale,
                               inplace=self.inplace)[0]

    def __str__(self) -> str:
        return f"{self.stage}, by {self.engine.name}{_factor(self.scale)}"


@dataclass(frozen=True)
class RealFft:
    """A real-to-complex or complex-to-real FFT (``stage``) over physical ``positions``
    (the halved axis last) by ``engine``; ``weights``: the transposed transform's bin
    weights on the complex side, or None."""

    stage: RealFFT
    positions: tuple[int, ...]
    engine: Any
    inverse: bool
    scale: float
    weights: tuple[float, ...] | None

    def _weights(self, ndim: int, dtype):
        import jax.numpy as jnp

        shape = [1] * ndim
        shape[self.positions[-1]] = len(self.weights)
        return jnp.asarray(np.reshape(self.weights, shape), dtype=jnp.finfo(dtype).dtype)

    def run(self, data, transport):
        st = self.stage
        if st.to_complex:
            out = self.engine.rfft(data, self.positions, inverse=self.inverse,
                                   scale=self.scale)[0]
            return out if self.weights is None else out * self._weights(out.ndim, out.dtype)
        if self.weights is not None:
            data = data * self._weights(data.ndim, data.dtype)
        return self.engine.irfft(data, self.positions, st.n, inverse=self.inverse,
                                 scale=self.scale)[0]

    def __str__(self) -> str:
        weighted = ", bins weighted" if self.weights is not None else ""
        return f"{self.stage}, by {self.engine.name}{_factor(self.scale)}{weighted}"


@dataclass(frozen=True)
class R2rGroup:
    """DCT/DST stages in a row as one engine call (which may group them into one
    multi-axis FFT: :func:`pfft.engines.r2r.apply_along`), their scaling included."""

    stages: tuple[LocalR2R, ...]
    positions: tuple[int, ...]
    engine: Any
    inverse: bool
    inplace: bool

    def run(self, data, transport):
        ops = [st.op_for(self.inverse) for st in self.stages]
        return self.engine.r2r(data, ops, self.positions, inplace=self.inplace)

    def __str__(self) -> str:
        by = getattr(self.engine, "r2r_by", "xla")     # DUCC's on CPU, else lax.fft
        if len(self.stages) == 1:
            return f"{self.stages[0]}, by {by}"
        return "; ".join(map(str, self.stages)) + f" (one group), by {by}"


@dataclass(frozen=True)
class Truncate:
    """Keep (or zero-pad back) the low frequencies along physical ``position``."""

    stage: Resize
    position: int

    def run(self, data, transport):
        return executor.resize(data, self.stage, self.position)

    def __str__(self) -> str:
        return str(self.stage)


@dataclass(frozen=True)
class AllToAll:
    """Exchange ``stage`` by XLA's all-to-all, ``scale`` applied in its first copy.

    ``split``: the collective cuts the scattered axis and stacks the received blocks
    along the gathered one itself (``positions``: theirs; the order is kept).
    Otherwise the block is packed with the device axis in front and the axes in
    ``order_after`` (logical axes, physical order after the exchange), unpacked after.
    """

    stage: Exchange
    scale: float
    split: bool
    order_before: tuple[int, ...]
    order_after: tuple[int, ...]
    extent: int                     # the gathered axis's length after it
    balanced: bool

    def run(self, data, transport):
        return executor.exchange(data, self, transport)

    def __str__(self) -> str:
        how = "cut and stacked by the collective" if self.split else "packed"
        return f"{self.stage}, {how}{_factor(self.scale)}"


@dataclass(frozen=True)
class AllGather:
    """Gather ``stage``'s axis (at physical ``position``), ``scale`` applied first."""

    stage: Gather
    position: int
    scale: float
    extent: int
    balanced: bool

    def run(self, data, transport):
        data = transport.all_gather(executor.scaled(data, self.scale), self.stage.mesh_axis,
                                    self.position)
        return executor.join(data, self.position, self.extent, self.stage.size,
                             self.balanced)

    def __str__(self) -> str:
        return f"{self.stage}{_factor(self.scale)}"


@dataclass(frozen=True)
class Slice:
    """Keep this device's block of ``stage``'s axis (at physical ``position``)."""

    stage: Scatter
    position: int
    scale: float
    balanced: bool

    def run(self, data, transport):
        from jax import lax

        data = executor.cut(executor.scaled(data, self.scale), self.position,
                            self.stage.size, self.balanced)
        chunk = data.shape[self.position] // self.stage.size
        start = transport.axis_index(self.stage.mesh_axis) * chunk
        return lax.dynamic_slice_in_dim(data, start, chunk, axis=self.position)

    def __str__(self) -> str:
        return f"{self.stage}{_factor(self.scale)}"


@dataclass(frozen=True)
class FusedPasses:
    """A local transform as passes of the pieces kernel (:mod:`pfft.pieces`): it reads
    the pieces the exchange before it delivered (or an array) and writes the pieces
    the exchange after it sends (or one array); ``shape``: the logical global shape
    before it."""

    fused: Any                      # pieces.FusedTransform
    kernels: Any
    inverse: bool
    weighted: bool
    scale: float
    shape: tuple[int, ...]

    def run(self, data, transport):
        settings = pieces_path.PassSettings(self.kernels, transport, self.inverse, self.scale,
                                            self.fused.send, self.shape)
        return pieces_path.transform(data, self.fused.stage, settings, self.weighted)

    def __str__(self) -> str:
        send = ", writing the pieces the exchange sends" if self.fused.send else ""
        return f"{self.fused.stage}, by native (pieces kernel){send}{_factor(self.scale)}"


@dataclass(frozen=True)
class PiecesMove:
    """Exchange of pieces (:class:`pfft.pieces.PiecesExchange`): a pack pass first
    (``pack_scale`` applied) where the stage before wrote none, an assembling pass
    after (``assemble_scale``) where the stage after reads none."""

    move: Any                       # pieces.PiecesExchange
    kernels: Any
    pack_scale: float
    assemble_scale: float
    extent: int

    def run(self, data, transport):
        step, kernels = self.move, self.kernels
        if step.pack:
            data = pieces_path.pack(data, step.send, scale=self.pack_scale, engine=kernels,
                                    transport=transport)
        data = pieces_path.exchange(data, step.send, self.extent, transport)
        if step.assemble:
            data = pieces_path.assemble(data, scale=self.assemble_scale, engine=kernels,
                                        transport=transport)
        return data

    def __str__(self) -> str:
        send = self.move.send
        how = ("as 1 swap of pieces" if send.sign == 0
               else f"as {send.size - 1} collective permute(s) of pieces")
        st = Exchange(send.mesh_axis, send.size, send.gather, send.scatter, send.gather_keep,
                      send.scatter_had)
        return f"{st}, {how}"


@dataclass(frozen=True)
class Rescale:
    """Multiply by ``scale`` (where no copy was left to carry it)."""

    scale: float

    def run(self, data, transport):
        return executor.scaled(data, self.scale)

    def __str__(self) -> str:
        return f"scale x {self.scale:.6g}"


# -- the program ----------------------------------------------------------------------------

@dataclass(frozen=True)
class Program:
    """The steps one variant of a plan runs on a device's block, in order, with the
    block's physical shape before each (``shapes[i]``) and after the last."""

    steps: tuple
    shapes: tuple[tuple[int, ...], ...]

    def lines(self) -> list[str]:
        """One line a step: what it does, and the block's shape before and after."""
        out = []
        for i, step in enumerate(self.steps):
            before, after = self.shapes[i], self.shapes[i + 1]
            shape = (f"block {before}" if before == after else f"block {before} -> {after}")
            out.append(f"{step} [{shape}]")
        return out

    def engines(self) -> list[str]:
        """The engine of each FFT step, in order ("native" or "xla")."""
        return [s.engine.name for s in self.steps if isinstance(s, (Fft, RealFft))]


class _Walk:
    """The block as the program's steps leave it: its physical axis order, its logical
    shape per axis, the factor still owed, and whether it is still the caller's
    argument, which a transform may not write over (``read_only``)."""

    def __init__(self, shape, scale: float):
        self.order = tuple(range(len(shape)))
        self.extent = list(shape)            # logical axis -> local length
        self.scale = scale
        self.read_only = True
        self.steps: list = []
        self.shapes: list = [self.physical()]

    def physical(self) -> tuple[int, ...]:
        return tuple(self.extent[a] for a in self.order)

    def take_scale(self) -> float:
        scale, self.scale = self.scale, 1.0
        return scale

    def add(self, step) -> None:
        self.steps.append(step)
        self.read_only = False
        self.shapes.append(self.physical())

    def reorder(self, order) -> None:
        order = tuple(order)
        if order == self.order:
            return
        perm = tuple(self.order.index(a) for a in order)
        self.order = order
        self.add(Reorder(perm, self.take_scale()))

    def positions(self, axes, keeps_order: bool, exact: bool = False) -> tuple[int, ...]:
        if not keeps_order:
            self.reorder(_order_for(self.order, axes, exact=exact))
        return tuple(self.order.index(a) for a in axes)


def _order_for(order, last, *, exact: bool = False) -> tuple[int, ...]:
    """``order`` with the axes ``last`` moved to the end: in their current order, or
    ``exact``-ly as listed."""
    tail = tuple(last) if exact else tuple(a for a in order if a in last)
    return tuple(a for a in order if a not in last) + tail


@dataclass(frozen=True)
class _R2rRun:
    """DCT/DST stages in a row (up to three), resolved as one :class:`R2rGroup`."""

    stages: tuple[LocalR2R, ...]

    @property
    def axes(self) -> tuple[int, ...]:
        return tuple(st.axis for st in self.stages)


def _grouped(stages: list) -> list:
    """``stages`` with each run of DCT/DST stages (up to three) as one :class:`_R2rRun`."""
    out: list = []
    for st in stages:
        if (isinstance(st, LocalR2R) and out and isinstance(out[-1], _R2rRun)
                and len(out[-1].stages) < 3):
            out[-1] = _R2rRun(out[-1].stages + (st,))
        else:
            out.append(_R2rRun((st,)) if isinstance(st, LocalR2R) else st)
    return out


def _length(st) -> int:
    """How many of the chain's stages ``st`` (of :func:`_grouped`) stands for."""
    return len(st.stages) if isinstance(st, _R2rRun) else 1


_TRANSFORMS = (LocalFFT, RealFFT, _R2rRun)


def natural_scale(stages, shapes, inverse: bool, engine) -> float:
    """The factor ``engine``'s own transforms apply along ``stages`` (``shapes``: the
    logical shape before each)."""
    factor = 1.0
    for st, shape in zip(stages, shapes):
        if isinstance(st, LocalFFT):
            factor *= engine.natural_scale(inverse, math.prod(shape[a] for a in st.axes))
        elif isinstance(st, RealFFT):      # the real side's points, whichever side it starts
            points = math.prod(st.n if a == st.axis else shape[a] for a in st.axes)
            factor *= engine.natural_scale(not st.to_complex, points)
    return factor


def resolve(chain: Chain, *, inverse: bool, weighted: bool, scale: float, dtype,
            engine, transport, overwrite_input: bool = False) -> Program:
    """The program of ``chain`` run with the sign ``inverse`` (``weighted``: the
    transposed real stage's bin weights), scaled by ``scale`` in all, on ``engine``
    over ``transport``, for blocks of ``dtype`` (the chain's input's).

    A transform writes over its input where that input is dead after it: any block a
    step made, and with ``overwrite_input`` the argument too (XLA then transforms a
    donated argument in its buffer, and copies a kept one first).

    Every choice is taken here (the module's docstring); the same arguments give the
    same program."""
    layouts = (chain.in_layout,) + chain.layouts()
    shapes = [layout.shape for layout in layouts]
    block_bytes = math.prod(chain.in_layout.local_shape) * np.dtype(dtype).itemsize
    stages = list(chain.stages)
    if pieces_path.enabled(engine, transport):
        stages = pieces_path.rewrite(stages, engine, transport, block_bytes)
    walk = _Walk(chain.in_layout.local_shape,
                 scale / natural_scale(chain.stages, shapes, inverse, engine))
    walk.read_only = not overwrite_input
    grouped = _grouped(stages)
    i = 0                           # the chain stage grouped[k] starts at
    for k, st in enumerate(grouped):
        nxt = next((s for s in grouped[k + 1:] if isinstance(s, _TRANSFORMS)), None)
        at = _At(inverse, weighted, engine, transport, chain.in_layout.balanced,
                 tuple(shapes[i]), layouts[i + _length(st)], nxt)
        _RESOLVERS[type(st)](walk, st, at)
        i += _length(st)
    walk.reorder(range(len(walk.order)))
    if walk.scale != 1.0:
        walk.add(Rescale(walk.take_scale()))
    return Program(tuple(walk.steps), tuple(walk.shapes))


@dataclass(frozen=True)
class _At:
    """What resolving one stage reads: the run's settings, the logical global shape
    before the stage, the layout after it, and the next local transform."""

    inverse: bool
    weighted: bool
    engine: Any
    transport: Any
    balanced: bool
    shape: tuple[int, ...]
    layout_after: Any
    next_transform: Any


def _engine_for(walk: _Walk, at: _At, positions, *, real: bool, scales_inverse: bool,
                points: int, out_size: int):
    """The engine that runs a transform: the plan's, or the one it chooses for this
    transform (``engine="auto"`` on GPUs)."""
    choose = getattr(at.engine, "choose", None)
    if choose is None:
        return at.engine
    return choose(positions, walk.physical(), real=real, scales_inverse=scales_inverse,
                  scale=walk.scale, n=points, out_size=out_size)


def _take_for(walk: _Walk, engine) -> float:
    """The factor passed to ``engine``'s transform: all that is owed where it fuses
    factors (then nothing is owed after), else none (the factor stays owed)."""
    return walk.take_scale() if engine.fuses_scale else 1.0


def _fft(walk: _Walk, st: LocalFFT, at: _At) -> None:
    pos = walk.positions(st.axes, at.engine.keeps_order)
    n = math.prod(at.shape[a] for a in st.axes)
    engine = _engine_for(walk, at, pos, real=False, scales_inverse=at.inverse, points=n,
                         out_size=math.prod(walk.physical()))
    inplace = not walk.read_only
    walk.add(Fft(st, pos, engine, at.inverse, _take_for(walk, engine), inplace))


def _real_fft(walk: _Walk, st: RealFFT, at: _At) -> None:
    pos = walk.positions(st.axes, at.engine.keeps_order, exact=True)
    points = math.prod(st.n if a == st.axis else at.shape[a] for a in st.axes)
    out = math.prod(walk.physical()) // max(walk.extent[st.axis], 1) * (
        st.half if st.to_complex else st.n)
    engine = _engine_for(walk, at, pos, real=True, scales_inverse=not st.to_complex,
                         points=points, out_size=out)
    weights = tuple(st.transposed_weights().tolist()) if at.weighted else None
    scale = _take_for(walk, engine)
    walk.extent[st.axis] = st.half if st.to_complex else st.n
    walk.add(RealFft(st, pos, engine, at.inverse, scale, weights))


def _r2r(walk: _Walk, run: _R2rRun, at: _At) -> None:
    pos = walk.positions(run.axes, at.engine.keeps_order)
    walk.add(R2rGroup(run.stages, pos, at.engine, at.inverse, not walk.read_only))


def _resize(walk: _Walk, st: Resize, at: _At) -> None:
    pos = walk.order.index(st.axis)
    walk.extent[st.axis] = st.n_to
    walk.add(Truncate(st, pos))


def _order_after(walk: _Walk, st: Exchange, at: _At) -> tuple[int, ...]:
    """The block's axis order after exchange ``st``: the gathered axis outermost (its
    unpack a free reshape) where the engine keeps numpy's order, else the next
    transform's axes innermost."""
    g, after = st.gather, at.next_transform
    if at.engine.keeps_order:
        return (g,) + tuple(a for a in walk.order if a != g)
    if after is None:
        return _order_for(walk.order, (g,))
    return _order_for(walk.order, after.axes, exact=isinstance(after, RealFFT))


def _exchange(walk: _Walk, st: Exchange, at: _At) -> None:
    extent = st.gathered_extent(at.shape)
    split = (at.engine.keeps_order and at.transport.capabilities.splits
             and not (at.balanced and extent % st.size))
    before = walk.order
    after = before if split else _order_after(walk, st, at)
    walk.order = after
    walk.extent[st.gather] = extent
    walk.extent[st.scatter] = at.layout_after.local_size(st.scatter)
    walk.add(AllToAll(st, walk.take_scale(), split, before, after, extent, at.balanced))


def _gather(walk: _Walk, st: Gather, at: _At) -> None:
    if not at.engine.keeps_order:
        # the gathered axis outermost: else XLA:CPU may lay out the gather, and the FFT
        # before it, with that axis outermost in memory, a layout its FFT refuses
        # (a RET_CHECK in fft_thunk at run time)
        walk.reorder((st.axis,) + tuple(a for a in walk.order if a != st.axis))
    pos = walk.order.index(st.axis)
    walk.extent[st.axis] = at.shape[st.axis]
    walk.add(AllGather(st, pos, walk.take_scale(), at.shape[st.axis], at.balanced))


def _scatter(walk: _Walk, st: Scatter, at: _At) -> None:
    pos = walk.order.index(st.axis)
    walk.extent[st.axis] = at.layout_after.local_size(st.axis)
    walk.add(Slice(st, pos, walk.take_scale(), at.balanced))


def _fused(walk: _Walk, st, at: _At) -> None:
    stage = st.stage
    if isinstance(stage, RealFFT):
        walk.extent[stage.axis] = stage.half if stage.to_complex else stage.n
    walk.add(FusedPasses(st, at.engine.pieces, at.inverse, at.weighted, walk.take_scale(),
                         at.shape))


def _pieces_exchange(walk: _Walk, st, at: _At) -> None:
    send = st.send
    pack_scale = walk.take_scale() if st.pack else 1.0
    extent = send.gathered_extent(at.shape)
    walk.extent[send.gather] = extent
    walk.extent[send.scatter] = at.layout_after.local_size(send.scatter)
    assemble_scale = walk.take_scale() if st.assemble else 1.0
    walk.add(PiecesMove(st, at.engine.pieces, pack_scale, assemble_scale, extent))


_RESOLVERS = {
    LocalFFT: _fft, RealFFT: _real_fft, _R2rRun: _r2r, Resize: _resize,
    Exchange: _exchange, Gather: _gather, Scatter: _scatter,
    pieces_path.FusedTransform: _fused, pieces_path.PiecesExchange: _pieces_exchange,
}
