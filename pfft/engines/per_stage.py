"""``engine="auto"`` on GPUs: the native kernels where they win, XLA's FFT elsewhere,
chosen per transform when a plan is made: by measurement where wisdom has one for the
step (:func:`pfft.tune` times each step's engines on the device and files the faster:
:func:`pfft.wisdom.stage_key`), else by the rule below.

The rule, from one-device timings on an H100 (``docs/engines.md``) and an H200
(``python -m benchmarks.real_engines`` and ``python -m benchmarks.per_device``, jax
0.11.2): a transform over the innermost axes of a block (at most three, the halved
axis last for a real one) is the layout cuFFT takes as it is, and ``lax.fft`` runs it
as one cuFFT plan (a real transform over several axes too): as fast as the native
kernel on complex data (256³–1024³ complex64: 0.94–1.02× ``jnp.fft.fftn`` either way)
and faster on real data (H200, 256³ float32: ``rfftn`` 0.276 ms against the native
kernel's 0.591, ``irfftn`` 0.491 against 0.732). A strided transform over the leading
axes (a pencil's after its last exchange) is one cuFFT launch for the native kernel,
1.5–2.8× as fast as ``lax.fft``'s transpose, transform, transpose (H200, axis 0 of
256³–512³: 0.36–0.66× ``jnp.fft.fft``). A strided transform with axes before and after
it (a middle axis), or a real one whose halved axis is not innermost, is a loop of
launches for the native kernel, one per outer index, 1.2–4.6× slower than XLA's
transposes: XLA runs it. Scaling decides a tie: ``lax.fft``'s inverse applies ``1/n``
in a pass of its own, the native kernel the factor asked for (none for 1), so an
inverse transform over the innermost axes goes to XLA only where that factor is
``1/n``, and only below :data:`pfft.engines.lax_fft.SCALE_LIMIT` output elements: from
there XLA's GPU FFT leaves inverses unscaled, ``lax_fft`` rewrites them at the cost of
a pass or two, and the native kernel, exact at every size, runs them. Under this rule
the H200's per-device programs (4–256 devices, 512³–2048³) ran within 5 % of the
better single engine in 61 of 67; of the other six (1.06–1.22×), four where a copy of
the same block varied by 18–38 % between the rows, and two inverses of 2³¹-point
blocks that XLA's FFT then left unscaled (faster, but wrong; now rewritten).
"""
from __future__ import annotations

import math

import jax.numpy as jnp

from .. import wisdom
from . import lax_fft, r2r as r2r_ops
from . import xla
from .native import NativeEngine

__all__ = ["PerStageEngine", "XlaInPlace"]


class XlaInPlace:
    """``lax.fft`` on any axes of a block, keeping numpy's axis order (a transform over
    axes that are not innermost moves them there and back): the XLA side of
    :class:`PerStageEngine`. Every call returns the unnormalised transform times
    ``scale`` (XLA's own ``1/n`` undone in the same multiply)."""

    name = "xla"
    keeps_order = True
    fuses_scale = True
    pieces = None
    prunes_dealiased = False

    def __eq__(self, other):
        return type(other) is type(self)

    def __hash__(self):
        return hash(type(self))

    def __repr__(self):
        return "XlaInPlace()"

    @staticmethod
    def natural_scale(inverse: bool, n: int) -> float:
        return 1.0

    def fft(self, x, axes, inverse, *, scale=1.0, inplace=False):
        axes = tuple(a % x.ndim for a in axes)
        n = math.prod(x.shape[a] for a in axes)
        y = (xla.fft_trailing(x, len(axes), inverse) if _trailing(axes, x.ndim)
             else xla.fft_axes(x, axes, inverse))
        return lax_fft.scaled(y, scale * (n if inverse else 1)), 1.0

    def rfft(self, x, axes, *, inverse=False, scale=1.0):
        axes = tuple(a % x.ndim for a in axes)
        y = (xla.rfft_trailing(x, len(axes)) if _trailing(axes, x.ndim)
             else jnp.fft.rfftn(x, axes=axes))    # the - sign; a real input's + sign
        return lax_fft.scaled(jnp.conj(y) if inverse else y, scale), 1.0   # is the conjugate

    def irfft(self, x, axes, n, *, inverse=True, scale=1.0):
        axes = tuple(a % x.ndim for a in axes)
        lengths = [x.shape[a] for a in axes[:-1]] + [n]
        # the - sign transform of Hermitian z is the + sign transform of conj(z)
        x = x if inverse else jnp.conj(x)
        y = (xla.irfft_trailing(x, len(axes), n) if _trailing(axes, x.ndim)
             else xla.irfft_axes(x, axes, lengths))
        return lax_fft.scaled(y, scale * math.prod(lengths)), 1.0

    def r2r(self, x, ops, axes, *, inplace=False):
        return r2r_ops.apply_along(x, ops, axes)


class PerStageEngine:
    """A plan's engine (:class:`pfft.interfaces.Engine`) that chooses, for each
    transform of a plan's program, the native GPU kernels or ``lax.fft``
    (:meth:`choose`: the measured engine where ``measured`` has the step, else the
    module's rule), keeping numpy's axis order either way. It runs no transform
    itself: the program holds the engine it chose for each (:mod:`pfft.program`);
    DCTs and DSTs go through ``lax.fft``.

    Parameters
    ----------
    nthreads, platform
        The native kernels' (:class:`~pfft.engines.native.NativeEngine`).
    device_kind
        The devices' kind: what ``measured`` is filed under.
    measured
        ``(stage key, engine name)`` pairs (:func:`pfft.wisdom.stage_choices`): the
        wisdom when the plan was made, part of the engine's identity.
    """

    name = "auto"
    keeps_order = True
    fuses_scale = True
    pieces = None
    prunes_dealiased = False

    def __init__(self, nthreads: int = 1, platform: str = "gpu", device_kind: str = "",
                 measured: tuple[tuple[str, str], ...] = ()):
        self.native = NativeEngine(nthreads, platform, fuse=False)
        self.xla = XlaInPlace()
        self.platform = platform
        self.device_kind = device_kind
        self.measured = tuple(measured)
        self._measured = dict(self.measured)

    def _key(self):
        return (type(self).__name__, self.native.nthreads, self.platform, self.device_kind,
                self.measured)

    def __eq__(self, other):
        return type(other) is type(self) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def __repr__(self):
        return (f"PerStageEngine(nthreads={self.native.nthreads}, {self.platform!r}, "
                f"{self.device_kind!r}, {len(self.measured)} measured)")

    def natural_scale(self, inverse: bool, n: int) -> float:
        return 1.0

    def choose(self, positions: tuple[int, ...], shape: tuple[int, ...], *, real: bool,
               scales_inverse: bool, scale: float, n: int, out_size: int, dtype):
        """The engine (:attr:`native` or :attr:`xla`) for a transform over block axes
        ``positions`` (``real``: the last is the halved axis) of a block of ``shape``
        into ``out_size`` elements: ``scales_inverse`` for the transforms ``lax.fft``
        scales by ``1/n`` (inverse complex, complex-to-real), ``scale`` the factor the
        transform is to apply, ``dtype`` the complex dtype of the plan. The measured
        one where wisdom has the step (:func:`pfft.wisdom.stage_key`), else the
        module's rule."""
        if self._measured:
            key = wisdom.stage_key(self.device_kind, dtype, shape, positions, real=real,
                                   inverse=scales_inverse, scale=scale)
            name = self._measured.get(key)
            if name is not None:
                return self.native if name == "native" else self.xla
        ndim, k = len(shape), len(positions)
        trailing = (0 < k <= 3 and sorted(positions) == list(range(ndim - k, ndim))
                    and positions[-1] == ndim - 1)
        unscaled_tie = not scales_inverse or (
            math.isclose(scale * n, 1.0, rel_tol=1e-12) and out_size < lax_fft.SCALE_LIMIT)
        if trailing and unscaled_tie:
            return self.xla
        return self.native if _one_launch_each(positions, shape, real) else self.xla

    def r2r(self, x, ops, axes, *, inplace=False):
        return r2r_ops.apply_along(x, ops, axes)


def _trailing(axes: tuple[int, ...], ndim: int) -> bool:
    """``axes`` are the innermost ones, in order (at most three: one ``lax.fft``)."""
    return len(axes) <= 3 and axes == tuple(range(ndim - len(axes), ndim))


def _one_launch_each(positions: tuple[int, ...], shape: tuple[int, ...], real: bool) -> bool:
    """Whether each cuFFT plan of the native GPU kernel for this transform is one launch:
    every run of adjacent axes (at most three; a real transform's halved axis on its
    own, as ``kernels/common/cufft_schedule.h`` cuts them) has nothing before it or
    nothing after it. Else the kernel loops over one of the two."""
    rest = sorted(positions[:-1] if real else positions)
    runs: list[list[int]] = []
    for a in rest:
        if runs and runs[-1][1] == a - 1 and a - runs[-1][0] < 3:
            runs[-1][1] = a
        else:
            runs.append([a, a])
    if real:
        runs.append([positions[-1], positions[-1]])
    return all(math.prod(shape[:a]) == 1 or math.prod(shape[b + 1:]) == 1 for a, b in runs)
