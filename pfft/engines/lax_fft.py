"""``lax.fft`` with every inverse scaled, whatever its size.

XLA's GPU FFT applies an inverse transform's ``1/n`` with cuBLAS ``scal``, whose
element count is a 32-bit integer: from :data:`SCALE_LIMIT` output elements on it
skips the scaling and returns ``n`` times the answer, silently
(openxla/xla#45009; jax 0.11.2 has it). :func:`fft` takes ``lax.fft``'s arguments and
never asks XLA for such an inverse: from that size on,

- a complex inverse is the conjugate of the forward transform of the conjugate, scaled
  here (XLA's forward transforms scale nothing);
- a complex-to-real inverse of an even length ``n`` along the last axis is a complex
  inverse of ``n/2`` points there, rewritten as above: the real output's even and odd
  points are the real and imaginary parts of that transform of a spectrum built from
  the half spectrum (the split every real FFT uses); of an odd length, the complex
  inverse of the whole spectrum (its Hermitian extension: twice the memory), real part.

The conjugations and the packing are elementwise, and XLA fuses them with the
operations around the transform. The rewritten programs give numpy's answer on every
platform, and keep giving it once XLA scales large inverses itself (nothing is ever
scaled twice). On CPUs (:data:`EXACT_PLATFORMS`: XLA's DUCC scales every inverse)
XLA's own inverse runs: there the rewrite would only cost time (1.4-2.5x on one CPU,
256³ complex64). Like ``jnp.fft.irfftn``, a complex-to-real inverse treats the half
spectrum as numpy does: the inverse over the other axes first, then the real parts of
the zero and Nyquist bins of the halved axis.
"""
from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

__all__ = ["SCALE_LIMIT", "EXACT_PLATFORMS", "fft", "ifft", "irfft", "irfftn", "scaled"]

SCALE_LIMIT = 2 ** 31
"""Output elements from which XLA's GPU FFT leaves an inverse unscaled: inverses this
large are rewritten (:func:`fft`). Tests lower it to check the rewrite on small arrays."""

EXACT_PLATFORMS = ("cpu",)
"""Platforms whose XLA FFT scales inverses of every size: no rewrite there. Tests
empty it to run the rewrite on CPU devices."""


def fft(x: jax.Array, fft_type, fft_lengths) -> jax.Array:
    """``lax.fft(x, fft_type, fft_lengths)``, its inverses of :data:`SCALE_LIMIT` output
    elements or more rewritten so that they are scaled, except on
    :data:`EXACT_PLATFORMS` (the module's docstring)."""
    fft_type = _fft_type(fft_type)
    lengths = tuple(int(n) for n in fft_lengths)
    rewritten = _rewrite(x, fft_type, lengths)
    if rewritten is None:
        return lax.fft(x, fft_type, lengths)
    platforms = _platforms(x)
    exact = [p for p in EXACT_PLATFORMS if p in platforms]
    if not exact:
        return rewritten(x)
    if len(exact) == len(platforms):
        return lax.fft(x, fft_type, lengths)
    return lax.platform_dependent(
        x, default=rewritten, **{p: lambda a: lax.fft(a, fft_type, lengths) for p in exact})


def _platforms(x: jax.Array) -> tuple[str, ...]:
    """Where ``x`` may live: a concrete array's platform; every platform for a traced
    one (``lax.platform_dependent`` then lowers the branch of the one compiled for)."""
    if isinstance(x, jax.core.Tracer):
        return ("cpu", "cuda", "rocm", "tpu")
    return (next(iter(x.devices())).platform,)


def _rewrite(x: jax.Array, fft_type: lax.FftType, lengths: tuple[int, ...]):
    """The scaled rewrite of an inverse of :data:`SCALE_LIMIT` output elements or more
    (a function of the input), else None."""
    k = len(lengths)
    if fft_type == lax.FftType.IFFT and x.size >= SCALE_LIMIT:
        return lambda a: _ifft_by_forward(a, lengths)
    if fft_type == lax.FftType.IRFFT and math.prod(x.shape[:-k] + lengths) >= SCALE_LIMIT:
        rewrite = _irfft_unpacked if lengths[-1] % 2 == 0 else _irfft_extended
        return lambda a: rewrite(a, lengths)
    return None


def _fft_type(fft_type) -> lax.FftType:
    if isinstance(fft_type, str):
        return getattr(lax.FftType, fft_type.upper())
    return lax.FftType(fft_type)


def scaled(y: jax.Array, factor: float) -> jax.Array:
    """``y`` times ``factor`` (in ``y``'s real dtype; none where it is 1)."""
    return y if factor == 1.0 else y * jnp.asarray(factor, y.real.dtype)


def _ifft_by_forward(x: jax.Array, lengths: tuple[int, ...]) -> jax.Array:
    """The inverse over the last ``len(lengths)`` axes: ``conj(FFT(conj(x))) / n``."""
    y = lax.fft(jnp.conj(x), lax.FftType.FFT, lengths)
    return scaled(jnp.conj(y), 1.0 / max(math.prod(lengths), 1))


def _negated(x: jax.Array, axes) -> jax.Array:
    """``x`` at the negated index ``(-j) mod n`` along each of ``axes``."""
    for a in axes:
        x = jnp.roll(jnp.flip(x, a), 1, a)
    return x


def _numpy_half(x: jax.Array, lengths: tuple[int, ...]) -> jax.Array:
    """The half spectrum ``x`` (the halved axis last, the others ``lengths[:-1]``)
    with its zero and, for an even length, Nyquist plane made Hermitian over the other
    axes: the spectrum whose inverse is numpy's ``irfftn`` of ``x`` (the real part
    numpy takes of those bins after the inverse over the other axes), now the inverse
    of any algorithm that assumes Hermitian symmetry."""
    lead = range(x.ndim - len(lengths), x.ndim - 1)
    n = lengths[-1]
    ends = [0] + ([n // 2] if n % 2 == 0 else [])
    planes = {}
    for b in ends:
        plane = x[..., b]
        planes[b] = 0.5 * (plane + jnp.conj(_negated(plane, lead)))
    parts = [planes[0][..., None]]
    if n % 2 == 0:
        if n // 2 > 1:
            parts.append(x[..., 1:n // 2])
        parts.append(planes[n // 2][..., None])
    elif x.shape[-1] > 1:
        parts.append(x[..., 1:])
    return jnp.concatenate(parts, axis=-1) if len(parts) > 1 else parts[0]


def _irfft_unpacked(x: jax.Array, lengths: tuple[int, ...]) -> jax.Array:
    """The complex-to-real inverse for an even last length ``n = 2m``: with ``F`` the
    half spectrum (numpy's, :func:`_numpy_half`), ``z[.., j] = y[.., 2j] + i y[.., 2j+1]``
    has the ``m``-point spectrum ``Z[k] = (F[k] + G[k]) / 2 + i e^{2πik/n} (F[k] - G[k]) / 2``
    with ``G[k] = conj(F[-k'], m - k)`` (``k'`` the other axes, negated): ``z`` is the
    complex inverse of ``Z``, and ``y`` its parts interleaved."""
    n = lengths[-1]
    m = n // 2
    lead = range(x.ndim - len(lengths), x.ndim - 1)
    f = _numpy_half(x, lengths)
    g = jnp.conj(jnp.flip(_negated(f, lead), -1)[..., :m])         # conj F[-k', m - k]
    twiddle = np.exp(2j * np.pi * np.arange(m) / n)
    z_hat = 0.5 * (f[..., :m] + g) + 0.5j * jnp.asarray(twiddle, x.dtype) * (f[..., :m] - g)
    z = _ifft_by_forward(z_hat, lengths[:-1] + (m,))
    y = jnp.stack([z.real, z.imag], axis=-1)
    return y.reshape(x.shape[:-1] + (n,))


def _irfft_extended(x: jax.Array, lengths: tuple[int, ...]) -> jax.Array:
    """The complex-to-real inverse for an odd last length: the complex inverse of the
    whole spectrum (numpy's half, extended by Hermitian symmetry), its real part."""
    n = lengths[-1]
    lead = range(x.ndim - len(lengths), x.ndim - 1)
    f = _numpy_half(x, lengths)
    mirror = jnp.conj(jnp.flip(_negated(f, lead)[..., 1:(n + 1) // 2], -1))  # F[-k', n - k]
    full = jnp.concatenate([f, mirror], axis=-1)
    return _ifft_by_forward(full, lengths).real


def ifft(x: jax.Array, axis: int = -1) -> jax.Array:
    """``jnp.fft.ifft(x, axis=axis)`` (no cropping or padding) by :func:`fft`."""
    x = jnp.moveaxis(x, axis, -1)
    return jnp.moveaxis(fft(x, lax.FftType.IFFT, x.shape[-1:]), -1, axis)


def irfftn(x: jax.Array, s, axes) -> jax.Array:
    """``jnp.fft.irfftn(x, s, axes)`` by :func:`fft`: the half spectrum cropped or
    zero-padded to ``s`` as numpy does; at most three axes."""
    axes = [a % x.ndim for a in axes]
    s = [int(n) for n in s]
    if len(axes) > 3:
        raise ValueError(f"irfftn: at most three axes at once, got {len(axes)}")
    want = s[:-1] + [s[-1] // 2 + 1]
    for a, n in zip(axes, want):
        if x.shape[a] > n:
            x = lax.slice_in_dim(x, 0, n, axis=a)
        elif x.shape[a] < n:
            pad = [(0, 0)] * x.ndim
            pad[a] = (0, n - x.shape[a])
            x = jnp.pad(x, pad)
    tail = list(range(x.ndim - len(axes), x.ndim))
    y = fft(jnp.moveaxis(x, axes, tail), lax.FftType.IRFFT, s)
    return jnp.moveaxis(y, tail, axes)


def irfft(x: jax.Array, n: int, axis: int = -1) -> jax.Array:
    """``jnp.fft.irfft(x, n, axis=axis)`` by :func:`fft`."""
    return irfftn(x, [n], [axis])
