"""Wisdom, in FFTW's sense: the grid that tuning found fastest for each problem.

A store of tuning results, keyed by problem (shape, dtype, kind, axes, norm, device
kind and count, transport), that :func:`pfft.tune` and :func:`pfft.mpi.tune` file
into and ``pfft.plan(..., tune="wisdom")`` reads; :func:`save_wisdom` and
:func:`load_wisdom` write and read it as JSON. Thread-safe. It knows nothing of plans
(it sits below them); tuning, which makes plans, sits above.
"""
from __future__ import annotations

import json
import math
import threading
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from .problem import Problem

__all__ = ["wisdom_key", "record", "lookup", "entries", "save_wisdom", "load_wisdom",
           "forget_wisdom", "WISDOM_VERSION"]

_WISDOM: dict[str, dict] = {}
_LOCK = threading.Lock()
WISDOM_VERSION = 1


def wisdom_key(problem: Problem, devices, transport: str = "xla") -> str:
    """The key a tuning result for ``problem`` on ``devices`` is filed under (a
    readable string, stable across runs): its shape, dtype, kind, axes and norm, and
    the device kind and count.

    ``transport``: ``"xla"`` (one process's devices) or ``"mpi"`` (one rank per
    device, :func:`pfft.mpi.tune`); the best grid can differ between them. A
    real-to-real or mixed problem's ``kinds`` and ``orthogonalize`` are part of the
    key only where it has kinds, so older wisdom keeps its keys.
    """
    devices = list(devices)
    key = {"shape": [int(n) for n in problem.shape], "dtype": np.dtype(problem.dtype).name,
           "kind": problem.kind, "axes": [int(a) for a in problem.axes], "norm": problem.norm,
           "device_kind": devices[0].device_kind, "devices": len(devices)}
    if transport != "xla":
        key["transport"] = transport
    if problem.kinds is not None:
        key["kinds"] = list(problem.kinds)
        key["orthogonalize"] = problem.orthogonalize
    return json.dumps(key, sort_keys=True)


def record(key: str, entry: dict) -> None:
    """Keep ``entry`` (the best ``grid`` and ``spectrum``, its time and every
    candidate's) as the wisdom for ``key`` (:func:`wisdom_key`)."""
    with _LOCK:
        _WISDOM[key] = dict(entry)


def entries() -> dict[str, dict]:
    """A copy of the wisdom gathered so far (key -> best grid, spectrum and timings)."""
    with _LOCK:
        return json.loads(json.dumps(_WISDOM))


def lookup(problem: Problem, devices, transport: str = "xla") -> dict | None:
    """The wisdom entry for ``problem`` on these devices (:func:`wisdom_key`), or
    ``None``."""
    key = wisdom_key(problem, devices, transport)
    with _LOCK:
        entry = _WISDOM.get(key)
    return None if entry is None else dict(entry)


def save_wisdom(path) -> None:
    """Write the wisdom to ``path`` as JSON."""
    with _LOCK:
        data = {"pfft_wisdom": WISDOM_VERSION, "entries": _WISDOM}
        text = json.dumps(data, indent=1, sort_keys=True)
    with open(path, "w") as f:
        f.write(text)


def load_wisdom(path) -> int:
    """Add the wisdom saved in ``path`` (entries there replace ones here).

    Returns
    -------
    int
        How many entries were read.
    """
    with open(path) as f:
        data = json.load(f)
    if not isinstance(data, dict) or data.get("pfft_wisdom") != WISDOM_VERSION:
        raise ValueError(f"load_wisdom: {path} is not a pfft wisdom file (version "
                         f"{WISDOM_VERSION})")
    entries = data["entries"]
    for key, entry in entries.items():
        json.loads(key)
        if not isinstance(entry.get("grid"), list) or not all(
                isinstance(g, int) and g >= 1 for g in entry["grid"]) or \
                math.prod(entry["grid"]) != json.loads(key)["devices"]:
            raise ValueError(f"load_wisdom: bad entry for {key}: {entry!r}")
    with _LOCK:
        _WISDOM.update(entries)
    return len(entries)


def forget_wisdom() -> None:
    """Drop all wisdom."""
    with _LOCK:
        _WISDOM.clear()
