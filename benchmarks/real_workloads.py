"""Real fields as users run them: ``python -m benchmarks real``.

**Real transforms and time steps** (the default). For each size, precision and device
grid, in one run (median of repeated calls after a warm-up, each function jitted once;
pfft's call and the one-device call alternate, the time step's too, and fast calls are
repeated until about a second is measured), every figure is a ratio to **the same
operation on one device** (``jnp.fft``) measured in the same process:

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

Writes ``real_workloads.{csv,json,md}`` under ``--out``.

**On the user's own meshes and layouts** (``--layouts``). pfft's meshes
(:func:`pfft.make_mesh`) and its own input pencils are what the default measures.
Users bring theirs: ``jax.make_mesh`` with their axis names, Auto or Explicit axes, the
``PartitionSpec`` their code already uses, extra batch axes. For each size, precision,
grid, axis type and layout this times, in one process, against the same call on one
device (``jnp.fft``; pfft's call and the one-device call alternate):

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
``devs``): ``devs,-,-``, ``-,devs,-``, ``-,-,devs`` and ``3:-,devs,-,-``. Writes
``user_layouts.{csv,json,md}``.

    python -m benchmarks real [--sizes 64 128 256] [--dtypes float32 float64]
        [--grids 4 2x2 1x4 8 2x4 4x2] [--step-sizes 64 128] [--repeats 5] [--plot]
        [--malloc steady|default]
    python -m benchmarks real --layouts [--sizes 128] [--grids 2x4 8]
        [--axis-types auto explicit] [--repeats 7] [--plot]
    python -m benchmarks real [--layouts] --from-csv results/real_workloads.csv --plot
"""
from __future__ import annotations

import argparse
import os
import re
import sys

from .common import (ROUND_TRIPS, add_malloc_argument, apply_malloc, faults_per_call,
                     figure_note, jitted_round_trips, markdown_table, paired_medians, pyplot,
                     parse_grids, read_info, read_results, run_header, run_info, save_plot,
                     simulate_cpu_devices, write_doc, write_results)

simulate_cpu_devices(8)

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from jax.sharding import AxisType, NamedSharding, PartitionSpec  # noqa: E402

import pfft  # noqa: E402
from pfft.hlo import count_collectives  # noqa: E402

from .apps import navier_stokes as ns  # noqa: E402

jax.config.update("jax_enable_x64", True)

GRIDS = ["4", "2x2", "1x4", "8", "2x4", "4x2"]


def _ducc_ratios(x: np.ndarray, k: np.ndarray, fwd1, one, bwd1, k1,
                 repeats: int) -> tuple[float, float]:
    """DUCC's r2c and c2r of the whole array on all cores, each over one device's
    ``rfftn`` (``irfftn``), the two alternated (nan, nan without ducc0)."""
    try:
        import ducc0
    except ImportError:
        return float("nan"), float("nan")
    threads = os.cpu_count() or 1
    # host calls: done when they return (the harness waits for device results only)
    def r2c(a):
        return ducc0.fft.r2c(a, nthreads=threads)

    def c2r(a):
        return ducc0.fft.c2r(a, axes=(0, 1, 2), lastsize=x.shape[-1], forward=False,
                             nthreads=threads)
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


TRANSFORM_PANELS = (("rfftn", "floor_rfftn"), ("irfftn", "floor_irfftn"),
                    ("padded_rfftn", "floor_padded_rfftn"))
WORKLOAD_PANELS = (("round_trip", "floor_round_trip"), ("step", None))


def plot(rows, path: str, note: str | None = None,
         panels=TRANSFORM_PANELS + WORKLOAD_PANELS) -> None:
    """Ratio to one device against size: one panel per workload (``panels``: column,
    floor column), a colour per grid, float32 solid and float64 dashed, the float32
    floor dotted; ``note`` (machine, date, command) along the bottom."""
    plt = pyplot()

    fig, axes = plt.subplots(1, len(panels), figsize=(4 * len(panels), 3.6), sharey=True,
                             squeeze=False)
    axes = axes[0]
    grids = sorted({r["grid"] for r in rows}, key=lambda g: (len(g), g))
    colour = {g: plt.cm.tab10(i % 10) for i, g in enumerate(grids)}
    series = sorted({(r["grid"], r["dtype"]) for r in rows})
    for ax, (key, floor) in zip(axes, panels):
        for grid, dtype in series:
            # a step against a one-device baseline that faulted is not drawn (FAULTING)
            pts = sorted((int(r["size"]), float(r[key]),
                          float(r.get(floor, np.nan)) if floor else None)
                         for r in rows if r["grid"] == grid and r["dtype"] == dtype
                         and not (key == "step" and r.get("one_step_faults", 0) > FAULTING))
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
    print(f"plot: {save_plot(fig, path, note)}")


def _read_csv(path: str) -> list[dict]:
    return read_results(path, text=("dtype", "grid"), ints=("size", "exchanges"))



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


def measure_layouts(n: int, dtype, grid: tuple[int, ...], axis_types, repeats: int,
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


LAYOUT_COLUMNS = [("size", "N³", "{}"), ("dtype", "dtype", "{}"), ("grid", "grid", "{}"),
           ("axis_type", "axes", "{}"), ("layout", "input layout", "`{}`"),
           ("way", "called as", "{}"), ("collectives", "rfftn compiles to", "{}"),
           ("out_spec", "spectrum spec", "`{}`"),
           ("rfftn", "**rfftn**", "{:.2f}"), ("irfftn", "**irfftn**", "{:.2f}"),
           ("round_trip", f"**{ROUND_TRIPS} round trips**", "{:.2f}"),
           ("vs_own", "rfftn vs own layout", "{:.2f}"), ("rel_err", "rel. error", "{:.1e}")]


def layouts_markdown(rows) -> str:
    return markdown_table(rows, LAYOUT_COLUMNS)


def layouts_plot(rows, path: str, note: str | None = None) -> None:
    """pfft / one device for ``rfftn`` (top) and the round trips (bottom): a panel per
    size, precision and grid, the layouts along x, a bar per way of calling (Auto
    ``pfft.rfftn``, Auto plan, Explicit ``pfft.rfftn``)."""
    plt = pyplot()

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
    print(f"plot: {save_plot(fig, path, note)}")


def _read_layouts_csv(path: str) -> list[dict]:
    return read_results(path, text=("dtype", "grid", "axis_type", "layout", "way",
                                    "collectives", "out_spec"), ints=("size",))


# -- the docs' tables (python -m benchmarks report) ------------------------------------------
def _span(values) -> str:
    values = sorted(v for v in values if not np.isnan(v))
    if not values:
        return "–"
    return f"{values[0]:.2f}" if len(values) == 1 else f"{values[0]:.2f}–{values[-1]:.2f}"


def _by_size(rows, key, words) -> str:
    """One line per size: the range of ``key`` (and of its floor, where the rows have
    one) over the grids and precisions."""
    out = []
    for n in sorted({r["size"] for r in rows}):
        mine = [r for r in rows if r["size"] == n]
        line = f"- {n}³: {words} **{_span(r[key] for r in mine)}** of one device's time"
        floor = [r.get("floor_" + key, np.nan) for r in mine]
        if not all(np.isnan(floor)):
            line += f" (floor {_span(floor)})"
        out.append(line + ".")
    return "\n".join(out)


TRANSFORM_COLUMNS = [c for c in COLUMNS if c[0] in (
    "size", "dtype", "grid", "exchanges", "one_rfftn_ms", "rfftn", "floor_rfftn",
    "one_irfftn_ms", "irfftn", "floor_irfftn", "padded_rfftn", "floor_padded_rfftn",
    "padded_irfftn", "floor_padded_irfftn", "rel_err")]
#: a one-device step that faults more than this a call ran against a slowed baseline
FAULTING = 10_000


def transforms_doc(rows) -> str:
    """``rfftn`` and ``irfftn`` (numpy's layout and the padded spectrum) over one device,
    with their floors, and the range per size."""
    return "\n\n".join([markdown_table(rows, TRANSFORM_COLUMNS),
                         _by_size(rows, "rfftn", "`rfftn` takes"),
                         _by_size(rows, "irfftn", "`irfftn` takes"),
                         _by_size(rows, "padded_rfftn", "`rfftn` to the padded spectrum takes")])


def workloads_doc(rows) -> str:
    """Round trips and the RK4 step over one device, their page faults, and the range
    per size; a step whose one-device baseline faulted is marked."""
    marked = []
    for r in rows:
        mark = "" if np.isnan(r["one_step_faults"]) or r["one_step_faults"] <= FAULTING else " †"
        text = "–" if np.isnan(r["step"]) else f"{r['step']:.2f}{mark}"
        marked.append({**r, "step_text": text})
    columns = [c for c in COLUMNS if c[0] in ("size", "dtype", "grid", "exchanges",
                                             "round_trip", "floor_round_trip", "one_step_ms")]
    columns += [("step_text", "**RK4 step**", "{}")]
    columns += [c for c in COLUMNS if c[0] in ("one_trip_faults", "trip_faults",
                                              "one_step_faults", "step_faults")]
    parts = [markdown_table(marked, columns),
             _by_size(rows, "round_trip", f"{ROUND_TRIPS} round trips take"),
             _by_size([r for r in rows if not np.isnan(r["step"])
                       and not r["one_step_faults"] > FAULTING], "step", "an RK4 step takes")]
    if any(" †" in r["step_text"] for r in marked):
        parts.append(f"† One device's step faulted in a temporary of its own on every call "
                     f"(more than {FAULTING:,} faults a call, the 1-dev step faults column): "
                     "that ratio is against a slowed baseline and is left out of the range.")
    return "\n\n".join(parts)


def layouts_doc(rows) -> str:
    """The user's layouts: every row, then the range per way of calling."""
    lines = [layouts_markdown(rows)]
    for axis_type, way in (("auto", "pfft.rfftn"), ("auto", "plan"), ("explicit", "pfft.rfftn")):
        mine = [r for r in rows if r["axis_type"] == axis_type and r["way"] == way]
        if mine:
            lines.append(f"- {axis_type.capitalize()} axes, `{way}`: `rfftn` "
                         f"{_span(r['rfftn'] for r in mine)} of one device, "
                         f"{_span(r['vs_own'] for r in mine)} of pfft's own layout.")
    return "\n\n".join(lines[:1] + ["\n".join(lines[1:])])


#: the docs' tables and figures: data file in docs/data -> what report() makes of it
DOCS = {"real_workloads.csv": ("real_transforms.md", "real_workloads.md",
                               "real_transforms.png", "real_workloads.png"),
        "user_layouts.csv": ("user_layouts.md", "user_layouts.png")}


def report(data: str, figures: str) -> list[str]:
    """``real_transforms`` and ``real_workloads`` (tables in ``data``, figures in
    ``figures``) from ``data/real_workloads.csv``, ``user_layouts`` from
    ``data/user_layouts.csv``: the paths written."""
    done = []
    path = os.path.join(data, "real_workloads.csv")
    if os.path.exists(path):
        rows, info = _read_csv(path), read_info(path)
        note = figure_note(info)
        done.append(write_doc(os.path.join(data, "real_transforms.md"), info,
                              transforms_doc(rows)))
        done.append(write_doc(os.path.join(data, "real_workloads.md"), info,
                              workloads_doc(rows)))
        for name, panels in (("real_transforms.png", TRANSFORM_PANELS),
                             ("real_workloads.png", WORKLOAD_PANELS)):
            plot(rows, os.path.join(figures, name), note, panels)
            done.append(os.path.join(figures, name))
    path = os.path.join(data, "user_layouts.csv")
    if os.path.exists(path):
        rows, info = _read_layouts_csv(path), read_info(path)
        done.append(write_doc(os.path.join(data, "user_layouts.md"), info, layouts_doc(rows)))
        layouts_plot(rows, os.path.join(figures, "user_layouts.png"), figure_note(info))
        done.append(os.path.join(figures, "user_layouts.png"))
    return done


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m benchmarks real",
                                 description=__doc__.splitlines()[0])
    ap.add_argument("--layouts", action="store_true",
                    help="on the user's own meshes and layouts (user_layouts.csv)")
    ap.add_argument("--sizes", nargs="+", type=int, default=None,
                    help="default 64 128 256; with --layouts 128")
    ap.add_argument("--dtypes", nargs="+", default=["float32", "float64"],
                    choices=["float32", "float64"])
    ap.add_argument("--grids", nargs="+", default=None,
                    help=f"default {' '.join(GRIDS)}; with --layouts 2x4 8")
    ap.add_argument("--step-sizes", nargs="*", type=int, default=[64, 128],
                    help="sizes that also time the RK4 step (none: skip it)")
    ap.add_argument("--axis-types", nargs="+", default=["auto", "explicit"],
                    choices=["auto", "explicit"], help="with --layouts")
    ap.add_argument("--repeats", type=int, default=None, help="default 5; with --layouts 7")
    ap.add_argument("--quick", action="store_true", help="32³, 2x2, float32, 2 repeats")
    ap.add_argument("--plot", action="store_true")
    ap.add_argument("--out", default="results")
    ap.add_argument("--from-csv", help="re-render the table (and plot) of a finished run")
    add_malloc_argument(ap)
    args = ap.parse_args(argv)
    name = "user_layouts" if args.layouts else "real_workloads"
    if args.from_csv:
        rows = (_read_layouts_csv if args.layouts else _read_csv)(args.from_csv)
    else:
        malloc = apply_malloc(args.malloc, "benchmarks.real_workloads", argv)
        if args.quick:
            args.sizes, args.dtypes, args.grids = [32], ["float32"], ["2x2"]
            args.step_sizes, args.repeats = [32], 2
        args.sizes = args.sizes or ([128] if args.layouts else [64, 128, 256])
        args.grids = args.grids or (["2x4", "8"] if args.layouts else GRIDS)
        args.repeats = args.repeats or (7 if args.layouts else 5)
        info = run_info("benchmarks.real_workloads", argv,
                        f"8 simulated CPU devices, {malloc}")
        title = "on the user's layouts" if args.layouts else "real workloads"
        print(run_header(title, info), flush=True)
        progress = lambda s: print(s, file=sys.stderr, flush=True)  # noqa: E731
        rows = []
        for n in args.sizes:
            for dtype in args.dtypes:
                if args.layouts:
                    for grid in parse_grids(args.grids):
                        rows += measure_layouts(n, np.dtype(dtype).type, grid, args.axis_types,
                                                args.repeats, progress=progress)
                else:
                    rows += measure(n, np.dtype(dtype).type, parse_grids(args.grids),
                                    args.repeats, n in args.step_sizes, progress=progress)
                # written after each size and precision: an interrupted run keeps its rows
                write_results(rows, (layouts_markdown if args.layouts else markdown)(rows),
                              args.out, name, info)
    print((layouts_markdown if args.layouts else markdown)(rows))
    if args.plot:
        (layouts_plot if args.layouts else plot)(rows, os.path.join(args.out, f"{name}.png"))


if __name__ == "__main__":
    main()
