"""The jax versions pfft is tested with, in one place: the oldest it supports
(``pyproject.toml``'s lower bound, pinned by CI's oldest end in ``.ci/oldest.txt``) and
the newest CI has run the whole suite on. ``python -m pfft`` says whether the jax in
use lies between them."""
from __future__ import annotations

import re

__all__ = ["TESTED_JAX", "release", "jax_is_tested", "jax_range_text"]

TESTED_JAX = ("0.10.2", "0.12.0.1")


def release(version: str) -> tuple[int, ...]:
    """The release numbers of a version string: ``"0.12.0.1"`` -> ``(0, 12, 0, 1)``,
    ``"0.13.0.dev20270101"`` -> ``(0, 13, 0)``."""
    match = re.match(r"\d+(?:\.\d+)*", version.strip())
    if match is None:
        raise ValueError(f"not a version: {version!r}")
    return tuple(int(part) for part in match.group().split("."))


def jax_is_tested(version: str) -> bool:
    """Whether jax ``version`` lies inside :data:`TESTED_JAX` (ends included)."""
    oldest, newest = (release(v) for v in TESTED_JAX)
    return oldest <= release(version) <= newest


def jax_range_text(version: str) -> str:
    """One line for a report: ``version`` and where it lies against the tested range."""
    where = "inside" if jax_is_tested(version) else "OUTSIDE"
    return f"jax {version}: {where} the tested range {TESTED_JAX[0]} to {TESTED_JAX[1]}"
