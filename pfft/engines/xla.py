"""The XLA engine: ``lax.fft`` (DUCC on CPU, cuFFT on GPU).

XLA transforms at most the three innermost axes of an array in one call, out of
place; a forward transform is unscaled and an inverse one scaled by ``1/n``
(complex-to-real ones too, with ``n`` the real length).
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from ..interfaces import EngineCapabilities

__all__ = ["fft_trailing", "rfft_trailing", "irfft_trailing", "natural_scale", "name",
           "capabilities"]

_MAX_AXES = 3

name = "xla"
# transforms only the innermost axes (the executor moves FFT axes last first); DCTs
# and DSTs through lax.fft with twiddles; no pieces kernels
capabilities = EngineCapabilities()


def natural_scale(inverse: bool, n: int) -> float:
    """The factor this engine applies by itself for a transform of ``n`` points."""
    return 1.0 / n if inverse else 1.0


def _fft_axes(x: jax.Array, axes, inverse: bool) -> jax.Array:
    """Complex FFT over arbitrary ``axes`` (moved last and back)."""
    rest = [a for a in range(x.ndim) if a not in axes]
    perm = rest + list(axes)
    y = fft_trailing(jnp.transpose(x, perm), len(axes), inverse)
    return jnp.transpose(y, np.argsort(perm))


def fft_trailing(x: jax.Array, k: int, inverse: bool) -> jax.Array:
    """FFT over the last ``k`` axes of ``x`` (forward sign, or inverse)."""
    fft_type = lax.FftType.IFFT if inverse else lax.FftType.FFT
    if k > _MAX_AXES:                # XLA takes three at a time: do the leading ones first
        x = _fft_axes(x, range(x.ndim - k, x.ndim - _MAX_AXES), inverse)
        k = _MAX_AXES
    return lax.fft(x, fft_type, x.shape[x.ndim - k:])


def rfft_trailing(x: jax.Array, k: int) -> jax.Array:
    """Real-to-complex FFT over the last ``k`` axes (the last one halved)."""
    m = min(k, _MAX_AXES)
    y = lax.fft(x, lax.FftType.RFFT, x.shape[x.ndim - m:])
    if k > m:
        y = _fft_axes(y, range(x.ndim - k, x.ndim - m), inverse=False)
    return y


def irfft_trailing(x: jax.Array, k: int, n: int) -> jax.Array:
    """Complex-to-real inverse FFT over the last ``k`` axes, ``n`` real points last."""
    m = min(k, _MAX_AXES)
    if k > m:
        x = _fft_axes(x, range(x.ndim - k, x.ndim - m), inverse=True)
    return lax.fft(x, lax.FftType.IRFFT, x.shape[x.ndim - m:-1] + (n,))
