"""What the executor asks of a local FFT engine and of a transport, written down.

An *engine* (:class:`pfft.engines.xla.XlaEngine`, :class:`pfft.engines.native.
NativeEngine`, :class:`pfft.engines.per_stage.PerStageEngine`) runs the local
transforms; a *transport* (:mod:`pfft.transports.xla`,
:class:`pfft.transports.mpi.MPITransport`) moves blocks between devices. A plan
chooses its engine once (:func:`pfft.engines.choice.engine_for_plan`), and its
program (:mod:`pfft.program`) the engine of each transform where the plan's engine
chooses per transform (``choose``, the per-stage engine); the executor
(:mod:`pfft.executor`) calls the same methods of every engine.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol

__all__ = ["TransportCapabilities", "Engine", "PiecesKernels", "PiecesPass", "PiecesCut",
           "Transport"]


@dataclass(frozen=True)
class TransportCapabilities:
    """What a transport can do besides ``all_to_all`` (of a leading device axis),
    ``all_gather`` and ``axis_index``.

    Attributes
    ----------
    splits
        ``all_to_all(x, mesh_axis, split=a, merge=b)``: cuts any axis and stacks the
        received blocks along any axis itself.
    shifts
        ``shift(x, mesh_axis, k)``: moves a whole array ``k`` places along a mesh axis.
    swaps
        ``swap(arrays, mesh_axis)``: trades ``p`` whole arrays among the ``p`` devices
        of a mesh axis in one collective.
    """

    splits: bool = False
    shifts: bool = False
    swaps: bool = False


@dataclass(frozen=True)
class PiecesPass:
    """One pass of the pieces kernels: a transform (or a copy) along one axis.

    Attributes
    ----------
    kind
        "c2c", "r2c" (``n`` real points to ``n//2 + 1`` bins), "c2r" (back), "r2r"
        (a DCT/DST: ``op``) or "copy" (no transform; ``scale`` still applies).
    axis
        Negative: counted from the end, so leading batch axes are free.
    n
        Transform length: complex points (c2c), real points (r2c, c2r; r2r: ``op.n``),
        or points copied.
    inverse
        The ``exp(+2πi jk/n)`` sign (``False``: numpy's forward).
    scale
        Multiplies the result, fused in.
    weights
        Per-bin factors on the complex side of a real transform (after r2c, before
        c2r; ``n//2 + 1`` floats, static), or ``None``.
    op
        The :class:`pfft.engines.r2r.R2R` of an "r2r" pass (only there): its family,
        type, scale (times ``scale``) and end-point weights.
    """

    kind: str
    axis: int
    n: int
    inverse: bool = False
    scale: float = 1.0
    weights: Any = None
    op: Any = None


class PiecesCut(NamedTuple):
    """How one side of a pieces-kernel call is cut: into equal chunks along ``split``
    (negative), piece ``k`` holding chunk ``(me + sign*k) % count`` (``sign`` 0: chunk
    ``k``), the order in which shifts send (``+1``) and receive (``-1``) them. ``me``:
    this device's place along the mesh axis (an int or ``lax.axis_index``); ``count``:
    how many pieces the output side has (the input side has as many as it is given).
    The default: one array, not cut."""

    split: int = -1
    sign: int = 0
    me: Any = 0
    count: int = 1


class PiecesKernels(Protocol):
    """The CPU kernels that read and write the pieces an exchange moves
    (:mod:`pfft.engines.native_pieces`, bound to a thread count): what
    :mod:`pfft.pieces` calls."""

    nthreads: int
    fuse: bool | str

    def fft_pieces(self, pieces, step: PiecesPass, out_shape, *, cut_in: PiecesCut,
                   cut_out: PiecesCut, inplace: bool = False) -> list: ...

    def fft_pieces_pair(self, pieces, first: PiecesPass, second: PiecesPass, out_shape, *,
                        cut_in: PiecesCut, cut_out: PiecesCut) -> list: ...

    def writes_in_place(self, step: PiecesPass, in_shapes, out_shape, cut_in: PiecesCut,
                        cut_out: PiecesCut) -> bool: ...

    def fft(self, x, axes, inverse: bool, *, scale: float = 1.0,
            inplace: bool = False) -> tuple: ...


class Engine(Protocol):
    """A local FFT engine. Each transform returns its result and the factor still owed
    (what the engine did not fuse: the executor applies it in its next copy).

    Attributes
    ----------
    name
        As plans print it: "xla", "native" or "auto".
    keeps_order
        Transforms any axes where they lie (the block keeps numpy's axis order); where
        ``False``, only the innermost ones, in the order given (the program puts them
        there, in the packing of the exchange before).
    fuses_scale
        Applies the ``scale`` its transforms are given (fused, or in a multiply of its
        own); where ``False`` it hands it back untouched and the program applies it in
        its next copy.
    pieces
        The :class:`PiecesKernels` where the engine has them (native on CPU), else None.
    prunes_dealiased
        A dealiased transform's axes go one FFT each, each truncated before the next
        (the later FFTs run on fewer points), where that pays: the engine transforms
        an axis where it lies at the cost of the points it holds.

    Methods
    -------
    natural_scale(inverse, n)
        The factor the engine's own transforms apply for ``n`` points.
    fft(x, axes, inverse, *, scale, inplace)
        Complex transform over block axes ``axes``; ``inplace``: the input is dead
        after it (transform in its buffer where the kernel can).
    rfft(x, axes, *, inverse, scale), irfft(x, axes, n, *, inverse, scale)
        Real-to-complex (the last axis halved) and complex-to-real (``n`` real points
        on the last axis), of either sign.
    r2r(x, ops, axes, *, inplace)
        DCTs and DSTs: ``ops[j]`` (:class:`pfft.engines.r2r.R2R`, its scaling
        included) along ``axes[j]``; returns the array. ``inplace`` as for ``fft``.
    """

    name: str
    keeps_order: bool
    fuses_scale: bool
    pieces: PiecesKernels | None
    prunes_dealiased: bool

    def natural_scale(self, inverse: bool, n: int) -> float: ...

    def fft(self, x, axes, inverse: bool, *, scale: float = 1.0,
            inplace: bool = False) -> tuple: ...

    def rfft(self, x, axes, *, inverse: bool = False, scale: float = 1.0) -> tuple: ...

    def irfft(self, x, axes, n: int, *, inverse: bool = True, scale: float = 1.0) -> tuple: ...

    def r2r(self, x, ops, axes, *, inplace: bool = False): ...


class Transport(Protocol):
    """A transport: its ``capabilities`` and the three collectives every one has."""

    capabilities: TransportCapabilities

    def all_to_all(self, x, mesh_axis): ...

    def all_gather(self, x, mesh_axis, axis: int): ...

    def axis_index(self, mesh_axis): ...
