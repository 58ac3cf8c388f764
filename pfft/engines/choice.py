"""Choosing the local FFT engine: pfft's own FFI kernels ("native") or ``lax.fft`` ("xla").

``$PFFT_ENGINE`` (or the ``name`` argument) forces one: "native", "xla", or
"auto" (the default: native where its library is built for the platform, else
xla). "cufft" is the native engine on GPUs by its library's name; asked for on CPU
devices it warns and chooses as "auto" does. On GPUs "auto" is a
:class:`PerStageEngine`: the native kernels for strided transforms over the leading axes,
``lax.fft`` for the others. Asking for "native" where it is not built falls back to xla
with a warning that says why; so does "auto", once per process, with how to get the
kernels. The engine chosen is logged on the ``pfft`` logger.
"""
from __future__ import annotations

import contextlib
import functools
import logging
import math
import threading
import warnings
from types import ModuleType

import jax
import jax.numpy as jnp

from .. import settings
from ..interfaces import EngineCapabilities
from . import native, xla

__all__ = ["get_engine", "engine_for_plan", "BoundEngine", "PerStageEngine", "ENGINES"]

ENGINES = ("auto", "native", "xla", "cufft")
_log = logging.getLogger("pfft")


@functools.cache
def _choose(name: str, platform: str) -> ModuleType:
    if name == "xla":
        _log.info("pfft local FFT engine: xla (lax.fft), as asked")
        return xla
    if native.available(platform):
        _log.info("pfft local FFT engine: native (%s)", "cuFFT" if platform != "cpu" else "DUCC")
        return native
    reason = native.unavailable_reason(platform)
    msg = f"pfft local FFT engine: xla (lax.fft); the native engine is unavailable: {reason}"
    if name == "native":
        warnings.warn(msg, RuntimeWarning, stacklevel=3)
    else:
        # "auto": the kernels are missing, so FFTs run slower (on CPUs about 2x, on GPUs
        # the strided ones); said once per process (this choice is cached),
        # PFFT_ENGINE=xla to choose it
        slower = ("its FFTs with lax.fft, about 2x slower on CPUs" if platform == "cpu" else
                  "every FFT with lax.fft, strided ones (a pencil's) about 2x slower")
        warnings.warn(f"{msg}. pfft runs {slower}. Set PFFT_ENGINE=xla to choose that "
                      "without this warning.", RuntimeWarning, stacklevel=3)
    return xla


def get_engine(name: str | None = None, platform: str | None = None) -> ModuleType:
    """The engine module to run local FFTs with.

    Parameters
    ----------
    name : {"auto", "native", "xla", "cufft"}, optional
        Defaults to ``$PFFT_ENGINE``, else "auto".
    platform : str, optional
        "cpu" or "gpu"; defaults to JAX's default backend.

    Returns
    -------
    module
        :mod:`pfft.engines.native` (``fft``/``rfft``/``irfft`` on any axes: its
        ``capabilities.strided``) or :mod:`pfft.engines.xla` (``fft_trailing``,
        ``rfft_trailing``, ``irfft_trailing`` on the innermost axes); both provide
        ``natural_scale`` (:class:`pfft.interfaces.Engine`). Plans use
        :func:`engine_for_plan`.
    """
    name = (name or settings.engine()).lower()
    if name not in ENGINES:
        raise ValueError(f"unknown engine {name!r}; choose one of {ENGINES}")
    platform = "cpu" if (platform or jax.default_backend()) == "cpu" else "gpu"
    return _choose(_cufft_name(name, platform), platform)


def _cufft_name(name: str, platform: str) -> str:
    """"cufft" is "native" on GPUs; on CPUs it warns and means "auto"."""
    if name != "cufft":
        return name
    if platform == "cpu":
        warnings.warn("engine='cufft' needs GPU devices and these are CPUs: choosing as "
                      "engine='auto' does", RuntimeWarning, stacklevel=4)
        return "auto"
    return "native"


class BoundEngine:
    """An engine with its thread count fixed: the executor's view of a native engine.

    Simulated devices in one process call the kernel at the same time, so each gets
    a share of the cores (``cores // local devices``, at least one). ``fuse``: let the
    CPU kernels write and read the pieces exchanges move (:mod:`pfft.pieces`):
    ``True`` for every exchange, ``"auto"`` for every exchange the transport swaps,
    else where the block is large enough to pay for the extra collectives of shifts
    (:func:`pfft.pieces.as_pieces`); ``False``: the same chains run with separate
    all-to-alls. A value: equal settings compare (and hash) equal, so a plan's
    description can hold it.
    """

    def __init__(self, module: ModuleType, nthreads: int, platform: str = "cpu",
                 fuse: bool | str = "auto"):
        self.module, self.nthreads, self.name = module, nthreads, "native"
        self.platform, self.fuse = platform, fuse
        self.natural_scale = module.natural_scale
        self.capabilities = EngineCapabilities(
            strided=True,
            # DCTs and DSTs by DUCC: CPU kernels only (elsewhere through lax.fft)
            r2r=module.r2r_available(platform),
            # FFTs that write (and read) the pieces an exchange moves: CPU kernels only
            pieces=fuse is not False and module.pieces_available(platform),
            # FFTs on rows of a larger block where they lie: both platforms' kernels
            rows=module.available(platform))

    def _key(self):
        return (type(self).__name__, self.module.__name__, self.nthreads, self.platform,
                self.fuse)

    def __eq__(self, other):
        return isinstance(other, BoundEngine) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def fft_pieces(self, pieces, axis, n, **kw):
        return self.module.fft_pieces(pieces, axis, n, nthreads=self.nthreads, **kw)

    def writes_in_place(self, *args) -> bool:
        return self.module.writes_in_place(*args)

    def fft_pieces_pair(self, pieces, axes, ns, **kw):
        return self.module.fft_pieces_pair(pieces, axes, ns, nthreads=self.nthreads, **kw)

    def fft(self, x, axes, inverse, *, scale=1.0, inplace=False, prefer_inplace=False,
            shape=None):
        return self.module.fft(x, axes, inverse, scale=scale, inplace=inplace,
                               nthreads=self.nthreads, shape=shape)

    def rfft(self, x, axes, *, inverse=False, scale=1.0):
        return self.module.rfft(x, axes, inverse=inverse, scale=scale, nthreads=self.nthreads)

    def rows_for(self, positions, shape, axis) -> bool:
        """Whether a complex transform over block axes ``positions`` of a block of
        ``shape`` runs on rows of ``axis`` where they lie (``fft_of_rows``,
        ``fft_into_rows``)."""
        return self.capabilities.rows and self.module.rows_fit(positions, axis, shape)

    def fft_of_rows(self, x, axes, inverse, *, axis, start, stop, scale=1.0, after=()):
        return self.module.fft_of_rows(x, axes, inverse, axis=axis, start=start, stop=stop,
                                       scale=scale, nthreads=self.nthreads, after=after)

    def fft_into_rows(self, into, x, axes, inverse, *, axis, start, shape=None, scale=1.0,
                      after=()):
        return self.module.fft_into_rows(into, x, axes, inverse, axis=axis, start=start,
                                         shape=shape, scale=scale, nthreads=self.nthreads,
                                         after=after)

    def take_chunks(self, x, axis, chunks, start, stop, *, shape=None, after=()):
        return self.module.take_chunks(x, axis, chunks, start, stop, shape=shape, after=after)

    def put_chunks(self, into, x, axis, chunks, start, *, shape=None, after=()):
        return self.module.put_chunks(into, x, axis, chunks, start, shape=shape, after=after)

    def r2r(self, x, op, axis):
        return self.module.r2r(x, op, axis, nthreads=self.nthreads)

    def irfft(self, x, axes, n, *, inverse=True, scale=1.0):
        return self.module.irfft(x, axes, n, inverse=inverse, scale=scale,
                                 nthreads=self.nthreads)


class PerStageEngine(BoundEngine):
    """The native GPU engine where it wins, XLA's FFT elsewhere, chosen per transform.

    Measured on an H100 (docs/engines.md): a transform over the innermost axes of a block
    (at most three, the halved axis last for a real one) is the layout cuFFT takes as it
    is, and ``lax.fft`` runs it as one cuFFT plan (a real transform over several axes
    too), as fast as the native kernel on complex data and faster on real data. A
    strided transform over the leading axes (a pencil's after its last exchange) is one
    cuFFT launch for the native kernel, about twice as fast as ``lax.fft``'s transpose,
    transform, transpose. A strided transform with axes before and after it (a middle
    axis) is a loop of launches for the native kernel, one per outer index, slower than
    XLA's transposes: XLA runs it. Scaling decides a tie: ``lax.fft``'s inverse applies
    ``1/n`` in a pass of its own, the native kernel the factor asked for (none for 1), so
    an inverse transform over the innermost axes goes to XLA only where that factor is
    ``1/n``. Where the plan may overwrite its input (``overwrite_x``), a tie goes to
    the native kernel, which transforms in place (``lax.fft`` writes a new buffer).

    Like the native engine, every call returns the unnormalised transform times
    ``scale`` (:attr:`natural_scale` is 1) and keeps numpy's axis order (strided).
    :meth:`recording` lists the engine each call went to (a plan's printout).
    """

    def __init__(self, module: ModuleType, nthreads: int, platform: str = "gpu",
                 fuse: bool | str = "auto"):
        super().__init__(module, nthreads, platform, fuse)
        self.name = "auto"
        self._recording = threading.local()     # a list while this thread records

    def route(self, positions: tuple[int, ...], shape: tuple[int, ...], *, real: bool,
              scales_inverse: bool, scale: float, n: int,
              in_place: bool = False) -> ModuleType:
        """The engine for a transform over block axes ``positions`` (``real``: the last
        is the halved axis) of a block of ``shape``: ``scales_inverse`` for the
        transforms ``lax.fft`` scales by ``1/n`` (inverse complex, complex-to-real);
        ``in_place``: the transform should run in its input's buffer. Recorded
        (:meth:`recording`)."""
        ndim, k = len(shape), len(positions)
        trailing = (0 < k <= 3 and sorted(positions) == list(range(ndim - k, ndim))
                    and positions[-1] == ndim - 1)
        unscaled_tie = not scales_inverse or math.isclose(scale * n, 1.0, rel_tol=1e-12)
        if trailing and unscaled_tie and not in_place:
            engine = xla
        else:
            engine = self.module if _one_launch_each(positions, shape, real) else xla
        self._record(engine)
        return engine

    @contextlib.contextmanager
    def recording(self):
        """A list of the engine names ("xla" or "native") this thread's transforms are
        routed to inside the ``with`` block (while a plan is traced)."""
        self._recording.log = log = []
        try:
            yield log
        finally:
            self._recording.log = None

    def fft(self, x, axes, inverse, *, scale=1.0, inplace=False, prefer_inplace=False,
            shape=None):
        seen = tuple(x.shape if shape is None else shape)   # the block the axes count in
        axes = tuple(a % len(seen) for a in axes)
        n = math.prod(seen[a] for a in axes)
        if self.route(axes, seen, real=False, scales_inverse=inverse, scale=scale, n=n,
                      in_place=inplace and prefer_inplace) is not xla:
            return super().fft(x, axes, inverse, scale=scale, inplace=inplace, shape=shape)
        v = x.reshape(seen)
        y = (xla.fft_trailing(v, len(axes), inverse) if _trailing(axes, v.ndim)
             else (jnp.fft.ifftn if inverse else jnp.fft.fftn)(v, axes=axes))
        return _scaled(y, scale * (n if inverse else 1)).reshape(x.shape)

    def rows_for(self, positions, shape, axis) -> bool:
        """As the native engine's, where its kernel runs each plan in one launch: then
        the rows transform replaces a copy of the rows (a cut or a join) and a
        transform that, even over the innermost axes, is no faster by ``lax.fft``."""
        positions = tuple(a % len(shape) for a in positions)
        return (super().rows_for(positions, shape, axis)
                and _one_launch_each(positions, tuple(shape), False))

    def _record(self, engine) -> None:
        log = getattr(self._recording, "log", None)
        if log is not None:
            log.append("xla" if engine is xla else "native")

    def fft_of_rows(self, x, axes, inverse, *, axis, start, stop, scale=1.0, after=()):
        self._record(self.module)
        return super().fft_of_rows(x, axes, inverse, axis=axis, start=start, stop=stop,
                                   scale=scale, after=after)

    def fft_into_rows(self, into, x, axes, inverse, *, axis, start, shape=None, scale=1.0,
                      after=()):
        self._record(self.module)
        return super().fft_into_rows(into, x, axes, inverse, axis=axis, start=start,
                                     shape=shape, scale=scale, after=after)

    def rfft(self, x, axes, *, inverse=False, scale=1.0):
        axes = tuple(a % x.ndim for a in axes)
        n = math.prod(x.shape[a] for a in axes)
        if self.route(axes, x.shape, real=True, scales_inverse=False, scale=scale,
                      n=n) is not xla:
            return super().rfft(x, axes, inverse=inverse, scale=scale)
        y = (xla.rfft_trailing(x, len(axes)) if _trailing(axes, x.ndim)
             else jnp.fft.rfftn(x, axes=axes))    # the - sign; a real input's + sign
        return _scaled(jnp.conj(y) if inverse else y, scale)   # is the conjugate

    def irfft(self, x, axes, n, *, inverse=True, scale=1.0):
        axes = tuple(a % x.ndim for a in axes)
        lengths = [x.shape[a] for a in axes[:-1]] + [n]
        points = math.prod(lengths)
        if self.route(axes, x.shape, real=True, scales_inverse=True, scale=scale,
                      n=points) is not xla:
            return super().irfft(x, axes, n, inverse=inverse, scale=scale)
        # the - sign transform of Hermitian z is the + sign transform of conj(z)
        x = x if inverse else jnp.conj(x)
        y = (xla.irfft_trailing(x, len(axes), n) if _trailing(axes, x.ndim)
             else jnp.fft.irfftn(x, lengths, axes=axes))
        return _scaled(y, scale * points)


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


def _scaled(y, scale: float):
    return y if scale == 1.0 else y * jnp.asarray(scale, y.real.dtype)


def engine_for_plan(name: str | None, devices,
                    fuse: bool | str = "auto") -> ModuleType | BoundEngine:
    """The engine a plan over ``devices`` runs: xla, or native bound to a thread share
    (``fuse``: exchanges as pieces written by the FFTs, where the kernels can).

    ``"auto"`` picks native on CPU where its library is built; on GPUs, where the cuFFT
    kernels are built, a :class:`PerStageEngine` (native for strided transforms over the
    leading axes, XLA's FFT for the others), else xla.
    """
    devices = list(devices) if devices is not None else [jax.devices()[0]]
    platform = "cpu" if devices[0].platform == "cpu" else "gpu"
    name = (name or settings.engine()).lower()
    if name not in ENGINES:
        raise ValueError(f"engine must be one of {ENGINES}, got {name!r}")
    name = _cufft_name(name, platform)
    module = _choose(name, platform)
    if module is xla:
        return xla
    if name == "auto" and platform != "cpu":
        return PerStageEngine(module, 1, platform, fuse)
    local = sum(1 for d in devices if d.process_index == jax.process_index()) or 1
    return BoundEngine(module, max(1, native.num_threads() // local), platform, fuse)
