"""FFT stages: complex (:class:`LocalFFT`) and real (:class:`RealFFT`), with their
program steps (:class:`Fft`, :class:`RealFft`)."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from .. import pieces
from ..hermitian import bin_weights
from ..layout import Layout
from .base import At, OnAxes, Walk, engine_for, factor_text, take_for

__all__ = ["LocalFFT", "RealFFT", "Fft", "RealFft"]


def _axes_text(axes: tuple[int, ...]) -> str:
    return f"axis {axes[0]}" if len(axes) == 1 else f"axes {axes}"


@dataclass(frozen=True)
class LocalFFT(OnAxes):
    """FFT over array axes that are whole on every device."""

    axes: tuple[int, ...]

    #: a local transform: the exchange before it orders the block for it
    local_transform: ClassVar[bool] = True
    #: its axes may lie innermost in any order
    exact_axes: ClassVar[bool] = False

    def inverse(self) -> "LocalFFT":
        return self

    def __str__(self) -> str:
        return f"fft {_axes_text(self.axes)} (local)"

    def after(self, layout: Layout) -> Layout:
        """The layout after it: the same."""
        return layout

    def natural_scale(self, shape, inverse: bool, engine) -> float:
        """The factor ``engine``'s FFT applies (``shape``: the logical one before)."""
        return engine.natural_scale(inverse, math.prod(shape[a] for a in self.axes))

    def resolve(self, walk: Walk, at: At) -> None:
        """Its step: the FFT by the engine chosen for it, where it wants its axes."""
        pos = walk.positions(self.axes, at.engine.keeps_order)
        n = math.prod(at.shape[a] for a in self.axes)
        engine = engine_for(walk, at, pos, real=False, scales_inverse=at.inverse, points=n,
                            out_size=math.prod(walk.physical()))
        inplace = not walk.read_only
        walk.add(Fft(self, pos, engine, at.inverse, take_for(walk, engine), inplace))

    def pieces_route(self, form, send, kernels):
        """How its passes of the pieces kernel go (:func:`pfft.pieces.c2c_route`)."""
        return pieces.c2c_route(form, self.axes, send, kernels)

    def pieces_pass(self, data, route, settings, weighted: bool):
        """Its passes of the pieces kernel (:func:`pfft.pieces.transform`)."""
        return pieces.run_route(data, route, settings)


@dataclass(frozen=True)
class RealFFT(OnAxes):
    """Real transform over local ``axes``; the last one is the halved axis.

    ``to_complex``: real ``n`` points in, ``n//2 + 1`` complex out (the inverse
    stage runs the complex-to-real transform back to ``n`` points). Any other axes
    are complex transforms done in the same call.
    """

    axes: tuple[int, ...]
    n: int
    to_complex: bool

    local_transform: ClassVar[bool] = True
    #: the halved axis must lie innermost, after the others
    exact_axes: ClassVar[bool] = True

    @property
    def axis(self) -> int:
        return self.axes[-1]

    @property
    def half(self) -> int:
        return self.n // 2 + 1

    def inverse(self) -> "RealFFT":
        return RealFFT(self.axes, self.n, not self.to_complex)

    def transposed_weights(self) -> np.ndarray:
        """Per-bin weights of this stage transposed (the ``n//2 + 1`` stored bins).

        After a real-to-complex transform the interior bins are doubled; before a
        complex-to-real one they are halved (:mod:`pfft.hermitian`).
        """
        return bin_weights(self.n, 2.0 if self.to_complex else 0.5)

    def __str__(self) -> str:
        name, (a, b) = (("rfft", (self.n, self.half)) if self.to_complex
                        else ("irfft", (self.half, self.n)))
        return f"{name} {_axes_text(self.axes)} (local), axis {self.axis}: {a} -> {b} points"

    def after(self, layout: Layout) -> Layout:
        """The layout after it: the halved axis ``n//2 + 1`` points long, or ``n``."""
        return layout.with_size(self.axis, self.half if self.to_complex else self.n)

    def natural_scale(self, shape, inverse: bool, engine) -> float:
        """The factor ``engine``'s transform applies: counted on the real side's points,
        whichever side it starts on (its direction, not ``inverse``, says which)."""
        points = math.prod(self.n if a == self.axis else shape[a] for a in self.axes)
        return engine.natural_scale(not self.to_complex, points)

    def resolve(self, walk: Walk, at: At) -> None:
        """Its step: the real FFT, the halved axis innermost where the engine needs it,
        with the transposed transform's bin weights where the run is ``weighted``."""
        pos = walk.positions(self.axes, at.engine.keeps_order, exact=True)
        points = math.prod(self.n if a == self.axis else at.shape[a] for a in self.axes)
        out = math.prod(walk.physical()) // max(walk.extent[self.axis], 1) * (
            self.half if self.to_complex else self.n)
        engine = engine_for(walk, at, pos, real=True, scales_inverse=not self.to_complex,
                            points=points, out_size=out)
        weights = tuple(self.transposed_weights().tolist()) if at.weighted else None
        scale = take_for(walk, engine)
        walk.extent[self.axis] = self.half if self.to_complex else self.n
        walk.add(RealFft(self, pos, engine, at.inverse, scale, weights))

    def pieces_route(self, form, send, kernels):
        """How its passes of the pieces kernel go (:func:`pfft.pieces.real_route`)."""
        return pieces.real_route(form, self, send, kernels)

    def pieces_pass(self, data, route, settings, weighted: bool):
        """Its passes of the pieces kernel (:func:`pfft.pieces.transform`), the
        transposed transform's bin weights fused in where ``weighted``."""
        return pieces.run_route(data, route, pieces.real_settings(settings, self, weighted))


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
        return f"{self.stage}, by {self.engine.name}{factor_text(self.scale)}"


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
        return f"{self.stage}, by {self.engine.name}{factor_text(self.scale)}{weighted}"
