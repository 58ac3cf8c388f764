"""FFT → exchange → FFT on *pieces*: the packing and unpacking ride on the FFTs.

An all-to-all over ``p`` devices cuts the scattered axis into ``p`` chunks and stacks
the received chunks along the gathered axis. XLA:CPU does that with copies of its
own (slices before, a concatenation and a transpose after: four passes over the
block). Here a fused kernel (:func:`pfft.engines.native.fft_pieces`) writes the FFT's
result directly as ``p`` separate pieces, ordered so that piece ``k`` goes ``k``
places along the mesh axis; the exchange is ``p - 1`` collective permutes (XLA's
``collective-permute``, one copy of the data that leaves the device) plus the piece
that stays; and the next FFT reads the received pieces where they lie. Every element
is then read and written once per FFT and copied once per exchange, the floor for a
distributed transform.

Used by :func:`pfft.executor.run_chain` for local FFTs followed by an exchange and
another local FFT, when the engine can (``PIECES``) and the transport can shift
(``SHIFTS``). Blocks stay in numpy's axis order throughout.
"""
from __future__ import annotations

from .stages import Exchange, Gather, LocalFFT

__all__ = ["Pieces", "can_fuse", "fft_to_pieces", "exchange_pieces", "fused_exchanges",
           "collectives"]


class Pieces:
    """A local block held as pieces cut along one logical axis.

    ``arrays[k]`` holds chunk ``(me + sign*k) % p`` of ``axis``, where ``me`` is this
    device's place along ``mesh_axis``: ``sign=+1`` is the order to send in (piece
    ``k`` goes ``k`` places on), ``sign=-1`` the order received in (piece ``k`` came
    from ``k`` places back).
    """

    def __init__(self, arrays, axis: int, mesh_axis: str, sign: int, extent: int):
        self.arrays = list(arrays)
        self.axis, self.mesh_axis, self.sign = axis, mesh_axis, sign
        self.extent = extent                 # logical length along ``axis`` (no padding)

    @property
    def shape(self) -> tuple[int, ...]:
        """Shape of the whole block (padding of the cut axis cropped)."""
        shape = list(self.arrays[0].shape)
        shape[self.axis] = self.extent
        return tuple(shape)


def can_fuse(stages, i: int, engine, transport) -> bool:
    """Whether local FFT ``stages[i]`` can write pieces for the exchange after it."""
    return (getattr(engine, "PIECES", False) and getattr(transport, "SHIFTS", False)
            and i + 2 < len(stages) and isinstance(stages[i + 1], Exchange)
            and isinstance(stages[i + 2], LocalFFT) and stages[i + 1].size > 1)


def fft_to_pieces(data, axes, *, inverse: bool, scale: float, engine, shape,
                  exchange: Exchange | None, transport):
    """FFT of a block (an array or :class:`Pieces`) over local ``axes``.

    Returns :class:`Pieces` cut for ``exchange`` (send order), or an array when
    ``exchange`` is None. ``shape`` is the logical global shape (the FFT axes are
    whole here). The kernel transforms one axis; the others run in place on the
    pieces, before it when the output is cut along one of them, else after.
    """
    pieces = data if isinstance(data, Pieces) else None
    ndim = len(pieces.arrays[0].shape if pieces else data.shape)
    in_shape = list(pieces.shape if pieces else data.shape)
    cut_in = pieces.axis if pieces else None
    cut_out = exchange.scatter if exchange else None
    if cut_in is not None and cut_in in axes:
        f = cut_in
    elif cut_out is not None and cut_out in axes:
        f = cut_out
    else:
        f = axes[-1]
    rest = tuple(a for a in axes if a != f)
    before = rest if cut_out in rest else ()
    after = () if before else rest
    neg = lambda a: a - ndim            # noqa: E731  (the kernel counts from the end)

    arrays = pieces.arrays if pieces else [data]
    if before:                          # pieces are the chain's own buffers: in place
        arrays = [engine.fft(a, tuple(neg(b) for b in before), inverse, inplace=True)
                  for a in arrays]

    out_shape = list(in_shape)
    kw = {}
    if pieces:
        kw.update(in_split=neg(cut_in), in_sign=pieces.sign,
                  me_in=transport.axis_index(pieces.mesh_axis))
    if exchange:
        p = exchange.size
        chunk = -(-out_shape[cut_out] // p)
        out_shape[cut_out] = chunk
        kw.update(out_count=p, out_split=neg(cut_out), out_sign=1,
                  me_out=transport.axis_index(exchange.mesh_axis))
    out = engine.fft_pieces(arrays, neg(f), shape[f], out_shape=tuple(out_shape),
                            inverse=inverse, scale=scale, **kw)
    if after:
        out = [engine.fft(a, tuple(neg(b) for b in after), inverse, inplace=True)
               for a in out]
    if not exchange:
        return out[0]
    return Pieces(out, cut_out, exchange.mesh_axis, +1, in_shape[cut_out])


def exchange_pieces(pieces: Pieces, st: Exchange, shape, transport) -> Pieces:
    """The all-to-all ``st`` as cyclic shifts: piece ``k`` moves ``k`` places on.

    The received pieces are cut along ``st.gather`` (chunk ``me - k`` in slot ``k``).
    """
    assert pieces.axis == st.scatter and pieces.sign == 1 and pieces.mesh_axis == st.mesh_axis
    moved = [pieces.arrays[0]] + [transport.shift(a, st.mesh_axis, k)
                                  for k, a in enumerate(pieces.arrays) if k > 0]
    return Pieces(moved, st.gather, st.mesh_axis, -1, shape[st.gather])


def fused_exchanges(stages, engine, transport) -> set[int]:
    """Indices of the exchanges in ``stages`` that run as shifts of pieces."""
    return {i + 1 for i, st in enumerate(stages)
            if isinstance(st, LocalFFT) and can_fuse(stages, i, engine, transport)}


def collectives(stages, engine, transport) -> dict[str, int]:
    """The collectives ``stages`` compile to, by HLO op name.

    A fused exchange over ``p`` devices is ``p - 1`` collective permutes; any other
    exchange one all-to-all; a gather one all-gather.
    """
    fused = fused_exchanges(stages, engine, transport)
    counts = {"all-to-all": 0, "collective-permute": 0, "all-gather": 0}
    for i, st in enumerate(stages):
        if isinstance(st, Exchange):
            if i in fused:
                counts["collective-permute"] += st.size - 1
            else:
                counts["all-to-all"] += 1
        elif isinstance(st, Gather):
            counts["all-gather"] += 1
    return counts
