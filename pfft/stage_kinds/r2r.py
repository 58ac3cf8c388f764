"""Real-to-real stages (DCT, DST): :class:`LocalR2R`, run in groups of up to three
(:class:`R2rRun`) as one :class:`R2rGroup` step."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from .. import pieces
from ..layout import Layout
from .base import At, OnOneAxis, Walk

if TYPE_CHECKING:            # stages know no engine: the map's type, for the reader
    from ..engines.r2r import R2R

__all__ = ["LocalR2R", "R2rRun", "R2rGroup"]

#: the most DCT/DST stages in a row one engine call runs
RUN_LENGTH = 3


@dataclass(frozen=True)
class LocalR2R(OnOneAxis):
    """A real-to-real transform (DCT or DST) along one axis that is whole on every
    device: ``op`` (:class:`pfft.engines.r2r.R2R`, scaling included) in the chain's
    direction.

    As for FFT stages, the inverse stage (the chain run backwards) holds the map the
    backward direction transposes: here ``op``'s transpose. Run with the inverse
    flag a stage applies the inverse of its map's transpose (:meth:`op_for`), so the
    four variants of a plan (:mod:`pfft.autodiff`) are ``M``, ``M^-1``, ``M^T`` and
    ``M^-T``, as ``F``, ``F^-1`` and their transposes are for a DFT ``F``.
    """

    axis: int
    op: "R2R"

    local_transform: ClassVar[bool] = True
    exact_axes: ClassVar[bool] = False

    @property
    def axes(self) -> tuple[int, ...]:
        return (self.axis,)

    def inverse(self) -> "LocalR2R":
        return LocalR2R(self.axis, self.op.transposed())

    def op_for(self, inverse: bool) -> "R2R":
        """The map to apply: ``op``, or with the inverse flag ``op^-T``."""
        return self.op.inverse().transposed() if inverse else self.op

    def __str__(self) -> str:
        return f"{self.op.kind} axis {self.axis} (local), {self.op.n} points"

    def after(self, layout: Layout) -> Layout:
        """The layout after it: the same."""
        return layout

    def natural_scale(self, shape, inverse: bool, engine) -> float:
        """1: ``op`` holds its own scaling."""
        return 1.0

    def join(self, before) -> "R2rRun | None":
        """The run this stage makes with the resolved stage ``before`` it, where that
        is a DCT/DST stage or a run not yet full; else None."""
        if isinstance(before, LocalR2R):
            return R2rRun((before, self))
        if isinstance(before, R2rRun) and len(before.stages) < RUN_LENGTH:
            return R2rRun(before.stages + (self,))
        return None

    def resolve(self, walk: Walk, at: At) -> None:
        """Its step: a run of one."""
        R2rRun((self,)).resolve(walk, at)

    def pieces_route(self, form, send, kernels):
        """How its pass of the pieces kernel goes (:func:`pfft.pieces.r2r_route`)."""
        return pieces.r2r_route(self)

    def pieces_pass(self, data, route, settings, weighted: bool):
        """Its pass of the pieces kernel (:func:`pfft.pieces.transform`)."""
        return pieces.run_route(data, route, settings)


@dataclass(frozen=True)
class R2rRun:
    """DCT/DST stages in a row (up to :data:`RUN_LENGTH`), resolved as one
    :class:`R2rGroup`."""

    stages: tuple[LocalR2R, ...]

    local_transform: ClassVar[bool] = True
    exact_axes: ClassVar[bool] = False

    @property
    def axes(self) -> tuple[int, ...]:
        return tuple(st.axis for st in self.stages)

    def resolve(self, walk: Walk, at: At) -> None:
        """Its step: the engine's one call over all its axes."""
        pos = walk.positions(self.axes, at.engine.keeps_order)
        walk.add(R2rGroup(self.stages, pos, at.engine, at.inverse, not walk.read_only))


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
