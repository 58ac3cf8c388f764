"""What resolving any stage into program steps shares: the block as the steps leave it
(:class:`Walk`), what one stage's resolution reads (:class:`At`), and the two steps no
single kind owns (:class:`Reorder`, :class:`Rescale`).

Positions are physical: the block's axes as they lie in memory. Each step is an
immutable value: what it runs (``run(data, transport)``, in
:func:`pfft.executor.run_program`'s loop) and how it prints (``__str__``).
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, ClassVar

import numpy as np

from .. import executor

__all__ = ["Walk", "At", "Reorder", "Rescale", "factor_text", "order_for", "engine_for",
           "take_for", "Movement", "OnAxes", "OnOneAxis"]


class Movement:
    """Rules a stage that moves or cuts data and transforms none shares: no factor of
    its own, and no exchange orders the block for it."""

    local_transform: ClassVar[bool] = False

    def natural_scale(self, shape, inverse: bool, engine) -> float:
        """1: it moves data only."""
        return 1.0


class OnAxes:
    """The batched form of a stage over ``axes``: each moves one on."""

    def batched(self):
        """The same stage on a batch stacked in a new axis 0."""
        return replace(self, axes=tuple(a + 1 for a in self.axes))


class OnOneAxis:
    """The batched form of a stage along one ``axis``: it moves one on."""

    def batched(self):
        """The same stage on a batch stacked in a new axis 0."""
        return replace(self, axis=self.axis + 1)


def factor_text(scale: float) -> str:
    """How a step prints the factor it applies (nothing for 1)."""
    return "" if scale == 1.0 else f", x {scale:.6g}"


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
        return f"transpose {self.perm}{factor_text(self.scale)}"


@dataclass(frozen=True)
class Rescale:
    """Multiply by ``scale`` (where no copy was left to carry it)."""

    scale: float

    def run(self, data, transport):
        return executor.scaled(data, self.scale)

    def __str__(self) -> str:
        return f"scale x {self.scale:.6g}"


class Walk:
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
        """The block's shape as it lies in memory."""
        return tuple(self.extent[a] for a in self.order)

    def take_scale(self) -> float:
        """The factor owed, now applied by the step that takes it."""
        scale, self.scale = self.scale, 1.0
        return scale

    def add(self, step) -> None:
        """Append ``step`` (it leaves the block at the walk's order and extents)."""
        self.steps.append(step)
        self.read_only = False
        self.shapes.append(self.physical())

    def reorder(self, order) -> None:
        """Transpose the block into the physical ``order`` (logical axes), carrying the
        owed factor; nothing where it is in that order already."""
        order = tuple(order)
        if order == self.order:
            return
        perm = tuple(self.order.index(a) for a in order)
        self.order = order
        self.add(Reorder(perm, self.take_scale()))

    def positions(self, axes, keeps_order: bool, exact: bool = False) -> tuple[int, ...]:
        """The physical positions of ``axes``, moved innermost first (``exact``-ly in
        their listed order) unless the engine ``keeps_order`` (transforms any axes)."""
        if not keeps_order:
            self.reorder(order_for(self.order, axes, exact=exact))
        return tuple(self.order.index(a) for a in axes)


def order_for(order, last, *, exact: bool = False) -> tuple[int, ...]:
    """``order`` with the axes ``last`` moved to the end: in their current order, or
    ``exact``-ly as listed."""
    tail = tuple(last) if exact else tuple(a for a in order if a in last)
    return tuple(a for a in order if a not in last) + tail


@dataclass(frozen=True)
class At:
    """What resolving one stage reads: the run's settings, the logical global shape
    before the stage, the layout after it, the next local transform, and the complex
    dtype of the plan's transforms (``precision``)."""

    inverse: bool
    weighted: bool
    engine: Any
    transport: Any
    balanced: bool
    shape: tuple[int, ...]
    layout_after: Any
    next_transform: Any
    precision: np.dtype


def engine_for(walk: Walk, at: At, positions, *, real: bool, scales_inverse: bool,
               points: int, out_size: int):
    """The engine that runs a transform: the plan's, or the one it chooses for this
    transform (``engine="auto"`` on GPUs)."""
    choose = getattr(at.engine, "choose", None)
    if choose is None:
        return at.engine
    return choose(positions, walk.physical(), real=real, scales_inverse=scales_inverse,
                  scale=walk.scale, n=points, out_size=out_size, dtype=at.precision)


def take_for(walk: Walk, engine) -> float:
    """The factor passed to ``engine``'s transform: all that is owed where it fuses
    factors (then nothing is owed after), else none (the factor stays owed)."""
    return walk.take_scale() if engine.fuses_scale else 1.0
