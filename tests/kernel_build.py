"""Whether pfft's native CPU kernels should exist here, for the tests' skip conditions.

Kernel tests may skip only where the library cannot be built: no C++ compiler, or
``PFFT_ALLOW_NO_KERNELS=1`` set on purpose. Anywhere else a missing CPU library
(``libpfft_cpu_v2.so``/``_v3.so``, built by ``pip install -e .``, which ``make test``
runs, or by ``make kernels``) is a failed build, and the tests say so. The installed
wheel itself is checked by ``tests/test_wheel.py``.
"""
from __future__ import annotations

import os
import shutil
import subprocess

from pfft.engines import native

__all__ = ["ALLOW_ENV", "cxx_compiler", "cpu_kernels_expected", "missing_kernels_reason",
           "run_checked"]

ALLOW_ENV = "PFFT_ALLOW_NO_KERNELS"


def cxx_compiler() -> str | None:
    """Path of a C++ compiler on PATH ($CXX, c++ or g++), or None."""
    names = [os.environ.get("CXX"), "c++", "g++"]
    return next((shutil.which(n) for n in names if n and shutil.which(n)), None)


def cpu_kernels_expected() -> bool:
    """True when the CPU kernels must be built: a C++ compiler is here and
    ``$PFFT_ALLOW_NO_KERNELS`` is not "1"."""
    return os.environ.get(ALLOW_ENV, "") != "1" and cxx_compiler() is not None


def missing_kernels_reason() -> str:
    """Why the kernel tests skip (only meaningful when they do)."""
    why = native.unavailable_reason("cpu")
    if os.environ.get(ALLOW_ENV, "") == "1":
        return f"native CPU engine not built ({ALLOW_ENV}=1): {why}"
    return f"native CPU engine not built and no C++ compiler to build it: {why}"


def run_checked(cmd, timeout: float = 900, **kw) -> subprocess.CompletedProcess:
    """Run ``cmd`` (a build or an install step of a wheel test), failing the test with
    the tail of its output where it fails."""
    proc = subprocess.run([str(c) for c in cmd], capture_output=True, text=True,
                          timeout=timeout, **kw)
    assert proc.returncode == 0, f"{cmd} failed:\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
    return proc
