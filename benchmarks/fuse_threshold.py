"""Where shifting pieces pays: whole rfftn/irfftn plans with every exchange as ``p - 1``
collective permutes of pieces (``fuse_exchanges=True``) against every exchange as one
all-to-all (``False``), the two called alternately in one process.

``fuse_exchanges="auto"`` (:func:`pfft.pieces.shifts_pay`) picks between them per
exchange by the device's block size; this table is what sets its threshold
(``pfft.pieces.SHIFT_BYTES``). For each size, grid and precision: the medians of at
least ``--repeats`` alternated calls of each plan (more for fast calls:
:func:`benchmarks.common.paired_medians`), the per-device input block in KiB, and what
``"auto"`` does with the exchanges over more than 2 devices (over 2, it always shifts:
one collective either way). On the slabs (4, 8, 1x4) the plan has one exchange, so the
ratio is that exchange's; on pencils it includes the 2-device exchange too.

The rule is for JAX without swaps: where pfft can swap pieces (one collective,
:mod:`pfft.transports.swap`), ``fuse_exchanges=True`` would swap small blocks, so this
benchmark sets ``PFFT_NO_SWAPS=1`` for itself and measures shifts against the
all-to-all (``python -m benchmarks.switches`` measures swaps against shifts).

    python -m benchmarks.fuse_threshold [--sizes 64 128] [--grids 4 2x2 1x4 8 2x4 4x2]
        [--dtypes float32 float64] [--repeats 40]
"""
from __future__ import annotations

import argparse
import os

from .common import (markdown_table, paired_medians, parse_grids, run_header,
                     simulate_cpu_devices, write_results)

simulate_cpu_devices(8)
os.environ["PFFT_NO_SWAPS"] = "1"      # the shift rule's benchmark: pieces shift, never swap

import jax  # noqa: E402
import numpy as np  # noqa: E402

import pfft  # noqa: E402
from pfft.pieces import shifts_pay  # noqa: E402
from pfft.stages import Exchange  # noqa: E402

jax.config.update("jax_enable_x64", True)


def _auto_choice(plan, block_bytes: int) -> str:
    """What ``"auto"`` does with the plan's exchanges over more than 2 devices."""
    wide = [st for st in plan.chain.stages if isinstance(st, Exchange) and st.size > 2]
    if not wide:
        return "– (no exchange over > 2 devices)"
    return ", ".join(f"{st.size}: {'shifts' if shifts_pay(st, block_bytes) else 'all-to-all'}"
                     for st in wide)


def run(sizes, grids, dtypes, repeats: int, progress=print) -> list[dict]:
    rows = []
    rng = np.random.default_rng(0)
    for n in sizes:
        for grid in grids:
            mesh = pfft.make_mesh(grid)
            name = "x".join(map(str, grid))
            for dtype in dtypes:
                real = np.dtype(dtype)
                a = rng.standard_normal((n, n, n)).astype(real)
                shifts = pfft.plan(a.shape, real, mesh, kind="r2c", fuse_exchanges=True)
                gathered = pfft.plan(a.shape, real, mesh, kind="r2c", fuse_exchanges=False)
                x = jax.device_put(a, shifts.in_sharding)
                k = shifts.forward(x)
                progress(f"  {n}³ {real.name} grid {name}")
                for what, arg, plan_a, plan_b, fn in (
                        ("rfftn", x, shifts, gathered, "forward"),
                        ("irfftn", k, shifts, gathered, "backward")):
                    t_shift, t_a2a = paired_medians(jax.jit(getattr(plan_a, fn)), arg,
                                                    jax.jit(getattr(plan_b, fn)), arg, repeats)
                    block = arg.addressable_shards[0].data.nbytes
                    rows.append(dict(size=n, dtype=real.name, grid=name, transform=what,
                                     block_kib=block / 1024, shifts_ms=1e3 * t_shift,
                                     all_to_all_ms=1e3 * t_a2a, ratio=t_shift / t_a2a,
                                     auto=_auto_choice(plan_a, block)))
    return rows


COLUMNS = [("size", "N³", "{}"), ("dtype", "dtype", "{}"), ("grid", "grid", "{}"),
           ("transform", "transform", "{}"), ("block_kib", "block KiB", "{:.0f}"),
           ("shifts_ms", "shifts ms", "{:.2f}"), ("all_to_all_ms", "all-to-all ms", "{:.2f}"),
           ("ratio", "**shifts / all-to-all**", "{:.2f}"), ("auto", "auto chooses", "{}")]


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[64, 128])
    ap.add_argument("--grids", nargs="+", default=["4", "2x2", "1x4", "8", "2x4", "4x2"])
    ap.add_argument("--dtypes", nargs="+", default=["float32", "float64"])
    ap.add_argument("--repeats", type=int, default=40)
    ap.add_argument("--out", default="results")
    args = ap.parse_args(argv)
    print(run_header("fuse threshold"))
    rows = run(args.sizes, parse_grids(args.grids), args.dtypes, args.repeats)
    table = markdown_table(rows, COLUMNS)
    print(table)
    write_results(rows, table, args.out, "fuse_threshold")


if __name__ == "__main__":
    main()
