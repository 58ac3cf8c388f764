"""Sample frequencies with numpy's values, as jax arrays: of the FFT, the real FFT
and each DCT/DST mode (the rule: :mod:`pfft.frequencies`, which a plan's
``wavenumbers()`` reads too). The signatures are numpy 2's and ``jax.numpy.fft``'s:
``device=`` (numpy's ``"cpu"``, a JAX device or sharding) and ``dtype=``."""
from __future__ import annotations

import operator

import jax
import jax.numpy as jnp
import numpy as np

from ..arguments import R2R_KINDS
from ..frequencies import axis_frequencies
from ..sharding import is_tracer

__all__ = ["fftfreq", "rfftfreq", "r2rfreq"]


def _frequencies(kind: str, n, d, dtype, device, where: str) -> jax.Array:
    """``axis_frequencies(kind, n, d)`` as a jax array of ``dtype`` (default jax's
    default float) on ``device``, with numpy's argument rules: ``n`` an int (else a
    ``ValueError``, as numpy and ``jnp`` raise), ``d`` one number (a traced one
    inside ``jit`` too)."""
    if isinstance(n, (bool, np.bool_)) or not isinstance(n, (int, np.integer)):
        raise ValueError(f"{where}: n should be an integer, got {n!r}")
    n = operator.index(n)
    if n < 1:
        raise ValueError(f"{where}: invalid number of data points ({n}); n must be at "
                         f"least 1")
    if isinstance(d, (list, tuple)) or np.ndim(d) != 0:
        raise ValueError(f"{where}: d must be one number (the sample spacing), got {d!r}")
    dtype = dtype or jnp.result_type(float)
    if is_tracer(d):                           # numpy's values at d = 1, scaled in JAX
        values = jnp.asarray(axis_frequencies(kind, n, 1.0), dtype) / jnp.asarray(d, dtype)
    else:
        values = jnp.asarray(axis_frequencies(kind, n, d), dtype=dtype)
    if device is None:
        return values
    if isinstance(device, str):
        if device != "cpu":
            raise ValueError(f"{where}: device must be 'cpu' (numpy's only device), a JAX "
                             f"device or a sharding, got {device!r}")
        device = jax.devices("cpu")[0]
    return jax.device_put(values, device)


def fftfreq(n: int, d: float = 1.0, *, dtype=None, device=None) -> jax.Array:
    """The sample frequencies of an ``n``-point FFT: :func:`numpy.fft.fftfreq`.

    Parameters
    ----------
    n
        Number of points (an int: anything else is a ``ValueError``, as in numpy).
    d
        Sample spacing (one number, traced inside ``jit`` too); frequencies are in
        cycles per unit of ``d`` (multiply by ``2 * pi`` for angular wavenumbers).
    dtype
        Result dtype; default jax's default float dtype.
    device
        Where to put the result: numpy's ``"cpu"``, a JAX device or a sharding
        (``jax.numpy.fft.fftfreq``'s); default JAX's default device.

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
    return _frequencies("fft", n, d, dtype, device, "fftfreq")


def rfftfreq(n: int, d: float = 1.0, *, dtype=None, device=None) -> jax.Array:
    """The ``n // 2 + 1`` non-negative frequencies of a real FFT: :func:`numpy.fft.rfftfreq`.

    Parameters
    ----------
    n, d, dtype, device
        As in :func:`fftfreq` (``n``: the real signal's points).

    Examples
    --------
    >>> import pfft
    >>> pfft.rfftfreq(4).tolist()
    [0.0, 0.25, 0.5]
    """
    return _frequencies("rfft", n, d, dtype, device, "rfftfreq")


def r2rfreq(kind: str, n: int, d: float = 1.0, *, dtype=None, device=None) -> jax.Array:
    """The frequency of each output mode of the real-to-real transform ``kind``
    (``"dct1"`` ... ``"dct4"``, ``"dst1"`` ... ``"dst4"``) on ``n`` samples of
    spacing ``d``, cycles per unit as :func:`fftfreq`'s (``2 pi`` times it: the mode's
    angular wavenumber). The table of samples, walls and modes:
    :func:`pfft.frequencies.r2r_frequencies`. ``n``, ``d``, ``dtype`` and ``device``
    as in :func:`fftfreq`.

    Examples
    --------
    >>> import pfft
    >>> pfft.r2rfreq("dct2", 4).tolist()
    [0.0, 0.125, 0.25, 0.375]
    """
    if kind not in R2R_KINDS:
        raise ValueError(f"r2rfreq: kind must be one of {sorted(R2R_KINDS)}, got {kind!r}")
    return _frequencies(kind, n, d, dtype, device, "r2rfreq")
