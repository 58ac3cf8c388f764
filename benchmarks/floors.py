"""The per-device local work against its floor (needs no JAX: it only reads rows).

:mod:`benchmarks.per_device` measures, for each configuration, the local work of the
program one device of a plan runs and its floor (the device's own FFT of the block plus
one copy of each exchange's bytes). Here are the goal it is held to (:data:`FLOOR_GOAL`)
and the verdict on it (:func:`floor_verdict`), as the table
(:func:`benchmarks.model_report.measured_table`) shows them.
"""
from __future__ import annotations

import math

__all__ = ["FLOOR_GOAL", "floor_verdict"]

FLOOR_GOAL = 1.05                         # local work / its floor, every slab and pencil row


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
