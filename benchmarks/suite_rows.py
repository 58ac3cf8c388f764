"""The rows of ``python -m benchmarks transforms`` and ``peers``: their columns
(:data:`COLUMNS`), the implementations' names, :func:`row` and :func:`read_csv`.

What :mod:`benchmarks.suite` and :mod:`benchmarks.suite_peers` measure into, and what
:mod:`benchmarks.suite_report` and :mod:`benchmarks.suite_plots` render from; it
imports none of them.
"""
from __future__ import annotations

import csv

COLUMNS = ["study", "impl", "shape", "n", "dtype", "kind", "grid", "devices", "exchanges",
           "ms", "single_ms", "ratio", "rel_err", "model_ms", "over_model", "copy_ms",
           "a2a_ms", "peak_bytes", "block_bytes", "peak_over_block", "xla_peak_bytes",
           "version", "note"]
JNP = "jnp.fft 1 device"
PFFT = "pfft"
CHAIN = "shard_map chain"
JAXDECOMP = "jaxDecomp"
#: the CSV's columns read as text (every other one as a number where it is one)
TEXT = ("study", "impl", "shape", "dtype", "kind", "grid", "a2a_ms", "version", "note")


def grid_name(grid) -> str:
    return "x".join(map(str, grid))


def parse_grid(text: str) -> tuple[int, ...]:
    return tuple(int(v) for v in text.lower().split("x"))


def row(**kw) -> dict:
    r = {c: "" for c in COLUMNS}
    r.update(kw)
    if r.get("ms") not in ("", None) and r.get("single_ms") not in ("", None):
        r["ratio"] = r["ms"] / r["single_ms"]
    if r.get("model_ms") not in ("", None) and r.get("ms") not in ("", None):
        r["over_model"] = r["ms"] / r["model_ms"]
    if r.get("peak_bytes") not in ("", None) and r.get("block_bytes"):
        r["peak_over_block"] = r["peak_bytes"] / r["block_bytes"]
    return r


def read_csv(path) -> list[dict]:
    """Rows of a CSV this benchmark wrote, numbers as numbers."""
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    for r in rows:
        for k, v in r.items():
            if k in TEXT:
                continue
            try:
                r[k] = int(v) if v.lstrip("-").isdigit() else float(v) if v else ""
            except ValueError:
                pass
    return rows
