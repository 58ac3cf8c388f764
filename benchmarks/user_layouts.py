"""Real transforms on the user's own mesh and shardings, not only pfft's.

Issue 15's figures come from pfft's meshes (:func:`pfft.make_mesh`) and its own input
pencils. Users bring theirs: ``jax.make_mesh`` with their axis names, Auto or Explicit
axes, the ``PartitionSpec`` their code already uses, extra batch axes. For each size,
precision, grid, axis type and layout this times, in one process, against the same call
on one device (``jnp.fft``; pfft's call and the one-device call alternate):

- ``rfftn``, ``irfftn`` (of that ``rfftn``'s output) and three jitted round trips
  ``irfftn(rfftn(x))``, written as a user writes them: ``jax.jit`` of ``pfft.rfftn``
  on the array placed with the user's sharding (way ``pfft.rfftn``);
- on Auto meshes also the plan given the layout (way ``plan``,
  ``pfft.plan(..., in_sharding=...)``): under ``jit`` an Auto mesh's tracers carry no
  layout, so ``pfft.rfftn`` assumes pfft's own input pencil and XLA reshards the
  user's array to it (docs/layouts.md); the plan built for the user's sharding runs
  without that reshard;
- the collectives the ``rfftn`` compiles to, its ratio to one device over that of
  pfft's default layout on pfft's own mesh in the same run ("vs own layout": for a
  batch, each ratio against its own one-device call), and its relative L2 error
  against ``numpy.fft.rfftn`` in float64.

The layouts of a grid ``a x b`` (axis names ``rows``, ``cols``): ``rows,cols,-``
(pfft's input pencil under the user's names), ``cols,rows,-``, ``-,rows,cols``,
``(rows,cols),-,-`` (a slab over both axes) and ``3:-,rows,cols,-`` (a batch of 3
fields, ``axes=(1, 2, 3)``, as a velocity field is held); of a slab grid ``p`` (name
``devs``): ``devs,-,-``, ``-,devs,-``, ``-,-,devs`` and ``3:-,devs,-,-``.

    python -m benchmarks.user_layouts [--sizes 128] [--dtypes float32 float64]
        [--grids 2x4 8] [--axis-types auto explicit] [--repeats 7] [--plot]
    python -m benchmarks.user_layouts --from-csv results/user_layouts.csv --plot
"""
from __future__ import annotations

import argparse
import os
import re
import sys

from .common import (ROUND_TRIPS, add_malloc_argument, apply_malloc, jitted_round_trips,
                     markdown_table, paired_medians, parse_grids, read_results, run_header,
                     save_plot, simulate_cpu_devices, write_results)

simulate_cpu_devices(8)

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import AxisType, NamedSharding, PartitionSpec  # noqa: E402

import pfft  # noqa: E402
from pfft.hlo import count_collectives  # noqa: E402

jax.config.update("jax_enable_x64", True)

BATCH = 3


def layouts(grid: tuple[int, ...]) -> list[str]:
    """The layouts measured on ``grid`` (see the module docstring for the notation)."""
    if len(grid) == 1:
        return ["devs,-,-", "-,devs,-", "-,-,devs", f"{BATCH}:-,devs,-,-"]
    return ["rows,cols,-", "cols,rows,-", "-,rows,cols", "(rows,cols),-,-",
            f"{BATCH}:-,rows,cols,-"]


def parse_layout(text: str) -> tuple[int, PartitionSpec]:
    """``"3:-,rows,cols,-"`` -> (3, P(None, 'rows', 'cols', None)); no prefix: batch 0;
    ``"(rows,cols),-,-"`` -> (0, P(('rows', 'cols'), None, None))."""
    batch, _, spec = text.rpartition(":")
    entries = []
    for token in re.findall(r"\([^)]*\)|[^,]+", spec):
        if token.startswith("("):
            entries.append(tuple(token[1:-1].split(",")))
        else:
            entries.append(None if token == "-" else token)
    return (int(batch) if batch else 0), PartitionSpec(*entries)


def _one_device(real: np.ndarray, axes):
    """The one-device calls and their argument: rfftn, irfftn, round trips."""
    shape = tuple(real.shape[a] for a in axes)
    one = jax.device_put(real, jax.devices()[0])
    fwd = jax.jit(lambda a: jnp.fft.rfftn(a, axes=axes))
    bwd = jax.jit(lambda k: jnp.fft.irfftn(k, s=shape, axes=axes))
    trips = jitted_round_trips(lambda a: jnp.fft.rfftn(a, axes=axes),
                               lambda k: jnp.fft.irfftn(k, s=shape, axes=axes))
    return one, fwd, bwd, trips, fwd(one)


def _user_calls(real: np.ndarray, axes, sharding, way: str):
    """pfft's rfftn, irfftn and round trips for ``real`` placed with ``sharding``,
    written as ``way`` says: ``pfft.rfftn`` (the functions), or ``plan`` (a plan given
    the sharding)."""
    shape = tuple(real.shape[a] for a in axes)
    if way == "plan":
        plan = pfft.plan(real.shape, real.dtype, sharding.mesh, axes=axes, kind="r2c",
                         in_sharding=sharding)
        forward, backward = plan.forward, plan.backward
    else:
        def forward(a):
            return pfft.rfftn(a, axes=axes)

        def backward(k):
            return pfft.irfftn(k, s=shape, axes=axes)
    return jax.jit(forward), jax.jit(backward), jitted_round_trips(forward, backward)


def _collectives(fn, arg) -> str:
    counts = count_collectives(fn.lower(arg).compile().as_text())
    return ", ".join(f"{v} {k}" for k, v in counts.items() if v) or "none"


def measure(n: int, dtype, grid: tuple[int, ...], axis_types, repeats: int,
            progress=print) -> list[dict]:
    """Rows of one size, precision and grid: every layout, axis type and way."""
    rng = np.random.default_rng(0)
    name = np.dtype(dtype).name
    label = "x".join(map(str, grid))
    names = ("devs",) if len(grid) == 1 else ("rows", "cols")
    cube = rng.standard_normal((n, n, n)).astype(dtype)
    # per batch size: the array, its axes, the one-device calls and numpy's spectrum,
    # made once for every layout that holds that many fields
    singles = {}
    for batch in sorted({parse_layout(layout)[0] for layout in layouts(grid)}):
        real = np.stack([cube] * batch) if batch else cube
        axes = (1, 2, 3) if batch else (0, 1, 2)
        singles[batch] = (real, axes, *_one_device(real, axes),
                          np.fft.rfftn(real.astype(np.float64), axes=axes))
    # the reference: pfft's default layout on pfft's mesh, against one device
    plan = pfft.plan(cube.shape, dtype, pfft.make_mesh(grid), kind="r2c")
    _, _, one_own, fwd_own, *_ = singles[0]
    own_1dev, own_t = paired_medians(fwd_own, one_own, jax.jit(plan.forward),
                                     jax.device_put(cube, plan.in_sharding), repeats)
    rows = []
    for layout in layouts(grid):
        batch, spec = parse_layout(layout)
        real, axes, one, fwd1, bwd1, trips1, k1, ref = singles[batch]
        for axis_type in axis_types:
            kind = AxisType.Auto if axis_type == "auto" else AxisType.Explicit
            user_mesh = jax.make_mesh(grid, names, axis_types=(kind,) * len(grid))
            sharding = NamedSharding(user_mesh, spec)
            x = jax.device_put(real, sharding)
            for way in (("pfft.rfftn", "plan") if axis_type == "auto" else ("pfft.rfftn",)):
                progress(f"{n}^3 {name} {label} {axis_type} {layout} {way}")
                fwd, bwd, trips = _user_calls(real, axes, sharding, way)
                k = fwd(x)
                err = float(np.linalg.norm(np.asarray(k) - ref) / np.linalg.norm(ref))
                t1, t = paired_medians(fwd1, one, fwd, x, repeats)
                b1, b = paired_medians(bwd1, k1, bwd, k, repeats)
                r1, r = paired_medians(trips1, one, trips, x, repeats)
                row = dict(size=n, dtype=name, grid=label, axis_type=axis_type,
                           layout=layout, way=way, collectives=_collectives(fwd, x),
                           out_spec=str(tuple(k.sharding.spec)), rfftn=t / t1,
                           irfftn=b / b1, round_trip=r / r1,
                           # the ratio over the default layout's ratio
                           vs_own=(t / t1) / (own_t / own_1dev), rel_err=err)
                rows.append(row)
                progress("  " + ", ".join(f"{c} {row[c]:.2f}" for c in
                                          ("rfftn", "irfftn", "round_trip", "vs_own")))
    return rows


COLUMNS = [("size", "N³", "{}"), ("dtype", "dtype", "{}"), ("grid", "grid", "{}"),
           ("axis_type", "axes", "{}"), ("layout", "input layout", "`{}`"),
           ("way", "called as", "{}"), ("collectives", "rfftn compiles to", "{}"),
           ("out_spec", "spectrum spec", "`{}`"),
           ("rfftn", "**rfftn**", "{:.2f}"), ("irfftn", "**irfftn**", "{:.2f}"),
           ("round_trip", f"**{ROUND_TRIPS} round trips**", "{:.2f}"),
           ("vs_own", "rfftn vs own layout", "{:.2f}"), ("rel_err", "rel. error", "{:.1e}")]


def markdown(rows) -> str:
    return markdown_table(rows, COLUMNS)


def plot(rows, path: str, note: str | None = None) -> None:
    """pfft / one device for ``rfftn`` (top) and the round trips (bottom): a panel per
    size, precision and grid, the layouts along x, a bar per way of calling (Auto
    ``pfft.rfftn``, Auto plan, Explicit ``pfft.rfftn``)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    groups = sorted({(r["size"], r["dtype"], r["grid"]) for r in rows},
                    key=lambda g: (g[0], g[1], len(g[2]), g[2]))
    ways = [("auto", "pfft.rfftn"), ("auto", "plan"), ("explicit", "pfft.rfftn")]
    fig, axes = plt.subplots(2, len(groups), figsize=(3.6 * len(groups), 6.5),
                             sharey="row", squeeze=False)
    width = 0.8 / len(ways)
    for col, (n, dtype, grid) in enumerate(groups):
        mine = [r for r in rows if (r["size"], r["dtype"], r["grid"]) == (n, dtype, grid)]
        order = list(dict.fromkeys(r["layout"] for r in mine))
        for row, key in enumerate(("rfftn", "round_trip")):
            ax = axes[row][col]
            for i, (kind, way) in enumerate(ways):
                pts = [(order.index(r["layout"]), float(r[key])) for r in mine
                       if r["axis_type"] == kind and r["way"] == way]
                ax.bar([x + i * width for x, _ in pts], [y for _, y in pts], width,
                       label=f"{kind}, {way}")
            ax.axhline(1.0, color="grey", lw=0.8)
            ax.set_xticks([x + width for x in range(len(order))])
            ax.set_xticklabels(order, rotation=30, ha="right", fontsize=7)
            ax.set_title(f"{key.replace('_', ' ')}, {n}³ {dtype}, {grid}", fontsize=9)
        axes[0][col].tick_params(labelbottom=False)
    axes[0][0].set_ylabel("rfftn: pfft / one device")
    axes[1][0].set_ylabel("round trips: pfft / one device")
    axes[0][-1].legend(fontsize=7)
    save_plot(fig, path, note)
    print(f"plot: {path}")


def _read_csv(path: str) -> list[dict]:
    return read_results(path, text=("dtype", "grid", "axis_type", "layout", "way",
                                    "collectives", "out_spec"), ints=("size",))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", nargs="+", type=int, default=[128])
    ap.add_argument("--dtypes", nargs="+", default=["float32", "float64"],
                    choices=["float32", "float64"])
    ap.add_argument("--grids", nargs="+", default=["2x4", "8"])
    ap.add_argument("--axis-types", nargs="+", default=["auto", "explicit"],
                    choices=["auto", "explicit"])
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--plot", action="store_true")
    ap.add_argument("--out", default="results")
    ap.add_argument("--from-csv", help="re-render the table (and plot) of a finished run")
    add_malloc_argument(ap)
    args = ap.parse_args(argv)
    if args.from_csv:
        rows = _read_csv(args.from_csv)
    else:
        malloc = apply_malloc(args.malloc, "benchmarks.user_layouts", argv)
        print(run_header("on the user's layouts", f"8 simulated CPU devices, {malloc}"),
              flush=True)
        rows = []
        for n in args.sizes:
            for dtype in args.dtypes:
                for grid in parse_grids(args.grids):
                    rows += measure(n, np.dtype(dtype).type, grid, args.axis_types,
                                    args.repeats,
                                    progress=lambda s: print(s, file=sys.stderr, flush=True))
                    write_results(rows, markdown(rows), args.out, "user_layouts")
    print(markdown(rows))
    if args.plot:
        plot(rows, os.path.join(args.out, "user_layouts.png"))


if __name__ == "__main__":
    main()
