"""Real fields as users run them: rfftn, irfftn, round trips and a whole time step.

Issue 15's report. For each size, precision and device grid, in one run (median of
repeated calls after a warm-up, each function jitted once; pfft's call and the
one-device call alternate, the time step's too, and fast calls are repeated until
about a second is measured), every figure is a ratio to **the same operation on one
device** (``jnp.fft``) measured in the same process:

- ``rfftn`` and ``irfftn`` with numpy's spectrum layout, and with ``spectrum="padded"``;
- a jitted round trip: three ``irfftn(rfftn(x))`` in a row;
- a whole time step: one RK4 step of the pseudo-spectral Navier–Stokes solver of
  :mod:`benchmarks.apps.navier_stokes` (9 real transforms of a 3-component field per
  stage, 36 per step), with pfft's plans against the same solver on ``jnp.fft``;
- the **floor**: DUCC's own r2c (c2r) of the whole array on the machine's cores
  (``ducc0.fft``, the library both engines wrap; absent without ``ducc0``) plus one
  copy pass of the spectrum over the grid per exchange of the plan, as a ratio to
  one-device ``jnp.fft.rfftn`` (``irfftn``), each part timed alternately with that
  call: what a distributed transform cannot beat on this machine unless it makes
  fewer passes over memory than DUCC does. The padded spectrum's floor counts the
  padded plan's exchanges; a round trip's weighs the forward and backward floors by
  one device's times;
- the **page faults** a call takes on each side (``rfftn``, the round trips and the
  time step): the blocks it maps anew. The run starts under a steady glibc malloc setting
  (``--malloc steady``, :data:`benchmarks.common.STEADY_MALLOC`), where neither side
  maps blocks anew once warm; ``--malloc default`` measures the process as it comes.

    python -m benchmarks.real_workloads [--sizes 64 128 256] [--dtypes float32 float64]
        [--grids 4 2x2 1x4 8 2x4 4x2] [--step-sizes 64 128] [--repeats 5] [--plot]
        [--malloc steady|default]
    python -m benchmarks.real_workloads --from-csv results/real_workloads.csv --plot
"""
from __future__ import annotations

import argparse
import os
import sys

from .common import (ROUND_TRIPS, add_malloc_argument, apply_malloc, faults_per_call,
                     jitted_round_trips, markdown_table, paired_medians,
                     parse_grids, read_results, run_header, save_plot, simulate_cpu_devices,
                     write_results)

simulate_cpu_devices(8)

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import pfft  # noqa: E402

from .apps import navier_stokes as ns  # noqa: E402

jax.config.update("jax_enable_x64", True)

GRIDS = ["4", "2x2", "1x4", "8", "2x4", "4x2"]


class _HostCall:
    """A host (numpy) call as :func:`benchmarks.common.paired_medians` times it: it is
    done when it returns."""

    def __init__(self, fn):
        self.fn = fn

    def __call__(self, arg):
        self.fn(arg)
        return self

    def block_until_ready(self):
        return self


def _ducc_ratios(x: np.ndarray, k: np.ndarray, fwd1, one, bwd1, k1,
                 repeats: int) -> tuple[float, float]:
    """DUCC's r2c and c2r of the whole array on all cores, each over one device's
    ``rfftn`` (``irfftn``), the two alternated (nan, nan without ducc0)."""
    try:
        import ducc0
    except ImportError:
        return float("nan"), float("nan")
    threads = os.cpu_count() or 1
    r2c = _HostCall(lambda a: ducc0.fft.r2c(a, nthreads=threads))
    c2r = _HostCall(lambda a: ducc0.fft.c2r(a, axes=(0, 1, 2), lastsize=x.shape[-1],
                                            forward=False, nthreads=threads))
    t_r2c, t_one = paired_medians(r2c, x, fwd1, one, repeats)
    t_c2r, t_one_back = paired_medians(c2r, k, bwd1, k1, repeats)
    return t_r2c / t_one, t_c2r / t_one_back


def _floors(r2c: float, c2r: float, copy: list[float], exchanges: int,
            padded_exchanges: int, base: dict) -> dict:
    """Each workload's floor, as a ratio to one device: DUCC's whole transform
    (``r2c``, ``c2r``) plus one copy pass of the spectrum (``copy``: forward's and
    backward's, each over the one-device call it was paired with) per exchange of the
    plan. A round trip's floor weighs the two by one device's ``rfftn`` and ``irfftn``
    times (``base``)."""
    fwd, bwd = base["rfftn"], base["irfftn"]
    floor_rfftn = r2c + exchanges * copy[0]
    floor_irfftn = c2r + exchanges * copy[1]
    return dict(floor_rfftn=floor_rfftn, floor_irfftn=floor_irfftn,
                floor_padded_rfftn=r2c + padded_exchanges * copy[0],
                floor_padded_irfftn=c2r + padded_exchanges * copy[1],
                floor_round_trip=(floor_rfftn * fwd + floor_irfftn * bwd) / (fwd + bwd))


class _Step:
    """One jitted RK4 step of the Navier–Stokes solver and its initial state."""

    def __init__(self, transforms: ns.Transforms, n: int, dtype):
        self.state = transforms.forward(transforms.put(ns.taylor_green(transforms.points,
                                                                       dtype)))
        self.step = jax.jit(ns.rk4_step(ns.rhs_function(transforms, n, nu=1 / 1600), 1e-3))


def measure(n: int, dtype, grids, repeats: int, with_step: bool, progress=print):
    """Rows of one size and precision (one per grid)."""
    rng = np.random.default_rng(0)
    real = rng.standard_normal((n, n, n)).astype(dtype)
    name = np.dtype(dtype).name
    progress(f"{n}^3 {name}: one device")
    one = jax.device_put(real, jax.devices()[0])
    fwd1 = jax.jit(jnp.fft.rfftn)
    bwd1 = jax.jit(lambda k: jnp.fft.irfftn(k, s=real.shape))
    trips1 = jitted_round_trips(jnp.fft.rfftn, lambda k: jnp.fft.irfftn(k, s=real.shape))
    k1 = fwd1(one)
    ref = np.fft.rfftn(real.astype(np.float64))
    floor_r2c, floor_c2r = _ducc_ratios(real, np.asarray(k1), fwd1, one, bwd1, k1, repeats)
    solo = _Step(ns.jnp_transforms(n, dtype), n, dtype) if with_step else None
    rows = []
    for grid in grids:
        label = "x".join(map(str, grid))
        progress(f"{n}^3 {name}: grid {label}")
        mesh = pfft.make_mesh(grid)
        plan = pfft.plan(real.shape, dtype, mesh, kind="r2c")
        padded = pfft.plan(real.shape, dtype, mesh, kind="r2c", spectrum="padded")
        x = jax.device_put(real, plan.in_sharding)
        fwd, bwd = jax.jit(plan.forward), jax.jit(plan.backward)
        pfwd, pbwd = jax.jit(padded.forward), jax.jit(padded.backward)
        k, kp = fwd(x), pfwd(x)
        err = float(np.linalg.norm(np.asarray(k) - ref) / np.linalg.norm(ref))
        ratio, base = {}, {}
        trips = jitted_round_trips(plan.forward, plan.backward)
        for key, (f1, a1, f, a) in dict(
                rfftn=(fwd1, one, fwd, x), irfftn=(bwd1, k1, bwd, k),
                padded_rfftn=(fwd1, one, pfwd, x), padded_irfftn=(bwd1, k1, pbwd, kp),
                round_trip=(trips1, one, trips, x)).items():
            base[key], t = paired_medians(f1, a1, f, a, repeats)
            ratio[key] = t / base[key]
        # page faults a call (blocks mapped anew), each side
        faults = [faults_per_call(f, a) for f, a in ((fwd1, one), (fwd, x), (trips1, one),
                                                       (trips, x))]
        # one copy pass of the spectrum over the grid, over one device's call
        double = jax.jit(lambda a: a * 2)
        copies = [paired_medians(double, k, f1, a1, repeats)
                  for f1, a1 in ((fwd1, one), (bwd1, k1))]
        exchanges = plan.chain.exchanges
        floors = _floors(floor_r2c, floor_c2r, [c / one for c, one in copies],
                         exchanges, padded.chain.exchanges, base)
        row = dict(size=n, dtype=name, grid=label, exchanges=exchanges, rel_err=err,
                   one_rfftn_ms=1e3 * base["rfftn"], one_irfftn_ms=1e3 * base["irfftn"],
                   **ratio, **floors,
                   step=float("nan"), one_step_ms=float("nan"),
                   one_rfftn_faults=faults[0], rfftn_faults=faults[1],
                   one_trip_faults=faults[2], trip_faults=faults[3],
                   one_step_faults=float("nan"), step_faults=float("nan"))
        if with_step:
            dist = _Step(ns.pfft_transforms(n, mesh, dtype), n, dtype)
            # alternated with one device's step, as every other figure is: a step at
            # 256³ takes seconds, long enough for the machine to change between them
            one_step, t_step = paired_medians(solo.step, solo.state, dist.step, dist.state,
                                              max(3, repeats // 2))
            # one call each after a warm-up: a step at 256³ takes seconds
            one_faults, step_faults = (faults_per_call(run.step, run.state, calls=1)
                                       for run in (solo, dist))
            row.update(step=t_step / one_step, one_step_ms=1e3 * one_step,
                       one_step_faults=one_faults, step_faults=step_faults)
        rows.append(row)
        progress("  " + ", ".join(f"{c} {row[c]:.2f}" for c in
                                  ("rfftn", "irfftn", "padded_rfftn", "padded_irfftn",
                                   "round_trip", "step", "floor_rfftn")))
    return rows


COLUMNS = [("size", "N³", "{}"), ("dtype", "dtype", "{}"), ("grid", "grid", "{}"),
           ("exchanges", "exch.", "{}"),
           ("one_rfftn_ms", "1-dev rfftn ms", "{:.1f}"),
           ("rfftn", "**rfftn**", "{:.2f}"), ("floor_rfftn", "rfftn floor", "{:.2f}"),
           ("one_irfftn_ms", "1-dev irfftn ms", "{:.1f}"),
           ("irfftn", "**irfftn**", "{:.2f}"), ("floor_irfftn", "irfftn floor", "{:.2f}"),
           ("padded_rfftn", "padded rfftn", "{:.2f}"),
           ("floor_padded_rfftn", "padded rfftn floor", "{:.2f}"),
           ("padded_irfftn", "padded irfftn", "{:.2f}"),
           ("floor_padded_irfftn", "padded irfftn floor", "{:.2f}"),
           ("round_trip", f"**{ROUND_TRIPS} round trips**", "{:.2f}"),
           ("floor_round_trip", "round-trip floor", "{:.2f}"),
           ("one_step_ms", "1-dev RK4 step ms", "{:.0f}"), ("step", "**RK4 step**", "{:.2f}"),
           ("one_rfftn_faults", "1-dev rfftn faults", "{:.0f}"),
           ("rfftn_faults", "rfftn faults", "{:.0f}"),
           ("one_trip_faults", "1-dev round-trip faults", "{:.0f}"),
           ("trip_faults", "round-trip faults", "{:.0f}"),
           ("one_step_faults", "1-dev step faults", "{:.0f}"),
           ("step_faults", "step faults", "{:.0f}"),
           ("rel_err", "rel. error", "{:.1e}")]


def markdown(rows) -> str:
    return markdown_table(rows, COLUMNS)


def plot(rows, path: str, note: str | None = None) -> None:
    """Ratio to one device against size: one panel per workload, a colour per grid,
    float32 solid and float64 dashed, the float32 floor dotted; ``note`` (machine,
    date, command) along the bottom."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = [("rfftn", "floor_rfftn"), ("irfftn", "floor_irfftn"),
              ("round_trip", "floor_round_trip"), ("step", None)]
    fig, axes = plt.subplots(1, len(panels), figsize=(4 * len(panels), 3.6), sharey=True)
    grids = sorted({r["grid"] for r in rows}, key=lambda g: (len(g), g))
    colour = {g: plt.cm.tab10(i % 10) for i, g in enumerate(grids)}
    series = sorted({(r["grid"], r["dtype"]) for r in rows})
    for ax, (key, floor) in zip(axes, panels):
        for grid, dtype in series:
            pts = sorted((int(r["size"]), float(r[key]),
                          float(r.get(floor, np.nan)) if floor else None)
                         for r in rows if r["grid"] == grid and r["dtype"] == dtype)
            pts = [p for p in pts if not np.isnan(p[1])]
            if not pts:
                continue
            style = "-" if dtype == "float32" else "--"
            ax.plot([p[0] for p in pts], [p[1] for p in pts], style, marker="o",
                    color=colour[grid], label=f"{grid} {dtype}")
            if floor and dtype == "float32":
                ax.plot([p[0] for p in pts], [p[2] for p in pts], ":", color=colour[grid])
        ax.axhline(1.0, color="grey", lw=0.8)
        ax.set_xscale("log", base=2)
        ax.set_title(key.replace("_", " "))
        ax.set_xlabel("N (N³ grid)")
    axes[0].set_ylabel("pfft / one device")
    axes[-1].legend(fontsize=7)
    save_plot(fig, path, note)
    print(f"plot: {path}")


def _read_csv(path: str) -> list[dict]:
    return read_results(path, text=("dtype", "grid"), ints=("size", "exchanges"))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", nargs="+", type=int, default=[64, 128, 256])
    ap.add_argument("--dtypes", nargs="+", default=["float32", "float64"],
                    choices=["float32", "float64"])
    ap.add_argument("--grids", nargs="+", default=GRIDS)
    ap.add_argument("--step-sizes", nargs="*", type=int, default=[64, 128],
                    help="sizes that also time the RK4 step (none: skip it)")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="32³, 2x2, float32, 2 repeats")
    ap.add_argument("--plot", action="store_true")
    ap.add_argument("--out", default="results")
    ap.add_argument("--from-csv", help="re-render the table (and plot) of a finished run")
    add_malloc_argument(ap)
    args = ap.parse_args(argv)
    if args.from_csv:
        rows = _read_csv(args.from_csv)
    else:
        malloc = apply_malloc(args.malloc, "benchmarks.real_workloads", argv)
        if args.quick:
            args.sizes, args.dtypes, args.grids = [32], ["float32"], ["2x2"]
            args.step_sizes, args.repeats = [32], 2
        print(run_header("real workloads", f"8 simulated CPU devices, {malloc}"), flush=True)
        rows = []
        for n in args.sizes:
            for dtype in args.dtypes:
                rows += measure(n, np.dtype(dtype).type, parse_grids(args.grids),
                                args.repeats, n in args.step_sizes,
                                progress=lambda s: print(s, file=sys.stderr, flush=True))
                write_results(rows, markdown(rows), args.out, "real_workloads")
    print(markdown(rows))
    if args.plot:
        plot(rows, os.path.join(args.out, "real_workloads.png"))


if __name__ == "__main__":
    main()
