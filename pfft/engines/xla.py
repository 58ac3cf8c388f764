"""The XLA engine: ``lax.fft`` (DUCC on CPU, cuFFT on GPU).

XLA transforms at most the three innermost axes of an array in one call, out of
place; a forward transform is unscaled and an inverse one scaled by ``1/n``
(complex-to-real ones too, with ``n`` the real length). Every call goes through
:func:`pfft.engines.lax_fft.fft`, which rewrites the inverses that XLA's GPU FFT would
leave unscaled (2³¹ output elements and more). As a plan's engine
(:data:`ENGINE`) it is given blocks whose transformed axes the chain has put
innermost, and leaves every factor it is handed for the next copy the chain makes.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from . import lax_fft, r2r as r2r_ops

__all__ = ["fft_trailing", "rfft_trailing", "irfft_trailing", "fft_axes", "irfft_axes",
           "natural_scale", "XlaEngine", "ENGINE"]

_MAX_AXES = 3


def natural_scale(inverse: bool, n: int) -> float:
    """The factor this engine applies by itself for a transform of ``n`` points."""
    return 1.0 / n if inverse else 1.0


def fft_axes(x: jax.Array, axes, inverse: bool) -> jax.Array:
    """Complex FFT over arbitrary ``axes`` (moved last and back), numpy's scaling."""
    rest = [a for a in range(x.ndim) if a not in axes]
    perm = rest + list(axes)
    y = fft_trailing(jnp.transpose(x, perm), len(axes), inverse)
    return jnp.transpose(y, np.argsort(perm))


def fft_trailing(x: jax.Array, k: int, inverse: bool) -> jax.Array:
    """FFT over the last ``k`` axes of ``x`` (forward sign, or inverse)."""
    fft_type = lax.FftType.IFFT if inverse else lax.FftType.FFT
    if k > _MAX_AXES:                # XLA takes three at a time: do the leading ones first
        x = fft_axes(x, range(x.ndim - k, x.ndim - _MAX_AXES), inverse)
        k = _MAX_AXES
    return lax_fft.fft(x, fft_type, x.shape[x.ndim - k:])


def rfft_trailing(x: jax.Array, k: int) -> jax.Array:
    """Real-to-complex FFT over the last ``k`` axes (the last one halved)."""
    m = min(k, _MAX_AXES)
    y = lax_fft.fft(x, lax.FftType.RFFT, x.shape[x.ndim - m:])
    if k > m:
        y = fft_axes(y, range(x.ndim - k, x.ndim - m), inverse=False)
    return y


def irfft_trailing(x: jax.Array, k: int, n: int) -> jax.Array:
    """Complex-to-real inverse FFT over the last ``k`` axes, ``n`` real points last."""
    m = min(k, _MAX_AXES)
    if k > m:
        x = fft_axes(x, range(x.ndim - k, x.ndim - m), inverse=True)
    return lax_fft.fft(x, lax.FftType.IRFFT, x.shape[x.ndim - m:-1] + (n,))


def irfft_axes(x: jax.Array, axes, lengths) -> jax.Array:
    """numpy's ``irfftn(x, lengths, axes)`` for ``x`` that already holds ``lengths[:-1]``
    points and ``lengths[-1]//2 + 1`` bins along ``axes`` (moved last and back)."""
    axes = [a % x.ndim for a in axes]
    tail = list(range(x.ndim - len(axes), x.ndim))
    x = jnp.moveaxis(x, axes, tail)
    return jnp.moveaxis(irfft_trailing(x, len(axes), int(lengths[-1])), tail, axes)


def _innermost(axes, ndim: int) -> int:
    """How many innermost axes ``axes`` are, in order; a defect where they are not."""
    axes = tuple(a % ndim for a in axes)
    if axes != tuple(range(ndim - len(axes), ndim)):  # pragma: no cover - a defect
        raise ValueError(f"the xla engine transforms innermost axes, got {axes} of {ndim}")
    return len(axes)


class XlaEngine:
    """``lax.fft`` as a plan's engine (:class:`pfft.interfaces.Engine`).

    It transforms the innermost axes only (:attr:`keeps_order` is False: the chain
    puts them there, folding the reorder into an exchange's packing), scales as
    :func:`natural_scale` says, and hands back every factor it is given (its
    transforms fuse none). A real-to-complex transform of the ``+`` sign is the
    conjugate of ``lax.fft``'s; a complex-to-real one of the ``-`` sign, that of the
    conjugated input. DCTs and DSTs go through ``lax.fft`` with twiddles
    (:mod:`pfft.engines.r2r`). All instances are one engine.
    """

    name = "xla"
    keeps_order = False
    fuses_scale = False
    pieces = None
    # each FFT over an axis that is not innermost moves it there and back: one
    # multi-axis FFT before the truncations is faster (1.05-1.18x slower pruned,
    # 192³ to 128³ on CPUs)
    prunes_dealiased = False

    def __eq__(self, other):
        return isinstance(other, XlaEngine)

    def __hash__(self):
        return hash(XlaEngine)

    def __repr__(self):
        return "XlaEngine()"

    @staticmethod
    def natural_scale(inverse: bool, n: int) -> float:
        return natural_scale(inverse, n)

    def fft(self, x, axes, inverse, *, scale=1.0, inplace=False):
        # a complex transform over several axes is the same in any order of them
        return fft_trailing(x, _innermost(sorted(a % x.ndim for a in axes), x.ndim),
                            inverse), scale

    def rfft(self, x, axes, *, inverse=False, scale=1.0):
        y = rfft_trailing(x, _innermost(axes, x.ndim))
        return (jnp.conj(y) if inverse else y), scale

    def irfft(self, x, axes, n, *, inverse=True, scale=1.0):
        k = _innermost(axes, x.ndim)
        return irfft_trailing(x if inverse else jnp.conj(x), k, n), scale

    def r2r(self, x, ops, axes, *, inplace=False):
        return r2r_ops.apply_along(x, ops, axes)


ENGINE = XlaEngine()
