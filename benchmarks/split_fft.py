"""A 1-D FFT of a 1-D array split over devices: pfft's six-step against one device.

For each length and grid, in one process (median of repeated jitted runs after a
warm-up), on the same complex array split over every device of the grid:

- ``pfft.fft`` (:mod:`pfft.split_fft`: three all-to-alls, each device keeping its block);
- ``jnp.fft.fft`` of the same sharded array (what XLA's partitioner makes of it);
- the baseline: ``jnp.fft.fft`` of the whole array on one device.

The collectives each compiles to come from its compiled HLO, and every result is
checked against ``numpy.fft.fft`` (relative L2 error).

    python -m benchmarks.split_fft [--log2 20 22 24] [--grids 4 8 2x4] [--repeats 5] [--plot]
"""
from __future__ import annotations

import argparse
import datetime
import os
import platform

from .common import (add_malloc_argument, apply_malloc, markdown_table, median_time, parse_grids,
                     simulate_cpu_devices, write_results)

simulate_cpu_devices(8)

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import NamedSharding, PartitionSpec as P  # noqa: E402

import pfft  # noqa: E402
from pfft.hlo import count_collectives  # noqa: E402


def _collectives(fn, x) -> str:
    counts = count_collectives(fn.lower(x).compile().as_text())
    return ", ".join(f"{v} {k}" for k, v in counts.items() if v) or "none"


def _error(y, want) -> float:
    return float(np.linalg.norm(np.asarray(y) - want) / np.linalg.norm(want))


def run(log2n: int, grids, repeats: int, dtype=np.complex64, progress=print) -> list[dict]:
    n = 2 ** log2n
    rng = np.random.default_rng(log2n)
    a = (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(dtype)
    want = np.fft.fft(a.astype(np.complex128))
    one = jax.device_put(a, jax.devices()[0])
    base = jax.jit(jnp.fft.fft)
    t_one = median_time(base, one, repeats=repeats)
    rows = []
    for grid in grids:
        name = "x".join(map(str, grid))
        progress(f"  2^{log2n} {np.dtype(dtype).name} grid {name} ...")
        mesh = pfft.make_mesh(grid)
        x = jax.device_put(a, NamedSharding(mesh, P(tuple(mesh.axis_names))))
        ours, theirs = jax.jit(pfft.fft), jax.jit(jnp.fft.fft)
        err = _error(ours(x), want)
        t_ours = median_time(ours, x, repeats=repeats)
        t_theirs = median_time(theirs, x, repeats=repeats)
        rows.append(dict(log2n=log2n, dtype=np.dtype(dtype).name, grid=name,
                         one_ms=1e3 * t_one, pfft_ms=1e3 * t_ours, jnp_ms=1e3 * t_theirs,
                         pfft_over_one=t_ours / t_one, jnp_over_one=t_theirs / t_one,
                         pfft_collectives=_collectives(ours, x),
                         jnp_collectives=_collectives(theirs, x), error=err))
    return rows


COLUMNS = [("log2n", "n", "2^{}"), ("grid", "grid", "{}"),
           ("one_ms", "jnp.fft.fft 1 device ms", "{:.1f}"), ("pfft_ms", "pfft.fft ms", "{:.1f}"),
           ("jnp_ms", "jnp.fft.fft sharded ms", "{:.1f}"),
           ("pfft_over_one", "**pfft / 1 device**", "{:.2f}"),
           ("jnp_over_one", "jnp sharded / 1 device", "{:.2f}"),
           ("pfft_collectives", "pfft HLO", "{}"), ("jnp_collectives", "jnp sharded HLO", "{}"),
           ("error", "pfft rel. error", "{:.1e}")]


def plot(rows, path: str, note: str | None = None) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from .common import stamp
    fig, ax = plt.subplots(figsize=(6, 3.6))
    for grid in dict.fromkeys(r["grid"] for r in rows):
        rs = [r for r in rows if r["grid"] == grid]
        ax.plot([r["log2n"] for r in rs], [r["pfft_over_one"] for r in rs], "o-",
                label=f"pfft.fft, {grid}")
        ax.plot([r["log2n"] for r in rs], [r["jnp_over_one"] for r in rs], "x--",
                label=f"jnp.fft.fft sharded, {grid}")
    ax.axhline(1.0, color="k", lw=0.8)
    ax.set_xlabel("log2 n")
    ax.set_ylabel("time / one-device jnp.fft.fft")
    ax.legend(fontsize=7)
    stamp(fig, note)
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--log2", type=int, nargs="+", default=[20, 22, 24])
    ap.add_argument("--grids", nargs="+", default=["4", "8", "2x4"])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--out", default="results")
    ap.add_argument("--plot", action="store_true", help="also draw out/split_fft.png")
    add_malloc_argument(ap)
    args = ap.parse_args(argv)
    malloc = apply_malloc(args.malloc, "benchmarks.split_fft", argv)
    load = os.getloadavg()[0]
    head = (f"pfft 1-D split-axis FFT benchmark, {datetime.date.today()}, {platform.node()}, "
            f"{os.cpu_count()} cores, load {load:.2f}, jax {jax.__version__}, "
            f"8 simulated CPU devices, complex64, {malloc}")
    print(head)
    rows = [r for k in args.log2 for r in run(k, parse_grids(args.grids), args.repeats)]
    table = markdown_table(rows, COLUMNS)
    print(table)
    write_results(rows, table, args.out, "split_fft")
    if args.plot:
        plot(rows, os.path.join(args.out, "split_fft.png"), head)


if __name__ == "__main__":
    main()
