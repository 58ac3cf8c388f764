"""Exchanges as *pieces*: the packing and unpacking ride on the FFTs (native CPU engine).

An all-to-all over ``p`` devices cuts the scattered axis into ``p`` chunks and stacks
the received chunks along the gathered axis. XLA:CPU does that with copies of its
own (slices before, a concatenation and a transpose after: four passes over the
block). Here the FFT before an exchange is a fused kernel call
(:func:`pfft.engines.native.fft_pieces`) that writes its result directly as ``p``
separate pieces; the exchange moves them as they are, as one *swap* (XLA's tuple
``all-to-all``, :func:`pfft.transports.swap.swap`: piece ``k`` goes to device ``k``, one
collective and one copy of the data that leaves the device) or, for large blocks and
where the transport has no swap, as ``p - 1`` collective permutes (piece ``k`` goes
``k`` places on); and the FFT after it reads the received pieces where they lie. A DCT
or DST stage (``LocalR2R``) is such a pass too, through DUCC's r2r transforms. Where no
transform stands next to an exchange (the end of a chain, a resize, a gather) one copy
pass packs or unpacks instead.
Every element is then read and written once per FFT and copied once per exchange.

Used by a plan's program (:func:`pfft.program.resolve`) where the engine has the
pieces kernels and the transport can shift (the native engine on CPU, the XLA
transport): the chain is rewritten once (:func:`rewrite`) so that each exchange
:func:`as_pieces` picks is a :class:`PiecesExchange` and each transform next to it a
:class:`FusedTransform`, which the program runs as its steps
(:class:`pfft.program.PiecesMove`, :class:`pfft.program.FusedPasses`). With
``fuse_exchanges="auto"`` every exchange where the transport swaps moves pieces, else
those whose blocks are large enough to pay for the extra collectives of shifts
(:func:`shifts_pay`); the others run as one all-to-all between the same FFTs. Blocks
stay in numpy's axis order throughout.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, fields, replace
from typing import TYPE_CHECKING, Any, Callable, NamedTuple

from .interfaces import PiecesCut, PiecesPass
from .stage_kinds.exchange import Exchange

if TYPE_CHECKING:     # the kinds' passes are here, the kinds name them (no import back)
    from .stage_kinds.fft import LocalFFT, RealFFT
    from .stage_kinds.r2r import LocalR2R

__all__ = ["Pieces", "Send", "enabled", "swaps", "swap_pays", "shifts_pay", "as_pieces", "fused",
           "pairs_enabled", "in_place_enabled", "transform", "Form", "Route", "run_route",
           "c2c_route", "real_route", "r2r_route", "real_settings", "PassSettings",
           "ready_for", "pack", "exchange", "assemble", "FusedTransform", "PiecesExchange",
           "rewrite", "BRANCHES"]

# Per-device block bytes per shift beyond the first below which one all-to-all beats
# ``p - 1`` shifts: each shift is a collective of its own (100-170 µs fixed on the
# 2-core machine, about what one whole all-to-all costs: `python -m
# benchmarks.fixed_costs`), while the all-to-all pays two copy passes over the block
# (its pack and unpack) that the pieces avoid. Measured with whole rfftn/irfftn plans,
# the two settings alternated (docs/performance.md): over 8 devices shifts
# lose at 128-256 KiB blocks and win from 1 MiB; over 4 they break even at 256-512 KiB.
# Only for transports without swaps: a swap is one collective, like the all-to-all.
SHIFT_BYTES = 80 * 1024

# Per-device block bytes per collective saved up to which one swap beats ``p - 1``
# shifts: a swap saves ``p - 2`` collectives (about 0.2 ms each among 8 simulated
# devices on the 2-core machine), but inside whole 256³ plans (17-34 MiB blocks on 4
# devices) it ran 4-17 % slower than the shifts, in part from its outputs' page faults
# (1.02-1.09 with glibc's mmap threshold raised). Whole rfftn/irfftn plans, swaps
# against shifts (docs/performance.md):
# 0.74-0.92 at 64³ on 4 devices (0.3-0.5 MiB blocks), 0.75-0.95 at 128³ on 8 (1-2
# MiB), ties at 128³ on 4 (2 MiB). Over 2 devices a swap and a shift are one
# collective each: shifts.
SWAP_BYTES = 3 * 1024 * 1024 // 2


class Pieces:
    """A local block held as pieces cut along one logical axis.

    ``arrays[k]`` holds chunk ``(me + sign*k) % p`` of ``axis``, where ``me`` is this
    device's place along ``mesh_axis``: ``sign=0`` is the order a swap sends and
    receives in (piece ``k`` goes to, or came from, device ``k``); ``sign=+1`` the
    order shifts send in (piece ``k`` goes ``k`` places on), ``sign=-1`` the order they
    are received in (piece ``k`` came from ``k`` places back).
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

    @property
    def ndim(self) -> int:
        return self.arrays[0].ndim


def enabled(engine, transport) -> bool:
    """Whether chains on ``engine`` over ``transport`` exchange pieces."""
    return engine.pieces is not None and transport.capabilities.shifts


def swaps(transport) -> bool:
    """Whether exchanges of pieces over ``transport`` are one swap (a tuple all-to-all,
    :func:`pfft.transports.swap.swap`) rather than ``p - 1`` cyclic shifts: where the
    transport has swaps (the values are the same bits either way)."""
    return transport.capabilities.swaps


def swap_pays(st: Exchange, block_bytes: int) -> bool:
    """Whether exchange ``st`` of pieces, in a chain whose local input block has
    ``block_bytes`` bytes, runs faster as one swap than as shifts: up to
    ``(p - 2) * SWAP_BYTES`` (never over 2 devices, where both are one collective)."""
    return block_bytes <= (st.size - 2) * SWAP_BYTES


@dataclass(frozen=True)
class Send(Exchange):
    """An exchange as pieces move in it, and the order they are cut in for it:
    ``sign=0`` for one swap (piece ``k`` to device ``k``), ``sign=+1`` for shifts
    (piece ``k`` to ``k`` places on)."""

    sign: int = 1


def shifts_pay(st: Exchange, block_bytes: int) -> bool:
    """Whether exchange ``st`` of a ``block_bytes`` block runs faster as shifts of
    pieces than as one all-to-all with its pack and unpack copies."""
    return st.size <= 2 or block_bytes >= (st.size - 2) * SHIFT_BYTES


def _me(transport, mesh_axis, sign: int):
    """This device's place along ``mesh_axis`` where pieces in order ``sign`` need it."""
    return transport.axis_index(mesh_axis) if sign else 0


def as_pieces(st, engine, transport, block_bytes: int) -> Send | None:
    """How stage ``st`` moves pieces (:func:`exchange`) in a chain on ``engine`` over
    ``transport`` whose local input block has ``block_bytes`` bytes, or None where it
    runs as XLA's all-to-all (or is no exchange).

    Which exchanges move pieces: with the engine's ``fuse`` setting ``True``, all;
    with ``"auto"``, all where the transport swaps (the all-to-all is one collective
    too, and the pieces save its two copies), else those where :func:`shifts_pay`.
    How: one swap where the transport swaps and :func:`swap_pays`, else shifts."""
    if not (isinstance(st, Exchange) and enabled(engine, transport)):
        return None
    if not (engine.pieces.fuse is True or swaps(transport) or shifts_pay(st, block_bytes)):
        return None
    sign = 0 if swaps(transport) and swap_pays(st, block_bytes) else 1
    return Send(**{f.name: getattr(st, f.name) for f in fields(Exchange)}, sign=sign)


def fused(st) -> bool:
    """Whether local stage ``st`` can run as a pass of the pieces kernel: a kind with a
    pieces form (``pieces_pass``: FFT, DCT and DST stages)."""
    return callable(getattr(st, "pieces_pass", None))


@dataclass(frozen=True)
class PassSettings:
    """What the kernel passes of one stage (or one pack or assembly) share.

    Attributes
    ----------
    engine, transport
        The pieces kernels and the transport (its ``axis_index``).
    inverse
        The sign of the stage's transforms.
    scale
        The stage's factor, applied once, by one of its passes.
    exchange
        The exchange the stage's output is cut for (:class:`Send`), or None: one
        array out.
    shape
        The logical global shape before the stage.
    weights
        The complex-side bin weights of a real stage's halved axis (a transposed real
        transform's), or None.
    """

    engine: Any
    transport: Any
    inverse: bool = False
    scale: float = 1.0
    exchange: Send | None = None
    shape: tuple[int, ...] = ()
    weights: Any = None


class _Sides(NamedTuple):
    """A kernel call's input arrays and cut, its output piece shape and cut, and the
    logical extent of the axis the output is cut along."""

    arrays: list
    piece_shape: tuple[int, ...]
    extent: int | None
    cut_in: PiecesCut
    cut_out: PiecesCut


def _sides(data, out_shape, exchange: Send | None, transport) -> _Sides:
    """A kernel call's two sides: ``out_shape`` (the whole block's) becomes a piece's
    shape when the output is cut for ``exchange``, in its order."""
    pieces = data if isinstance(data, Pieces) else None
    ndim = data.ndim
    out_shape = list(out_shape)
    cut_in = cut_out = PiecesCut()
    if pieces:
        cut_in = PiecesCut(pieces.axis - ndim, pieces.sign,
                           _me(transport, pieces.mesh_axis, pieces.sign))
    extent = None
    if exchange:
        s, p = exchange.scatter, exchange.size
        extent = out_shape[s]
        out_shape[s] = -(-extent // p)
        cut_out = PiecesCut(s - ndim, exchange.sign,
                            _me(transport, exchange.mesh_axis, exchange.sign), p)
    return _Sides(pieces.arrays if pieces else [data], tuple(out_shape), extent, cut_in,
                  cut_out)


def _result(out, exchange: Send | None, extent):
    """A kernel call's outputs: one array, or the pieces ``exchange`` sends."""
    if not exchange:
        return out[0]
    return Pieces(out, exchange.scatter, exchange.mesh_axis, exchange.sign, extent)


class Pass(NamedTuple):
    """One kernel pass as a stage sees it: ``kind`` along block axis ``axis``, ``n``
    points, writing ``out_len`` points, with its own ``scale``, complex-side
    ``weights`` and, for "r2r", the DCT/DST ``op``."""

    kind: str
    axis: int
    n: int
    out_len: int
    scale: float = 1.0
    weights: object = None
    op: object = None

    def for_kernel(self, ndim: int, inverse: bool) -> PiecesPass:
        """The pass as the kernels take it (its axis counted from the end of an
        ``ndim``-d block)."""
        return PiecesPass(self.kind, self.axis - ndim, self.n, inverse, self.scale,
                          self.weights, self.op)


def _kernel(data, step: Pass, c: PassSettings):
    """One kernel pass: ``data`` (array or Pieces) in, pieces cut for ``c.exchange``
    (or one array) out."""
    out_shape = list(data.shape)
    out_shape[step.axis] = step.out_len
    sides = _sides(data, out_shape, c.exchange, c.transport)
    kernel_pass = step.for_kernel(data.ndim, c.inverse)
    engine = c.engine
    # what the last exchange delivered is dead after this pass (only pieces an
    # exchange made are: an array here may be the caller's input)
    inplace = (isinstance(data, Pieces) and in_place_enabled(engine)
               and engine.writes_in_place(kernel_pass, [a.shape for a in sides.arrays],
                                          sides.piece_shape, sides.cut_in, sides.cut_out))
    out = engine.fft_pieces(sides.arrays, kernel_pass, sides.piece_shape, cut_in=sides.cut_in,
                            cut_out=sides.cut_out, inplace=inplace)
    return _result(out, c.exchange, sides.extent)


def pairs_enabled(engine) -> bool:
    """Whether two passes in a row may run as one kernel call: where the engine has the
    pieces kernels (the values agree with two calls to rounding)."""
    return engine.pieces is not None


def in_place_enabled(engine) -> bool:
    """Whether a pass may write over the pieces it reads where their cut allows
    (:func:`pfft.engines.native.writes_in_place`): where the engine has the pieces
    kernels (the values are the same bits either way)."""
    return engine.pieces is not None


def _pair(data, first: Pass, second: Pass, c: PassSettings):
    """Two kernel passes in one call (``first`` then ``second``, different axes): the
    intermediate block stays in cache (:func:`pfft.engines.native.fft_pieces_pair`)."""
    out_shape = list(data.shape)
    out_shape[first.axis] = first.out_len
    out_shape[second.axis] = second.out_len
    sides = _sides(data, out_shape, c.exchange, c.transport)
    nd = data.ndim
    out = c.engine.fft_pieces_pair(sides.arrays, first.for_kernel(nd, c.inverse),
                                   second.for_kernel(nd, c.inverse), sides.piece_shape,
                                   cut_in=sides.cut_in, cut_out=sides.cut_out)
    return _result(out, c.exchange, sides.extent)


def _in_place(data, axes, c: PassSettings):
    """Complex FFT over ``axes`` (not cut) of every piece, in place."""
    if not axes:
        return data
    if isinstance(data, Pieces):
        data.arrays = [_in_place(a, axes, c) for a in data.arrays]
        return data
    return c.engine.fft(data, tuple(a - data.ndim for a in axes), c.inverse, inplace=True)[0]


class Form(NamedTuple):
    """What a stage's passes are handed, as the program sees it when it is made: the
    block's logical shape, and the axis its pieces are cut along (``None``: one
    array)."""

    shape: tuple[int, ...]
    cut: int | None


class Route(NamedTuple):
    """How a stage's passes go, chosen when the program is made (:func:`c2c_route`,
    :func:`real_route`, :func:`r2r_route`): a branch (:data:`BRANCHES`) and its
    arguments; a branch that hands the rest of its stage on to a complex transform
    carries that one's route among them."""

    branch: str
    args: tuple = ()

    def __str__(self) -> str:
        nested = [str(a) for a in self.args if isinstance(a, Route)]
        return self.branch + "".join(f" ({n})" for n in nested)


def _pairs_pay(form: Form, first: int, second: int, exchange: Exchange | None,
               engine) -> bool:
    """Whether passes along ``first`` then ``second`` run as one call: the block has
    other axes, not cut on either side, that hold enough sub-blocks to share among
    the threads (else the kernel would run the two passes whole anyway)."""
    if not pairs_enabled(engine):
        return False
    cut = {form.cut, exchange.scatter if exchange else None, first, second}
    subs = math.prod(d for a, d in enumerate(form.shape) if a not in cut)
    return subs >= max(8, 2 * int(engine.nthreads or 1))


#: every way a stage's passes can go, by name (each a function below, taking the block,
#: its route's arguments and the stage's settings): where the stage's factor is applied
#: differs between them, so tests reach each with a factor that is not 1
#: (tests/test_scale_placements.py)
BRANCHES: dict[str, Callable] = {}


def _branch(name: str):
    def register(fn):
        BRANCHES[name] = fn
        return fn
    return register


def run_route(data, route: Route, c: PassSettings):
    """The passes ``route`` says, on ``data`` (an array or :class:`Pieces`)."""
    return BRANCHES[route.branch](data, *route.args, c)


def c2c_route(form: Form, axes: tuple[int, ...], exchange: Send | None, engine) -> Route:
    """A complex FFT over ``axes``: the kernel's pass along the axis the input or the
    output is cut along (else the last), the others in place."""
    cut_out = exchange.scatter if exchange else None
    f = form.cut if form.cut in axes else cut_out if cut_out in axes else axes[-1]
    rest = tuple(a for a in axes if a != f)
    if cut_out in rest:                 # cut on the way out: transform it before
        return Route("c2c: the other axes first", (f, rest))
    if rest and _pairs_pay(form, rest[-1], f, exchange, engine):
        return Route("c2c: a pair", (f, rest))
    return Route("c2c: the kernel's axis first", (f, rest))


def _c2c_pass(f: int, c: PassSettings, scale: float) -> Pass:
    """The complex pass along ``f``, its whole length in and out."""
    return Pass("c2c", f, c.shape[f], c.shape[f], scale)


@_branch("c2c: the other axes first")
def _c2c_rest_first(data, f, rest, c: PassSettings):
    data = _in_place(data, rest, c)
    return _kernel(data, _c2c_pass(f, c, c.scale), c)


@_branch("c2c: a pair")
def _c2c_pair(data, f, rest, c: PassSettings):
    g, rest = rest[-1], rest[:-1]       # g, then the kernel's axis f, in one call
    out = _pair(data, _c2c_pass(g, c, c.scale), _c2c_pass(f, c, 1.0), c)
    return _in_place(out, rest, c)


@_branch("c2c: the kernel's axis first")
def _c2c_kernel_first(data, f, rest, c: PassSettings):
    out = _kernel(data, _c2c_pass(f, c, c.scale), c)
    return _in_place(out, rest, c)


def transform(data, st: LocalFFT | RealFFT | LocalR2R, route: Route, c: PassSettings,
              weighted: bool):
    """Local FFT, DCT or DST stage ``st`` of a block (an array or :class:`Pieces`), its
    passes as ``route`` says (the stage's ``pieces_route``, chosen when the program
    was made).

    Returns :class:`Pieces` cut for ``c.exchange`` (send order), or an array when
    that is None. ``c.shape`` is the logical global shape before the stage. The
    kernel transforms one axis per pass; the other axes of the stage run in place on
    pieces, before the kernel when the output is cut along one of them, else after. A
    real stage's halved axis comes first (real to complex) or last (complex to real),
    with the Hermitian bin weights of a transposed real transform (``weighted``)
    fused in. A DCT/DST stage is one pass along its axis applying
    ``st.op_for(c.inverse)``, its scale times ``c.scale`` and its end-point weights
    fused in; complex data (a mixed plan's) goes through it as real and imaginary
    parts. Each kind of stage names its function here (its ``pieces_pass``), each way
    its passes can go a branch (:data:`BRANCHES`), and ``c.scale`` is applied once, by
    one pass, whichever it is.
    """
    return st.pieces_pass(data, route, c, weighted)


def r2r_route(st: LocalR2R) -> Route:
    """A DCT/DST stage: one pass along its axis."""
    return Route("r2r", (st,))


@_branch("r2r")
def _r2r_pass(data, st: LocalR2R, c: PassSettings):
    op = st.op_for(c.inverse)
    return _kernel(data, Pass("r2r", st.axis, op.n, op.n, c.scale, op=op), c)


def _halved_pass(data, st: RealFFT, c: PassSettings):
    """The kernel's pass along real stage ``st``'s halved axis: real to complex (its
    ``n`` points to ``n//2 + 1`` bins) or back, the bin weights fused in."""
    kind, out_len = ("r2c", st.half) if st.to_complex else ("c2r", st.n)
    return _kernel(data, Pass(kind, st.axis, st.n, out_len, c.scale, c.weights), c)


def real_settings(c: PassSettings, st: RealFFT, weighted: bool) -> PassSettings:
    """``c`` with real stage ``st``'s bin weights where the transform is transposed."""
    return replace(c, weights=st.transposed_weights() if weighted else None)


def real_route(form: Form, st: RealFFT, exchange: Send | None, engine) -> Route:
    """A real stage's route (:func:`_r2c_route` or :func:`_c2r_route`)."""
    return (_r2c_route if st.to_complex else _c2r_route)(form, st, exchange, engine)


def _r2c_route(form: Form, st: RealFFT, exchange: Send | None, engine) -> Route:
    """Real to complex: the halved axis first, then the stage's other axes (the one the
    output is cut along in the same call where pairing pays)."""
    rest = tuple(a for a in st.axes if a != st.axis)
    cut_out = exchange.scatter if exchange else None
    if cut_out not in rest:
        return Route("r2c: the halved axis, the others in place", (st, rest))
    if _pairs_pay(form, st.axis, cut_out, exchange, engine):
        return Route("r2c: a pair with the cut axis", (st, rest))
    # the halved axis to one array, then the other axes as a complex stage
    half = list(form.shape)
    half[st.axis] = st.half
    return Route("r2c: the halved axis, then the others",
                 (st, rest, c2c_route(Form(tuple(half), None), rest, exchange, engine)))


@_branch("r2c: the halved axis, the others in place")
def _r2c_alone(data, st, rest, c: PassSettings):
    return _in_place(_halved_pass(data, st, c), rest, c)


@_branch("r2c: a pair with the cut axis")
def _r2c_pair(data, st, rest, c: PassSettings):
    cut_out = c.exchange.scatter        # the halved axis, then the cut axis, in one call
    out = _pair(data, Pass("r2c", st.axis, st.n, st.half, c.scale, c.weights),
                _c2c_pass(cut_out, c, 1.0), c)
    return _in_place(out, tuple(a for a in rest if a != cut_out), c)


@_branch("r2c: the halved axis, then the others")
def _r2c_then_rest(data, st, rest, then: Route, c: PassSettings):
    # the halved axis to one array, then the other axes, the cut one last
    half = _halved_pass(data, st, replace(c, exchange=None))
    new = list(c.shape)
    new[st.axis] = st.half
    return run_route(half, then, replace(c, scale=1.0, shape=tuple(new)))


def _c2r_route(form: Form, st: RealFFT, exchange: Send | None, engine) -> Route:
    """Complex to real: the stage's other axes first, the halved axis last (in one call
    with the axis the input is cut along, or the last other one, where pairing pays)."""
    h, rest = st.axis, tuple(a for a in st.axes if a != st.axis)
    f = form.cut if form.cut in rest else rest[-1] if rest else None
    if rest and form.cut != h and _pairs_pay(form, f, h, exchange, engine):
        return Route("c2r: a pair with the halved axis", (st, rest, f))
    if rest and form.cut == h:          # cut along the halved axis: the c2r reads it
        return Route("c2r: cut along the halved axis", (st, rest))
    if rest and form.cut is not None:   # the complex axes of the pieces into one array
        return Route("c2r: the others first",
                     (st, c2c_route(form, rest, None, engine)))
    if rest:                            # the complex axes of the array first
        return Route("c2r: the others first", (st, rest))
    return Route("c2r: the halved axis alone", (st,))


@_branch("c2r: a pair with the halved axis")
def _c2r_pair(data, st, rest, f, c: PassSettings):
    # the other complex axes in place, then f and the halved axis in one call
    data = _in_place(data, tuple(a for a in rest if a != f), c)
    return _pair(data, _c2c_pass(f, c, c.scale),
                 Pass("c2r", st.axis, st.n, st.n, 1.0, c.weights), c)


@_branch("c2r: cut along the halved axis")
def _c2r_cut_halved(data, st, rest, c: PassSettings):
    return _halved_pass(_in_place(data, rest, c), st, c)


@_branch("c2r: the others first")
def _c2r_rest_first(data, st, rest, c: PassSettings):
    # ``rest``: the route of the pieces' complex transform, or the array's axes
    data = (run_route(data, rest, replace(c, exchange=None)) if isinstance(rest, Route)
            else c.engine.fft(data, tuple(a - data.ndim for a in rest), c.inverse,
                              scale=c.scale)[0])
    return _halved_pass(data, st, replace(c, scale=1.0))


@_branch("c2r: the halved axis alone")
def _c2r_alone(data, st, c: PassSettings):
    return _halved_pass(data, st, c)


def ready_for(data, st: Send) -> bool:
    """Whether ``data`` is already the pieces exchange ``st`` sends."""
    return (isinstance(data, Pieces) and data.sign == st.sign and data.axis == st.scatter
            and data.mesh_axis == st.mesh_axis and len(data.arrays) == st.size)


def _copy_pass(data, scale: float) -> Pass:
    """A copy along the block's contiguous (last) axis, ``scale`` applied."""
    f = data.ndim - 1
    return Pass("copy", f, data.shape[f], data.shape[f], scale)


def pack(data, st: Send, *, scale: float, engine, transport) -> Pieces:
    """Cut a block (an array, or pieces cut otherwise) into the pieces ``st`` sends:
    one copy pass, ``scale`` applied."""
    return _kernel(data, _copy_pass(data, scale), PassSettings(engine, transport, exchange=st))


def exchange(pieces: Pieces, st: Send, extent: int, transport) -> Pieces:
    """The all-to-all ``st`` on pieces, as ``st.sign`` says: one swap (piece ``k`` to
    device ``k``; the received pieces hold chunk ``k`` of ``st.gather`` in slot ``k``),
    or cyclic shifts (piece ``k`` moves ``k`` places on; chunk ``me - k`` in slot
    ``k``). ``extent`` is the length of the received block along ``st.gather``.
    """
    if not ready_for(pieces, st):  # pragma: no cover - an executor defect
        raise RuntimeError(f"pieces cut along axis {pieces.axis} are not ready for {st}")
    if st.sign == 0:
        return Pieces(transport.swap(pieces.arrays, st.mesh_axis), st.gather, st.mesh_axis,
                      0, extent)
    moved = [pieces.arrays[0]] + [transport.shift(a, st.mesh_axis, k)
                                  for k, a in enumerate(pieces.arrays) if k > 0]
    return Pieces(moved, st.gather, st.mesh_axis, -1, extent)


def assemble(pieces: Pieces, *, scale: float, engine, transport):
    """The block the pieces hold, as one array in numpy order (one copy pass)."""
    return _kernel(pieces, _copy_pass(pieces, scale), PassSettings(engine, transport))


# -- the pieces path as stages of the chain ------------------------------------------

@dataclass(frozen=True)
class FusedTransform:
    """Local transform ``stage`` as pieces-kernel passes: it reads the pieces the
    exchange before it delivered (or an array), and writes the pieces ``send`` moves
    (or, where ``send`` is None, one array)."""

    stage: Any
    send: Send | None

    @property
    def axes(self) -> tuple[int, ...]:
        return self.stage.axes


@dataclass(frozen=True)
class PiecesExchange:
    """Exchange ``send`` of pieces: packed by a copy pass first where the stage before
    wrote no pieces for it (``pack``), assembled into one array by a copy pass after
    where the stage after reads no pieces (``assemble``)."""

    send: Send
    pack: bool
    assemble: bool


def rewrite(stages: list, engine, transport, block_bytes: int) -> list:
    """``stages`` with each exchange :func:`as_pieces` picks as a :class:`PiecesExchange`
    and each transform next to one as a :class:`FusedTransform`, one for one."""
    sends = [as_pieces(st, engine, transport, block_bytes) for st in stages]
    n = len(stages)

    def reads_pieces(i: int) -> bool:    # stage i takes the pieces an exchange delivers
        return i < n and (bool(sends[i]) or fused(stages[i]))
    out = []
    for i, st in enumerate(stages):
        before, after = sends[i - 1] if i else None, sends[i + 1] if i + 1 < n else None
        if sends[i]:
            writes = i > 0 and fused(stages[i - 1])
            out.append(PiecesExchange(sends[i], pack=not writes,
                                      assemble=not reads_pieces(i + 1)))
        elif fused(st) and (before or after):
            out.append(FusedTransform(st, after))
        else:
            out.append(st)
    return out
