"""Sample frequencies with numpy's values, as jax arrays: of the FFT, the real FFT
and each DCT/DST mode (the rule: :mod:`pfft.frequencies`, which a plan's
``wavenumbers()`` reads too)."""
from __future__ import annotations

import jax
import jax.numpy as jnp

from ..arguments import R2R_KINDS, check_length
from ..frequencies import axis_frequencies

__all__ = ["fftfreq", "rfftfreq", "r2rfreq"]


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
    return jnp.asarray(axis_frequencies("fft", n, d), dtype=dtype or jnp.result_type(float))


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
    return jnp.asarray(axis_frequencies("rfft", n, d), dtype=dtype or jnp.result_type(float))


def r2rfreq(kind: str, n: int, d: float = 1.0, *, dtype=None) -> jax.Array:
    """The frequency of each output mode of the real-to-real transform ``kind``
    (``"dct1"`` ... ``"dct4"``, ``"dst1"`` ... ``"dst4"``) on ``n`` samples of
    spacing ``d``, cycles per unit as :func:`fftfreq`'s (``2 pi`` times it: the mode's
    angular wavenumber). The table of samples, walls and modes:
    :func:`pfft.frequencies.r2r_frequencies`.

    Examples
    --------
    >>> import pfft
    >>> pfft.r2rfreq("dct2", 4).tolist()
    [0.0, 0.125, 0.25, 0.375]
    """
    if kind not in R2R_KINDS:
        raise ValueError(f"r2rfreq: kind must be one of {sorted(R2R_KINDS)}, got {kind!r}")
    n = check_length(n, "r2rfreq")
    return jnp.asarray(axis_frequencies(kind, n, d), dtype=dtype or jnp.result_type(float))
