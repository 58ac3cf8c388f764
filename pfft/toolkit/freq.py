"""Sample frequencies with numpy's values, as jax arrays."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ..arguments import check_length

__all__ = ["fftfreq", "rfftfreq"]


def fftfreq(n: int, d: float = 1.0, *, dtype=None) -> jax.Array:
    """The sample frequencies of an ``n``-point FFT: :func:`numpy.fft.fftfreq`.

    Parameters
    ----------
    n
        Number of points.
    d
        Sample spacing; frequencies are in cycles per unit of ``d`` (multiply by
        ``2 * pi`` for angular wavenumbers).
    dtype
        Result dtype; default jax's default float dtype.

    Returns
    -------
    jax.Array
        ``[0, 1, ..., n//2 - 1 (or (n-1)//2), -n//2, ..., -1] / (d * n)``.

    Examples
    --------
    >>> import pfft
    >>> pfft.fftfreq(4, d=0.5).tolist()
    [0.0, 0.5, -1.0, -0.5]
    """
    n = check_length(n, "fftfreq")
    return jnp.asarray(np.fft.fftfreq(n, d), dtype=dtype or jnp.result_type(float))


def rfftfreq(n: int, d: float = 1.0, *, dtype=None) -> jax.Array:
    """The ``n // 2 + 1`` non-negative frequencies of a real FFT: :func:`numpy.fft.rfftfreq`.

    Parameters
    ----------
    n
        Number of points (of the real signal).
    d
        Sample spacing.
    dtype
        Result dtype; default jax's default float dtype.

    Examples
    --------
    >>> import pfft
    >>> pfft.rfftfreq(4).tolist()
    [0.0, 0.25, 0.5]
    """
    n = check_length(n, "rfftfreq")
    return jnp.asarray(np.fft.rfftfreq(n, d), dtype=dtype or jnp.result_type(float))
