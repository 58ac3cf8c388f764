"""Which build of the CPU kernels this processor runs: its x86-64 micro-architecture level.

The portable x86-64 builds are ``libpfft_cpu_v2.so`` (``-march=x86-64-v2``: SSE4.2,
POPCNT) and ``libpfft_cpu_v3.so`` (``-march=x86-64-v3``: AVX2, FMA, BMI2, ...). The
level is read from the kernel's CPU flags (``/proc/cpuinfo``, Linux), which list AVX
only where the operating system saves its registers.
"""
from __future__ import annotations

import platform

__all__ = ["X86_LEVELS", "is_x86_64", "cpu_flags", "x86_level", "missing_for_level"]

# the /proc/cpuinfo names of each level's features (beyond the previous level's)
X86_LEVELS = {
    2: ("cx16", "lahf_lm", "popcnt", "pni", "ssse3", "sse4_1", "sse4_2"),
    3: ("avx", "avx2", "bmi1", "bmi2", "f16c", "fma", "abm", "movbe", "xsave"),
}


def is_x86_64() -> bool:
    """True on an x86-64 processor (where the v2/v3 builds apply)."""
    return platform.machine().lower() in ("x86_64", "amd64")


def cpu_flags(cpuinfo: str = "/proc/cpuinfo") -> frozenset[str] | None:
    """The first processor's feature flags, or None where ``cpuinfo`` cannot be read."""
    try:
        with open(cpuinfo, encoding="utf-8", errors="replace") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key.strip() == "flags":
                    return frozenset(value.split())
    except OSError:
        return None
    return None


def missing_for_level(level: int, flags: frozenset[str]) -> list[str]:
    """The features ``level`` (2 or 3) needs that ``flags`` lacks."""
    need = [f for lv in sorted(X86_LEVELS) if lv <= level for f in X86_LEVELS[lv]]
    return [f for f in need if f not in flags]


def x86_level(flags: frozenset[str] | None = None) -> int:
    """The highest level (1, 2 or 3) whose features ``flags`` has (default: this CPU's).

    Where the flags cannot be read the answer is 2: the baseline build, which every
    x86-64 CPU made since 2009 runs.
    """
    flags = cpu_flags() if flags is None else flags
    if flags is None:
        return 2
    level = 1
    for lv in sorted(X86_LEVELS):
        if missing_for_level(lv, flags):
            break
        level = lv
    return level
