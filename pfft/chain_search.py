"""The planner: a short walk over layouts that emits the stage chain.

Given the input layout and the axes to transform, it transforms every axis that is
already whole, then moves the grid split off a pending axis onto one that is done
(one all-to-all), and repeats. Where it has a choice it splits an axis that the
grid divides (no padding) next to the one it gathers (cheaper packing).

Real transforms add one rule: the halved axis (the last of ``axes``) is
transformed first by a real-to-complex chain and last by a complex-to-real one.
Its ``n//2 + 1`` points never divide an even grid axis, so where an even output is
asked for the walk avoids splitting it: rather than move a split onto it, it merges
the split into another split axis that divides by both (the smaller of a pencil's
two mesh axes joins the other on its axis, then both move to the axis just
transformed: two exchanges). Only where no axis can
take it does the halved axis get split, and one more all-to-all makes it whole again
(unless the caller asks for the padded spectrum).

Real-to-real axes (DCT, DST) need only be whole, like complex ones; they keep real
data real, so they may go at any time (a real plan does them before its
real-to-complex stage, on real data).

The walk is greedy and can get stuck: on uneven sizes it may find every axis split
with none able to take another mesh axis, and all-gather. Where its chain gathers, a
cheapest-first search over layouts (which mesh axes split which axis, which axes
are done) looks for a chain of exchanges only, the fewest, and replaces it. The
search also runs where the input uses every mesh axis, and its chain replaces the
walk's where it needs fewer exchanges: a real transform whose halved axis is split on
a pencil (``P(None, 'x', 'y')``) takes two, not the walk's three, by moving that
split onto the other split axis first (a slab over both mesh axes). With an idle
mesh axis in the input the search is not asked: its fewer exchanges would come from
devices repeating each other's work.
"""
from __future__ import annotations

import heapq
import itertools
import math
from dataclasses import dataclass

from .layout import Layout, names_of, split_entry
from .stages import (STAGE_KINDS, Exchange, Gather, LocalFFT, LocalR2R, RealFFT, Resize,
                     Scatter, Stage)

__all__ = ["Chain", "build_chain", "after", "KINDS"]

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

    def layouts(self) -> tuple[Layout, ...]:
        """The layout after each stage (the last is ``out_layout``)."""
        out, layout = [], self.in_layout
        for stage in self.stages:
            layout = after(layout, stage)
            out.append(layout)
        return tuple(out)

    def with_leading_axis(self, n: int) -> "Chain":
        """The same chain on a batch of ``n`` arrays stacked in a new axis 0 (each
        stage's kind shifts its own axes: ``batched``)."""
        return Chain(self.in_layout.with_leading_axis(n), self.out_layout.with_leading_axis(n),
                     tuple(st.batched() for st in self.stages))


def build_chain(in_layout: Layout, axes: tuple[int, ...], *, kind: str = "c2c",
                n: int | None = None, even_output: bool = True,
                dealiased: dict[int, int] | None = None, r2r=(),
                prune: bool = False) -> Chain:
    """Plan a transform over ``axes`` starting from ``in_layout``.

    Parameters
    ----------
    in_layout
        Where the input is.
    axes
        Axes to transform; for real kinds the last one that is not a real-to-real
        axis is the halved axis.
    kind
        ``"c2c"``, ``"r2c"`` (real input of ``in_layout.shape``) or ``"c2r"`` (a
        half spectrum in, ``n`` real points out along the halved axis).
    n
        ``"c2r"`` only: the real length of the halved axis.
    even_output
        Make every axis of the output evenly split (JAX can hold it). ``False``
        leaves the last pencil as it is, padded.
    dealiased
        Dealiasing (``r2c``/``c2c``): per axis, the length of the spectrum to keep
        (smaller than the input's); each axis is truncated right after its FFT,
        while it is local. For the halved axis give the real length.
    prune
        Transform the axes to truncate one at a time, each truncated before the next
        is transformed (the halved axis first, then from the innermost out), so
        later FFTs run on fewer points; else the axes local at once go in one FFT
        and are truncated after it (``engine.prunes_dealiased`` says which pays).
    r2r
        ``(axis, op)`` pairs: axes of ``axes`` transformed by a real-to-real
        :class:`~pfft.engines.r2r.R2R` (a :class:`~pfft.stages.LocalR2R` stage each,
        as soon as the axis is whole) instead of an FFT.

    Every mesh axis that splits the input keeps splitting some array axis; a mesh
    axis the input is replicated over is given an axis it divides evenly (a local
    slice), and stays replicated only where there is none (the work is then
    repeated along it). The greedy walk plans first; where its chain all-gathers, or
    where the input uses every mesh axis, a search over layouts (:func:`_search`)
    looks for a chain of exchanges only (the fewest) and takes its place if it is
    better: fewer gathers, or fewer exchanges. A mesh axis (or group) is only ever
    all-gathered where no chain of exchanges reaches an even output.

    Raises
    ------
    ValueError
        For an unknown ``kind``, or axes out of range.
    RuntimeError
        If the walk ends with an axis untransformed (a planner defect, never silent).
    """
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    if any(not 0 <= a < in_layout.ndim for a in axes) or len(set(axes)) != len(axes):
        raise ValueError(f"axes {axes} are not distinct axes of a {in_layout.ndim}-d layout")
    r2r = dict(r2r)
    if any(a not in axes for a in r2r):
        raise ValueError(f"r2r axes {sorted(r2r)} are not all among the axes {axes}")
    if kind != "c2c" and all(a in r2r for a in axes):
        raise ValueError(f"kind {kind!r} needs an axis that is not real-to-real")
    dealiased_items = tuple(sorted((dealiased or {}).items()))
    # not cached here: plans are (pfft.plan's bounded cache holds them with their chains)
    return _plan(in_layout, tuple(axes), kind, n, bool(even_output), dealiased_items,
                 tuple(r2r.items()), bool(prune))


def _plan(in_layout: Layout, axes: tuple[int, ...], kind: str, n: int | None,
          even_output: bool, dealiased: tuple[tuple[int, int], ...],
          r2r: tuple, prune: bool) -> Chain:
    """:func:`build_chain` on checked arguments: the greedy walk, or the search's
    chain where the walk all-gathers, or where the input uses every mesh axis and the
    search needs fewer exchanges."""
    rules = _Rules(axes, kind, n, dict(dealiased), dict(r2r), in_layout, prune)
    chain = _greedy(in_layout, rules, even_output)
    if (any(isinstance(st, Gather) for st in chain.stages)
            or not in_layout.unused_mesh_axes):
        found = _search(in_layout, rules, even_output)
        if found is not None and ((_rank(found, rules), found.exchanges)
                                  < (_rank(chain, rules), chain.exchanges)):
            chain = found
    return chain


class _Rules:
    """What a transform allows, whatever the walk: which axes may be transformed now
    (real kinds order their axes), and the local stages that transform them."""

    def __init__(self, axes: tuple[int, ...], kind: str, n: int | None,
                 dealiased: dict[int, int], r2r: dict, in_layout: Layout,
                 prune: bool = False):
        self.axes = axes
        self.prune = prune
        self.kind = kind
        self.dealiased = dealiased
        self.r2r = r2r
        self.fourier = [a for a in axes if a not in r2r]
        self.real = self.fourier[-1] if kind != "c2c" else None
        self.n = in_layout.shape[self.real] if kind == "r2c" else n

    def allowed(self, layout: Layout, done, a: int) -> bool:
        """Whether axis ``a`` may be transformed now (real kinds order their axes)."""
        if a in self.r2r:              # real to real: keeps real data real
            return True
        if self.kind == "r2c":         # with or after the halved axis
            return a == self.real or self.real in done or layout.split[self.real] is None
        if self.kind == "c2r" and a == self.real:    # after every other axis
            return all(b in done for b in self.fourier if b != self.real)
        return True

    def transform(self, layout: Layout, done: set, stages: list) -> Layout:
        """Transform every axis that is whole and may go now, until none is left
        (``done`` and ``stages`` are extended in place); the layout after."""
        while True:
            ready = tuple(a for a in self.axes if a not in done and layout.split[a] is None
                          and self.allowed(layout, done, a))
            if not ready:
                return layout
            now = [a for a in ready if a in self.r2r]        # first: on real data where real
            stages.extend(LocalR2R(a, self.r2r[a]) for a in now)
            done.update(now)
            ready = tuple(a for a in ready if a not in self.r2r)
            if not ready:
                continue
            real = self.real
            if self.prune:
                ready = self._first_to_truncate(layout, ready)
            if real in ready:
                axes_now = tuple(a for a in ready if a != real) + (real,)
                stages.append(RealFFT(axes_now, self.n, to_complex=(self.kind == "r2c")))
                layout = after(layout, stages[-1])
            else:
                stages.append(LocalFFT(ready))
            for a in (a for a in ready if a in self.dealiased):
                want = self._truncated_length(a)
                if want != layout.shape[a]:
                    stages.append(Resize(a, layout.shape[a], want, halved=(a == real)))
                    layout = after(layout, stages[-1])
            done.update(ready)

    def _truncated_length(self, a: int) -> int | None:
        """The length axis ``a`` keeps after its FFT, where it is dealiased."""
        if a not in self.dealiased:
            return None
        return (self.dealiased[a] // 2 + 1 if a == self.real and self.kind == "r2c"
                else self.dealiased[a])

    def _first_to_truncate(self, layout: Layout, ready: tuple[int, ...]) -> tuple[int, ...]:
        """Of the axes ``ready`` to go in one FFT, the one to transform alone first
        where some of them are truncated after it: the halved axis (a real transform
        takes it first), else the innermost truncated one; ``ready`` where none is."""
        cut = [a for a in ready if self._truncated_length(a) not in (None, layout.shape[a])]
        if len(ready) < 2 or not cut:
            return ready
        return (self.real,) if self.real in ready else (max(cut),)

    def uneven_batch(self, layout: Layout) -> int:
        """Batch axes split unevenly (under MPI: fields cut mid-component)."""
        return sum(1 for a in range(layout.ndim) if a not in self.axes and not layout.is_even(a))


def _rank(chain: Chain, rules: _Rules) -> tuple[int, int, int]:
    """How bad a chain's outcome is, worst first: mesh axes idle in its output
    (devices repeating work), all-gathers, batch axes split unevenly."""
    return (len(chain.out_layout.unused_mesh_axes),
            sum(isinstance(st, Gather) for st in chain.stages), rules.uneven_batch(chain.out_layout))


def _initial_scatters(layout: Layout, axes, stages: list) -> Layout:
    """A mesh axis the input is replicated over takes an axis it divides: each device
    keeps its slice (no communication), so no device repeats another's work."""
    order = [a for a in range(layout.ndim) if a not in axes] + list(axes[:-1]) + list(axes[-1:])
    for m in layout.unused_mesh_axes:
        p = layout.mesh_size(m)
        take = next((a for a in order if layout.split[a] is None and layout.shape[a] % p == 0),
                    None)
        if take is not None:
            stages.append(Scatter(m, p, take))
            layout = after(layout, stages[-1])
    return layout


def _greedy(in_layout: Layout, rules: _Rules, even_output: bool) -> Chain:
    """The walk: transform what is whole, move one split onto a whole axis, repeat."""
    axes = rules.axes
    stages: list[Stage] = []
    done: set[int] = set()
    layout = _initial_scatters(in_layout, axes, stages)
    while True:
        layout = rules.transform(layout, done, stages)
        pending = [a for a in axes if a not in done and rules.allowed(layout, done, a)]
        if not pending:
            break
        # a whole axis that may take the split: done, a batch axis, or one that must
        # wait (real kinds), the waiting ones last; a batch axis the split does not
        # divide only where nothing else can take it (its entries are the caller's
        # fields: a block with part of them breaks code that works field by field)
        targets = [a for a in layout.local_axes
                   if a in done or a not in axes or not rules.allowed(layout, done, a)]
        if targets:
            gather, scatter = min(
                ((g, s) for g in pending for s in targets),
                key=lambda gs: (gs[1] in axes and gs[1] not in done,
                                gs[1] not in axes and layout.shape[gs[1]] % layout.parts(gs[0]) != 0,
                                layout.shape[gs[1]] % layout.parts(gs[0]) != 0,
                                abs(gs[0] - gs[1]), gs[1], gs[0]))
            stage = _move(layout, gather, scatter)
            if even_output and layout.shape[scatter] % layout.parts(gather) != 0:
                # the only whole axis would be split unevenly (a real transform's
                # halved axis): merge into a split axis instead where one divides
                # evenly, which saves the exchange that evens the output up
                stage = _merge(layout, pending, gather_only=False) or stage
        else:                 # every axis split: merge a pending axis's split into another's
            stage = _merge(layout, pending)
        stages.append(stage)
        layout = after(layout, stage)
    missing = [a for a in axes if a not in done]
    if missing:  # pragma: no cover - a defect, never a silent wrong result
        raise RuntimeError(f"pfft planner: axes {missing} left untransformed from {in_layout}")
    if even_output:
        layout = _even_up(layout, stages)
    return Chain(in_layout, layout, tuple(stages))


#: the most layouts :func:`_search` visits (a 4-d array on a 3-axis mesh has a few
#: thousand, with which axes are done)
SEARCH_LIMIT = 20_000


def _search(in_layout: Layout, rules: _Rules, even_output: bool) -> Chain | None:
    """The chain of fewest exchanges, and no all-gather, to an output with every axis
    transformed (and evenly split if ``even_output``), or ``None`` if there is none.

    Cheapest first over states (layout, axes done). A move is an exchange (the minor
    part of an axis's split, or all of it, onto a whole axis, or onto a split one as
    its minor part; a move where either axis keeps other mesh axes only between evenly
    split axes) or a local slice (:class:`~pfft.stages.Scatter`) of a mesh axis the
    data is replicated over onto a whole axis; never onto an axis with fewer points
    than devices splitting it (they would idle: where that is the only way the gather
    stays, and a 1-D transform goes to :mod:`pfft.split_fft`'s six-step algorithm).
    After each move every axis that may go is transformed (:meth:`_Rules.transform`).
    Costs compare as (exchanges, elements each device sends, stages). An output with
    no idle mesh axis and no unevenly split batch axis ends the search; failing one,
    the best outcome found is returned.
    """
    axes = set(rules.axes)
    heap: list = []
    tick = itertools.count()

    def push(cost, layout, done, stages):
        heapq.heappush(heap, (cost, next(tick), layout, done, stages))

    for scatter in (True, False):   # the walk's local slices first, or none
        stages: list[Stage] = []
        done: set[int] = set()
        layout = _initial_scatters(in_layout, rules.axes, stages) if scatter else in_layout
        layout = rules.transform(layout, done, stages)
        push((0, 0, len(stages)), layout, frozenset(done), tuple(stages))
    seen: set = set()
    best = None
    while heap and len(seen) < SEARCH_LIMIT:
        cost, _, layout, done, stages = heapq.heappop(heap)
        if (layout, done) in seen:
            continue
        seen.add((layout, done))
        if done == axes and (not even_output or layout.is_even()):
            chain = Chain(in_layout, layout, stages)
            key = (_rank(chain, rules), cost)
            if best is None or key < best[0]:
                best = (key, chain)
            if key[0] == (0, 0, 0):
                break
        for stage in _moves(layout):
            nxt = after(layout, stage)
            more: list[Stage] = [stage]
            now = set(done)
            nxt = rules.transform(nxt, now, more)
            sent = math.prod(layout.local_shape) if isinstance(stage, Exchange) else 0
            push((cost[0] + isinstance(stage, Exchange), cost[1] + sent, cost[2] + len(more)),
                 nxt, frozenset(now), stages + tuple(more))
    return None if best is None else best[1]


def _moves(layout: Layout):
    """The data movements :func:`_search` may take from ``layout``."""
    for g in range(layout.ndim):
        names = names_of(layout.split[g])
        for j in range(len(names)):           # move names[j:], keep names[:j]
            moved, keep = names[j:], names[:j]
            size = layout.mesh_size(moved)
            for s in range(layout.ndim):
                if s == g:
                    continue
                had = layout.parts(s)
                if layout.shape[s] < had * size:     # devices left with no point
                    continue
                # a partial move (either axis keeps other mesh axes) only between
                # axes split evenly before and after, so that its inverse is one too
                if (keep or had > 1) and (not layout.is_even(g)
                                          or layout.shape[s] % (had * size) != 0):
                    continue
                yield Exchange(split_entry(moved), size, g, s,
                               gather_keep=layout.mesh_size(keep), scatter_had=had)
    for m in layout.unused_mesh_axes:
        for a in layout.local_axes:
            if layout.shape[a] >= layout.mesh_size(m):
                yield Scatter(m, layout.mesh_size(m), a)


def _move(layout: Layout, gather: int, scatter: int) -> Exchange:
    """The all-to-all moving ``gather``'s whole split onto the whole axis ``scatter``."""
    m = layout.split[gather]
    return Exchange(m, layout.mesh_size(m), gather, scatter)


def _merge(layout: Layout, pending, gather_only: bool = True) -> Stage | None:
    """Move a pending axis's split onto another split axis that divides evenly by
    both (it is then split over both, as ``('x', 'y')``). Where no axis can take it:
    an all-gather of the pending axis (``gather_only``), else ``None``.

    Of the possible moves, the split over the fewest devices goes: an all-to-all over
    ``p`` devices sends ``(1 - 1/p)`` of the block in ``p - 1`` pieces, so on a 2x4
    pencil moving ``'x'`` (2) sends half the block once where moving ``'y'`` (4) would
    send three quarters in three."""
    options = [(g, s) for g in pending for s in range(layout.ndim)
               if s != g and layout.split[s] is not None and layout.is_even(s)
               and layout.shape[s] % (layout.parts(s) * layout.parts(g)) == 0]
    if options:
        g, s = min(options, key=lambda gs: (layout.parts(gs[0]), abs(gs[0] - gs[1]),
                                            gs[1], gs[0]))
        m = layout.split[g]
        return Exchange(m, layout.mesh_size(m), g, s, scatter_had=layout.parts(s))
    if not gather_only:
        return None
    g = pending[0]
    return Gather(layout.split[g], layout.parts(g), g)


def after(layout: Layout, stage: Stage) -> Layout:
    """The layout ``stage`` leaves behind it, starting from ``layout``: its kind's rule
    (``stage.after``), which the planner's walk and :meth:`Chain.layouts` both use."""
    if not isinstance(stage, STAGE_KINDS):
        raise TypeError(f"not a stage: {stage!r}")  # pragma: no cover
    return stage.after(layout)


def _even_up(layout: Layout, stages: list[Stage]) -> Layout:
    """Make every unevenly split axis whole: by an all-to-all onto a whole axis the
    grid divides where there is one (same memory), else onto a split axis that
    divides by both, else by an all-gather (no even layout is left)."""
    for a in range(layout.ndim):
        if layout.is_even(a):
            continue
        p = layout.parts(a)
        whole = [b for b in layout.local_axes if layout.shape[b] % p == 0 and layout.shape[b] >= p]
        if whole:
            stage = _move(layout, a, min(whole, key=lambda b: (abs(a - b), b)))
        else:
            stage = _merge(layout, [a])
        stages.append(stage)
        layout = after(layout, stage)
    return layout
