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

import functools
import operator
from typing import NamedTuple, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from . import _kernels, r2r as r2r_ops
from ._kernels import (cufft_plan_cache_info, gpu_workspace_bytes, num_threads,
                       set_cufft_plan_cache_size, set_num_threads, workspace_type)
from ..hermitian import bin_weights
from ..interfaces import PiecesPass
from . import native_pieces
from .native_pieces import fft_pieces

__all__ = ["available", "unavailable_reason", "natural_scale", "fft", "rfft", "irfft",
           "r2r", "r2r_available", "set_num_threads", "num_threads", "gpu_workspace_bytes",
           "cufft_plan_cache_info", "set_cufft_plan_cache_size", "NativeEngine"]


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


class _Settings(NamedTuple):
    """What a transform kernel is told besides its operand: the axes (counted from the
    end), the sign, the factor fused in, the CPU threads (``None``: the default)."""

    axes: tuple[int, ...]
    inverse: bool
    scale: float
    nthreads: int | None

    def attributes(self) -> dict:
        """The custom call's attributes."""
        return dict(axes=np.asarray(self.axes, dtype=np.int64), forward=not self.inverse,
                    scale=np.float64(self.scale),
                    nthreads=np.int64(self.nthreads or num_threads()))


def _call(target: str, x: jax.Array, shape, dtype, settings: _Settings,
          inplace: bool = False) -> jax.Array:
    """The custom call ``target`` on ``x`` (``shape`` and ``dtype`` its result's), for
    each platform whose kernels are loaded.

    The array may live on either platform: a concrete array's devices say which kernel
    runs; a traced one gets both, and ``lax.platform_dependent`` lowers the one XLA
    compiles for. The GPU kernel's second output is its working memory (dropped), sized
    for exactly the block it transforms: under ``vmap`` the call is made again on the
    batched block (a batch dimension in front) instead of letting XLA broadcast it.
    """
    platforms = _platforms(x)
    attrs = settings.attributes()
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
            nbytes = gpu_workspace_bytes(target, tuple(a.shape), tuple(shape),
                                         tuple(settings.axes), double)
            branches["cuda"] = lambda b: jax.ffi.ffi_call(
                target, (result, workspace_type(b, nbytes)), vmap_method="broadcast_all",
                input_output_aliases=aliases)(b, **attrs)[0]
        return _on_platform(branches, a)

    @call.def_vmap
    def _batched(axis_size, in_batched, a):
        # the batch dimension in front: the kernel transforms the batched block
        return _call(target, a, (axis_size, *shape), dtype, settings, inplace), True

    return call(x)


@functools.partial(jax.custom_vjp, nondiff_argnums=(1, 2, 3, 4, 5))
def _c2c(x, axes, inverse, scale, inplace, nthreads):
    return _call("pfft_c2c", x, x.shape, x.dtype, _Settings(axes, inverse, scale, nthreads),
                 inplace)


def _c2c_fwd(x, axes, inverse, scale, inplace, nthreads):
    return _c2c(x, axes, inverse, scale, inplace, nthreads), None


def _c2c_bwd(axes, inverse, scale, inplace, nthreads, _, ct):
    # the DFT matrix is symmetric: the transpose of this linear map is itself
    return (_c2c(ct, axes, inverse, scale, False, nthreads),)


_c2c.defvjp(_c2c_fwd, _c2c_bwd)


def _bin_weights(n: int, interior: float, axis: int, dtype) -> jax.Array:
    """:func:`pfft.hermitian.bin_weights` along negative ``axis``."""
    w = bin_weights(n, interior)
    return jnp.asarray(w.reshape((-1,) + (1,) * (-axis - 1)), dtype=dtype)


@functools.partial(jax.custom_vjp, nondiff_argnums=(1, 2, 3, 4, 5))
def _r2c(x, axes, n, inverse, scale, nthreads):
    shape = list(x.shape)
    shape[axes[-1]] = n // 2 + 1
    return _call("pfft_r2c", x, shape, _complex_dtype(x.dtype),
                 _Settings(axes, inverse, scale, nthreads))


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
    return _call("pfft_c2r", x, shape, real, _Settings(axes, inverse, scale, nthreads))


def _c2r_fwd(x, axes, n, inverse, scale, nthreads):
    return _c2r(x, axes, n, inverse, scale, nthreads), None


def _c2r_bwd(axes, n, inverse, scale, nthreads, _, ct):
    # JAX's convention (as lax.fft's IRFFT rule): same-sign real-to-complex transform
    # of the cotangent, the bins that stand for two doubled
    w = _bin_weights(n, 2.0, axes[-1], ct.dtype)
    return (_r2c(ct, axes, n, inverse, scale, nthreads) * w,)


_c2r.defvjp(_c2r_fwd, _c2r_bwd)


def fft(x: jax.Array, axes: int | Sequence[int], inverse: bool = False, *,
        scale: float = 1.0, inplace: bool = False, nthreads: int | None = None) -> jax.Array:
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

    Returns
    -------
    array
        Same shape and (complex) dtype as ``x``. Reverse-mode differentiable
        (``jax.grad``/``vjp``; a linear map's transpose), like :func:`rfft`/:func:`irfft`.
    """
    x = jnp.asarray(x)
    x = x.astype(_complex_dtype(x.dtype))
    axes = _axes(axes, x.ndim)
    if not axes or x.size == 0:
        return x * jnp.asarray(scale, x.real.dtype) if scale != 1.0 else x
    return _c2c(x, axes, bool(inverse), float(scale), bool(inplace), nthreads)


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


def r2r(x: jax.Array, op, axis: int, *, nthreads: int | None = None,
        inplace: bool = False) -> jax.Array:
    """``op`` (a :class:`pfft.engines.r2r.R2R`: scipy's unnormalised DCT/DST of a type,
    its scale and end-point weights) along ``axis`` of real ``x``, by DUCC (CPU).

    The scale is fused into DUCC's transform; the end-point weights (orthogonalize,
    and those of inverses and transposes) multiply one slice each, before and after.
    Complex ``x`` is transformed as its real and imaginary parts (as scipy does), in
    one pass of the pieces kernel (:func:`fft_pieces`, weights fused too).
    ``inplace`` writes the result over a real ``x`` (``input_output_aliases``, as
    :func:`fft`'s). Not differentiable by itself: pfft's primitive differentiates the
    plan.
    """
    x = jnp.asarray(x)
    axis = operator.index(axis) % x.ndim
    if x.shape[axis] != op.n:
        raise ValueError(f"r2r: {op.kind} planned for {op.n} points got {x.shape[axis]}")
    if jnp.iscomplexobj(x):
        x = x.astype(_complex_dtype(x.dtype))
        return fft_pieces([x], PiecesPass("r2r", axis - x.ndim, op.n, op=op), x.shape,
                          nthreads=nthreads)[0]
    if np.dtype(x.dtype) != np.float64:
        x = x.astype(np.float32)
    x = _endpoints(x, op.pre, axis)
    loaded, why = _kernels.load("cpu")
    if not loaded:
        raise RuntimeError(f"pfft native r2r needs the CPU kernels: {why}")
    result = jax.typeof(x)
    call = jax.ffi.ffi_call("pfft_r2r", result, vmap_method="broadcast_all",
                           input_output_aliases={0: 0} if inplace else None)
    y = call(x, axes=np.asarray([axis - x.ndim], dtype=np.int64), type=np.int64(op.type),
             sine=op.family == "dst", scale=np.float64(op.scale),
             nthreads=np.int64(nthreads or num_threads()))
    return _endpoints(y, op.post, axis)


class NativeEngine:
    """The native kernels as a plan's engine (:class:`pfft.interfaces.Engine`), with
    the thread count each call gets.

    Simulated devices in one process call the kernel at the same time, so each gets
    a share of the cores (``nthreads``). Every transform runs where its axes lie
    (:attr:`keeps_order`), unnormalised, with the factor it is given fused in.
    On CPUs it has the pieces kernels (:attr:`pieces`, unless ``fuse`` is ``False``)
    and DUCC's DCTs and DSTs; on GPUs those run through ``lax.fft``. ``fuse``: which
    exchanges move pieces (:func:`pfft.pieces.as_pieces`): ``True`` every one,
    ``"auto"`` where it pays, ``False`` none. Equal settings compare and hash equal,
    so a plan's description can hold it.
    """

    name = "native"
    keeps_order = True
    fuses_scale = True

    def __init__(self, nthreads: int, platform: str = "cpu", fuse: bool | str = "auto"):
        self.nthreads, self.platform, self.fuse = nthreads, platform, fuse
        cpu = platform == "cpu"
        self.pieces = self if cpu and fuse is not False and available("cpu") else None
        self._ducc_r2r = cpu and available("cpu")
        # the CPU kernels take one strided axis at the cost of its points: 3/2-rule
        # rfftn plans with each axis truncated before the next ran forward and
        # backward in 0.69-0.88 of the time of one multi-axis FFT and the truncations
        # (192³ and 384³ grids, one device and a slab of 4; docs/performance.md); on
        # GPUs not measured
        self.prunes_dealiased = cpu
        self.r2r_by = "native" if self._ducc_r2r else "xla"   # what runs its DCTs/DSTs

    def _key(self):
        return (type(self).__name__, self.nthreads, self.platform, self.fuse)

    def __eq__(self, other):
        return type(other) is type(self) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def __repr__(self):
        return f"{type(self).__name__}(nthreads={self.nthreads}, {self.platform!r})"

    def natural_scale(self, inverse: bool, n: int) -> float:
        return 1.0

    def fft(self, x, axes, inverse, *, scale=1.0, inplace=False):
        return fft(x, axes, inverse, scale=scale, inplace=inplace,
                   nthreads=self.nthreads), 1.0

    def rfft(self, x, axes, *, inverse=False, scale=1.0):
        return rfft(x, axes, inverse=inverse, scale=scale, nthreads=self.nthreads), 1.0

    def irfft(self, x, axes, n, *, inverse=True, scale=1.0):
        return irfft(x, axes, n, inverse=inverse, scale=scale, nthreads=self.nthreads), 1.0

    def r2r(self, x, ops, axes, *, inplace=False):
        if not self._ducc_r2r:
            return r2r_ops.apply_along(x, ops, axes)
        for op, axis in zip(ops, axes):      # after the first, each call's input is dead
            x = r2r(x, op, axis, nthreads=self.nthreads, inplace=inplace)
            inplace = True
        return x

    # -- the pieces kernels (:mod:`pfft.engines.native_pieces`), CPU only ----------------
    def fft_pieces(self, pieces, step, out_shape, **kw):
        return native_pieces.fft_pieces(pieces, step, out_shape, nthreads=self.nthreads, **kw)

    def fft_pieces_pair(self, pieces, first, second, out_shape, **kw):
        return native_pieces.fft_pieces_pair(pieces, first, second, out_shape,
                                             nthreads=self.nthreads, **kw)

    @staticmethod
    def writes_in_place(step, in_shapes, out_shape, cut_in, cut_out) -> bool:
        return native_pieces.writes_in_place(step, in_shapes, out_shape, cut_in, cut_out)
