"""The planner: a short walk over layouts that emits the stage chain.

Given the input layout and the axes to transform, it transforms every axis that is
already whole, then moves the grid split off a pending axis onto one that is done
(one all-to-all), and repeats. Where it has a choice it splits an axis that the
grid divides (no padding) next to the one it gathers (cheaper packing).
"""
from __future__ import annotations

from dataclasses import dataclass

from .layout import Layout
from .stages import Exchange, Gather, LocalFFT, Stage

__all__ = ["Chain", "build_chain"]


@dataclass(frozen=True)
class Chain:
    """Stages taking ``in_layout`` to ``out_layout``, with their inverse chain."""

    in_layout: Layout
    out_layout: Layout
    stages: tuple[Stage, ...]

    def reversed(self) -> "Chain":
        """The chain run backwards: inverse stages in reverse order."""
        return Chain(self.out_layout, self.in_layout,
                     tuple(s.inverse() for s in reversed(self.stages)))

    @property
    def exchanges(self) -> int:
        return sum(isinstance(s, Exchange) for s in self.stages)


def build_chain(in_layout: Layout, axes: tuple[int, ...]) -> Chain:
    """Plan a transform over ``axes`` starting from ``in_layout``.

    Every mesh axis that splits the input keeps splitting some array axis; mesh
    axes the input is replicated over stay replicated (the work is repeated there).
    Axes left unevenly split at the end are gathered, so the output is even.
    """
    layout = in_layout
    stages: list[Stage] = []
    done: set[int] = set()
    while True:
        ready = tuple(a for a in axes if a not in done and layout.split[a] is None)
        if ready:
            stages.append(LocalFFT(ready))
            done.update(ready)
        pending = [a for a in axes if a not in done]
        if not pending:
            break
        targets = [a for a in layout.local_axes if a in done or a not in axes]
        if not targets:       # every axis split: make one whole by gathering it
            g = pending[0]
            stages.append(Gather(layout.split[g], layout.parts(g), g))
            layout = layout.with_split(g, None)
            continue
        gather, scatter = min(
            ((g, s) for g in pending for s in targets),
            key=lambda gs: (layout.shape[gs[1]] % layout.parts(gs[0]) != 0,
                            abs(gs[0] - gs[1]), gs[1], gs[0]))
        mesh_axis = layout.split[gather]
        stages.append(Exchange(mesh_axis, layout.grid_size(mesh_axis), gather, scatter))
        layout = layout.with_split(gather, None).with_split(scatter, mesh_axis)
    for a in range(layout.ndim):
        if not layout.is_even(a):
            stages.append(Gather(layout.split[a], layout.parts(a), a))
            layout = layout.with_split(a, None)
    return Chain(in_layout, layout, tuple(stages))
