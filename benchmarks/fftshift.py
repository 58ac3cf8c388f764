"""Distributed ``fftshift`` against ``jnp.fft.fftshift`` and against ``fftn``.

For each size and grid, on the same sharded complex array (the default input pencil of
``pfft.fftn``), in the same run (median of repeated runs after a warm-up, each jitted):

- ``pfft.fftshift`` (collective permutes of whole blocks or block edges) of the split
  axes only (issue 18's case), then of every axis (numpy's default: the whole axis
  rolls locally too);
- ``jnp.fft.fftshift`` of the same array (XLA's SPMD partitioning of ``jnp.roll``; on a
  mesh with Explicit axes jax 0.10 refuses it where a half axis does not divide over
  its devices, and the table says so);
- ``pfft.fftn`` of the same array: issue 18's goal is ``fftshift`` at most 0.2 of it;
- the **floor**: one collective permute of each device's whole block over the mesh
  axes that split the array (``lax.ppermute``, XLA's collective): the least data
  movement a ``fftshift`` of the split axes needs where each of them has an even
  number of blocks (every block then moves to another device whole), whoever
  implements it;
- the same shift and transform **inside a jitted loop** (``lax.fori_loop`` of
  ``LOOP`` shifts against ``LOOP // 2`` ``fftn``/``ifftn`` round trips), where XLA
  reuses the buffers between iterations instead of mapping fresh ones per call.

The collectives each compiles to are read from its compiled HLO (``pfft.hlo``).

    python -m benchmarks.fftshift [--sizes 128 256] [--grids 2x2 1x4 2x4] [--repeats 5] [--plot]
"""
from __future__ import annotations

import argparse
import datetime
import math
import os
import platform

from .common import (add_malloc_argument, apply_malloc, markdown_table, median_time,
                     parse_grids, read_results, save_plot, simulate_cpu_devices,
                     write_results)

simulate_cpu_devices(8)

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax import lax  # noqa: E402

import pfft  # noqa: E402
from pfft.hlo import count_collectives  # noqa: E402
from pfft.layout import names_of  # noqa: E402
from pfft.transports import xla as xla_transport  # noqa: E402

GOAL = 0.2
LOOP = 8        # shifts per jitted loop (and fftn/ifftn transforms)


def _collectives(fn, x) -> str:
    counts = count_collectives(jax.jit(fn).lower(x).compile().as_text())
    return ", ".join(f"{v} {k}" for k, v in counts.items() if v) or "none"


def _split_axes(sharding) -> tuple[int, ...]:
    spec = sharding.spec
    return tuple(a for a in range(len(spec)) if spec[a] is not None)


def _block_permute(mesh, spec):
    """One collective permute of each device's whole block over the mesh axes that
    split the array (each device sends to the next): the floor of a ``fftshift`` of
    them on even numbers of blocks."""
    names = tuple(m for entry in spec if entry is not None for m in names_of(entry))
    count = math.prod(mesh.shape[m] for m in names)
    pairs = [(i, (i + 1) % count) for i in range(count)]
    return jax.jit(jax.shard_map(lambda b: xla_transport.permute(b, names, pairs),
                                 mesh=mesh, in_specs=spec, out_specs=spec))


def _per_iteration(body, x, count: int, repeats: int) -> float:
    """Seconds per iteration of ``body`` in a jitted ``fori_loop`` of ``count``."""
    loop = jax.jit(lambda v: lax.fori_loop(0, count, lambda i, u: body(u), v))
    return median_time(loop, x, repeats=repeats) / count


def run(n: int, grids, repeats: int, dtype=np.complex64, progress=print):
    rng = np.random.default_rng(0)
    shape = (n, n, n)
    a = (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    rows = []
    for grid in grids:
        name = "x".join(map(str, grid))
        progress(f"  {n}^3 {np.dtype(dtype).name} grid {name} ...")
        mesh = pfft.make_mesh(grid)
        plan = pfft.plan(shape, dtype, mesh)
        x = jax.device_put(a, plan.in_sharding)
        t_fftn = median_time(jax.jit(plan.forward), x, repeats=repeats)
        t_floor = median_time(_block_permute(mesh, plan.in_sharding.spec), x, repeats=repeats)
        t_fftn_loop = _per_iteration(lambda u: plan.backward(plan.forward(u)), x,
                                     LOOP // 2, repeats) / 2
        # the split axes only (issue 18's case: a roll of a split axis), then every axis
        for axes in (_split_axes(plan.in_sharding), None):
            def ours(v, axes=axes):
                return pfft.fftshift(v, axes=axes)

            def theirs(v, axes=axes):
                return jnp.fft.fftshift(v, axes=axes)
            shift = jax.jit(ours)
            y = shift(x)
            exact = bool(np.array_equal(np.asarray(y), np.fft.fftshift(a, axes=axes))) \
                and y.sharding == x.sharding
            del y
            t_shift = median_time(shift, x, repeats=repeats)
            t_shift_loop = _per_iteration(ours, x, LOOP, repeats)
            try:
                t_jnp = median_time(jax.jit(theirs), x, repeats=repeats)
                jnp_ops = _collectives(theirs, x)
            except Exception as e:      # jax refuses some sharded slices on Explicit meshes
                t_jnp, jnp_ops = math.nan, f"refused ({type(e).__name__})"
            rows.append(dict(
                size=n, dtype=np.dtype(dtype).name, grid=name,
                spec=str(plan.in_sharding.spec), axes="all" if axes is None else str(axes),
                fftn_ms=1e3 * t_fftn, fftshift_ms=1e3 * t_shift, jnp_fftshift_ms=1e3 * t_jnp,
                fftshift_over_fftn=t_shift / t_fftn, jnp_over_fftn=t_jnp / t_fftn,
                goal_met="yes" if t_shift / t_fftn <= GOAL else "no",
                floor_ms=1e3 * t_floor, floor_over_fftn=t_floor / t_fftn,
                loop_shift_ms=1e3 * t_shift_loop, loop_fftn_ms=1e3 * t_fftn_loop,
                loop_over_fftn=t_shift_loop / t_fftn_loop,
                pfft_collectives=_collectives(ours, x), jnp_collectives=jnp_ops, exact=exact))
    return rows


COLUMNS = [("size", "size", "{}³"), ("grid", "grid", "{}"), ("spec", "input", "`{}`"),
           ("axes", "axes shifted", "{}"),
           ("fftn_ms", "pfft.fftn ms", "{:.1f}"), ("fftshift_ms", "pfft.fftshift ms", "{:.1f}"),
           ("jnp_fftshift_ms", "jnp.fft.fftshift ms", "{:.1f}"),
           ("fftshift_over_fftn", "**pfft.fftshift / fftn**", "{:.2f}"),
           ("goal_met", "≤ 0.2", "{}"),
           ("floor_ms", "floor: 1 permute of the block ms", "{:.1f}"),
           ("floor_over_fftn", "floor / fftn", "{:.2f}"),
           ("loop_shift_ms", "in a loop: fftshift ms", "{:.1f}"),
           ("loop_fftn_ms", "in a loop: fftn ms", "{:.1f}"),
           ("loop_over_fftn", "**in a loop: fftshift / fftn**", "{:.2f}"),
           ("jnp_over_fftn", "jnp.fft.fftshift / fftn", "{:.2f}"),
           ("pfft_collectives", "pfft.fftshift HLO", "{}"),
           ("jnp_collectives", "jnp.fft.fftshift HLO", "{}"), ("exact", "equal to numpy", "{}")]


def markdown(rows) -> str:
    return markdown_table(rows, COLUMNS)


TEXT_COLUMNS = ("dtype", "grid", "spec", "axes", "goal_met", "pfft_collectives",
                "jnp_collectives", "exact")


def read_csv(path: str) -> list[dict]:
    """The rows of a finished run's ``fftshift.csv``, numbers as numbers."""
    return read_results(path, text=TEXT_COLUMNS, ints=("size",))


def plot(rows, path: str, note: str | None = None) -> None:
    """Each row's times as fractions of ``fftn``; ``note`` (machine, date, command)
    along the bottom."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = [f"{r['size']}³ {r['grid']}\n{r['axes']}" for r in rows]
    xs = np.arange(len(rows))
    fig, ax = plt.subplots(figsize=(1.2 * len(rows) + 3, 3.5))
    ax.bar(xs - 0.3, [r["fftshift_over_fftn"] for r in rows], 0.2, label="pfft.fftshift")
    ax.bar(xs - 0.1, [r["loop_over_fftn"] for r in rows], 0.2,
           label="pfft.fftshift in a jitted loop")
    ax.bar(xs + 0.1, [r["floor_over_fftn"] for r in rows], 0.2,
           label="floor: one permute of the block")
    ax.bar(xs + 0.3, [r["jnp_over_fftn"] for r in rows], 0.2, label="jnp.fft.fftshift")
    ax.axhline(GOAL, color="k", ls="--", lw=1, label=f"goal {GOAL}")
    ax.set_xticks(xs, labels)
    ax.set_ylabel("time / pfft.fftn")
    ax.legend()
    save_plot(fig, path, note)
    plt.close(fig)


def _load() -> float:
    try:
        return os.getloadavg()[0]
    except OSError:
        return math.nan


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[128, 256])
    ap.add_argument("--grids", nargs="+", default=["2x2", "1x4", "2x4"])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--out", default="results")
    ap.add_argument("--plot", action="store_true", help="also draw out/fftshift.png")
    add_malloc_argument(ap)
    args = ap.parse_args(argv)
    malloc = apply_malloc(args.malloc, "benchmarks.fftshift", argv)
    grids = parse_grids(args.grids)
    load = _load()
    busy = " (machine busy)" if load > 1.5 else ""
    print(f"pfft fftshift benchmark, {datetime.date.today()}, {platform.node()}, "
          f"{os.cpu_count()} cores, load {load:.2f}{busy}, jax {jax.__version__}, "
          f"8 simulated CPU devices, complex64, {malloc}")
    rows = [r for n in args.sizes for r in run(n, grids, args.repeats)]
    table = markdown(rows)
    print(table)
    write_results(rows, table, args.out, "fftshift")
    if args.plot:
        plot(rows, os.path.join(args.out, "fftshift.png"))


if __name__ == "__main__":
    main()
