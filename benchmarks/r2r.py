"""Distributed DCT-II against single-device DCTs and against pfft's own ``rfftn``.

For each size, dtype and grid, on the same real array, in the same run (median of
repeated calls after a warm-up; JAX calls jitted; pfft's ``dctn`` and ``rfftn`` called
alternately, so that both see the same state of a shared machine):

- ``pfft.dctn`` (type 2, every axis) on the grid: the input in the plan's input pencil;
- ``pfft.rfftn`` of the same array on the same grid: the target is ``dctn`` within
  1.2x of it (a DCT-II of ``n`` points is one real FFT of ``n`` points and a pass of
  twiddles, so it should cost about what ``rfftn`` costs);
- single-device ``scipy.fft.dctn`` (``workers=2``, both cores) and ``jax.scipy.fft.dctn``
  on one device: the baselines a user has today.

The relative L2 error of pfft's ``dctn`` against ``scipy.fft.dctn`` in float64 is
reported beside the times.

    python -m benchmarks r2r [--sizes 128 256] [--dtypes float64 float32] [--grids 2x2 1x4]
        [--repeats 5] [--plot] [--quick]

Writes ``r2r.{csv,json,md}`` under ``--out``.
"""
from __future__ import annotations

import argparse
import os

from .common import (add_malloc_argument, apply_malloc, figure_note, markdown_table,
                     median_time, paired_medians, parse_grids, pyplot, read_info, read_results,
                     run_header, run_info, save_plot, simulate_cpu_devices, write_doc,
                     write_results)

simulate_cpu_devices(8)

import jax  # noqa: E402
import jax.scipy.fft as jsp_fft  # noqa: E402
import numpy as np  # noqa: E402
import scipy.fft  # noqa: E402

import pfft  # noqa: E402

jax.config.update("jax_enable_x64", True)

GOAL = 1.2                # the target: dctn at most this times rfftn of the same array


def _scipy_time(a: np.ndarray, repeats: int) -> float:
    """Median seconds of ``scipy.fft.dctn`` on 2 workers, after a warm-up call (plans,
    pages)."""
    return median_time(lambda: scipy.fft.dctn(a, type=2, workers=2), repeats=repeats)


def run(n: int, dtype, grids, repeats: int, progress=print) -> list[dict]:
    shape = (n, n, n)
    a = np.random.default_rng(0).standard_normal(shape).astype(dtype)
    want = scipy.fft.dctn(a.astype(np.float64), type=2)
    one = jax.device_put(a, jax.devices()[0])
    t_scipy = _scipy_time(a, repeats)
    t_jax = median_time(jax.jit(lambda v: jsp_fft.dctn(v, type=2)), one, repeats=repeats)
    rows = []
    for grid in grids:
        name = "x".join(map(str, grid))
        progress(f"  {n}^3 {np.dtype(dtype).name} grid {name} ...")
        mesh = pfft.make_mesh(grid)
        plan = pfft.plan(shape, dtype, mesh, kinds=("dct2",) * 3)
        x = jax.device_put(a, plan.in_sharding)
        forward = jax.jit(plan.forward)
        y = np.asarray(forward(x))
        err = float(np.linalg.norm(y - want) / np.linalg.norm(want))
        del y
        rplan = pfft.plan(shape, dtype, mesh, kind="r2c")
        xr = jax.device_put(a, rplan.in_sharding)
        t_dct, t_rfft = paired_medians(forward, x, jax.jit(rplan.forward), xr, repeats)
        rows.append(dict(size=n, dtype=np.dtype(dtype).name, grid=name,
                         exchanges=plan.chain.exchanges, dctn_ms=1e3 * t_dct,
                         rfftn_ms=1e3 * t_rfft, dctn_over_rfftn=t_dct / t_rfft,
                         goal_met="yes" if t_dct / t_rfft <= GOAL else "no",
                         scipy_ms=1e3 * t_scipy, jax_scipy_ms=1e3 * t_jax,
                         dctn_over_scipy=t_dct / t_scipy, dctn_over_jax_scipy=t_dct / t_jax,
                         rel_err=err))
    return rows


COLUMNS = [("size", "N³", "{}"), ("dtype", "dtype", "{}"), ("grid", "grid", "{}"),
           ("exchanges", "exch.", "{}"), ("dctn_ms", "pfft.dctn ms", "{:.1f}"),
           ("rfftn_ms", "pfft.rfftn ms", "{:.1f}"),
           ("dctn_over_rfftn", "**dctn / rfftn**", "{:.2f}"), ("goal_met", f"≤ {GOAL}", "{}"),
           ("scipy_ms", "scipy.fft.dctn (2 workers) ms", "{:.1f}"),
           ("jax_scipy_ms", "jax.scipy.fft.dctn 1 dev ms", "{:.1f}"),
           ("dctn_over_scipy", "pfft / scipy", "{:.2f}"),
           ("dctn_over_jax_scipy", "pfft / jax.scipy", "{:.2f}"),
           ("rel_err", "rel. error vs scipy", "{:.1e}")]


def markdown(rows) -> str:
    return markdown_table(rows, COLUMNS)


def plot(rows, path: str, note: str | None = None) -> None:
    """The ratios of each row as bars: pfft's dctn over its rfftn, over scipy's and over
    jax.scipy's one-device dctn; ``note`` (machine, date, command) at the bottom."""
    plt = pyplot()

    labels = [f"{r['size']}³ {r['dtype']}\n{r['grid']}" for r in rows]
    xs = np.arange(len(rows))
    fig, ax = plt.subplots(figsize=(1.3 * len(rows) + 3, 3.8))
    for i, (key, label) in enumerate([("dctn_over_rfftn", "pfft.dctn / pfft.rfftn"),
                                      ("dctn_over_scipy", "pfft.dctn / scipy.fft.dctn"),
                                      ("dctn_over_jax_scipy", "pfft.dctn / jax.scipy dctn")]):
        ax.bar(xs + (i - 1) * 0.27, [r[key] for r in rows], 0.27, label=label)
    ax.axhline(GOAL, color="k", ls="--", lw=1, label=f"target: dctn ≤ {GOAL} rfftn")
    ax.axhline(1.0, color="grey", lw=0.8)
    ax.set_xticks(xs, labels, fontsize=8)
    ax.set_ylabel("time ratio")
    ax.legend(fontsize=7)
    print(f"plot: {save_plot(fig, path, note)}")


def _span(values) -> str:
    values = sorted(values)
    return f"{values[0]:.2f}" if len(values) == 1 else f"{values[0]:.2f}–{values[-1]:.2f}"


def doc(rows) -> str:
    """The table and, per size, the ranges of the ratios."""
    lines = []
    for n in sorted({r["size"] for r in rows}):
        mine = [r for r in rows if r["size"] == n]
        lines.append(f"- {n}³: `dctn` takes **{_span(r['dctn_over_rfftn'] for r in mine)}** "
                     f"of `rfftn`'s time, {_span(r['dctn_over_scipy'] for r in mine)} of "
                     f"`scipy.fft.dctn` on 2 workers and "
                     f"{_span(r['dctn_over_jax_scipy'] for r in mine)} of "
                     "`jax.scipy.fft.dctn` on one device.")
    return markdown(rows) + "\n\n" + "\n".join(lines)


#: the docs' tables and figures: data file in docs/data -> what report() makes of it
DOCS = {"r2r.csv": ("r2r.md", "r2r.png")}


def report(data: str, figures: str) -> list[str]:
    """Render ``data/r2r.md`` and ``figures/r2r.png`` from ``data/r2r.csv``."""
    path = os.path.join(data, "r2r.csv")
    if not os.path.exists(path):
        return []
    rows = read_results(path, text=("dtype", "grid", "goal_met"), ints=("size", "exchanges"))
    info = read_info(path)
    plot(rows, os.path.join(figures, "r2r.png"), figure_note(info))
    return [write_doc(os.path.join(data, "r2r.md"), info, doc(rows)),
            os.path.join(figures, "r2r.png")]


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m benchmarks r2r",
                                 description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[128, 256])
    ap.add_argument("--dtypes", nargs="+", default=["float64", "float32"],
                    choices=["float64", "float32"])
    ap.add_argument("--grids", nargs="+", default=["2x2", "1x4"])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="16³ float64 on 2x2, 2 repeats")
    ap.add_argument("--out", default="results")
    ap.add_argument("--plot", action="store_true", help="also draw out/r2r.png")
    add_malloc_argument(ap)
    args = ap.parse_args(argv)
    malloc = apply_malloc(args.malloc, "benchmarks.r2r", argv)
    if args.quick:
        args.sizes, args.dtypes, args.grids, args.repeats = [16], ["float64"], ["2x2"], 2
    info = run_info("benchmarks.r2r", argv,
                    f"8 simulated CPU devices, scipy {scipy.__version__}, {malloc}")
    print(run_header("r2r benchmark", info), flush=True)
    grids = parse_grids(args.grids)
    rows = [r for n in args.sizes for d in args.dtypes
            for r in run(n, np.dtype(d).type, grids, args.repeats)]
    table = markdown(rows)
    print(table)
    write_results(rows, table, args.out, "r2r", info)
    if args.plot:
        plot(rows, os.path.join(args.out, "r2r.png"))


if __name__ == "__main__":
    main()
