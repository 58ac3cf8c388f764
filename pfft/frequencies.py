"""The frequencies of each kind of transform along one axis: the one rule that
``pfft.fftfreq``, ``pfft.rfftfreq`` and ``pfft.r2rfreq`` (:mod:`pfft.toolkit.freq`),
a plan's ``wavenumbers()`` and :mod:`pfft.spectral` all read. numpy values; the
toolkit makes jax arrays of them.
"""
from __future__ import annotations

import numpy as np

__all__ = ["axis_frequencies", "r2r_frequencies"]


def axis_frequencies(kind: str, n: int, d: float = 1.0) -> np.ndarray:
    """The frequency (cycles per unit) of each output point of transform ``kind``
    along an axis of ``n`` samples of spacing ``d``: ``"fft"`` numpy's ``fftfreq``,
    ``"rfft"`` its ``rfftfreq`` (``n // 2 + 1`` values), a DCT/DST kind
    (``"dct1"`` ... ``"dst4"``) each mode's (:func:`r2r_frequencies`)."""
    if kind == "fft":
        return np.fft.fftfreq(n, d)
    if kind == "rfft":
        return np.fft.rfftfreq(n, d)
    return r2r_frequencies(kind, n, d)


def r2r_frequencies(kind: str, n: int, d: float = 1.0) -> np.ndarray:
    """The frequency (cycles per unit, as ``numpy.fft.fftfreq``; times ``2 pi`` the
    angular wavenumber ``k``) of each output mode of a real-to-real transform
    ``kind`` on ``n`` samples of spacing ``d``, ``m = 0 .. n-1``.

    Mode ``m`` is ``cos(k x)`` or ``sin(k x)`` on the samples' grid, the walls at
    ``x = 0`` and ``x = L``:

    ====== ========================= ================ ================================
    kind   samples ``x_j``           ``L``            ``k``
    ====== ========================= ================ ================================
    dct1   ``j d`` (walls included)  ``(n - 1) d``    ``pi m / L``
    dct2   ``(j + 1/2) d``           ``n d``          ``pi m / L``
    dct3   ``j d``                   ``n d``          ``pi (m + 1/2) / L``
    dct4   ``(j + 1/2) d``           ``n d``          ``pi (m + 1/2) / L``
    dst1   ``(j + 1) d`` (interior)  ``(n + 1) d``    ``pi (m + 1) / L``
    dst2   ``(j + 1/2) d``           ``n d``          ``pi (m + 1) / L``
    dst3   ``(j + 1) d``             ``n d``          ``pi (m + 1/2) / L``
    dst4   ``(j + 1/2) d``           ``n d``          ``pi (m + 1/2) / L``
    ====== ========================= ================ ================================
    """
    family, t = kind[:3], int(kind[3])
    m = np.arange(n, dtype=float)
    if t == 1:
        length = (n - 1) * d if family == "dct" else (n + 1) * d
        shift = 0.0 if family == "dct" else 1.0
    else:
        length = n * d
        shift = {2: 0.0 if family == "dct" else 1.0, 3: 0.5, 4: 0.5}[t]
    if length == 0:                    # one point of a DCT-I is refused earlier
        return np.zeros(n)
    return (m + shift) / (2 * length)
