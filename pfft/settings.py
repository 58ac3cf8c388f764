"""pfft's environment variables: every ``PFFT_*`` variable is read here, and only here.

Each is read when it takes effect, not at import: when a plan is made or traced, or
when a kernel library is loaded (the C++ libraries read no environment: pfft's loader
passes them their settings, :mod:`pfft.engines._kernels`). None changes a result
beyond rounding: the engine is a plan argument (``engine=``) whose default
``PFFT_ENGINE`` gives, the others choose threads, caches and how the same arithmetic
runs, most of them switches to measure what a technique gains.
:func:`pfft.show_config` lists those set.

The build reads a few more (``pip install .``, ``kernels/CMakeLists.txt``):
:data:`BUILD_OPTIONS`.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Variable", "VARIABLES", "BUILD_OPTIONS", "NAMES", "engine", "kernels_dir",
           "num_threads", "hugepage_advice",
           "pieces_batch", "cufft_plan_cache", "current"]


@dataclass(frozen=True)
class Variable:
    """One environment variable: its ``name``, what it sets, its value when unset
    (``default``) and when it is read (``read``)."""

    name: str
    meaning: str
    default: str
    read: str


VARIABLES = (
    Variable("PFFT_ENGINE", "the local FFT engine of plans that do not name one: "
             "auto, native, xla or cufft", "auto", "when a plan is made"),
    Variable("PFFT_NUM_THREADS", "CPU threads of a native kernel call (shared among "
             "the process's devices)", "the cores this process may use",
             "when a plan is made"),
    Variable("PFFT_KERNELS_DIR", "a folder searched first for the kernel libraries",
             "none", "when a library is loaded"),
    Variable("PFFT_NO_HUGEPAGE_ADVICE", "set: the CPU kernels give no huge-page advice "
             "on the buffers they write first (to measure what it gains)", "unset",
             "when the CPU library is loaded"),
    Variable("PFFT_PIECES_BATCH", "lines per batch of a CPU pieces pass, 1 to 64",
             "16 where the lines are contiguous, else 64", "when the CPU library is loaded"),
    Variable("PFFT_CUFFT_PLAN_CACHE", "cuFFT plans the GPU library keeps (least recently "
             "used go first)", "64", "when the GPU library is loaded"),
)

# Read by the build, not by pfft: CMake options of kernels/CMakeLists.txt (``-D...``;
# pyproject.toml takes PFFT_CUDA from the environment too)
BUILD_OPTIONS = {
    "PFFT_CPU": "build the CPU kernels (ON, OFF)",
    "PFFT_CUDA": "build the GPU kernels: AUTO (where nvcc and cuFFT are found), ON, OFF",
    "PFFT_MARCH": "one CPU library for this -march instead of the x86-64 v2/v3 pair",
    "PFFT_OUT": "where a plain CMake build writes the libraries",
    "PFFT_CUDA_MAJOR": "12 or 13: the GPU library for that CUDA major, libpfft_cuda<major>.so "
                       "(the CUDA wheel's, kernels/cuda/wheel.py)",
    "PFFT_CUDA_RUNTIME": "how the GPU library links the CUDA runtime: Static or Shared",
}

NAMES = frozenset(v.name for v in VARIABLES)


def _get(name: str) -> str:
    if name not in NAMES:  # pragma: no cover - a defect: every variable is listed
        raise KeyError(f"pfft.settings: {name} is not one of pfft's variables")
    return os.environ.get(name, "")


def _is_set(name: str) -> bool:
    """A switch: on where the variable is set to anything but the empty string."""
    return bool(_get(name))


def _positive_int(name: str) -> int | None:
    """The variable as a whole number above 0, or ``None`` (unset, or not one)."""
    try:
        value = int(_get(name))
    except ValueError:
        return None
    return value if value > 0 else None


def engine() -> str:
    """``$PFFT_ENGINE``, lower case; ``"auto"`` where it is unset or empty."""
    return (_get("PFFT_ENGINE") or "auto").lower()


def num_threads() -> int | None:
    """``$PFFT_NUM_THREADS`` (at least 1), or ``None`` where it is unset.

    Raises
    ------
    ValueError
        Where it is set but not a whole number.
    """
    text = _get("PFFT_NUM_THREADS")
    return max(1, int(text)) if text else None


def kernels_dir() -> Path | None:
    """``$PFFT_KERNELS_DIR``, or ``None`` where it is unset."""
    text = _get("PFFT_KERNELS_DIR")
    return Path(text) if text else None


def hugepage_advice() -> bool:
    """Whether the CPU kernels advise huge pages (``$PFFT_NO_HUGEPAGE_ADVICE`` unset)."""
    return not _is_set("PFFT_NO_HUGEPAGE_ADVICE")


def pieces_batch() -> int:
    """``$PFFT_PIECES_BATCH``: lines per batch of a pieces pass (the library caps it at
    64); 0, the library's default, where it is unset or not a whole number above 0."""
    return _positive_int("PFFT_PIECES_BATCH") or 0


def cufft_plan_cache() -> int | None:
    """``$PFFT_CUFFT_PLAN_CACHE``: the bound of the GPU library's cuFFT plan cache, or
    ``None`` (the library's 64) where it is unset or not a whole number above 0."""
    return _positive_int("PFFT_CUFFT_PLAN_CACHE")


def current() -> dict[str, str]:
    """The variables set (to anything but the empty string) and their values."""
    return {v.name: os.environ[v.name] for v in VARIABLES if os.environ.get(v.name)}
