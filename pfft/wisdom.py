"""Wisdom, in FFTW's sense: what tuning measured fastest.

Two stores, filed into by :func:`pfft.tune` and :func:`pfft.mpi.tune`, written and
read as one JSON file by :func:`save_wisdom` and :func:`load_wisdom`:

- the grid of each problem (keyed by shape, dtype, kind, axes, norm, device kind and
  count, transport: :func:`wisdom_key`), which ``pfft.plan(..., tune="wisdom")``
  reads;
- the engine of each FFT step that ``engine="auto"`` chooses per step on GPUs (keyed
  by device kind, precision, block shape, transformed axes, direction and factor:
  :func:`stage_key`), which every plan made afterwards reads, as FFTW's planner
  reads its wisdom: its programs take the measured engine where a step matches.
  :func:`stage_generation` counts the changes to this store (the plan caches key on
  it, so a plan made before a change is not reused after it).

Thread-safe. It knows nothing of plans (it sits below them); tuning, which makes
plans, sits above.
"""
from __future__ import annotations

import json
import math
import threading
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from .problem import Problem

__all__ = ["wisdom_key", "record", "lookup", "entries", "stage_key", "record_stage",
           "stage_choices", "stage_entries", "stage_generation", "save_wisdom",
           "load_wisdom", "forget_wisdom", "WISDOM_VERSION", "STAGE_ENGINES"]

_WISDOM: dict[str, dict] = {}
_STAGES: dict[str, dict] = {}
_GENERATION = [0]               # changes to _STAGES so far
_LOCK = threading.Lock()
WISDOM_VERSION = 1
#: The engines a measured FFT step may be filed with.
STAGE_ENGINES = ("native", "xla")
_STAGE_FIELDS = {"device_kind", "dtype", "shape", "positions", "real", "inverse", "scale"}


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


def stage_key(device_kind: str, dtype, shape, positions, *, real: bool, inverse: bool,
              scale: float) -> str:
    """The key the measured engine of one FFT step is filed under (a readable string,
    stable across runs).

    Parameters
    ----------
    device_kind
        The device's kind (``jax.Device.device_kind``).
    dtype
        The precision: the complex dtype the plan computes in.
    shape, positions
        The block's physical shape before the step and the positions it transforms
        (a real transform's halved axis last).
    real, inverse
        A real transform (``True``) or a complex one; whether ``lax.fft`` scales it by
        ``1/n`` (an inverse complex transform, a complex-to-real one).
    scale
        The factor the step applies.
    """
    return json.dumps({"device_kind": device_kind, "dtype": np.dtype(dtype).name,
                       "shape": [int(n) for n in shape],
                       "positions": [int(a) for a in positions], "real": bool(real),
                       "inverse": bool(inverse), "scale": float(scale)}, sort_keys=True)


def record_stage(key: str, entry: dict) -> int:
    """Keep ``entry`` (the fastest ``engine``, one of :data:`STAGE_ENGINES`, and each
    engine's time) as the wisdom for the FFT step ``key`` (:func:`stage_key`).

    Returns 1 where the step's engine changed (a new step, or another engine), else
    0; only a change counts as a new :func:`stage_generation`."""
    _check_stage(key, entry, "record_stage")
    with _LOCK:
        old = _STAGES.get(key, {}).get("engine")
        _STAGES[key] = dict(entry)
        if old == entry["engine"]:
            return 0
        _GENERATION[0] += 1
        return 1


def stage_choices(device_kind: str) -> tuple[tuple[str, str], ...]:
    """The measured engine of every FFT step filed for ``device_kind``: sorted
    ``(stage key, engine name)`` pairs (an immutable value a plan's engine holds)."""
    with _LOCK:
        items = list(_STAGES.items())
    return tuple(sorted((key, entry["engine"]) for key, entry in items
                        if json.loads(key)["device_kind"] == device_kind))


def stage_entries() -> dict[str, dict]:
    """A copy of the FFT steps' wisdom (key -> fastest engine and each engine's time)."""
    with _LOCK:
        return json.loads(json.dumps(_STAGES))


def stage_generation() -> int:
    """How many times the FFT steps' wisdom has changed (recorded, loaded, forgotten)."""
    with _LOCK:
        return _GENERATION[0]


def _check_stage(key: str, entry, where: str) -> None:
    try:
        fields = json.loads(key)
    except (TypeError, ValueError):
        fields = None
    if not isinstance(fields, dict) or set(fields) != _STAGE_FIELDS or not isinstance(
            entry, dict) or entry.get("engine") not in STAGE_ENGINES:
        raise ValueError(f"{where}: bad FFT step entry {key!r}: {entry!r} (a stage_key and "
                         f"an engine among {STAGE_ENGINES})")


def save_wisdom(path) -> None:
    """Write the wisdom (grids and FFT steps) to ``path`` as JSON."""
    with _LOCK:
        data = {"pfft_wisdom": WISDOM_VERSION, "entries": _WISDOM, "stages": _STAGES}
        text = json.dumps(data, indent=1, sort_keys=True)
    with open(path, "w") as f:
        f.write(text)


def load_wisdom(path) -> int:
    """Add the wisdom saved in ``path`` (entries there replace ones here).

    Returns
    -------
    int
        How many entries were read (grids and FFT steps).
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
    stages = data.get("stages", {})          # a file of grids alone has none
    if not isinstance(stages, dict):
        raise ValueError(f"load_wisdom: {path}: 'stages' is not a mapping")
    for key, entry in stages.items():
        _check_stage(key, entry, "load_wisdom")
    with _LOCK:
        _WISDOM.update(entries)
        if stages:
            _STAGES.update(stages)
            _GENERATION[0] += 1
    return len(entries) + len(stages)


def forget_wisdom() -> None:
    """Drop all wisdom (grids and FFT steps)."""
    with _LOCK:
        _WISDOM.clear()
        if _STAGES:
            _STAGES.clear()
            _GENERATION[0] += 1
