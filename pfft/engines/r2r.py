"""Real-to-real transforms (DCT and DST, types 1-4) along one axis, through FFTs, and
types II or III along several axes through one multi-axis FFT (:func:`apply_trailing`).

cuFFT has no r2r transforms and XLA's FFT none either, so every engine runs them
here, as ``lax.fft`` real or complex FFTs of about the same length with pre- and
post-twiddles (scipy's unnormalised definitions, ``scipy.fft.dct``/``dst``):

- DCT-II: Makhoul's algorithm: the even samples, then the odd ones reversed, one
  real FFT of length ``n``, and ``y[k] = 2 Re(exp(-i pi k / 2n) V[k])``;
- DCT-III: Makhoul's algorithm inverted: one complex-to-real FFT of length ``n``
  and the reordering undone;
- DCT-I: a real FFT of the even extension (``2(n - 1)`` points); DST-I: of the odd
  extension (``2(n + 1)`` points);
- DCT-IV: for even ``n`` one complex FFT of ``n/2`` points of ``x[2j] + i x[n-1-2j]``
  with twiddles before and after; for odd ``n`` one of ``2n`` points (zero-padded);
- DST-II, III, IV: the matching DCT with the input reversed or sign-alternated
  (``DST-II(x)[k] = DCT-II((-1)^j x_j)[n-1-k]``, ``DST-III(x)[k] = (-1)^k
  DCT-III(x[::-1])[k]``, the same for IV).

Complex input is transformed as its real and imaginary parts (as scipy does).

A transform along an axis is an :class:`R2R`: one of those unnormalised matrices
``T`` with a scale and weights on the first and last points before and after it,
``scale * diag(post) @ T @ diag(pre)``. scipy's ``norm`` and ``orthogonalize``
(:func:`scipy_op`), its inverse (``idct``/``idst``) and the transpose of any of them
are again such a map (:meth:`R2R.inverse`, :meth:`R2R.transposed`): the transpose of
a DCT-II is a DCT-III with its first input doubled, of a DCT-III a DCT-II with its
first output halved, the same for DST-II/III at the last point, and types I and IV
are symmetric (DCT-I up to the weights of its end points). That is what gradients of
pfft's r2r transforms run (:mod:`pfft.autodiff`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from ..arguments import R2R_KINDS

__all__ = ["R2R", "R2R_KINDS", "scipy_op", "apply", "apply_last", "apply_trailing", "apply_along",
           "groupable", "length_factor", "InvalidLengthError"]

class InvalidLengthError(ValueError, RuntimeError):
    """A length the transform is not defined for (a DCT-I of one point). A
    ``ValueError``, and a ``RuntimeError`` as scipy raises for it."""


def length_factor(family: str, type: int, n: int) -> int:
    """scipy's ``N`` for ``norm``: the length of the implied periodic extension
    (``2(n-1)`` for DCT-I, ``2(n+1)`` for DST-I, ``2n`` otherwise)."""
    if type == 1:
        return 2 * (n - 1) if family == "dct" else 2 * (n + 1)
    return 2 * n


def _endpoint(first: float = 1.0, last: float = 1.0) -> tuple[float, float]:
    return (float(first), float(last))


def _times(a, b) -> tuple[float, float]:
    return (a[0] * b[0], a[1] * b[1])


@dataclass(frozen=True)
class R2R:
    """``scale * diag(post) @ T @ diag(pre)`` on ``n`` points.

    ``T`` is scipy's unnormalised ``family`` (``"dct"``/``"dst"``) of ``type`` 1-4;
    ``pre`` and ``post`` are the weights of the (first, last) points (1 elsewhere;
    for ``n == 1`` the one point takes both). Immutable and hashable: plan stages
    and the primitive's description hold it.
    """

    family: str
    type: int
    n: int
    scale: float = 1.0
    pre: tuple[float, float] = (1.0, 1.0)
    post: tuple[float, float] = (1.0, 1.0)

    @property
    def kind(self) -> str:
        return f"{self.family}{self.type}"

    def inverse(self) -> "R2R":
        """The inverse map: ``T^-1`` is ``T`` (types I and IV) or the other of II and
        III, divided by :func:`length_factor`."""
        t = {2: 3, 3: 2}.get(self.type, self.type)
        big = length_factor(self.family, self.type, self.n)
        return R2R(self.family, t, self.n, 1.0 / (self.scale * big),
                   pre=(1 / self.post[0], 1 / self.post[1]),
                   post=(1 / self.pre[0], 1 / self.pre[1]))

    def transposed(self) -> "R2R":
        """The transposed map (what a gradient applies)."""
        f, t = self.family, self.type
        pre, post = self.post, self.pre            # diag(pre) and diag(post) swap sides
        if f == "dct" and t == 1:                  # T^T = diag(w) T diag(1/w), w = 1/2 at ends
            pre, post = _times(pre, (2.0, 2.0)), _times(post, (0.5, 0.5))
        elif t == 2:                               # T2^T = T3 diag(1/v)
            pre = _times(pre, _endpoint(first=2.0) if f == "dct" else _endpoint(last=2.0))
            t = 3
        elif t == 3:                               # T3^T = diag(v) T2
            post = _times(post, _endpoint(first=0.5) if f == "dct" else _endpoint(last=0.5))
            t = 2
        return replace(self, type=t, pre=pre, post=post)

    def matrix(self) -> np.ndarray:
        """The dense ``n x n`` matrix in float64 (tests, small sizes)."""
        return np.asarray(apply_last(np.eye(self.n), self, xp=np)).T

    def __str__(self) -> str:
        return self.kind


def scipy_op(kind: str, n: int, norm: str = "backward", orthogonalize: bool | None = None,
             *, inverse: bool = False) -> R2R:
    """scipy's ``dct``/``dst`` (``inverse``: ``idct``/``idst``) of ``kind``
    (``"dct1"`` ... ``"dst4"``) on ``n`` points as an :class:`R2R`.

    ``norm``: ``"backward"`` (the forward unscaled, the inverse by ``1/N``),
    ``"ortho"`` (both by ``1/sqrt(N)``) or ``"forward"`` (the forward by ``1/N``), with
    ``N`` the :func:`length_factor`. ``orthogonalize`` (default: ``norm == "ortho"``)
    weights the end points so that the ``"ortho"`` matrix is orthogonal: DCT-I
    inputs ``x[0], x[n-1]`` by ``sqrt(2)`` and outputs ``y[0], y[n-1]`` by
    ``1/sqrt(2)``; DCT-II ``y[0]`` and DST-II ``y[n-1]`` by ``1/sqrt(2)``; DCT-III
    ``x[0]`` and DST-III ``x[n-1]`` by ``sqrt(2)``.

    Raises
    ------
    ValueError
        An unknown kind or norm; :class:`InvalidLengthError` for ``n < 1`` or a DCT-I
        of one point (scipy raises ``RuntimeError`` there; this error is both).
    """
    if kind not in R2R_KINDS:
        raise ValueError(f"unknown real-to-real kind {kind!r}; choose one of {R2R_KINDS}")
    family, t = kind[:3], int(kind[3])
    if n < 1:
        raise InvalidLengthError(f"invalid number of data points ({n}) specified")
    if kind == "dct1" and n < 2:
        raise InvalidLengthError("a DCT-I needs at least 2 points (its period 2(n - 1) is "
                                 "zero for n = 1)")
    if orthogonalize is None:
        orthogonalize = norm == "ortho"
    big = length_factor(family, t, n)
    scale = {"backward": 1.0, "ortho": 1.0 / math.sqrt(big), "forward": 1.0 / big}.get(norm)
    if scale is None:
        raise ValueError(f"norm must be 'backward', 'ortho' or 'forward', got {norm!r}")
    pre = post = (1.0, 1.0)
    if orthogonalize:
        r = math.sqrt(2.0)
        if kind == "dct1":
            pre, post = (r, r), (1 / r, 1 / r)
        elif t == 2:
            post = _endpoint(first=1 / r) if family == "dct" else _endpoint(last=1 / r)
        elif t == 3:
            pre = _endpoint(first=r) if family == "dct" else _endpoint(last=r)
    if inverse:
        # scipy's idct with this norm is the inverse of its dct with the same norm
        return R2R(family, t, n, scale, pre, post).inverse()
    return R2R(family, t, n, scale, pre, post)


# -- the transforms along the last axis -------------------------------------------------

def _weights(pair, n: int, factor: float = 1.0) -> np.ndarray | None:
    """The diagonal of ``factor * diag(pair)`` on ``n`` points, ``None`` if all ones."""
    if pair == (1.0, 1.0) and factor == 1.0:
        return None
    w = np.full(n, factor)
    w[0] *= pair[0]
    w[-1] *= pair[1]
    return w


def apply_last(x, op: R2R, *, xp=None):
    """``op`` along the last axis of ``x`` (real or complex; its length is ``op.n``).

    ``xp``: the array module (``jax.numpy`` by default; ``numpy`` for float64
    reference matrices).
    """
    if xp is None:
        import jax.numpy as xp
    n = x.shape[-1]
    if n != op.n:
        raise ValueError(f"r2r: {op.kind} planned for {op.n} points got {n}")
    w = _weights(op.pre, n)
    if w is not None:
        x = x * xp.asarray(w, dtype=x.dtype)
    if xp.iscomplexobj(x):
        y = _unnormalized(xp.stack([x.real, x.imag]), op.family, op.type, xp)
        y = _complex(y[0], y[1], xp)
    else:
        y = _unnormalized(x, op.family, op.type, xp)
    w = _weights(op.post, n, op.scale)
    if w is not None:
        y = y * xp.asarray(w, dtype=y.dtype)
    return y


def apply(x, op: R2R, axis: int):
    """``op`` along ``axis`` of ``x`` (moved last and back)."""
    import jax.numpy as jnp

    axis = axis % x.ndim
    if axis == x.ndim - 1:
        return apply_last(x, op)
    return jnp.moveaxis(apply_last(jnp.moveaxis(x, axis, -1), op), -1, axis)


def apply_along(x, ops, axes):
    """``ops[j]`` along axis ``axes[j]`` of ``x`` through ``lax.fft``: each run of up to
    three in a row that :func:`groupable` allows at once (their axes moved innermost
    and back: no move where they are there already), the others one at a time."""
    import jax.numpy as jnp

    ops, axes = list(ops), [a % x.ndim for a in axes]
    i = 0
    while i < len(ops):
        k = min(3, len(ops) - i)
        while k > 1 and not groupable(ops[i:i + k]):
            k -= 1
        if k == 1:
            x = apply(x, ops[i], axes[i])
        else:
            here, tail = axes[i:i + k], list(range(x.ndim - k, x.ndim))
            y = apply_trailing(jnp.moveaxis(x, here, tail), ops[i:i + k])
            x = jnp.moveaxis(y, tail, here)
        i += k
    return x


def _fft_of(xp):
    """The inverse real FFTs for the array module ``xp``: numpy's, or for ``jax.numpy``
    :mod:`pfft.engines.lax_fft`'s (scaled at every size, where XLA's GPU FFT is not)."""
    if xp is np:
        return np.fft
    from . import lax_fft
    return lax_fft


def _complex(re, im, xp):
    """``re + i im`` of two real arrays of one dtype, in the complex dtype of their
    precision: ``lax.complex`` under JAX (which every dtype-promotion mode allows, as
    it allows no implicit real-to-complex promotion), numpy's arithmetic else."""
    if xp is np:
        return re + 1j * im
    import jax

    return jax.lax.complex(re, im)


def _twiddle(angles: np.ndarray, dtype, xp):
    """``(cos, sin)`` of ``angles`` (float64) as arrays of ``dtype``."""
    return xp.asarray(np.cos(angles), dtype=dtype), xp.asarray(np.sin(angles), dtype=dtype)


def _unnormalized(x, family: str, t: int, xp):
    """scipy's unnormalised DCT/DST of type ``t`` along the last axis of real ``x``."""
    n = x.shape[-1]
    if family == "dst":
        if t == 1:
            return _dst1(x, xp)
        sign = xp.asarray((-1.0) ** np.arange(n), dtype=x.dtype)
        if t == 2:
            return _dct2(x * sign, xp)[..., ::-1]
        return sign * (_dct3 if t == 3 else _dct4)(x[..., ::-1], xp)
    return (_dct1, _dct2, _dct3, _dct4)[t - 1](x, xp)


def _dct1(x, xp):
    n = x.shape[-1]
    if n < 2:
        raise InvalidLengthError("a DCT-I needs at least 2 points")
    ext = xp.concatenate([x, x[..., -2:0:-1]], axis=-1)          # 2(n - 1) points
    return xp.fft.rfft(ext, axis=-1).real.astype(x.dtype)


def _dst1(x, xp):
    n = x.shape[-1]
    zero = xp.zeros(x.shape[:-1] + (1,), x.dtype)
    ext = xp.concatenate([zero, x, zero, -x[..., ::-1]], axis=-1)    # 2(n + 1) points
    return (-xp.fft.rfft(ext, axis=-1).imag[..., 1:n + 1]).astype(x.dtype)


def _dct2(x, xp):
    n = x.shape[-1]
    v = _reordered(x, x.ndim - 1, xp)
    half = xp.fft.rfft(v, axis=-1)                                    # n//2 + 1 bins
    k = np.arange(n)
    full = _taken(half, np.minimum(k, n - k), x.ndim - 1, xp)         # V[n-k] = conj(V[k])
    c, s = _twiddle(np.pi * k / (2 * n), x.dtype, xp)
    s = s * xp.asarray(np.where(2 * k <= n, 1.0, -1.0), dtype=x.dtype)
    return 2 * (c * full.real + s * full.imag)                         # 2 Re(e^{-i pi k/2n} V[k])


def _dct3(x, xp):
    n = x.shape[-1]
    m = n // 2 + 1
    head = _taken(x, np.arange(m), x.ndim - 1, xp)
    tail = _taken(_mirrored(x, x.ndim - 1, xp), np.arange(m), x.ndim - 1, xp)  # x[n-k], x[n] = 0
    c, s = _twiddle(np.pi * np.arange(m) / (2 * n), x.dtype, xp)
    # V[k] = e^{+i pi k/2n} (x[k] - i x[n-k]): the DFT of Makhoul's reordering, times 2
    re = c * head + s * tail
    im = s * head - c * tail
    v = _fft_of(xp).irfft(_complex(re, im, xp), n, axis=-1) * n      # n * ifft: unnormalised
    return _interleaved(v.astype(x.dtype), x.ndim - 1, xp)


def _dct4(x, xp):
    n = x.shape[-1]
    if n % 2:
        # odd n: y[k] = 2 Re(e^{-i pi (2k+1)/4n} DFT_2n(x_j e^{-i pi j/2n})[k])
        j = np.arange(n)
        c, s = _twiddle(-np.pi * j / (2 * n), x.dtype, xp)
        z = xp.fft.fft(_complex(x * c, x * s, xp), 2 * n, axis=-1)[..., :n]
        c, s = _twiddle(-np.pi * (2 * j + 1) / (4 * n), x.dtype, xp)
        return (2 * (c * z.real - s * z.imag)).astype(x.dtype)
    # even n: one complex FFT of n/2 points of (x[2j] + i x[n-1-2j]), twiddled before
    # and after; its real parts are the even outputs, its imaginary parts the odd ones
    h = n // 2
    j = np.arange(h)
    a, b = x[..., ::2], x[..., ::-2]                                  # x[2j], x[n-1-2j]
    c, s = _twiddle(-np.pi * (4 * j + 1) / (4 * n), x.dtype, xp)
    z = xp.fft.fft(_complex(a * c - b * s, a * s + b * c, xp), axis=-1)
    c, s = _twiddle(-np.pi * j / n, x.dtype, xp)
    re = (2 * (c * z.real - s * z.imag)).astype(x.dtype)              # y[2k]
    im = (2 * (s * z.real + c * z.imag)).astype(x.dtype)              # -y[n-1-2k]
    return xp.stack([re, -im[..., ::-1]], axis=-1).reshape(x.shape)


# -- several axes at once: one multi-axis real FFT ---------------------------------------
#
# scipy's DCT-II along axis j is, for any input (both sides are linear),
# ``y[k] = W(k) V[k] + conj(W(k)) V[-k]`` with ``V`` the DFT of Makhoul's reordering
# along j and ``W(k) = exp(-i pi k / 2n)``. Along several axes the reorderings commute
# and so do the DFTs: one real FFT over all of them, then the twiddles of every axis
# but the last applied as ``A <- W A + conj(W) A[-k]`` (the conjugate pairs of the
# last, halved axis give the real result, as in one dimension). A DCT-III group runs
# the same steps backwards. DST-II and DST-III are the matching DCT with the input
# sign-alternated or reversed (see ``_unnormalized``), so one group may mix the
# families; it may not mix types II and III (the twiddles sit on the other side of
# the FFT) or hold types I and IV.


def groupable(ops) -> bool:
    """Whether ``ops`` (one per trailing axis) run as one group through
    :func:`apply_trailing`: two or three of them, all of type II or all of type III."""
    return 2 <= len(ops) <= 3 and len({op.type for op in ops}) == 1 and ops[0].type in (2, 3)


def _along(vector, ax: int, ndim: int):
    """``vector`` shaped to broadcast along axis ``ax`` of an ``ndim``-axis array."""
    shape = [1] * ndim
    shape[ax] = -1
    return vector.reshape(shape)


# The index maps below are gathers of constant index vectors (``take``): XLA fuses a
# chain of them, and the arithmetic around them, into the loop that reads the array
# once, where slices, flips and concatenations of it leave a copy per axis (a
# three-axis DCT-II through them held 6 blocks of its input, through these 3).

def _taken(a, index: np.ndarray, ax: int, xp):
    """``a[index]`` along axis ``ax``."""
    return xp.take(a, xp.asarray(index), axis=ax)


def _negated(a, ax: int, xp):
    """``a`` at index ``-k`` (mod its length) along ``ax``."""
    return _taken(a, -np.arange(a.shape[ax]) % a.shape[ax], ax, xp)


def _mirrored(a, ax: int, xp):
    """``a`` at index ``n - k`` along ``ax`` (``n``: its length), zero at ``k = 0``."""
    n = a.shape[ax]
    index = np.arange(n)
    inside = _along(xp.asarray(index > 0), ax, a.ndim)
    return xp.where(inside, _taken(a, (n - index) % n, ax, xp), xp.zeros((), a.dtype))


def _makhoul(n: int) -> np.ndarray:
    """Makhoul's reordering of ``n`` samples: the even ones, then the odd ones reversed."""
    return np.concatenate([np.arange(0, n, 2), np.arange(1, n, 2)[::-1]])


def _reordered(x, ax: int, xp):
    """Makhoul's reordering along ``ax``."""
    return _taken(x, _makhoul(x.shape[ax]), ax, xp)


def _interleaved(v, ax: int, xp):
    """The reordering undone along ``ax``: ``out[2m] = v[m]``, ``out[2m+1] = v[n-1-m]``."""
    return _taken(v, np.argsort(_makhoul(v.shape[ax])), ax, xp)


def _group_type2(x, families, xp):
    """Unnormalised DCT-II/DST-II along the trailing ``len(families)`` axes of real
    ``x``, by one multi-axis real FFT."""
    nd, d = x.ndim, len(families)
    axes = tuple(range(nd - d, nd))
    for ax, family in zip(axes, families):
        if family == "dst":
            n = x.shape[ax]
            x = x * _along(xp.asarray((-1.0) ** np.arange(n), dtype=x.dtype), ax, nd)
    v = x
    for ax in axes:
        v = _reordered(v, ax, xp)
    a = xp.fft.rfftn(v, axes=axes)
    ctype = a.dtype
    for ax in axes[:-1]:                      # A <- W A + conj(W) A[-k]
        n = x.shape[ax]
        w = np.exp(-1j * np.pi * np.arange(n) / (2 * n))
        a = (_along(xp.asarray(w, dtype=ctype), ax, nd) * a
             + _along(xp.asarray(w.conj(), dtype=ctype), ax, nd) * _negated(a, ax, xp))
    n = x.shape[-1]
    h = n // 2 + 1
    w = np.exp(-1j * np.pi * np.arange(h) / (2 * n))
    z = xp.asarray(w, dtype=ctype) * a        # the last axis: y = 2 Re z, its mirror -2 Im z
    k = np.arange(n)
    low = 2 * _taken(z.real, np.minimum(k, h - 1), nd - 1, xp)
    high = -2 * _taken(z.imag, np.clip(n - k, 0, h - 1), nd - 1, xp)
    y = xp.where(xp.asarray(k < h), low, high).astype(x.dtype)
    for ax, family in zip(axes, families):
        if family == "dst":                   # DST-II(x)[k] = DCT-II((-1)^j x_j)[n-1-k]
            y = xp.flip(y, axis=ax)
    return y


def _group_type3(x, families, xp):
    """Unnormalised DCT-III/DST-III along the trailing ``len(families)`` axes of real
    ``x``: the Hermitian half spectrum of Makhoul's reordering built from ``x``, one
    multi-axis complex-to-real FFT, the reordering undone."""
    nd, d = x.ndim, len(families)
    axes = tuple(range(nd - d, nd))
    for ax, family in zip(axes, families):
        if family == "dst":                   # DST-III(x)[k] = (-1)^k DCT-III(x[::-1])[k]
            x = xp.flip(x, axis=ax)
    real = x.dtype
    ctype = np.result_type(real, np.complex64)
    n = x.shape[-1]
    h = n // 2 + 1
    head = _taken(x, np.arange(h), nd - 1, xp)
    tail = _taken(_mirrored(x, nd - 1, xp), np.arange(h), nd - 1, xp)     # x[n-k], x[n] = 0
    w = xp.asarray(np.exp(1j * np.pi * np.arange(h) / (2 * n)), dtype=ctype)
    a = w * _complex(head, -tail, xp)
    for ax in axes[:-1]:                      # A <- E (A - i A[n-k]), A[n] = 0
        m = x.shape[ax]
        e = xp.asarray(np.exp(1j * np.pi * np.arange(m) / (2 * m)), dtype=ctype)
        a = _along(e, ax, nd) * (a - 1j * _mirrored(a, ax, xp))
    size = math.prod(x.shape[ax] for ax in axes)
    v = (_fft_of(xp).irfftn(a, s=tuple(x.shape[ax] for ax in axes), axes=axes)
         * size).astype(real)
    for ax in axes:
        v = _interleaved(v, ax, xp)
    for ax, family in zip(axes, families):
        if family == "dst":
            m = x.shape[ax]
            v = v * _along(xp.asarray((-1.0) ** np.arange(m), dtype=real), ax, nd)
    return v


def apply_trailing(x, ops, *, xp=None):
    """``ops[j]`` along axis ``x.ndim - len(ops) + j`` of ``x``, all at once through one
    multi-axis FFT (:func:`groupable` ``ops``); real or complex ``x``.

    The same map as :func:`apply_last` along each axis in turn, with the FFT of the
    whole group in one call and the pre- and post-processing of every axis in two
    passes, instead of a reorder, an FFT, a twiddle and a transpose per axis.
    """
    if xp is None:
        import jax.numpy as xp
    if not groupable(ops):
        raise ValueError(f"r2r: {[op.kind for op in ops]} cannot run as one group")
    nd, d = x.ndim, len(ops)
    if tuple(x.shape[nd - d:]) != tuple(op.n for op in ops):
        raise ValueError(f"r2r: {[op.kind for op in ops]} planned for "
                         f"{[op.n for op in ops]} points got {x.shape[nd - d:]}")
    for j, op in enumerate(ops):
        w = _weights(op.pre, op.n)
        if w is not None:
            x = x * _along(xp.asarray(w, dtype=x.dtype), nd - d + j, nd)
    group = _group_type2 if ops[0].type == 2 else _group_type3
    families = [op.family for op in ops]
    if xp.iscomplexobj(x):
        y = group(xp.stack([x.real, x.imag]), families, xp)
        y = _complex(y[0], y[1], xp)
    else:
        y = group(x, families, xp)
    for j, op in enumerate(ops):
        w = _weights(op.post, op.n, op.scale)
        if w is not None:
            y = y * _along(xp.asarray(w, dtype=y.dtype), nd - d + j, nd)
    return y
