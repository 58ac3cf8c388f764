"""The XLA engine: ``lax.fft`` (DUCC on CPU, cuFFT on GPU).

XLA transforms at most the three innermost axes of an array in one call, out of
place; a forward transform is unscaled and an inverse one scaled by ``1/n``.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
from jax import lax

__all__ = ["fft_trailing", "natural_scale"]


def natural_scale(inverse: bool, n: int) -> float:
    """The factor this engine applies by itself for a transform of ``n`` points."""
    return 1.0 / n if inverse else 1.0


def fft_trailing(x: jax.Array, k: int, inverse: bool) -> jax.Array:
    """FFT over the last ``k`` axes of ``x`` (forward sign, or inverse)."""
    fft_type = lax.FftType.IFFT if inverse else lax.FftType.FFT
    while k > 3:                     # XLA takes three at a time: do the leading ones first
        ndim = x.ndim
        lead = tuple(range(ndim - k, ndim - k + 3))
        rest = tuple(a for a in range(ndim) if a not in lead)
        x = jnp.transpose(x, rest + lead)
        x = lax.fft(x, fft_type, x.shape[ndim - 3:])
        x = jnp.transpose(x, tuple((rest + lead).index(i) for i in range(ndim)))
        k -= 3
    return lax.fft(x, fft_type, x.shape[x.ndim - k:])
