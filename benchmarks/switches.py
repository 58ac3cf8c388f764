"""What a measuring switch gains: the same real plans traced with it off and on.

pfft's CPU executor has switches read when a plan is traced, there only to measure what
a technique gains (``PFFT_NO_SWAPS``: pieces move by ``p - 1`` collective permutes
instead of one swap; ``PFFT_NO_PASS_PAIRS``: a slab's two local passes are two kernel
calls instead of one; ``PFFT_NO_IN_PLACE``: a pass never writes over the pieces it
reads). For each size, precision and grid this makes two fresh plans (``--plan``:
``r2c``, the same with ``spectrum="padded"``, or ``c2c``), one traced with the switch
set and one without, and calls them alternately in one process
(:func:`benchmarks.common.paired_medians`): the forward transform, the backward one and
three jitted round trips. The ratio is the default (switch unset) over the
switched-off technique; below 1, the technique pays. It also reports the collectives
each forward plan compiles to and whether the two variants' results are the same bits.

    python -m benchmarks.switches [--switch PFFT_NO_SWAPS] [--plan r2c] [--sizes 64 128]
        [--dtypes float32 float64] [--grids 4 2x2 1x4 8 2x4 4x2] [--repeats 11] [--plot]
        [--malloc steady|default]

The dtypes name the real data; ``--plan c2c`` transforms complex data of that
precision.
"""
from __future__ import annotations

import argparse
import os

from .common import (ROUND_TRIPS, add_malloc_argument, apply_malloc, jitted_round_trips,
                     markdown_table, paired_medians, parse_grids, read_results, run_header,
                     save_plot, simulate_cpu_devices, write_results)

simulate_cpu_devices(8)

import jax  # noqa: E402
import numpy as np  # noqa: E402

import pfft  # noqa: E402
from pfft.hlo import count_collectives  # noqa: E402

jax.config.update("jax_enable_x64", True)

SWITCHES = ("PFFT_NO_SWAPS", "PFFT_NO_PASS_PAIRS", "PFFT_NO_IN_PLACE")
#: the plans a run may compare: their ``pfft.plan`` keywords and the forward's name
PLANS = {"r2c": (dict(kind="r2c"), "rfftn"),
         "padded": (dict(kind="r2c", spectrum="padded"), "padded rfftn"),
         "c2c": ({}, "fftn")}


def _variant(switch: str, off: bool, data: np.ndarray, mesh, plan_kw: dict):
    """A fresh plan (``plan_kw``) traced with ``switch`` set (``off``) or unset: its
    jitted forward, backward and round trips, their input and results, and the
    forward's collectives."""
    before = os.environ.get(switch)
    os.environ[switch] = "1" if off else ""
    try:
        pfft.clear_plan_cache()           # a cached plan keeps the mode it was traced in
        plan = pfft.plan(data.shape, data.dtype, mesh, **plan_kw)
        x = jax.device_put(data, plan.in_sharding)
        forward, backward = jax.jit(plan.forward), jax.jit(plan.backward)

        trips = jitted_round_trips(plan.forward, plan.backward)
        k = forward(x)
        back = backward(k)
        trips(x).block_until_ready()      # every function traced while the switch holds
        ops = count_collectives(forward.lower(x).compile().as_text())
    finally:
        if before is None:
            os.environ.pop(switch, None)
        else:
            os.environ[switch] = before
    return dict(forward=forward, backward=backward, trips=trips, x=x, k=k, back=back, ops=ops)


def _ops(ops: dict) -> str:
    return ", ".join(f"{n} {op}" for op, n in ops.items() if n) or "none"


def measure(switch: str, n: int, dtype, grids, repeats: int, progress=print,
            plan: str = "r2c") -> list[dict]:
    """Rows of one size and precision, one per grid."""
    rng = np.random.default_rng(0)
    data = rng.standard_normal((n, n, n)).astype(dtype)
    if plan == "c2c":
        data = data + 1j * rng.standard_normal((n, n, n)).astype(dtype)
    plan_kw = PLANS[plan][0]
    rows = []
    for grid in grids:
        label = "x".join(map(str, grid))
        progress(f"{n}^3 {np.dtype(dtype).name} {label}")
        mesh = pfft.make_mesh(grid)
        on = _variant(switch, False, data, mesh, plan_kw)
        off = _variant(switch, True, data, mesh, plan_kw)
        row = dict(plan=plan, size=n, dtype=np.dtype(dtype).name, grid=label,
                   collectives=_ops(on["ops"]), collectives_off=_ops(off["ops"]),
                   same_bits=bool(np.array_equal(np.asarray(on["k"]), np.asarray(off["k"]))
                                  and np.array_equal(np.asarray(on["back"]),
                                                     np.asarray(off["back"]))))
        for key, arg in (("forward", "x"), ("backward", "k"), ("trips", "x")):
            t_off, t_on = paired_medians(off[key], off[arg], on[key], on[arg], repeats)
            row[f"{key}_ms"], row[f"{key}_off_ms"] = 1e3 * t_on, 1e3 * t_off
            row[key] = t_on / t_off
        rows.append(row)
        progress("  " + ", ".join(f"{k} {row[k]:.2f}" for k in ("forward", "backward", "trips")))
    return rows


COLUMNS = [("plan", "plan", "{}"), ("size", "N³", "{}"), ("dtype", "dtype", "{}"),
           ("grid", "grid", "{}"),
           ("collectives", "forward collectives", "{}"),
           ("collectives_off", "switched off", "{}"),
           ("forward_ms", "forward ms", "{:.2f}"), ("forward_off_ms", "off ms", "{:.2f}"),
           ("forward", "**forward on / off**", "{:.2f}"),
           ("backward", "**backward on / off**", "{:.2f}"),
           ("trips", f"**{ROUND_TRIPS} round trips on / off**", "{:.2f}"),
           ("same_bits", "same bits", "{}")]


def read_csv(path: str) -> list[dict]:
    """The rows of a finished run's CSV (for ``docs/make_figures.py``)."""
    return read_results(path, text=("plan", "dtype", "grid", "collectives", "collectives_off",
                                    "same_bits"), ints=("size",))


def plot(rows, path: str, note: str | None = None) -> None:
    """On / off against size for each grid (forward solid, backward dashed), float32
    and float64 in two panels; ``note`` along the bottom."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    dtypes = sorted({r["dtype"] for r in rows})
    fig, axes = plt.subplots(1, len(dtypes), figsize=(5 * len(dtypes), 3.6), sharey=True,
                             squeeze=False)
    grids = sorted({r["grid"] for r in rows}, key=lambda g: (len(g), g))
    for ax, dtype in zip(axes[0], dtypes):
        for i, grid in enumerate(grids):
            pts = sorted((int(r["size"]), r) for r in rows
                         if r["grid"] == grid and r["dtype"] == dtype)
            for key, style in (("forward", "-o"), ("backward", "--s")):
                ax.plot([s for s, _ in pts], [float(r[key]) for _, r in pts], style,
                        color=plt.cm.tab10(i % 10), ms=4,
                        label=f"{grid} {key}")
        ax.axhline(1.0, color="grey", lw=0.8)
        ax.set_xscale("log", base=2)
        ax.set_title(f"{PLANS[rows[0].get('plan', 'r2c')][1]} plans, {dtype}")
        ax.set_xlabel("N (N³ grid)")
    axes[0][0].set_ylabel("switch unset / set")
    axes[0][-1].legend(fontsize=6.5, ncol=2)
    save_plot(fig, path, note)
    print(f"plot: {path}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--switch", default="PFFT_NO_SWAPS", choices=SWITCHES)
    ap.add_argument("--plan", default="r2c", choices=sorted(PLANS),
                    help="r2c (numpy spectrum layout), padded (spectrum='padded') or c2c")
    ap.add_argument("--sizes", nargs="+", type=int, default=[64, 128])
    ap.add_argument("--dtypes", nargs="+", default=["float32", "float64"],
                    choices=["float32", "float64"])
    ap.add_argument("--grids", nargs="+", default=["4", "2x2", "1x4", "8", "2x4", "4x2"])
    ap.add_argument("--repeats", type=int, default=11)
    ap.add_argument("--out", default="results")
    ap.add_argument("--plot", action="store_true")
    add_malloc_argument(ap)
    args = ap.parse_args(argv)
    malloc = apply_malloc(args.malloc, "benchmarks.switches", argv)
    print(run_header(f"{args.switch} unset / set, {PLANS[args.plan][1]} plans",
                     f"8 simulated CPU devices, {malloc}"))
    rows = []
    for n in args.sizes:
        for dtype in args.dtypes:
            rows += measure(args.switch, n, dtype, parse_grids(args.grids), args.repeats,
                            plan=args.plan)
    table = markdown_table(rows, COLUMNS)
    print(table)
    name = f"switches_{args.switch.lower()}" + ("" if args.plan == "r2c" else f"_{args.plan}")
    write_results(rows, table, args.out, name)
    if args.plot:
        plot(rows, os.path.join(args.out, f"{name}.png"))


if __name__ == "__main__":
    main()
