"""What the executor asks of a local FFT engine and of a transport, written down.

An *engine* (:mod:`pfft.engines.xla`, :mod:`pfft.engines.native`, or one bound to a
thread count, :class:`pfft.engines.choice.BoundEngine` and its per-stage GPU form)
runs the local transforms; a *transport* (:mod:`pfft.transports.xla`,
:class:`pfft.transports.mpi.MPITransport`) moves blocks between devices. Each says
what it can do in its ``capabilities``; the executor (:mod:`pfft.executor`) and the
pieces path (:mod:`pfft.pieces`) read them there, and call only what they promise.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

__all__ = ["EngineCapabilities", "TransportCapabilities", "Engine", "Transport"]


@dataclass(frozen=True)
class EngineCapabilities:
    """What a local FFT engine can do besides its transforms.

    Attributes
    ----------
    strided
        Transforms any axes where they lie (``fft``, ``rfft``, ``irfft`` on axes of
        the caller's choice; the block keeps numpy's axis order), where ``False``
        only the innermost ones (``fft_trailing``, ``rfft_trailing``,
        ``irfft_trailing``: the executor moves the axes last first).
    r2r
        Runs DCTs and DSTs itself (``r2r``, DUCC's); else they go through ``lax.fft``
        with twiddles (:mod:`pfft.engines.r2r`).
    pieces
        Runs the pieces kernels: ``fft_pieces`` (a transform that reads and writes
        the pieces an exchange moves), ``fft_pieces_pair`` (two such passes in one
        call) and ``writes_in_place`` (which passes may write over their input).
    rows
        Runs complex transforms on rows of a larger block where they lie:
        ``fft_of_rows`` (reads rows of one axis), ``fft_into_rows`` (writes them into
        a block, in place) and ``rows_for`` (whether a transform of that shape goes
        so): a pipelined window's piece without a copy to cut or join it. With them
        ``take_chunks``: a piece of an exchange's chunks copied out of a block, chunks
        first, so that a window writes its pieces' transforms over the block it took
        them from (``fft_into_rows`` waiting for arrays given as ``after``), and
        ``put_chunks``, the copy back (a received piece put where it was read).
    """

    strided: bool = False
    r2r: bool = False
    pieces: bool = False
    rows: bool = False


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


class Engine(Protocol):
    """A local FFT engine: its ``name`` (as plans print it), its ``capabilities``, and
    ``natural_scale(inverse, n)``, the factor its own transforms apply."""

    name: str
    capabilities: EngineCapabilities

    def natural_scale(self, inverse: bool, n: int) -> float: ...


class Transport(Protocol):
    """A transport: its ``capabilities`` and the three collectives every one has."""

    capabilities: TransportCapabilities

    def all_to_all(self, x, mesh_axis): ...

    def all_gather(self, x, mesh_axis, axis: int): ...

    def axis_index(self, mesh_axis): ...
