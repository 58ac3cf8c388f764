"""Pipelined exchanges: a chain's windows around its all-to-alls, cut into pieces.

An all-to-all and the local transforms around it act along a few axes of the block;
along any other axis the block's parts never meet. Cut along such an axis into ``k``
pieces, each piece can run the stages of that window by itself: piece ``i``'s
exchange then waits only for piece ``i``'s local work, and where collectives run
asynchronously (XLA on GPUs) the transfer of one piece can proceed while the next
piece is transformed. The values are those of the uncut chain; the cost is the cut and
the join (a slice and a concatenation, copies XLA may fuse into the pack and the
unpack around them) and ``k`` smaller launches per stage.

:func:`pipelined` finds the windows: runs of stages around each exchange, as long
as they leave some axis alone (the one with the most local points is cut).
A multi-axis local transform at a window's edge is split so that its other axes join
the window (a slab's ``fft axes (1, 2)`` before its exchange becomes ``fft axis 2``
on the whole block, then ``fft axis 1`` per piece). :func:`pfft.executor.run_chain`
runs each window piece by piece.
"""
from __future__ import annotations

from dataclasses import dataclass

from .planner import Chain
from .stages import Exchange, Gather, LocalFFT, LocalR2R, RealFFT, Resize, Scatter, Stage

__all__ = ["Window", "acts_on", "pipelined", "run_order", "per_stage"]


@dataclass(frozen=True)
class Window:
    """Stages ``start`` to ``stop - 1`` of a chain, run on ``pieces`` pieces of the
    block cut along logical axis ``axis``."""

    start: int
    stop: int
    axis: int
    pieces: int

    def __str__(self) -> str:
        first, last = self.start + 1, self.stop
        what = f"stage {first}" if first == last else f"stages {first}-{last}"
        return f"{what} pipelined: {self.pieces} pieces along axis {self.axis}"


def acts_on(st: Stage) -> frozenset[int]:
    """The logical axes stage ``st`` transforms, resizes or moves: the block may be
    cut along any other axis and the stage run on each part by itself."""
    if isinstance(st, Exchange):
        return frozenset((st.gather, st.scatter))
    if isinstance(st, (LocalFFT, RealFFT, LocalR2R)):
        return frozenset(st.axes)
    if isinstance(st, (Resize, Gather, Scatter)):
        return frozenset((st.axis,))
    raise TypeError(f"not a stage: {st!r}")  # pragma: no cover - a defect


def _split_before(st: Stage, axis: int) -> tuple[Stage, Stage] | None:
    """``st`` (just before a window cut along ``axis``) as the part along ``axis``,
    run on the whole block, then the rest, run piece by piece; ``None`` where it
    cannot be split so (a real-to-complex stage must come first, a complex-to-real
    one last)."""
    if not isinstance(st, (LocalFFT, RealFFT)) or axis not in st.axes or len(st.axes) < 2:
        return None
    rest = tuple(a for a in st.axes if a != axis)
    if isinstance(st, LocalFFT):
        return LocalFFT((axis,)), LocalFFT(rest)
    if isinstance(st, RealFFT):
        if st.to_complex and axis == st.axis:
            return RealFFT((axis,), st.n, True), LocalFFT(rest)
        if not st.to_complex and axis != st.axis:
            return LocalFFT((axis,)), RealFFT(rest, st.n, False)
    return None


def _split_after(st: Stage, axis: int) -> tuple[Stage, Stage] | None:
    """``st`` (just after a window cut along ``axis``) as the part without ``axis``,
    run piece by piece, then the part along ``axis`` on the whole block; ``None``
    where it cannot be split so."""
    if not isinstance(st, (LocalFFT, RealFFT)) or axis not in st.axes or len(st.axes) < 2:
        return None
    rest = tuple(a for a in st.axes if a != axis)
    if isinstance(st, LocalFFT):
        return LocalFFT(rest), LocalFFT((axis,))
    if isinstance(st, RealFFT):
        if st.to_complex and axis != st.axis:
            return RealFFT(rest, st.n, True), LocalFFT((axis,))
        if not st.to_complex and axis == st.axis:
            return LocalFFT(rest), RealFFT((axis,), st.n, False)
    return None


def _windows(chain: Chain) -> list[tuple[int, int, frozenset[int]]]:
    """Runs of stages around each exchange (one not in an earlier run), grown to the
    left and then to the right while some axis is left alone: ``(start, stop, axes
    left alone)``."""
    stages, every = chain.stages, frozenset(range(chain.in_layout.ndim))
    out, taken = [], 0
    for e, st in enumerate(stages):
        if e < taken or not isinstance(st, Exchange):
            continue
        free, a, b = every - acts_on(st), e, e + 1
        while a > taken and free - acts_on(stages[a - 1]):
            a -= 1
            free -= acts_on(stages[a])
        while b < len(stages) and free - acts_on(stages[b]):
            free -= acts_on(stages[b])
            b += 1
        out.append((a, b, free))
        taken = b
    return out


def pipelined(chain: Chain, pieces: int) -> tuple[Chain, tuple[Window, ...]]:
    """``chain`` with its exchanges pipelined in ``pieces`` pieces.

    Returns the chain to run (a local transform at a window's edge split where that
    puts more of it into the window: the same map) and its windows. ``pieces < 2``,
    or a chain without a window whose cut axis has two local points, gives ``chain``
    itself and no windows.
    """
    if pieces < 2:
        return chain, ()
    stages = list(chain.stages)
    # widen each window by the split-off part of a neighbouring local transform,
    # where that neighbour is in no window itself
    plain = _windows(chain)
    busy = {i for a, b, _ in plain for i in range(a, b)}
    splits: dict[int, tuple[Stage, Stage]] = {}
    blocks = _local_shapes(chain)
    for a, b, free in plain:
        if not free:
            continue
        axis = _widest(blocks[a], free)
        if a > 0 and a - 1 not in busy:
            parts = _split_before(stages[a - 1], axis)
            if parts:
                splits[a - 1] = parts
        if b < len(stages) and b not in busy:
            parts = _split_after(stages[b], axis)
            if parts:
                splits[b] = parts
    if splits:
        stages = [part for i, st in enumerate(stages) for part in splits.get(i, (st,))]
        chain = Chain(chain.in_layout, chain.out_layout, tuple(stages))
    windows = []
    blocks = _local_shapes(chain)
    for a, b, free in _windows(chain):
        if not free:
            continue
        axis = _widest(blocks[a], free)
        count = min(pieces, blocks[a][axis])
        if count >= 2:
            windows.append(Window(a, b, axis, count))
    return chain, tuple(windows)


def run_order(chain: Chain, windows) -> list[int]:
    """The stage indices of ``chain`` (a pipelined chain, ``windows`` its windows) in
    the order :func:`pfft.executor.run_chain` runs them: a window's stages once per
    piece, every other stage once."""
    starts = {w.start: w for w in windows}
    out, i = [], 0
    while i < len(chain.stages):
        w = starts.get(i)
        if w is None:
            out.append(i)
            i += 1
        else:
            out += list(range(w.start, w.stop)) * w.pieces
            i = w.stop
    return out


def per_stage(chain: Chain, windows, log: list[str], kinds: tuple[type, ...]) -> list[str]:
    """A log with one entry per call of the stages of ``kinds`` (in the order they
    ran: :func:`run_order`) as one entry per such stage of ``chain``, a window's
    pieces joined (``"xla/native"`` where they differ); the log itself where it does
    not have one entry per call."""
    order = [i for i in run_order(chain, windows) if isinstance(chain.stages[i], kinds)]
    if not windows or len(order) != len(log):
        return list(log)
    by: dict[int, dict[str, None]] = {}
    for i, name in zip(order, log):
        by.setdefault(i, {})[name] = None
    return ["/".join(names) for names in by.values()]


def _local_shapes(chain: Chain) -> list[tuple[int, ...]]:
    """One device's block shape before each stage of ``chain`` (and after the last)."""
    return [layout.local_shape for layout in (chain.in_layout,) + chain.layouts()]


def _widest(block: tuple[int, ...], free) -> int:
    """Of the axes ``free``, the one with the most points in ``block`` (the first
    such): where the pieces are largest."""
    return max(sorted(free), key=lambda a: block[a])
