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
the window (``fft axes (1, 2)`` before an exchange becomes ``fft axis 2`` on the whole
block, then ``fft axis 1`` per piece).

An exchange's own axes may be cut too, *within their chunks*: the all-to-all moves
chunk ``j`` of the scattered axis to device ``j`` and stacks what it receives along
the gathered one, so piece ``m`` can hold points ``a..b`` of every chunk (``j*c + a``
to ``j*c + b`` where the axis is whole, ``a..b`` where it holds one chunk of ``c``
points) and its exchange is still one all-to-all of its own. A window whose only
exchange allows it, and whose transforms act only on axes before that axis, is cut so
where that keeps at least its stages (a slab's exchange and its ``fft axis 0``, the
2-D transform on the other side left whole; a 2-D array's, which leaves no axis
alone): each piece is then a block of whole rows of the axes after the cut, which the
transform beside it can read or write where it lies in the whole block
(:func:`pfft.executor.run_chain`), and the cut on the axis's whole side is a strided
slice that XLA can fuse into the packing the exchange does anyway (the transposes that
put its chunks first). :func:`pfft.executor.run_chain` runs each window piece by piece.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from .planner import Chain
from .stages import Exchange, Gather, LocalFFT, LocalR2R, RealFFT, Resize, Scatter, Stage

__all__ = ["Window", "acts_on", "pipelined", "run_order", "per_stage"]


@dataclass(frozen=True)
class Window:
    """Stages ``start`` to ``stop - 1`` of a chain, run on ``pieces`` pieces of the
    block cut along logical axis ``axis``.

    ``chunks > 1``: the axis is the window's exchange's own, cut within its chunks; it
    holds ``chunks`` chunks on its whole side (the window's start where
    ``chunked_at_start``, else its end) and one chunk on the other.
    """

    start: int
    stop: int
    axis: int
    pieces: int
    chunks: int = 1
    chunked_at_start: bool = False

    def __str__(self) -> str:
        first, last = self.start + 1, self.stop
        what = f"stage {first}" if first == last else f"stages {first}-{last}"
        within = f" within its {self.chunks} chunks" if self.chunks > 1 else ""
        return f"{what} pipelined: {self.pieces} pieces along axis {self.axis}{within}"


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
    puts more of it into the window: the same map) and its windows. A window that can
    be cut within its exchange's chunks (:func:`_chunk_cut`) at no fewer stages than
    along an axis it leaves alone is cut so, its neighbours left whole. ``pieces < 2``,
    or a chain without a window whose cut axis has two local points, gives ``chain``
    itself and no windows.
    """
    if pieces < 2:
        return chain, ()
    stages = list(chain.stages)
    plain = _windows(chain)
    blocks = _local_shapes(chain)
    chunked: dict[int, Window] = {}          # plain window's index -> its chunked cut
    for w, (a, b, _) in enumerate(plain):
        lo = plain[w - 1][1] if w else 0
        hi = plain[w + 1][0] if w + 1 < len(plain) else len(stages)
        cut = _chunk_cut(chain, a, b, lo, hi, pieces)
        if cut is not None:
            chunked[w] = cut
    busy = {i for a, b, _ in plain for i in range(a, b)}
    busy |= {i for c in chunked.values() for i in range(c.start, c.stop)}
    # widen each other window by the split-off part of a neighbouring local transform,
    # where that neighbour is in no window itself
    splits: dict[int, tuple[Stage, Stage]] = {}
    for w, (a, b, free) in enumerate(plain):
        if not free or w in chunked:
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
    cuts = list(chunked.values())
    if splits:
        def moved(i: int) -> int:          # stage i's index once the splits are made
            return i + sum(j < i for j in splits)
        cuts = [replace(c, start=moved(c.start), stop=moved(c.stop)) for c in cuts]
        stages = [part for i, st in enumerate(stages) for part in splits.get(i, (st,))]
        chain = Chain(chain.in_layout, chain.out_layout, tuple(stages))
    windows = list(cuts)
    blocks = _local_shapes(chain)
    for a, b, free in _windows(chain):
        if not free or any(c.start < b and a < c.stop for c in cuts):
            continue
        axis = _widest(blocks[a], free)
        count = min(pieces, blocks[a][axis])
        if count >= 2:
            windows.append(Window(a, b, axis, count))
    windows.sort(key=lambda w: w.start)
    for w, v in zip(windows, windows[1:]):
        if v.start < w.stop:  # pragma: no cover - a defect
            raise RuntimeError(f"pipeline: windows {w} and {v} overlap")
    return chain, tuple(windows)


def _chunk_cut(chain: Chain, start: int, stop: int, lo: int, hi: int,
               pieces: int) -> Window | None:
    """The window of stages ``start`` to ``stop - 1`` of ``chain`` (one exchange and
    the transforms around it that leave some axis alone) cut instead within the
    chunks of one of the exchange's axes, grown over the local transforms beside it
    within stages ``lo`` to ``hi - 1``; None where neither axis gives a window that
    holds at least those stages.

    Only the exchange may act on the cut axis, and every transform in the window only
    on axes before it (a piece is then whole rows of the axes after it); the axis must
    be split evenly, and hold at least two points on its sharded side. Of the two
    axes, the one whose window holds more stages; the scattered one where they tie.
    """
    exchanges = [i for i in range(start, stop) if isinstance(chain.stages[i], Exchange)]
    if len(exchanges) != 1:
        return None
    at = exchanges[0]
    ex = chain.stages[at]
    if ex.gather_keep != 1 or ex.scatter_had != 1:
        return None
    before, after = _layouts(chain)[at:at + 2]

    def fits(st: Stage, axis: int) -> bool:     # a transform of axes before ``axis``
        return isinstance(st, (LocalFFT, RealFFT)) and max(st.axes) < axis

    best = None
    for axis, chunked_at_start in ((ex.scatter, True), (ex.gather, False)):
        if not (before.is_even(axis) and after.is_even(axis)):
            continue
        a, b = at, at + 1
        while a > lo and fits(chain.stages[a - 1], axis):
            a -= 1
        while b < hi and fits(chain.stages[b], axis):
            b += 1
        sharded = after if chunked_at_start else before
        count = min(pieces, sharded.local_shape[axis])
        if a > start or b < stop or count < 2:
            continue
        if best is None or b - a > best.stop - best.start:
            best = Window(a, b, axis, count, ex.size, chunked_at_start)
    return best


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


def _layouts(chain: Chain) -> tuple:
    """The layout before each stage of ``chain`` (and after the last)."""
    return (chain.in_layout,) + chain.layouts()


def _local_shapes(chain: Chain) -> list[tuple[int, ...]]:
    """One device's block shape before each stage of ``chain`` (and after the last)."""
    return [layout.local_shape for layout in _layouts(chain)]


def _widest(block: tuple[int, ...], free) -> int:
    """Of the axes ``free``, the one with the most points in ``block`` (the first
    such): where the pieces are largest."""
    return max(sorted(free), key=lambda a: block[a])
