"""The per-device local work against its floors (needs no JAX: it only reads rows).

:mod:`benchmarks.per_device` measures, for each configuration, the local work of the
program one device of a plan runs and its floor (the device's own FFT of the block plus
one copy of each exchange's bytes), and each step of that program alone against a floor
of its own (:mod:`benchmarks.stage_times`). Here are the goal they are held to
(:data:`FLOOR_GOAL`), the verdict on the whole program (:func:`floor_verdict`) and the
rule that names the step most over its own floor (:func:`worst_stage`), as the CSV and
the table (:func:`benchmarks.model_report.measured_table`) show them.
"""
from __future__ import annotations

import math

__all__ = ["FLOOR_GOAL", "STAGE_COLUMNS", "STAGE_NOTE", "floor_verdict", "worst_stage",
           "stage_figures", "worst_cell"]

FLOOR_GOAL = 1.05                         # local work / its floor, every slab and pencil row
#: the per-step columns of a per-device CSV (text: ``";"``-joined, one entry per step)
STAGE_COLUMNS = ("stage_ms", "stage_floor_ms", "stages", "worst_stage")
#: what the table's worst stage column says
STAGE_NOTE = (
    "worst stage: each step of the program timed alone against its own floor (an FFT "
    "step: the device's own transform of the same lengths, laid out contiguously; an "
    "exchange: one copy of its bytes, its stand-in copy not counted as local work; any "
    "other step: one copy of its larger side); the step most over its floor, as `k: "
    f"<what it does> <local / floor>x` (k counting the steps from 1), where that is over "
    f"{FLOOR_GOAL}× (none: no step is; – where a run timed no steps).")


def _num(v) -> float:
    return math.nan if v in ("", None) else float(v)


def _ok(r: dict) -> bool:
    return r["status"] == "ok" and not math.isnan(_num(r.get("local_ms")))


def floor_verdict(rows: list[dict], n: int = 1024, devices: int = 8) -> str:
    """The goal's verdict on the local work against its floor (at most
    :data:`FLOOR_GOAL` times it): a line per plan, kind and direction at ``n``³ on
    ``devices`` (where that was not measured: the first configuration measured), for the
    engine pfft runs by default, ``auto`` (else the engine of least local work), and a
    count over every such row. Empty where no row has a floor (an older CSV)."""
    have = [r for r in rows if _ok(r) and not math.isnan(_num(r.get("local_over_floor")))]
    best = {}
    for r in have:                  # per configuration: auto, else the least local work
        key = (r["n"], r["devices"], r["plan"], r["kind"], r["direction"])
        old = best.get(key)
        if old is None or (old["engine"] != "auto" and (r["engine"] == "auto" or _num(
                r["local_ms"]) < _num(old["local_ms"]))):
            best[key] = r
    if not best:
        return ""
    at = (n, devices) if any(k[:2] == (n, devices) for k in best) else next(iter(best))[:2]

    def say(r):
        ratio = _num(r["local_over_floor"])
        return (f"{r['plan']} {r['grid']} {r['kind']} {r['direction']} ({r['engine']}): "
                f"{_num(r['local_ms']):.3g} / {_num(r['floor_ms']):.3g} ms = **{ratio:.2f}×** "
                f"({'met' if ratio <= FLOOR_GOAL else 'not met'})")
    mine = [say(r) for k, r in best.items() if k[:2] == at]
    within = sum(_num(r["local_over_floor"]) <= FLOOR_GOAL for r in best.values())
    worst = max(best.values(), key=lambda r: _num(r["local_over_floor"]))
    return (f"**Goal: local work within {FLOOR_GOAL}× its floor** (the device's own FFT of "
            f"a block of the same size plus one copy of each exchange's bytes), every slab "
            f"and pencil row, c2c and r2c. At {at[0]}³ on {at[1]}: " + "; ".join(mine)
            + f". Over every configuration measured: {within} of {len(best)} within "
            f"{FLOOR_GOAL}×; the farthest {_num(worst['local_over_floor']):.2f}× "
            f"({worst['n']}³ on {worst['devices']}, {worst['plan']} {worst['kind']} "
            f"{worst['direction']}, {worst['engine']}).")


def worst_stage(stages: list[str], local_ms: list[float], floor_ms: list[float],
                goal: float = FLOOR_GOAL) -> str:
    """The step whose local time is the most over its floor, as ``"k: <description>
    <ratio>x"`` (``k`` counted from 1), where that ratio is over ``goal``; else ``""``.

    ``stages`` are the steps' descriptions, ``local_ms`` and ``floor_ms`` their times in
    order; a step whose time or floor was not measured (NaN) or is not positive is left
    out; of equal ratios, the first step's.

    Raises
    ------
    ValueError
        Where the three lists are not one entry per step.
    """
    if not len(stages) == len(local_ms) == len(floor_ms):
        raise ValueError(f"{len(stages)} steps, {len(local_ms)} times and {len(floor_ms)} "
                         f"floors")
    ratios = [(t / f, k) for k, (t, f) in enumerate(zip(local_ms, floor_ms))
              if t > 0 and f > 0]               # NaN compares false: left out
    if not ratios:
        return ""
    ratio, k = max(ratios, key=lambda rk: rk[0])      # the first of equal ratios
    return f"{k + 1}: {stages[k]} {ratio:.2f}x" if ratio > goal else ""


def stage_figures(text: str) -> list[float]:
    """The per-step figures of a ``stage_ms`` or ``stage_floor_ms`` cell (``";"``-joined),
    NaN for a step whose figure was not measured (its mark: ``OOM``, ``error``)."""
    def figure(v: str) -> float:
        try:
            return float(v)
        except ValueError:
            return math.nan
    return [figure(v) for v in text.split(";")] if text else []


def worst_cell(r: dict):
    """The table's worst stage of row ``r``: its ``worst_stage``; "none" where every
    step and its floor were timed and none is over the goal; NaN (shown "–") where they
    were not all timed (a step that failed, a CSV from before the per-step columns)."""
    if r.get("worst_stage"):
        return r["worst_stage"].replace("|", "\\|")
    times = stage_figures(r.get("stage_ms") or "") + stage_figures(r.get("stage_floor_ms") or "")
    return "none" if times and not any(math.isnan(t) for t in times) else math.nan
