"""The planner: a short walk over layouts that emits the stage chain.

Given the input layout and the axes to transform, it transforms every axis that is
already whole, then moves the grid split off a pending axis onto one that is done
(one all-to-all), and repeats. Where it has a choice it splits an axis that the
grid divides (no padding) next to the one it gathers (cheaper packing).

Real transforms add one rule: the halved axis (the last of ``axes``) is
transformed first by a real-to-complex chain and last by a complex-to-real one.
Its ``n//2 + 1`` points never divide an even grid axis, so a chain that leaves it
split ends with one more all-to-all that makes it whole again (unless the caller
asks for the padded spectrum).
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from .layout import Layout
from .stages import Exchange, Gather, LocalFFT, RealFFT, Resize, Stage

__all__ = ["Chain", "build_chain", "KINDS"]

KINDS = ("c2c", "r2c", "c2r")


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

    @property
    def real_stage(self) -> RealFFT | None:
        return next((s for s in self.stages if isinstance(s, RealFFT)), None)

    def with_leading_axis(self, n: int) -> "Chain":
        """The same chain on a batch of ``n`` arrays stacked in a new axis 0."""
        def shift(st):
            if isinstance(st, (LocalFFT, RealFFT)):
                return replace(st, axes=tuple(a + 1 for a in st.axes))
            if isinstance(st, Exchange):
                return replace(st, gather=st.gather + 1, scatter=st.scatter + 1)
            if isinstance(st, Resize):
                return replace(st, axis=st.axis + 1)
            return replace(st, axis=st.axis + 1)
        return Chain(self.in_layout.with_leading_axis(n), self.out_layout.with_leading_axis(n),
                     tuple(shift(st) for st in self.stages))


def build_chain(in_layout: Layout, axes: tuple[int, ...], *, kind: str = "c2c",
                n: int | None = None, even_output: bool = True,
                spectral: dict[int, int] | None = None) -> Chain:
    """Plan a transform over ``axes`` starting from ``in_layout``.

    Parameters
    ----------
    in_layout
        Where the input is.
    axes
        Axes to transform; for real kinds the last one is the halved axis.
    kind
        ``"c2c"``, ``"r2c"`` (real input of ``in_layout.shape``) or ``"c2r"`` (a
        half spectrum in, ``n`` real points out along the halved axis).
    n
        ``"c2r"`` only: the real length of the halved axis.
    even_output
        Make every axis of the output evenly split (JAX can hold it). ``False``
        leaves the last pencil as it is, padded.
    spectral
        Dealiasing (``r2c``/``c2c``): per axis, the length of the spectrum to keep
        (smaller than the input's); each axis is truncated right after its FFT,
        while it is local. For the halved axis give the real length.

    Every mesh axis that splits the input keeps splitting some array axis; mesh
    axes the input is replicated over stay replicated (the work is repeated there).
    """
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    real = axes[-1] if kind != "c2c" else None
    if kind == "r2c":
        n = in_layout.shape[real]
    layout = in_layout
    stages: list[Stage] = []
    done: set[int] = set()

    def allowed(a: int) -> bool:
        if kind == "r2c":         # with or after the halved axis
            return a == real or real in done or layout.split[real] is None
        if kind == "c2r" and a == real:
            return all(layout.split[b] is None for b in axes if b not in done)
        return True

    while True:
        ready = tuple(a for a in axes if a not in done and layout.split[a] is None and allowed(a))
        if ready:
            if real in ready:
                axes_now = tuple(a for a in ready if a != real) + (real,)
                stages.append(RealFFT(axes_now, n, to_complex=(kind == "r2c")))
                layout = layout.with_size(real, n // 2 + 1 if kind == "r2c" else n)
            else:
                stages.append(LocalFFT(ready))
            for a in (a for a in ready if a in (spectral or {})):   # dealiasing
                want = spectral[a] // 2 + 1 if a == real and kind == "r2c" else spectral[a]
                if want != layout.shape[a]:
                    stages.append(Resize(a, layout.shape[a], want, halved=(a == real)))
                    layout = layout.with_size(a, want)
            done.update(ready)
            continue
        pending = [a for a in axes if a not in done and allowed(a)]
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
    if even_output:
        layout = _even_up(layout, stages)
    return Chain(in_layout, layout, tuple(stages))


def _even_up(layout: Layout, stages: list[Stage]) -> Layout:
    """Make every unevenly split axis whole: by an all-to-all onto a whole axis the
    grid divides where there is one (same memory), else by an all-gather."""
    for a in range(layout.ndim):
        if layout.is_even(a):
            continue
        m, p = layout.split[a], layout.parts(a)
        whole = [b for b in layout.local_axes if layout.shape[b] % p == 0 and layout.shape[b] >= p]
        if whole:
            b = min(whole, key=lambda b: (abs(a - b), b))
            stages.append(Exchange(m, p, gather=a, scatter=b))
            layout = layout.with_split(a, None).with_split(b, m)
        else:
            stages.append(Gather(m, p, a))
            layout = layout.with_split(a, None)
    return layout
