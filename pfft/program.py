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
  (one swap, or cyclic shifts: :mod:`pfft.pieces`), each such FFT's passes in the
  order its route says (:class:`pfft.pieces.Route`: which pass takes the factor,
  which two run as one call);
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

from . import pieces as pieces_path
from .chain_search import Chain
from .stage_kinds.base import At, Reorder, Rescale, Walk, factor_text
from .stage_kinds.exchange import AllGather, AllToAll, Slice
from .stage_kinds.fft import Fft, RealFft
from .stage_kinds.r2r import R2rGroup
from .stage_kinds.resize import Truncate
from .stages import Exchange

__all__ = ["Program", "resolve", "Reorder", "Fft", "RealFft", "R2rGroup", "Truncate",
           "AllToAll", "AllGather", "Slice", "FusedPasses", "PiecesMove", "Rescale"]


# -- the steps of the pieces path ------------------------------------------------------------
# Each stage kind's own steps are beside it (:mod:`pfft.stage_kinds`); these two run the
# forms :func:`pfft.pieces.rewrite` gives a chain, whatever its stages' kinds.

@dataclass(frozen=True)
class FusedPasses:
    """A local transform as passes of the pieces kernel (:mod:`pfft.pieces`): it reads
    the pieces the exchange before it delivered (or an array) and writes the pieces
    the exchange after it sends (or one array), its passes going as ``route`` says;
    ``shape``: the logical global shape before it."""

    fused: Any                      # pieces.FusedTransform
    route: Any                      # pieces.Route
    kernels: Any
    inverse: bool
    weighted: bool
    scale: float
    shape: tuple[int, ...]

    def run(self, data, transport):
        settings = pieces_path.PassSettings(self.kernels, transport, self.inverse, self.scale,
                                            self.fused.send, self.shape)
        return pieces_path.transform(data, self.fused.stage, self.route, settings,
                                     self.weighted)

    def __str__(self) -> str:
        send = ", writing the pieces the exchange sends" if self.fused.send else ""
        return (f"{self.fused.stage}, by native (pieces kernel: {self.route}){send}"
                f"{factor_text(self.scale)}")


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


def natural_scale(stages, shapes, inverse: bool, engine) -> float:
    """The factor ``engine``'s own transforms apply along ``stages`` (``shapes``: the
    logical shape before each): each kind's own (``natural_scale``)."""
    factor = 1.0
    for st, shape in zip(stages, shapes):
        factor *= st.natural_scale(shape, inverse, engine)
    return factor


def _grouped(stages: list) -> list:
    """``stages`` with the stages a kind runs together joined (``join``: a run of
    DCT/DST stages, :class:`pfft.stage_kinds.r2r.R2rRun`)."""
    out: list = []
    for st in stages:
        join = getattr(st, "join", None)
        run = join(out[-1]) if join is not None and out else None
        if run is None:
            out.append(st)
        else:
            out[-1] = run
    return out


def _length(st) -> int:
    """How many of the chain's stages ``st`` (of :func:`_grouped`) stands for."""
    return len(getattr(st, "stages", (st,)))


def _is_transform(st) -> bool:
    """Whether ``st`` (of :func:`_grouped`) is a local transform an exchange before it
    orders the block for (a pieces pass is not: it reads the block as it lies)."""
    return getattr(st, "local_transform", False)


def resolve(chain: Chain, *, inverse: bool, weighted: bool, scale: float, dtype,
            engine, transport, overwrite_input: bool = False) -> Program:
    """The program of ``chain`` run with the sign ``inverse`` (``weighted``: the
    transposed real stage's bin weights), scaled by ``scale`` in all, on ``engine``
    over ``transport``, for blocks of ``dtype`` (the chain's input's).

    A transform writes over its input where that input is dead after it: any block a
    step made, and with ``overwrite_input`` the argument too (XLA then transforms a
    donated argument in its buffer, and copies a kept one first).

    Every choice is taken here (the module's docstring), each stage's by its kind
    (``resolve``, :mod:`pfft.stage_kinds`); the same arguments give the same
    program."""
    layouts = (chain.in_layout,) + chain.layouts()
    shapes = [layout.shape for layout in layouts]
    block_bytes = math.prod(chain.in_layout.local_shape) * np.dtype(dtype).itemsize
    stages = list(chain.stages)
    if pieces_path.enabled(engine, transport):
        stages = pieces_path.rewrite(stages, engine, transport, block_bytes)
    walk = Walk(chain.in_layout.local_shape,
                scale / natural_scale(chain.stages, shapes, inverse, engine))
    walk.read_only = not overwrite_input
    precision = np.result_type(dtype, np.complex64)
    grouped = _grouped(stages)
    i = 0                           # the chain stage grouped[k] starts at
    for k, st in enumerate(grouped):
        nxt = next((s for s in grouped[k + 1:] if _is_transform(s)), None)
        at = At(inverse, weighted, engine, transport, chain.in_layout.balanced,
                tuple(shapes[i]), layouts[i + _length(st)], nxt, precision)
        (_PIECES_RESOLVERS.get(type(st)) or type(st).resolve)(st, walk, at)
        i += _length(st)
    walk.reorder(range(len(walk.order)))
    if walk.scale != 1.0:
        walk.add(Rescale(walk.take_scale()))
    return Program(tuple(walk.steps), tuple(walk.shapes))


def _fused(st: pieces_path.FusedTransform, walk: Walk, at: At) -> None:
    last = walk.steps[-1] if walk.steps else None       # pieces in: cut where they landed
    cut = (last.move.send.gather if isinstance(last, PiecesMove) and not last.move.assemble
           else None)
    route = st.stage.pieces_route(pieces_path.Form(walk.physical(), cut), st.send,
                                  at.engine.pieces)
    for a in st.stage.axes:         # whole: the stage's own sizes after it
        walk.extent[a] = at.layout_after.local_size(a)
    walk.add(FusedPasses(st, route, at.engine.pieces, at.inverse, at.weighted,
                         walk.take_scale(), at.shape))


def _pieces_exchange(st: pieces_path.PiecesExchange, walk: Walk, at: At) -> None:
    send = st.send
    pack_scale = walk.take_scale() if st.pack else 1.0
    extent = send.gathered_extent(at.shape)
    walk.extent[send.gather] = extent
    walk.extent[send.scatter] = at.layout_after.local_size(send.scatter)
    assemble_scale = walk.take_scale() if st.assemble else 1.0
    walk.add(PiecesMove(st, at.engine.pieces, pack_scale, assemble_scale, extent))


# the forms the pieces path rewrites stages into (every stage kind resolves itself)
_PIECES_RESOLVERS = {
    pieces_path.FusedTransform: _fused, pieces_path.PiecesExchange: _pieces_exchange,
}
