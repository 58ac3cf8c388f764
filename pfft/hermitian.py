"""The weights of a real FFT's stored bins, which its transposes apply.

A real-to-complex transform of ``n`` points stores ``n//2 + 1`` bins: the zero bin
and, for even ``n``, the Nyquist bin stand for one frequency each, the others for
two (``k`` and ``-k``). So the transpose of ``rfft`` halves the interior bins before
a complex-to-real transform, and the transpose of ``irfft`` doubles them after a
real-to-complex one: JAX's convention (``jax.numpy.fft``'s ``_rfft_transpose`` and
``_irfft_transpose``), used by the native engine's own gradients and by a plan's
transposed real stage alike.
"""
from __future__ import annotations

import numpy as np

__all__ = ["bin_weights"]


def bin_weights(n: int, interior: float) -> np.ndarray:
    """The ``n//2 + 1`` stored bins' weights: ``interior`` (2 or 0.5) for the bins
    that stand for two frequencies, 1 for the zero bin and, for even ``n``, the
    Nyquist bin.

    Examples
    --------
    >>> bin_weights(6, 2.0)
    array([1., 2., 2., 1.])
    >>> bin_weights(5, 0.5)
    array([1. , 0.5, 0.5])
    """
    w = np.full(n // 2 + 1, float(interior))
    w[0] = 1.0
    if n % 2 == 0:
        w[-1] = 1.0
    return w
