"""The CPU pieces kernels: FFTs (and DCTs/DSTs) that read and write the pieces an
exchange moves, so that packing and unpacking ride on the transforms.

:mod:`pfft.pieces` decides where a chain uses them; these are the calls (XLA FFI
custom calls ``pfft_pieces`` and ``pfft_pieces_pair`` into DUCC, CPU only). Like
the rest of the native engine (:mod:`pfft.engines.native`) they are unnormalised,
``scale`` fused in, and take axes counted from the end.
"""
from __future__ import annotations

from typing import Sequence

import jax
import jax.numpy as jnp
import numpy as np

from . import _kernels
from ..interfaces import PiecesCut, PiecesPass

__all__ = ["pieces_available", "fft_pieces", "fft_pieces_pair", "writes_in_place"]


def _num_threads(nthreads: int | None) -> int:
    return nthreads or _kernels.num_threads()


def pieces_available(platform: str | None = None) -> bool:
    """Whether :func:`fft_pieces` (CPU only) can run on ``platform``."""
    platform = platform or jax.default_backend()
    return platform == "cpu" and _kernels.load("cpu")[0]


def fft_pieces(pieces: Sequence[jax.Array], step: PiecesPass, out_shape: Sequence[int], *,
               cut_in: PiecesCut = PiecesCut(), cut_out: PiecesCut = PiecesCut(),
               nthreads: int | None = None, inplace: bool = False) -> list[jax.Array]:
    """Pass ``step`` (an FFT, DCT/DST or copy along one axis) of a block given as
    pieces, written as pieces (CPU).

    The logical block is cut into equal chunks along ``cut_in.split`` (input) and
    ``cut_out.split`` (output); piece ``k`` of a side holds chunk ``(me + sign*k) %
    count`` (:class:`~pfft.interfaces.PiecesCut`), the order in which cyclic shifts send
    (``sign=+1``) and receive (``sign=-1``) them. Points past the transform's length
    along the axis and past the input's extent along other axes are written as zeros;
    input padding is never read. One pass reads every input element once and writes
    every output element once: the unpacking after and the packing before an
    exchange ride on the FFT.

    Parameters
    ----------
    pieces : sequence of arrays
        Pieces of one shape: complex for ``step.kind`` "c2c" and "c2r", real for
        "r2c", real or complex for "r2r" and "copy" (the output has the input's type).
    step : :class:`~pfft.interfaces.PiecesPass`
        The pass: kind, (negative) axis, length, sign, scale, bin weights (static) and,
        for (and only for) "r2r", the DCT/DST ``op`` (complex pieces go through it as
        their real and imaginary parts; ``inverse`` plays no part there).
    out_shape : sequence of int
        Shape of each output piece.
    cut_in, cut_out : :class:`~pfft.interfaces.PiecesCut`
        How the input and the output are cut (default: one array each); ``me`` as an
        int or int32 scalar array (``lax.axis_index``).
    inplace : bool
        Write output piece ``k`` over input piece ``k`` (``input_output_aliases``;
        dead after the call inside ``jit``, XLA passes the kernel the same buffers,
        else it copies first). Only a "c2c" pass whose input and output are cut along
        its axis into as many pieces of one shape (or are one array each): a group of
        lines reads all its points before it writes the same places.

    Returns
    -------
    list of arrays
        ``cut_out.count`` pieces of ``out_shape``. Not differentiable by itself: the
        plan's autodiff rules (:mod:`pfft.autodiff`) transpose whole chains.
    """
    pieces = [jnp.asarray(p) for p in pieces]
    if not pieces_available():
        raise RuntimeError(f"pfft fft_pieces needs the CPU kernels: {_kernels.load('cpu')[1]}")
    kind, n, op, weights, scale = step.kind, step.n, step.op, step.weights, step.scale
    if kind not in ("c2c", "r2c", "c2r", "r2r", "copy"):
        raise ValueError(f"kind must be 'c2c', 'r2c', 'c2r', 'r2r' or 'copy', got {kind!r}")
    if (op is not None) != (kind == "r2r"):
        raise ValueError("fft_pieces: op (an R2R) goes with kind='r2r', and only with it")
    r2r_type, sine = 0, False
    if op is not None:
        if weights is not None:
            raise ValueError("fft_pieces: kind='r2r' takes its weights from op")
        if op.n != n:
            raise ValueError(f"fft_pieces: {op.kind} planned for {op.n} points, n={n}")
        r2r_type, sine, scale = op.type, op.family == "dst", scale * op.scale
        if op.pre != (1.0, 1.0) or op.post != (1.0, 1.0):
            weights = op.pre + op.post          # [pre_first, pre_last, post_first, post_last]
    x = pieces[0]
    if inplace and not writes_in_place(step, [p.shape for p in pieces], out_shape, cut_in,
                                       cut_out):
        raise ValueError("fft_pieces: inplace needs kind='c2c' and input and output cut "
                         "along `axis` into as many pieces of one shape (or one array each)")
    wide = np.dtype(x.dtype) in (np.float64, np.complex128)
    out_dtype = {"r2c": np.complex128 if wide else np.complex64,
                 "c2r": np.float64 if wide else np.float32}.get(kind, x.dtype)
    result = jax.typeof(x).update(shape=tuple(out_shape), dtype=np.dtype(out_dtype))
    w = np.zeros(0) if weights is None else np.asarray(weights, np.float64).ravel()
    out_count = cut_out.count
    call = jax.ffi.ffi_call("pfft_pieces", [result] * out_count, vmap_method="broadcast_all",
                            input_output_aliases=({1 + k: k for k in range(out_count)}
                                                  if inplace else None))
    out = call(_places(cut_in, cut_out), *pieces, weights=w, kind=kind,
               type=np.int64(r2r_type), sine=bool(sine), axis=np.int64(step.axis),
               n=np.int64(n), **_cut_attributes(cut_in, cut_out), forward=not step.inverse,
               scale=np.float64(scale), nthreads=np.int64(_num_threads(nthreads)))
    return list(out)


def _places(cut_in: PiecesCut, cut_out: PiecesCut) -> jax.Array:
    """The kernels' first operand: this device's place on each side, as int32."""
    return jnp.stack([jnp.asarray(cut_in.me, jnp.int32), jnp.asarray(cut_out.me, jnp.int32)])


def _cut_attributes(cut_in: PiecesCut, cut_out: PiecesCut) -> dict:
    """The kernels' attributes that say how the two sides are cut."""
    return dict(in_split=np.int64(cut_in.split), in_sign=np.int64(cut_in.sign),
                out_split=np.int64(cut_out.split), out_sign=np.int64(cut_out.sign))


def writes_in_place(step: PiecesPass, in_shapes, out_shape, cut_in: PiecesCut,
                    cut_out: PiecesCut) -> bool:
    """Whether a :func:`fft_pieces` pass may write its output over its input
    (``inplace``): a "c2c" pass whose two sides are one array each, or are cut along
    its axis into as many pieces of one shape."""
    shapes = {tuple(s) for s in in_shapes}
    return (step.kind == "c2c" and len(in_shapes) == cut_out.count
            and shapes == {tuple(out_shape)}
            and (cut_out.count == 1 or cut_in.split == cut_out.split == step.axis))


def fft_pieces_pair(pieces: Sequence[jax.Array], first: PiecesPass, second: PiecesPass,
                    out_shape: Sequence[int], *, cut_in: PiecesCut = PiecesCut(),
                    cut_out: PiecesCut = PiecesCut(),
                    nthreads: int | None = None) -> list[jax.Array]:
    """Two FFT passes of :func:`fft_pieces` in one kernel call (CPU): ``first`` ("c2c"
    or "r2c"), then ``second`` ("c2c" or "c2r") along another axis.

    The result is that of two calls through an intermediate block, but the kernel
    takes the block through both passes a sub-block at a time (cut along the axes
    neither pass transforms and neither side is cut along), so the intermediate stays
    in cache: one read of the input and one write of the output instead of two each.
    Each pass has its own length, sign, scale and weights; the other arguments are as
    for :func:`fft_pieces`. The intermediate holds the first pass's output extent along
    its axis, the second pass's input length along its axis, and elsewhere what both
    sides hold.
    """
    pieces = [jnp.asarray(p) for p in pieces]
    if not pieces_available():
        raise RuntimeError(f"pfft fft_pieces_pair needs the CPU kernels: {_kernels.load('cpu')[1]}")
    kinds = (first.kind, second.kind)
    if kinds[0] not in ("c2c", "r2c") or kinds[1] not in ("c2c", "c2r"):
        raise ValueError(f"kinds must be ('c2c' or 'r2c', 'c2c' or 'c2r'), got {kinds!r}")
    x = pieces[0]
    wide = np.dtype(x.dtype) in (np.float64, np.complex128)
    out_dtype = ((np.float64 if wide else np.float32) if kinds[1] == "c2r"
                 else (np.complex128 if wide else np.complex64))
    result = jax.typeof(x).update(shape=tuple(out_shape), dtype=np.dtype(out_dtype))
    w1, w2 = (np.zeros(0) if p.weights is None else np.asarray(p.weights, np.float64).ravel()
              for p in (first, second))
    call = jax.ffi.ffi_call("pfft_pieces_pair", [result] * cut_out.count,
                            vmap_method="broadcast_all")
    out = call(_places(cut_in, cut_out), *pieces, kind1=first.kind,
               axis1=np.int64(first.axis), n1=np.int64(first.n), forward1=not first.inverse,
               scale1=np.float64(first.scale), weights1=w1,
               kind2=second.kind, axis2=np.int64(second.axis), n2=np.int64(second.n),
               forward2=not second.inverse, scale2=np.float64(second.scale), weights2=w2,
               **_cut_attributes(cut_in, cut_out),
               nthreads=np.int64(_num_threads(nthreads)))
    return list(out)
