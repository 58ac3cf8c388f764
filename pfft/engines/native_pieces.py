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

__all__ = ["pieces_available", "fft_pieces", "fft_pieces_pair", "writes_in_place"]


def _num_threads(nthreads: int | None) -> int:
    return nthreads or _kernels.num_threads()


def pieces_available(platform: str | None = None) -> bool:
    """Whether :func:`fft_pieces` (CPU only) can run on ``platform``."""
    platform = platform or jax.default_backend()
    return platform == "cpu" and _kernels.load("cpu")[0]


def fft_pieces(pieces: Sequence[jax.Array], axis: int, n: int, *, kind: str = "c2c",
               in_split: int = -1, in_sign: int = 0, me_in=0, out_shape: Sequence[int],
               out_count: int = 1, out_split: int = -1, out_sign: int = 0, me_out=0,
               inverse: bool = False, scale: float = 1.0, weights=None, op=None,
               nthreads: int | None = None, inplace: bool = False) -> list[jax.Array]:
    """FFT (or DCT/DST) along ``axis`` of a block given as pieces, written as pieces (CPU).

    The logical block is cut into equal chunks along ``in_split`` (input) and
    ``out_split`` (output); piece ``k`` of a side holds chunk ``(me + sign*k) % count``
    (``sign`` 0: chunk ``k``), the order in which cyclic shifts send (``sign=+1``) and
    receive (``sign=-1``) them. Points past the transform's length along ``axis`` and
    past the input's extent along other axes are written as zeros; input padding is
    never read. One pass reads every input element once and writes every output
    element once: the unpacking after and the packing before an exchange ride on the
    FFT.

    Parameters
    ----------
    pieces : sequence of arrays
        Pieces of one shape: complex for ``kind`` "c2c" and "c2r", real for "r2c",
        real or complex for "r2r" and "copy" (the output has the input's type).
    axis, in_split, out_split : int
        Negative axes (counted from the end, so leading batch axes are free).
    n : int
        Transform length: complex points (c2c), real points (r2c: ``n//2 + 1`` bins
        out; c2r: ``n//2 + 1`` bins in; r2r: ``n`` points each side, ``op.n``), or
        points copied ("copy", no transform; ``scale`` still applies).
    me_in, me_out : int or int32 scalar array
        This device's place along the mesh axis of each side (``lax.axis_index``).
    out_shape : sequence of int
        Shape of each output piece.
    weights : sequence of ``n//2 + 1`` floats, optional (static)
        Per-bin factors on the complex side of a real transform (after r2c, before
        c2r): the Hermitian weights of a transposed real transform.
    op : :class:`pfft.engines.r2r.R2R`, required for (and only for) ``kind="r2r"``
        The DCT/DST: its family, type, scale (times ``scale``) and end-point
        weights run inside the kernel; complex pieces go through it as their real
        and imaginary parts. ``inverse`` plays no part (``op`` is the map).
    inplace : bool
        Write output piece ``k`` over input piece ``k`` (``input_output_aliases``;
        dead after the call inside ``jit``, XLA passes the kernel the same buffers,
        else it copies first). Only a "c2c" pass whose input and output are cut along
        ``axis`` into as many pieces of one shape (or are one array each): a group of
        lines reads all its points before it writes the same places.

    Returns
    -------
    list of arrays
        ``out_count`` pieces of ``out_shape``. Not differentiable by itself: the
        plan's autodiff rules (:mod:`pfft.autodiff`) transpose whole chains.
    """
    pieces = [jnp.asarray(p) for p in pieces]
    if not pieces_available():
        raise RuntimeError(f"pfft fft_pieces needs the CPU kernels: {_kernels.load('cpu')[1]}")
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
    if inplace and not writes_in_place(kind, [p.shape for p in pieces], axis, in_split,
                                       out_shape, out_count, out_split):
        raise ValueError("fft_pieces: inplace needs kind='c2c' and input and output cut "
                         "along `axis` into as many pieces of one shape (or one array each)")
    wide = np.dtype(x.dtype) in (np.float64, np.complex128)
    out_dtype = {"r2c": np.complex128 if wide else np.complex64,
                 "c2r": np.float64 if wide else np.float32}.get(kind, x.dtype)
    result = jax.typeof(x).update(shape=tuple(out_shape), dtype=np.dtype(out_dtype))
    me = jnp.stack([jnp.asarray(me_in, jnp.int32), jnp.asarray(me_out, jnp.int32)])
    w = np.zeros(0) if weights is None else np.asarray(weights, np.float64).ravel()
    call = jax.ffi.ffi_call("pfft_pieces", [result] * out_count, vmap_method="broadcast_all",
                            input_output_aliases=({1 + k: k for k in range(out_count)}
                                                  if inplace else None))
    out = call(me, *pieces, weights=w, kind=kind, type=np.int64(r2r_type), sine=bool(sine),
               axis=np.int64(axis), n=np.int64(n),
               in_split=np.int64(in_split), in_sign=np.int64(in_sign),
               out_split=np.int64(out_split), out_sign=np.int64(out_sign),
               forward=not inverse, scale=np.float64(scale),
               nthreads=np.int64(_num_threads(nthreads)))
    return list(out)


def writes_in_place(kind: str, in_shapes, axis: int, in_split: int, out_shape,
                    out_count: int, out_split: int) -> bool:
    """Whether a :func:`fft_pieces` pass may write its output over its input
    (``inplace``): a "c2c" pass whose two sides are one array each, or are cut along
    ``axis`` (all three negative) into as many pieces of one shape."""
    shapes = {tuple(s) for s in in_shapes}
    return (kind == "c2c" and len(in_shapes) == out_count and shapes == {tuple(out_shape)}
            and (out_count == 1 or in_split == out_split == axis))


def fft_pieces_pair(pieces: Sequence[jax.Array], axes: tuple[int, int], ns: tuple[int, int],
                    *, kinds: tuple[str, str], in_split: int = -1, in_sign: int = 0, me_in=0,
                    out_shape: Sequence[int], out_count: int = 1, out_split: int = -1,
                    out_sign: int = 0, me_out=0, inverse: bool = False,
                    scales: tuple[float, float] = (1.0, 1.0), weights=(None, None),
                    nthreads: int | None = None) -> list[jax.Array]:
    """Two FFT passes of :func:`fft_pieces` in one kernel call (CPU): along ``axes[0]``
    (``kinds[0]``: "c2c" or "r2c"), then along ``axes[1]`` ("c2c" or "c2r").

    The result is that of two calls through an intermediate block, but the kernel
    takes the block through both passes a sub-block at a time (cut along the axes
    neither pass transforms and neither side is cut along), so the intermediate stays
    in cache: one read of the input and one write of the output instead of two each.
    ``ns``, ``scales`` and ``weights`` are each pass's; the other arguments are as for
    :func:`fft_pieces` (``axes``, ``in_split``, ``out_split`` negative). The
    intermediate holds pass 1's output extent along ``axes[0]``, pass 2's input length
    along ``axes[1]``, and elsewhere what both sides hold.
    """
    pieces = [jnp.asarray(p) for p in pieces]
    if not pieces_available():
        raise RuntimeError(f"pfft fft_pieces_pair needs the CPU kernels: {_kernels.load('cpu')[1]}")
    if kinds[0] not in ("c2c", "r2c") or kinds[1] not in ("c2c", "c2r"):
        raise ValueError(f"kinds must be ('c2c' or 'r2c', 'c2c' or 'c2r'), got {kinds!r}")
    x = pieces[0]
    wide = np.dtype(x.dtype) in (np.float64, np.complex128)
    out_dtype = ((np.float64 if wide else np.float32) if kinds[1] == "c2r"
                 else (np.complex128 if wide else np.complex64))
    result = jax.typeof(x).update(shape=tuple(out_shape), dtype=np.dtype(out_dtype))
    me = jnp.stack([jnp.asarray(me_in, jnp.int32), jnp.asarray(me_out, jnp.int32)])
    w1, w2 = (np.zeros(0) if w is None else np.asarray(w, np.float64).ravel() for w in weights)
    call = jax.ffi.ffi_call("pfft_pieces_pair", [result] * out_count,
                            vmap_method="broadcast_all")
    out = call(me, *pieces, kind1=kinds[0], axis1=np.int64(axes[0]), n1=np.int64(ns[0]),
               forward1=not inverse, scale1=np.float64(scales[0]), weights1=w1,
               kind2=kinds[1], axis2=np.int64(axes[1]), n2=np.int64(ns[1]),
               forward2=not inverse, scale2=np.float64(scales[1]), weights2=w2,
               in_split=np.int64(in_split), in_sign=np.int64(in_sign),
               out_split=np.int64(out_split), out_sign=np.int64(out_sign),
               nthreads=np.int64(_num_threads(nthreads)))
    return list(out)

