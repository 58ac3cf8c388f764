"""Spectral truncation (dealiasing): :class:`Resize`, run as a :class:`Truncate` step."""
from __future__ import annotations

from dataclasses import dataclass

from .. import executor
from ..layout import Layout
from .base import At, Movement, OnOneAxis, Walk

__all__ = ["Resize", "Truncate"]


@dataclass(frozen=True)
class Resize(Movement, OnOneAxis):
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

    def after(self, layout: Layout) -> Layout:
        """The layout after it: the axis ``n_to`` points long."""
        return layout.with_size(self.axis, self.n_to)

    def resolve(self, walk: Walk, at: At) -> None:
        """Its step: the truncation where the axis lies."""
        pos = walk.order.index(self.axis)
        walk.extent[self.axis] = self.n_to
        walk.add(Truncate(self, pos))


@dataclass(frozen=True)
class Truncate:
    """Keep (or zero-pad back) the low frequencies along physical ``position``."""

    stage: Resize
    position: int

    def run(self, data, transport):
        return executor.resize(data, self.stage, self.position)

    def __str__(self) -> str:
        return str(self.stage)
