"""Choosing the local FFT engine: pfft's own FFI kernels ("native") or ``lax.fft`` ("xla").

``$PFFT_ENGINE`` (or the ``name`` argument) forces one: "native", "xla", or
"auto" (the default: native where its library is built for the platform, else
xla). "cufft" is the native engine on GPUs by its library's name; asked for on CPU
devices it warns and chooses as "auto" does. On GPUs "auto" is a
:class:`PerStageEngine`: the native kernels for strided transforms over the leading axes,
``lax.fft`` for the others. Asking for "native" where it is not built falls back to xla
with a warning that says why; so does "auto", once per process, with how to get the
kernels. The engine chosen is logged on the ``pfft`` logger. A plan runs the engine
object :func:`engine_for_plan` gives (:class:`pfft.interfaces.Engine`).
"""
from __future__ import annotations

import functools
import logging
import warnings

import jax

from .. import settings, wisdom
from ..interfaces import Engine
from . import native, xla
from .native import NativeEngine
from .per_stage import PerStageEngine

__all__ = ["engine_for_plan", "per_stage_engine", "NativeEngine", "PerStageEngine", "ENGINES"]

ENGINES = ("auto", "native", "xla", "cufft")
_log = logging.getLogger("pfft")


@functools.cache
def _choose(name: str, platform: str) -> str:
    """"native" or "xla": what ``name`` runs on ``platform`` (the native engine where
    its library is built, else XLA's FFT, with a warning that says why)."""
    if name == "xla":
        _log.info("pfft local FFT engine: xla (lax.fft), as asked")
        return "xla"
    if native.available(platform):
        _log.info("pfft local FFT engine: native (%s)", "cuFFT" if platform != "cpu" else "DUCC")
        return "native"
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
    return "xla"


def _cufft_name(name: str, platform: str) -> str:
    """"cufft" is "native" on GPUs; on CPUs it warns and means "auto"."""
    if name != "cufft":
        return name
    if platform == "cpu":
        warnings.warn("engine='cufft' needs GPU devices and these are CPUs: choosing as "
                      "engine='auto' does", RuntimeWarning, stacklevel=4)
        return "auto"
    return "native"


def engine_for_plan(name: str | None, devices, fuse: bool | str = "auto") -> Engine:
    """The engine a plan over ``devices`` runs: :data:`pfft.engines.xla.ENGINE`, a
    :class:`NativeEngine` bound to a thread share (``fuse``: exchanges as pieces
    written by the FFTs, where the kernels can), or on GPUs for ``"auto"`` a
    :class:`PerStageEngine`.

    ``"auto"`` picks native on CPU where its library is built; on GPUs, where the cuFFT
    kernels are built, the per-stage engine (native for strided transforms over the
    leading axes, XLA's FFT for the others), else xla.
    """
    devices = list(devices) if devices is not None else [jax.devices()[0]]
    platform = "cpu" if devices[0].platform == "cpu" else "gpu"
    name = (name or settings.engine()).lower()
    if name not in ENGINES:
        raise ValueError(f"engine must be one of {ENGINES}, got {name!r}")
    name = _cufft_name(name, platform)
    if _choose(name, platform) == "xla":
        return xla.ENGINE
    if name == "auto" and platform != "cpu":
        return per_stage_engine(devices, platform)
    local = sum(1 for d in devices if d.process_index == jax.process_index()) or 1
    return NativeEngine(max(1, native.num_threads() // local), platform, fuse)


def per_stage_engine(devices, platform: str = "gpu") -> PerStageEngine:
    """``engine="auto"``'s engine on GPUs: a :class:`PerStageEngine` for ``devices``'
    kind holding what wisdom now says of its FFT steps (:func:`pfft.tune`)."""
    kind = devices[0].device_kind
    return PerStageEngine(1, platform, kind, wisdom.stage_choices(kind))
