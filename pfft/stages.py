"""The stages a plan chains: local FFTs and data movements between layouts.

Each stage is a small immutable value that knows its inverse (the stage that undoes
its data movement) and prints as one line of the plan.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from .hermitian import bin_weights
from .layout import Split

if TYPE_CHECKING:            # stages know no engine: the map's type, for the reader
    from .engines.r2r import R2R

__all__ = ["LocalFFT", "RealFFT", "LocalR2R", "Resize", "Exchange", "Gather", "Scatter",
           "Stage"]


@dataclass(frozen=True)
class LocalFFT:
    """FFT over array axes that are whole on every device."""

    axes: tuple[int, ...]

    def inverse(self) -> "LocalFFT":
        return self

    def __str__(self) -> str:
        what = f"axis {self.axes[0]}" if len(self.axes) == 1 else f"axes {self.axes}"
        return f"fft {what} (local)"


@dataclass(frozen=True)
class RealFFT:
    """Real transform over local ``axes``; the last one is the halved axis.

    ``to_complex``: real ``n`` points in, ``n//2 + 1`` complex out (the inverse
    stage runs the complex-to-real transform back to ``n`` points). Any other axes
    are complex transforms done in the same call.
    """

    axes: tuple[int, ...]
    n: int
    to_complex: bool

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
        what = f"axis {self.axis}" if len(self.axes) == 1 else f"axes {self.axes}"
        return f"{name} {what} (local), axis {self.axis}: {a} -> {b} points"


@dataclass(frozen=True)
class LocalR2R:
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


@dataclass(frozen=True)
class Resize:
    """Truncate (or zero-pad) the spectrum along a local axis: dealiasing.

    Keeps the lowest frequencies: for a full axis the first ``ceil(n/2)`` and last
    ``floor(n/2)`` bins (numpy's ``fftfreq`` order), for a ``halved`` axis (a real
    transform's) the first ``n``. Zero-padding puts them back in place: it is the
    exact transpose of truncation.
    """

    axis: int
    n_from: int
    n_to: int
    halved: bool = False

    def inverse(self) -> "Resize":
        return Resize(self.axis, self.n_to, self.n_from, self.halved)

    def __str__(self) -> str:
        what = "truncate" if self.n_to < self.n_from else "zero-pad"
        return f"{what} spectrum axis {self.axis}: {self.n_from} -> {self.n_to} (local)"


@dataclass(frozen=True)
class Exchange:
    """All-to-all over ``mesh_axis``: ``gather`` loses it, ``scatter`` gains it.

    ``mesh_axis`` is one mesh axis name or a tuple of them (a group, as in
    ``PartitionSpec(('x', 'y'))``), of ``size`` devices in all. Usually ``gather``
    becomes whole and ``scatter`` was whole. ``gather_keep`` is how many devices
    still split ``gather`` afterwards (the major mesh axes it keeps), and
    ``scatter_had`` how many split ``scatter`` before (it gains ``mesh_axis`` as its
    minor part): such partial moves are planned only where both divide evenly.
    """

    mesh_axis: Split
    size: int
    gather: int
    scatter: int
    gather_keep: int = 1
    scatter_had: int = 1

    def inverse(self) -> "Exchange":
        return Exchange(self.mesh_axis, self.size, gather=self.scatter, scatter=self.gather,
                        gather_keep=self.scatter_had, scatter_had=self.gather_keep)

    def gathered_extent(self, shape) -> int:
        """Length of a block along ``gather`` after the exchange, the logical global
        ``shape`` before it given: the whole axis (padding cropped), or an even share
        where it keeps other mesh axes."""
        return shape[self.gather] // self.gather_keep

    def __str__(self) -> str:
        g = "becomes local" if self.gather_keep == 1 else "keeps its other mesh axes"
        s = "split" if self.scatter_had == 1 else "split further"
        return (f"all_to_all over {_names(self.mesh_axis)} ({self.size}): axis {self.gather} "
                f"{g}, axis {self.scatter} {s}")


@dataclass(frozen=True)
class Gather:
    """All-gather one unevenly split axis so the result can be held by JAX."""

    mesh_axis: Split
    size: int
    axis: int

    def inverse(self) -> "Scatter":
        return Scatter(self.mesh_axis, self.size, self.axis)

    def __str__(self) -> str:
        return (f"all_gather over {_names(self.mesh_axis)} ({self.size}): axis {self.axis} "
                f"becomes local (no exchange can make this layout even)")


@dataclass(frozen=True)
class Scatter:
    """Keep this device's block of a replicated axis (no communication)."""

    mesh_axis: Split
    size: int
    axis: int

    def inverse(self) -> Gather:
        return Gather(self.mesh_axis, self.size, self.axis)

    def __str__(self) -> str:
        return f"split axis {self.axis} over {_names(self.mesh_axis)} ({self.size}) (local slice)"


def _names(mesh_axis: Split) -> str:
    return repr(mesh_axis) if isinstance(mesh_axis, str) else "(" + ", ".join(map(repr, mesh_axis)) + ")"


Stage = LocalFFT | RealFFT | LocalR2R | Resize | Exchange | Gather | Scatter
