"""pfft.fftn on simulated CPU devices against single-device jnp.fft.fftn.

Prints a table (median of repeated runs after a warm-up; ratio = pfft / one device,
both measured in the same run) and writes it as CSV and Markdown under
``results/``; ``--plot`` also draws a PNG. A straightforward shard_map chain of
``jnp.fft.fft`` and ``lax.all_to_all`` is timed beside it for reference, and so is a jitted
``fori_loop`` of forward+backward pairs (how a simulation calls it), against the
same loop of ``jnp.fft.fftn``/``ifftn`` on one device.

    python -m benchmarks.fftn_table [--sizes 128 256] [--repeats 7] [--plot]
"""
from __future__ import annotations

import argparse
import datetime
import os
import platform
import sys

from .common import (add_malloc_argument, apply_malloc, median_time, parse_grids,
                     simulate_cpu_devices, write_results)

simulate_cpu_devices(8)

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import NamedSharding, PartitionSpec as P  # noqa: E402

import pfft  # noqa: E402

jax.config.update("jax_enable_x64", True)

GRIDS = [(2, 2), (1, 4), (2, 4)]


def straightforward_chain(mesh):
    """fft, all_to_all, fft, all_to_all, fft in shard_map, as a user would first write it."""
    names = [n for n, s in mesh.shape.items() if s > 1]

    def body(a):
        a = jnp.fft.fft(a, axis=2)
        if len(names) == 2:
            a = jax.lax.all_to_all(a, names[1], 2, 1, tiled=True)
            a = jnp.fft.fft(a, axis=1)
            a = jax.lax.all_to_all(a, names[0], 1, 0, tiled=True)
            return jnp.fft.fft(a, axis=0)
        a = jnp.fft.fft(a, axis=1)
        a = jax.lax.all_to_all(a, names[0], 1, 0, tiled=True)
        return jnp.fft.fft(a, axis=0)

    if len(names) == 2:
        ins, outs = P(names[0], names[1], None), P(None, names[0], names[1])
    else:
        ins, outs = P(names[0], None, None), P(None, names[0], None)
    return jax.jit(jax.shard_map(body, mesh=mesh, in_specs=ins, out_specs=outs)), ins


LOOP_STEPS = 4


def _pairs(forward, backward):
    """``LOOP_STEPS`` forward+backward pairs in one jitted fori_loop (a time-stepping loop)."""
    def loop(a):
        return jax.lax.fori_loop(0, LOOP_STEPS, lambda i, b: backward(forward(b)), a)
    return loop


def run(sizes, repeats, dtypes, grids, progress=print):
    rows = []
    total = len(sizes) * len(dtypes) * len(grids)
    done = 0
    for n in sizes:
        for dtype in dtypes:
            rng = np.random.default_rng(0)
            host = (rng.standard_normal((n, n, n)) + 1j * rng.standard_normal((n, n, n))).astype(dtype)
            ref = np.fft.fftn(host.astype(np.complex128))
            one = jax.device_put(host, jax.devices()[0])
            t_one = median_time(jax.jit(jnp.fft.fftn), one, repeats=repeats)
            t_one_loop = median_time(jax.jit(_pairs(jnp.fft.fftn, jnp.fft.ifftn)), one,
                                     repeats=max(3, repeats // 2)) / LOOP_STEPS
            for grid in grids:
                done += 1
                mesh = pfft.make_mesh(grid, axis_types="auto")
                x = pfft.device_put(host, mesh)
                plan = pfft.plan(x.shape, x.dtype, mesh)
                fwd = jax.jit(plan.forward)
                k = fwd(x)
                err = float(np.linalg.norm(np.asarray(k) - ref) / np.linalg.norm(ref))
                del k
                t_pfft = median_time(fwd, x, repeats=repeats)
                t_loop = median_time(jax.jit(_pairs(plan.forward, plan.backward)), x,
                                     repeats=max(3, repeats // 2)) / LOOP_STEPS
                naive, spec = straightforward_chain(mesh)
                xn = jax.device_put(host, NamedSharding(mesh, spec))
                t_naive = median_time(naive, xn, repeats=repeats)
                del x, xn
                row = dict(n=n, dtype=np.dtype(dtype).name, grid="x".join(map(str, grid)),
                           devices=int(np.prod(grid)), single_ms=t_one * 1e3,
                           pfft_ms=t_pfft * 1e3, ratio=t_pfft / t_one,
                           naive_ms=t_naive * 1e3, naive_ratio=t_naive / t_one,
                           loop_ms=t_loop * 1e3, single_loop_ms=t_one_loop * 1e3,
                           loop_ratio=t_loop / t_one_loop, rel_err=err)
                rows.append(row)
                progress(f"[{done}/{total}] {n}^3 {row['dtype']} {row['grid']}: pfft "
                         f"{row['pfft_ms']:.1f} ms, one device {row['single_ms']:.1f} ms, "
                         f"ratio {row['ratio']:.2f}, loop ratio {row['loop_ratio']:.2f}")
    return rows


def table(rows) -> str:
    head = ("| size | dtype | grid | jnp.fft.fftn 1 dev (ms) | pfft (ms) | ratio | "
            "straightforward chain (ms) | ratio | in a jitted loop: 1 dev / pfft (ms per "
            "fwd+bwd) | loop ratio | rel. L2 error |")
    lines = [head, "|" + "---|" * 11]
    for r in rows:
        lines.append(f"| {r['n']}³ | {r['dtype']} | {r['grid']} | {r['single_ms']:.1f} | "
                     f"{r['pfft_ms']:.1f} | {r['ratio']:.2f} | {r['naive_ms']:.1f} | "
                     f"{r['naive_ratio']:.2f} | {r['single_loop_ms']:.0f} / {r['loop_ms']:.0f} | "
                     f"{r['loop_ratio']:.2f} | {r['rel_err']:.1e} |")
    return "\n".join(lines)


def plot(rows, path):
    try:
        import matplotlib
    except ImportError:
        print("--plot needs matplotlib: pip install 'pfft[bench]' (make bench does)", file=sys.stderr)
        return
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    labels = [f"{r['n']}³ {r['dtype'][7:]}\n{r['grid']}" for r in rows]
    xs = np.arange(len(rows))
    fig, ax = plt.subplots(figsize=(max(6, len(rows) * 0.8), 4))
    ax.bar(xs - 0.2, [r["ratio"] for r in rows], 0.4, label="pfft")
    ax.bar(xs + 0.2, [r["naive_ratio"] for r in rows], 0.4, label="straightforward chain")
    ax.axhline(1.0, color="k", lw=0.8)
    ax.set_xticks(xs, labels, fontsize=7)
    ax.set_ylabel("time / single-device jnp.fft.fftn")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[128, 256])
    ap.add_argument("--dtypes", nargs="+", default=["complex64", "complex128"])
    ap.add_argument("--grids", nargs="+", default=["2x2", "1x4", "2x4"])
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--out", default="results")
    ap.add_argument("--plot", action="store_true")
    add_malloc_argument(ap)
    args = ap.parse_args(argv)
    malloc = apply_malloc(args.malloc, "benchmarks.fftn_table", argv)
    grids = parse_grids(args.grids)
    print(f"pfft {pfft.__version__}, jax {jax.__version__}, {platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} cores, {datetime.date.today()}, {malloc}", flush=True)
    rows = run(args.sizes, args.repeats, [np.dtype(d) for d in args.dtypes], grids,
               progress=lambda s: print(s, file=sys.stderr, flush=True))
    text = table(rows)
    print(text)
    write_results(rows, text, args.out, "fftn_table")
    if args.plot:
        plot(rows, os.path.join(args.out, "fftn_table.png"))


if __name__ == "__main__":
    main()
