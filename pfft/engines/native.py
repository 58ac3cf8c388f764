"""pfft's own local FFT engine: XLA FFI custom calls into DUCC (CPU) or cuFFT (GPU).

Unlike ``lax.fft`` (see :mod:`pfft.engines.xla`), these kernels transform *any*
axes of a row-major block through strides, so no transpose is needed to put the
FFT axes last, and a complex transform can run in place on a donated buffer.

Conventions
-----------
- Every transform is **unnormalised** in both directions; ``scale`` multiplies the
  result, fused into the transform's first pass (no separate multiply).
  :func:`natural_scale` is therefore always 1.
- ``inverse=False`` is the ``exp(-2πi jk/n)`` sign (numpy's forward), ``inverse=True``
  the ``exp(+2πi jk/n)`` sign. ``rfft`` may take either sign (the ``+`` one is the
  conjugate of numpy's rfft), and so may ``irfft`` (numpy's ``irfft`` is ``inverse=True``,
  ``scale=1/n``).
- ``fft(..., inplace=True)`` aliases the output to the input
  (``input_output_aliases={0: 0}``): with the input donated, or dead after the call
  inside ``jit``, XLA hands the kernel one buffer and DUCC transforms it in place;
  otherwise XLA copies first. Without ``inplace`` the kernel reads the input in its
  first pass and writes a new buffer (no extra copy either way).
- Axes are passed to the kernel counted from the end, so ``vmap`` (``broadcast_all``:
  batch axes in front) needs no rewriting. Inside ``shard_map`` the result type is
  ``jax.typeof(x)`` updated, so manual-axis types carry through.
- Threads (CPU): ``nthreads`` per call, else :func:`set_num_threads`, else
  ``$PFFT_NUM_THREADS``, else the cores this process may use.

>>> from pfft.engines import native                    # doctest: +SKIP
>>> native.available()                                 # doctest: +SKIP
True
>>> y = native.fft(x, axes=(0, 2))                     # == jnp.fft.fftn(x, axes=(0, 2))
"""
from __future__ import annotations

import ctypes

import functools
import math
import operator
import os
from typing import Sequence

import jax
import jax.numpy as jnp
import numpy as np

from .. import settings
from ..interfaces import EngineCapabilities
from . import _kernels
from .hermitian import bin_weights

__all__ = ["available", "unavailable_reason", "natural_scale", "fft", "rfft", "irfft",
           "r2r", "r2r_available", "fft_pieces", "fft_pieces_pair", "pieces_available",
           "set_num_threads", "num_threads", "gpu_workspace_bytes", "rows_fit", "fft_of_rows",
           "fft_into_rows", "gpu_rows_workspace_bytes", "take_chunks", "put_chunks",
           "chunk_piece_shape"]

name = "native"
# transforms any axis where it lies (strided): the executor need not move FFT axes
# last. Called as a module, without a thread count, it offers no more: the DCTs and
# pieces kernels run through a bound engine (pfft.engines.choice.BoundEngine).
capabilities = EngineCapabilities(strided=True)

_NUM_THREADS: int | None = None


def _platform(platform: str | None) -> str:
    platform = platform or jax.default_backend()
    return "cuda" if platform in ("gpu", "cuda") else platform


def available(platform: str | None = None) -> bool:
    """Whether the kernels are built and registered for ``platform``.

    ``platform`` is "cpu", "gpu"/"cuda", or None for JAX's default backend. The
    first call loads the library.
    """
    return _kernels.load(_platform(platform))[0]


def unavailable_reason(platform: str | None = None) -> str | None:
    """Why :func:`available` is False (None when it is True)."""
    ok, detail = _kernels.load(_platform(platform))
    return None if ok else detail


def natural_scale(inverse: bool, n: int) -> float:
    """The factor this engine applies by itself: none (1.0), in either direction."""
    return 1.0


def set_num_threads(n: int | None) -> None:
    """Default CPU threads per call (None: ``$PFFT_NUM_THREADS`` or all usable cores).

    Several simulated devices on one host each run their own calls at once: give
    each ``cores // devices`` threads to avoid oversubscription.
    """
    global _NUM_THREADS
    _NUM_THREADS = None if n is None else max(1, int(n))


def num_threads() -> int:
    """The CPU threads a call uses when it does not say."""
    if _NUM_THREADS is not None:
        return _NUM_THREADS
    from_env = settings.num_threads()
    if from_env is not None:
        return from_env
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def _axes(axes: int | Sequence[int], ndim: int) -> tuple[int, ...]:
    """Axes as negative indices (from the end), checked like numpy does."""
    axes = (axes,) if isinstance(axes, (int, np.integer)) else tuple(axes)
    out = []
    for a in axes:
        a = operator.index(a)
        if not -ndim <= a < ndim:
            raise ValueError(f"axis {a} is out of bounds for array of dimension {ndim}")
        out.append(a - ndim if a >= 0 else a)
    if len(set(out)) != len(out):
        raise ValueError(f"repeated axis in {axes}")
    return tuple(out)


def _complex_dtype(dtype) -> np.dtype:
    dtype = np.dtype(dtype)
    wide = dtype in (np.float64, np.complex128)
    return np.dtype(np.complex128 if wide else np.complex64)


_KINDS = {"pfft_c2c": 0, "pfft_r2c": 1, "pfft_c2r": 2}   # the GPU library's kind numbers


@functools.lru_cache(maxsize=4096)
def gpu_workspace_bytes(target: str, in_shape: tuple[int, ...], out_shape: tuple[int, ...],
                        axes: tuple[int, ...], double: bool) -> int:
    """Bytes of working memory the GPU kernel ``target`` needs for one block
    ``in_shape`` -> ``out_shape`` over ``axes`` (negative): its C2R input copy, a pitched
    copy of a real side where cuFFT would get unaligned pointers, and cuFFT's work area,
    as the current GPU's cuFFT sizes them.

    The custom call returns this buffer as a second output, so XLA allocates it like any
    other (the FFI scratch allocator gave the kernels none).

    Raises
    ------
    RuntimeError
        If the GPU kernels are not loaded, or cuFFT cannot plan the transform.
    """
    dims = ctypes.c_longlong * len(in_shape)
    return _gpu_bytes("pfft_cuda_workspace_size", _KINDS[target], len(in_shape),
                      dims(*in_shape), dims(*out_shape), len(axes),
                      (ctypes.c_longlong * len(axes))(*axes), int(double))


def _gpu_bytes(symbol: str, *args) -> int:
    """The GPU library's ``symbol`` (a working-memory size) called with ``args``."""
    lib = _kernels.library("cuda")
    if lib is None:
        raise RuntimeError(f"the GPU kernels are not loaded: {unavailable_reason('gpu')}")
    size = getattr(lib, symbol)
    size.restype = ctypes.c_longlong
    lib.pfft_cuda_last_error.restype = ctypes.c_char_p
    nbytes = size(*args)
    if nbytes < 0:
        raise RuntimeError(lib.pfft_cuda_last_error().decode())
    return int(nbytes)


def _workspace_type(x: jax.Array, nbytes: int):
    """A ``uint8[nbytes]`` result of the call on ``x``: replicated over ``x``'s mesh, with
    ``x``'s varying manual axes (inside ``shard_map``)."""
    aval = jax.typeof(x)
    sharding = getattr(aval, "sharding", None)
    if sharding is not None:
        sharding = jax.sharding.NamedSharding(sharding.mesh, jax.sharding.PartitionSpec())
    return aval.update(shape=(nbytes,), dtype=np.dtype(np.uint8), sharding=sharding)


def _platforms(x: jax.Array) -> list[str]:
    """The platforms whose kernels a call on ``x`` needs: where a concrete array lives,
    every loaded one for a traced array (``lax.platform_dependent`` picks)."""
    platforms = [p for p in ("cpu", "cuda") if _kernels.load(p)[0]]
    if not isinstance(x, jax.core.Tracer):      # outside jit: where the array lives
        platforms = ["cpu" if next(iter(x.devices())).platform == "cpu" else "cuda"]
    for p in platforms:
        ok, why = _kernels.load(p)
        if not ok:
            raise RuntimeError(f"pfft native engine unavailable on {p}: {why}")
    if not platforms:
        raise RuntimeError(f"pfft native engine unavailable: {_kernels.load('cpu')[1]}")
    return platforms


def _on_platform(branches: dict, *operands):
    """The one branch (platform name -> function of ``operands``) there is, else each
    for its platform through ``lax.platform_dependent``."""
    if len(branches) == 1:
        return next(iter(branches.values()))(*operands)
    return jax.lax.platform_dependent(*operands, **branches)


def _call(target: str, x: jax.Array, shape, dtype, axes, inverse: bool, scale: float,
          nthreads: int | None, inplace: bool = False, view=None) -> jax.Array:
    """The custom call ``target`` on ``x`` (``shape`` and ``dtype`` its result's), for
    each platform whose kernels are loaded; ``view`` (``pfft_c2c`` only): the block
    seen as that shape by the kernel, the axes counted in it.

    The array may live on either platform: a concrete array's devices say which kernel
    runs; a traced one gets both, and ``lax.platform_dependent`` lowers the one XLA
    compiles for. The GPU kernel's second output is its working memory (dropped), sized
    for exactly the block it transforms: under ``vmap`` the call is made again on the
    batched block (a batch dimension in front) instead of letting XLA broadcast it.
    """
    platforms = _platforms(x)
    attrs = dict(axes=np.asarray(axes, dtype=np.int64), forward=not inverse,
                 scale=np.float64(scale), nthreads=np.int64(nthreads or num_threads()))
    if target == "pfft_c2c":
        attrs["shape"] = np.asarray(view or (), dtype=np.int64)
    aliases = {0: 0} if inplace else None

    @jax.custom_batching.custom_vmap
    def call(a):
        result = jax.typeof(a).update(shape=tuple(shape), dtype=np.dtype(dtype))
        branches = {}
        if "cpu" in platforms:
            branches["cpu"] = lambda b: jax.ffi.ffi_call(
                target, result, vmap_method="broadcast_all",
                input_output_aliases=aliases)(b, **attrs)
        if "cuda" in platforms:
            double = np.dtype(a.dtype) in (np.float64, np.complex128)
            seen_in, seen_out = (tuple(view),) * 2 if view else (tuple(a.shape), tuple(shape))
            nbytes = gpu_workspace_bytes(target, seen_in, seen_out, tuple(axes), double)
            branches["cuda"] = lambda b: jax.ffi.ffi_call(
                target, (result, _workspace_type(b, nbytes)), vmap_method="broadcast_all",
                input_output_aliases=aliases)(b, **attrs)[0]
        return _on_platform(branches, a)

    @call.def_vmap
    def _batched(axis_size, in_batched, a):
        # the batch dimension in front: the kernel transforms the batched block
        return _call(target, a, (axis_size, *shape), dtype, axes, inverse, scale, nthreads,
                     inplace, view and (axis_size, *view)), True

    return call(x)


@functools.partial(jax.custom_vjp, nondiff_argnums=(1, 2, 3, 4, 5, 6))
def _c2c(x, axes, inverse, scale, inplace, nthreads, view=None):
    return _call("pfft_c2c", x, x.shape, x.dtype, axes, inverse, scale, nthreads, inplace,
                 view)


def _c2c_fwd(x, axes, inverse, scale, inplace, nthreads, view=None):
    return _c2c(x, axes, inverse, scale, inplace, nthreads, view), None


def _c2c_bwd(axes, inverse, scale, inplace, nthreads, view, _, ct):
    # the DFT matrix is symmetric: the transpose of this linear map is itself
    return (_c2c(ct, axes, inverse, scale, False, nthreads, view),)


_c2c.defvjp(_c2c_fwd, _c2c_bwd)


def _bin_weights(n: int, interior: float, axis: int, dtype) -> jax.Array:
    """:func:`pfft.engines.hermitian.bin_weights` along negative ``axis``."""
    w = bin_weights(n, interior)
    return jnp.asarray(w.reshape((-1,) + (1,) * (-axis - 1)), dtype=dtype)


@functools.partial(jax.custom_vjp, nondiff_argnums=(1, 2, 3, 4, 5))
def _r2c(x, axes, n, inverse, scale, nthreads):
    shape = list(x.shape)
    shape[axes[-1]] = n // 2 + 1
    return _call("pfft_r2c", x, shape, _complex_dtype(x.dtype), axes, inverse, scale, nthreads)


def _r2c_fwd(x, axes, n, inverse, scale, nthreads):
    return _r2c(x, axes, n, inverse, scale, nthreads), None


def _r2c_bwd(axes, n, inverse, scale, nthreads, _, ct):
    # transpose of (real -> complex, full FFT, keep n//2+1 bins): zero-fill the bins,
    # same-sign FFT, real part; a complex-to-real transform of the halved bins is that
    w = _bin_weights(n, 0.5, axes[-1], ct.real.dtype)
    return (_c2r(ct * w, axes, n, inverse, scale, nthreads),)


_r2c.defvjp(_r2c_fwd, _r2c_bwd)


@functools.partial(jax.custom_vjp, nondiff_argnums=(1, 2, 3, 4, 5))
def _c2r(x, axes, n, inverse, scale, nthreads):
    shape = list(x.shape)
    shape[axes[-1]] = n
    real = np.float64 if x.dtype == np.complex128 else np.float32
    return _call("pfft_c2r", x, shape, real, axes, inverse, scale, nthreads)


def _c2r_fwd(x, axes, n, inverse, scale, nthreads):
    return _c2r(x, axes, n, inverse, scale, nthreads), None


def _c2r_bwd(axes, n, inverse, scale, nthreads, _, ct):
    # JAX's convention (as lax.fft's IRFFT rule): same-sign real-to-complex transform
    # of the cotangent, the bins that stand for two doubled
    w = _bin_weights(n, 2.0, axes[-1], ct.dtype)
    return (_r2c(ct, axes, n, inverse, scale, nthreads) * w,)


_c2r.defvjp(_c2r_fwd, _c2r_bwd)


def fft(x: jax.Array, axes: int | Sequence[int], inverse: bool = False, *,
        scale: float = 1.0, inplace: bool = False, nthreads: int | None = None,
        prefer_inplace: bool = False, shape: Sequence[int] | None = None) -> jax.Array:
    """Complex FFT of ``x`` over ``axes`` (any axes, any order), unnormalised.

    Parameters
    ----------
    x : array
        Complex64/complex128 (real input is promoted like numpy).
    axes : int or sequence of int
        Axes to transform; negative counts from the end.
    inverse : bool
        False: ``exp(-2πi jk/n)`` (numpy ``fft``); True: ``exp(+2πi jk/n)``.
    scale : float
        Multiplies the result (``1/n`` gives numpy's ``ifft``), fused into the transform.
    inplace : bool
        Alias output to input so a donated or dead input is transformed in place.
    nthreads : int, optional
        CPU threads for this call (see :func:`num_threads`).
    prefer_inplace : bool
        The executor's hint that working in the input's buffer pays (an engine choosing
        between kernels picks one that can); this kernel always can: no effect.
    shape : sequence of int, optional
        ``x`` seen as this shape (the same number of elements), ``axes`` counted in
        it: ``fftn(x.reshape(shape), axes).reshape(x.shape)`` without the reshapes, so
        that a block kept in one shape (written in place so) is transformed in place
        in another (a reshape between two in-place calls costs XLA a copy).

    Returns
    -------
    array
        Same shape and (complex) dtype as ``x``. Reverse-mode differentiable
        (``jax.grad``/``vjp``; a linear map's transpose), like :func:`rfft`/:func:`irfft`.
    """
    x = jnp.asarray(x)
    x = x.astype(_complex_dtype(x.dtype))
    view = None if shape is None or tuple(shape) == x.shape else _seen_as(x, shape)
    axes = _axes(axes, x.ndim if view is None else len(view))
    if not axes or x.size == 0:
        return x * jnp.asarray(scale, x.real.dtype) if scale != 1.0 else x
    return _c2c(x, axes, bool(inverse), float(scale), bool(inplace), nthreads, view)


def rfft(x: jax.Array, axes: int | Sequence[int], *, inverse: bool = False,
         scale: float = 1.0, nthreads: int | None = None) -> jax.Array:
    """Real-to-complex FFT over ``axes``; the last of them keeps ``n//2 + 1`` bins.

    float32 gives complex64, float64 complex128. Equals ``scale * jnp.fft.rfftn(x,
    axes=axes)`` for ``inverse=False`` and its complex conjugate for ``inverse=True``.
    """
    x = jnp.asarray(x)
    if jnp.iscomplexobj(x):
        raise TypeError("rfft takes real input")
    if np.dtype(x.dtype) != np.float64:
        x = x.astype(np.float32)
    axes = _axes(axes, x.ndim)
    if not axes:
        raise ValueError("rfft needs at least one axis")
    return _r2c(x, axes, x.shape[axes[-1]], bool(inverse), float(scale), nthreads)


def irfft(x: jax.Array, axes: int | Sequence[int], n: int | None = None, *,
          inverse: bool = True, scale: float = 1.0, nthreads: int | None = None) -> jax.Array:
    """Complex-to-real FFT over ``axes``, ``n`` real points on the last of them.

    ``n`` defaults to ``2 * (m - 1)`` for ``m`` input bins; the input is cropped or
    zero-padded to ``n//2 + 1`` bins like numpy. Equals ``n * scale * jnp.fft.irfftn``
    (one axis: ``jnp.fft.irfft``) for ``inverse=True``; ``inverse=False`` is the
    ``-`` sign (the transform of the conjugated input).
    """
    x = jnp.asarray(x)
    x = x.astype(_complex_dtype(x.dtype))
    axes = _axes(axes, x.ndim)
    if not axes:
        raise ValueError("irfft needs at least one axis")
    last = x.ndim + axes[-1]
    n = 2 * (x.shape[last] - 1) if n is None else int(n)
    if n < 1:
        raise ValueError(f"invalid number of data points ({n}) specified")
    half = n // 2 + 1
    if x.shape[last] > half:
        x = jax.lax.slice_in_dim(x, 0, half, axis=last)
    elif x.shape[last] < half:
        pad = [(0, 0)] * x.ndim
        pad[last] = (0, half - x.shape[last])
        x = jnp.pad(x, pad)
    return _c2r(x, axes, n, bool(inverse), float(scale), nthreads)


@functools.lru_cache(maxsize=4096)
def gpu_rows_workspace_bytes(in_shape: tuple[int, ...], out_shape: tuple[int, ...],
                             axes: tuple[int, ...], axis: int, double: bool) -> int:
    """Bytes of working memory (cuFFT's work area) the GPU rows kernels need to
    transform rows of ``axis`` of a block ``in_shape`` into one ``out_shape`` over
    ``axes`` (all negative), as the current GPU's cuFFT sizes it.

    Raises
    ------
    RuntimeError
        If the GPU kernels are not loaded, or cuFFT cannot plan the transform.
    """
    dims = ctypes.c_longlong * len(in_shape)
    return _gpu_bytes("pfft_cuda_rows_workspace_size", len(in_shape), dims(*in_shape),
                      dims(*out_shape), len(axes), (ctypes.c_longlong * len(axes))(*axes),
                      ctypes.c_longlong(axis), int(double))


def rows_fit(axes: Sequence[int], axis: int, shape: Sequence[int]) -> bool:
    """Whether a transform over ``axes`` of a block of ``shape`` can run on rows of
    ``axis`` where they lie in a larger one (:func:`fft_of_rows`,
    :func:`fft_into_rows`): over at most three adjacent axes ending right before
    ``axis`` (each row is then contiguous in both blocks), or with every axis before
    ``axis`` of one point (the rows are then one contiguous block)."""
    ndim = len(shape)
    axis %= ndim
    if math.prod(shape[:axis]) == 1:
        return len(axes) > 0
    axes = sorted(a % ndim for a in axes)
    return (0 < len(axes) <= 3 and axes == list(range(axes[0], axes[0] + len(axes)))
            and axes[-1] + 1 == axis)


def _rows_call(target: str, operands, out_type, axes, axis: int, in_start: int,
               out_start: int, inverse: bool, scale: float, nthreads: int | None,
               view: tuple[int, ...] = ()):
    """A rows kernel on ``operands`` (the block read; for the into-call the block
    written into first, aliased to the result, then the block read, then any waited
    for) giving ``out_type``, seen as shape ``view`` where given; axes and ``axis``
    negative."""
    into = target == "pfft_c2c_rows_into"
    x = operands[1] if into else operands[0]
    attrs = dict(axes=np.asarray(axes, dtype=np.int64), forward=not inverse,
                 scale=np.float64(scale), nthreads=np.int64(nthreads or num_threads()),
                 axis=np.int64(axis), in_start=np.int64(in_start),
                 out_start=np.int64(out_start), out_shape=np.asarray(view, dtype=np.int64))
    aliases = {0: 0} if into else None
    branches = {}
    platforms = _platforms(x)
    if "cpu" in platforms:
        branches["cpu"] = lambda *ops: jax.ffi.ffi_call(
            target, out_type, input_output_aliases=aliases)(*ops, **attrs)
    if "cuda" in platforms:
        nbytes = gpu_rows_workspace_bytes(tuple(x.shape), tuple(view or out_type.shape),
                                          tuple(axes), axis,
                                          np.dtype(x.dtype) == np.complex128)
        branches["cuda"] = lambda *ops: jax.ffi.ffi_call(
            target, (out_type, _workspace_type(x, nbytes)),
            input_output_aliases=aliases)(*ops, **attrs)[0]
    return _on_platform(branches, *operands)


def _rows_args(x: jax.Array, axes, axis: int) -> tuple[tuple[int, ...], int]:
    """``axes`` and ``axis`` counted from the end, checked (:func:`rows_fit`)."""
    if not jnp.issubdtype(x.dtype, jnp.complexfloating):
        raise TypeError(f"rows transforms are complex to complex, got {x.dtype}")
    axes = _axes(axes, x.ndim)
    (axis,) = _axes((axis,), x.ndim)
    if not rows_fit(axes, axis, x.shape):
        raise ValueError(f"rows of axis {axis % x.ndim}: the axes "
                         f"{tuple(a % x.ndim for a in axes)} must be at most three adjacent "
                         f"ones that end right before it, or every axis before it have "
                         f"one point (shape {x.shape})")
    return axes, axis


def fft_of_rows(x: jax.Array, axes: Sequence[int], inverse: bool = False, *, axis: int,
                start: int, stop: int, scale: float = 1.0, nthreads: int | None = None,
                after: Sequence[jax.Array] = ()) -> jax.Array:
    """The FFT over ``axes`` of rows ``start..stop`` of ``axis`` of ``x``, read where
    they lie: ``scale * fftn(x[..., start:stop, ...], axes)`` (``inverse``: the + sign,
    unnormalised) without a copy of the rows first. ``after``: arrays the call only
    waits for (a pipelined window's next piece read once the piece before the last is
    written, so that only a few pieces are held at a time).

    For pfft's executor (a pipelined window's piece, :mod:`pfft.pipeline`): no
    autodiff or vmap rules of its own (a plan's transform has them). ``axes`` must be
    at most three adjacent axes ending right before ``axis``, or every axis before
    ``axis`` have one point (:func:`rows_fit`).
    """
    axes, neg = _rows_args(x, axes, axis)
    if not 0 <= start <= stop <= x.shape[neg]:
        raise ValueError(f"rows {start}..{stop} of an axis of {x.shape[neg]}")
    shape = list(x.shape)
    shape[neg] = stop - start
    out = jax.typeof(x).update(shape=tuple(shape))
    return _rows_call("pfft_c2c_rows", (x, *after), out, axes, neg, start, 0, inverse, scale,
                      nthreads)


def _seen_as(block: jax.Array, shape: Sequence[int] | None) -> tuple[int, ...]:
    """The shape a rows or chunk call sees ``block`` as: ``shape`` (the same number of
    elements), or its own."""
    if shape is None:
        return tuple(block.shape)
    shape = tuple(shape)
    if math.prod(shape) != block.size:
        raise ValueError(f"a block {block.shape} cannot be seen as {shape}")
    return shape


def fft_into_rows(into: jax.Array | None, x: jax.Array, axes: Sequence[int],
                  inverse: bool = False, *, axis: int, start: int,
                  shape: Sequence[int] | None = None, scale: float = 1.0,
                  nthreads: int | None = None, after: Sequence[jax.Array] = ()) -> jax.Array:
    """``into`` with rows ``start..start + x.shape[axis]`` of ``axis`` replaced by the
    FFT of ``x`` over ``axes`` (times ``scale``), written where they lie: ``into`` is
    aliased to the result (in place where it is donated or dead, as inside ``jit``).

    ``shape`` with ``into`` given: ``into`` seen as that shape (the same number of
    elements), the rows written where they lie in it; the result keeps ``into``'s
    shape. ``after``: arrays the call only waits for. Where the caller has read parts of
    ``into`` (a piece of it taken, its rows transformed), passing what it read orders
    the read before this write, and XLA writes in place without copying ``into`` first.

    ``into=None``: a new block of ``shape`` in which only those rows are written, the
    others left as the allocation had them: for a caller that writes every row (a
    pipelined window's pieces, :mod:`pfft.pipeline`), the first piece making the block.
    No autodiff or vmap rules of its own; ``axes`` as for :func:`fft_of_rows`.
    """
    axes, neg = _rows_args(x, axes, axis)
    shape = tuple(shape) if into is None else _seen_as(into, shape)
    if len(shape) != x.ndim or any(a != b for i, (a, b) in enumerate(zip(shape, x.shape))
                                   if i != neg % x.ndim):
        raise ValueError(f"rows of a block {x.shape} cannot go into one of {shape}")
    if not 0 <= start <= shape[neg] - x.shape[neg]:
        raise ValueError(f"{x.shape[neg]} rows from row {start} of an axis of {shape[neg]}")
    if into is None:
        out = jax.typeof(x).update(shape=shape)
        return _rows_call("pfft_c2c_rows", (x,), out, axes, neg, 0, start, inverse, scale,
                          nthreads)
    if into.dtype != x.dtype:
        raise TypeError(f"rows of {x.dtype} cannot go into a block of {into.dtype}")
    view = () if shape == tuple(into.shape) else shape
    return _rows_call("pfft_c2c_rows_into", (into, x, *after), jax.typeof(into), axes, neg, 0,
                      start, inverse, scale, nthreads, view)


def _chunk_geometry(shape, axis: int, chunks: int, start: int, stop: int) -> dict:
    """The attributes of a chunk copy of points ``start..stop`` of each of ``chunks``
    chunks of ``axis`` of a block of ``shape`` (kernels/common/chunk_copy.h)."""
    ndim = len(shape)
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} of a block of {ndim} axes")
    axis %= ndim
    if chunks < 1 or shape[axis] % chunks:
        raise ValueError(f"axis {axis} of {shape[axis]} points is not {chunks} equal chunks")
    chunk = shape[axis] // chunks
    if not 0 <= start <= stop <= chunk:
        raise ValueError(f"points {start}..{stop} of a chunk of {chunk}")
    return dict(outer=np.int64(math.prod(shape[:axis])), chunks=np.int64(chunks),
                chunk=np.int64(chunk), start=np.int64(start), width=np.int64(stop - start))


def chunk_piece_shape(shape, axis: int, chunks: int, width: int) -> tuple[int, ...]:
    """The shape of a piece :func:`take_chunks` cuts from a block of ``shape``: the chunk
    axis first, then the block's axes with ``width`` points along ``axis``."""
    axis %= len(shape)
    return (chunks,) + tuple(shape[:axis]) + (width,) + tuple(shape[axis + 1:])


def take_chunks(x: jax.Array, axis: int, chunks: int, start: int, stop: int, *,
                shape: Sequence[int] | None = None,
                after: Sequence[jax.Array] = ()) -> jax.Array:
    """Points ``start..stop`` of each of the ``chunks`` equal chunks of ``axis`` of
    ``x``, as one array with the chunk axis first (:func:`chunk_piece_shape`):
    ``x`` split as ``(..., chunks, chunk, ...)``, sliced, with the chunk axis moved to
    the front, in one copy of contiguous runs (the layout an all-to-all sends).
    ``shape``: ``x`` seen as that shape (the same number of elements), as
    :func:`fft_into_rows` sees a block it writes into. ``after``: arrays the call only
    waits for (a window's next piece taken once the piece before the last is written).

    For pfft's executor (a pipelined window taking a piece of the block it then writes
    the piece's transform into, :func:`fft_into_rows` waiting for the next piece's
    take): no autodiff or vmap rules of its own.
    """
    shape = _seen_as(x, shape)
    attrs = _chunk_geometry(shape, axis, chunks, start, stop)
    out = jax.typeof(x).update(shape=chunk_piece_shape(shape, axis, chunks, stop - start))

    def call(*ops):
        return jax.ffi.ffi_call("pfft_take_chunks", out)(*ops, **attrs)
    return _on_platform({p: call for p in _platforms(x)}, x, *after)


def put_chunks(into: jax.Array | None, x: jax.Array, axis: int, chunks: int, start: int, *,
               shape: Sequence[int] | None = None,
               after: Sequence[jax.Array] = ()) -> jax.Array:
    """``into`` with points ``start..start + w`` of each of the ``chunks`` equal chunks
    of ``axis`` replaced by ``x``, a piece laid out as :func:`take_chunks` gives it (the
    chunk axis first, ``w`` points along ``axis``): the inverse copy, written where the
    points lie, ``into`` aliased to the result (in place where it is donated or dead,
    as inside ``jit``). ``shape``: ``into`` seen as that shape (the same number of
    elements); the result keeps ``into``'s shape. ``after``: arrays the call only
    waits for, as for :func:`fft_into_rows` (a read of ``into`` passed so is ordered
    before this write, which XLA then makes in place without copying ``into`` first).

    ``into=None``: a new block of ``shape`` (and ``x``'s dtype) with only the piece's
    points written, the others left as the allocation had them: for a caller that puts
    every piece, the first making the block (no pass of zeros before the copies).

    For pfft's executor (a pipelined window putting each received piece back on the
    bytes it was read from): no autodiff or vmap rules of its own.
    """
    if into is None:
        if shape is None:
            raise ValueError("put_chunks into a new block needs its shape")
        shape = tuple(shape)
    else:
        shape = _seen_as(into, shape)
    if into is not None and x.dtype != into.dtype:
        raise TypeError(f"a piece of {x.dtype} cannot go into a block of {into.dtype}")
    ndim = len(shape)
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} of a block of {ndim} axes")
    axis %= ndim
    if x.ndim != ndim + 1:
        raise ValueError(f"a piece {x.shape} is not chunks of a block {shape}")
    attrs = _chunk_geometry(shape, axis, chunks, start, start + x.shape[1 + axis])
    if tuple(x.shape) != chunk_piece_shape(shape, axis, chunks, x.shape[1 + axis]):
        raise ValueError(f"a piece {x.shape} is not {chunks} chunks of a block {shape} "
                         f"along axis {axis}")

    if into is None:
        def fresh(*ops):
            return jax.ffi.ffi_call("pfft_put_chunks_new",
                                    jax.typeof(x).update(shape=shape))(*ops, **attrs)
        return _on_platform({p: fresh for p in _platforms(x)}, x, *after)

    def call(*ops):
        return jax.ffi.ffi_call("pfft_put_chunks", jax.typeof(into),
                                input_output_aliases={0: 0})(*ops, **attrs)
    return _on_platform({p: call for p in _platforms(into)}, into, x, *after)


def r2r_available(platform: str | None = None) -> bool:
    """Whether :func:`r2r` (DUCC's DCT/DST, CPU only) can run on ``platform``."""
    return _platform(platform) == "cpu" and available("cpu")


def _endpoints(x: jax.Array, pair: tuple[float, float], axis: int) -> jax.Array:
    """``x`` with its first and last points along ``axis`` times ``pair`` (a slice each,
    updated in place by XLA)."""
    if pair == (1.0, 1.0):
        return x
    index = [slice(None)] * x.ndim
    for position, w in zip((0, x.shape[axis] - 1), pair):
        if w != 1.0:
            index[axis] = position
            x = x.at[tuple(index)].multiply(jnp.asarray(w, x.dtype))
    return x


def r2r(x: jax.Array, op, axis: int, *, nthreads: int | None = None) -> jax.Array:
    """``op`` (a :class:`pfft.engines.r2r.R2R`: scipy's unnormalised DCT/DST of a type,
    its scale and end-point weights) along ``axis`` of real ``x``, by DUCC (CPU).

    The scale is fused into DUCC's transform; the end-point weights (orthogonalize,
    and those of inverses and transposes) multiply one slice each, before and after.
    Complex ``x`` is transformed as its real and imaginary parts (as scipy does), in
    one pass of the pieces kernel (:func:`fft_pieces`, weights fused too).
    Not differentiable by itself: pfft's primitive differentiates the plan.
    """
    x = jnp.asarray(x)
    axis = operator.index(axis) % x.ndim
    if x.shape[axis] != op.n:
        raise ValueError(f"r2r: {op.kind} planned for {op.n} points got {x.shape[axis]}")
    if jnp.iscomplexobj(x):
        x = x.astype(_complex_dtype(x.dtype))
        return fft_pieces([x], axis - x.ndim, op.n, kind="r2r", op=op, out_shape=x.shape,
                          nthreads=nthreads)[0]
    if np.dtype(x.dtype) != np.float64:
        x = x.astype(np.float32)
    x = _endpoints(x, op.pre, axis)
    loaded, why = _kernels.load("cpu")
    if not loaded:
        raise RuntimeError(f"pfft native r2r needs the CPU kernels: {why}")
    result = jax.typeof(x)
    call = jax.ffi.ffi_call("pfft_r2r", result, vmap_method="broadcast_all")
    y = call(x, axes=np.asarray([axis - x.ndim], dtype=np.int64), type=np.int64(op.type),
             sine=op.family == "dst", scale=np.float64(op.scale),
             nthreads=np.int64(nthreads or num_threads()))
    return _endpoints(y, op.post, axis)


def pieces_available(platform: str | None = None) -> bool:
    """Whether :func:`fft_pieces` (CPU only) can run on ``platform``."""
    return _platform(platform) == "cpu" and available("cpu")


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
        raise RuntimeError(f"pfft fft_pieces needs the CPU kernels: {unavailable_reason('cpu')}")
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
               nthreads=np.int64(nthreads or num_threads()))
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
        raise RuntimeError(f"pfft fft_pieces_pair needs the CPU kernels: {unavailable_reason('cpu')}")
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
               nthreads=np.int64(nthreads or num_threads()))
    return list(out)


def cufft_plan_cache_info() -> dict:
    """Size and bound of the GPU kernel's cuFFT plan cache (a thread-safe LRU).

    The bound is 64 plans unless ``$PFFT_CUFFT_PLAN_CACHE`` or
    :func:`set_cufft_plan_cache_size` says otherwise.

    Raises
    ------
    RuntimeError
        If the GPU kernels are not loaded.
    """
    lib = _kernels.library("cuda")
    if lib is None:
        raise RuntimeError(f"the GPU kernels are not loaded: {unavailable_reason('gpu')}")
    lib.pfft_cuda_plan_cache_size.restype = ctypes.c_long
    lib.pfft_cuda_plan_cache_limit.restype = ctypes.c_long
    return {"size": int(lib.pfft_cuda_plan_cache_size()),
            "maxsize": int(lib.pfft_cuda_plan_cache_limit())}


def set_cufft_plan_cache_size(maxsize: int) -> None:
    """Bound the GPU kernel's cuFFT plan cache (least recently used plans go first)."""
    if not isinstance(maxsize, int) or maxsize < 1:
        raise ValueError(f"set_cufft_plan_cache_size: maxsize must be a positive int, "
                         f"got {maxsize!r}")
    lib = _kernels.library("cuda")
    if lib is None:
        raise RuntimeError(f"the GPU kernels are not loaded: {unavailable_reason('gpu')}")
    lib.pfft_cuda_set_plan_cache_size(ctypes.c_long(maxsize))
