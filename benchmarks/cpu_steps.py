"""Where the CPU pencil transform's time goes: one row per optimisation step.

Each configuration runs in a fresh process (the huge-page advice is read once per
process), alternating single-device ``jnp.fft.fftn`` and pfft call by call; the
ratio is pfft / one device from the same process. The floor row is the three local
FFTs of the pencil chain with no communication at all.

    python -m benchmarks.cpu_steps [--size 256] [--grid 2x2] [--pairs 15] [--runs 3]
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys

from .common import write_results

STEPS = [
    ("xla", "XLA engine: transposes around lax.fft, XLA's all_to_all", {}),
    ("a2a", "native engine (strided DUCC, in place), XLA's all_to_all", {}),
    ("pieces-nothp", "+ FFTs write/read the pieces, exchanges as collective permutes", {
        "PFFT_NO_HUGEPAGE_ADVICE": "1"}),
    ("pieces", "+ huge-page advice for the buffers the kernels write first (default)", {}),
    ("floor", "floor: the three local FFTs alone, no communication", {}),
]


def _child(step: str, size: int, grid: tuple[int, ...], pairs: int) -> dict:
    from .common import simulate_cpu_devices

    simulate_cpu_devices(8)
    import time

    import jax
    import jax.numpy as jnp
    import numpy as np

    import pfft
    from pfft.engines import native

    rng = np.random.default_rng(0)
    host = (rng.standard_normal((size,) * 3)
            + 1j * rng.standard_normal((size,) * 3)).astype(np.complex64)
    one = jax.device_put(host, jax.devices()[0])
    mesh = pfft.make_mesh(grid, axis_types="auto")
    x = pfft.device_put(host, mesh)
    if step == "floor":
        spec = x.sharding.spec

        def body(a):
            a = native.fft(a, (2,), nthreads=1)
            a = native.fft(a, (1,), inplace=True, nthreads=1)
            return native.fft(a, (0,), inplace=True, nthreads=1)
        fn = jax.jit(jax.shard_map(body, mesh=mesh, in_specs=spec, out_specs=spec,
                                   check_vma=False))
    else:
        plan = pfft.plan(x.shape, x.dtype, mesh, engine="xla" if step == "xla" else "native",
                         fuse_exchanges=step.startswith("pieces"))
        fn = jax.jit(plan.forward)
    ref = jax.jit(jnp.fft.fftn)
    for _ in range(2):
        ref(one).block_until_ready()
        fn(x).block_until_ready()
    t_one, t_pfft = [], []
    for _ in range(pairs):
        start = time.perf_counter()
        ref(one).block_until_ready()
        t_one.append(time.perf_counter() - start)
        start = time.perf_counter()
        fn(x).block_until_ready()
        t_pfft.append(time.perf_counter() - start)
    one_ms, pfft_ms = statistics.median(t_one) * 1e3, statistics.median(t_pfft) * 1e3
    return dict(one_ms=one_ms, pfft_ms=pfft_ms, ratio=pfft_ms / one_ms)


def run(size: int, grid: tuple[int, ...], pairs: int, runs: int, progress=print) -> list[dict]:
    rows = []
    for i, (step, what, env) in enumerate(STEPS, 1):
        ratios, ones, pffts = [], [], []
        for r in range(runs):
            cmd = [sys.executable, "-m", "benchmarks.cpu_steps", "--child", step,
                   "--size", str(size), "--grid", "x".join(map(str, grid)),
                   "--pairs", str(pairs)]
            out = subprocess.run(cmd, env={**os.environ, **env}, capture_output=True,
                                 text=True, check=True)
            res = json.loads(out.stdout.strip().splitlines()[-1])
            ratios.append(res["ratio"])
            ones.append(res["one_ms"])
            pffts.append(res["pfft_ms"])
            progress(f"[{i}/{len(STEPS)} run {r + 1}/{runs}] {step}: pfft {res['pfft_ms']:.1f} ms, "
                     f"one device {res['one_ms']:.1f} ms, ratio {res['ratio']:.2f}")
        rows.append(dict(step=step, what=what, one_ms=statistics.median(ones),
                         pfft_ms=statistics.median(pffts), ratio=statistics.median(ratios),
                         ratio_min=min(ratios), ratio_max=max(ratios)))
    return rows


def table(rows) -> str:
    lines = ["| step | what runs | one device (ms) | pfft (ms) | ratio, median of runs "
             "(min–max) |", "|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['step']} | {r['what']} | {r['one_ms']:.1f} | {r['pfft_ms']:.1f} | "
                     f"**{r['ratio']:.2f}** ({r['ratio_min']:.2f}–{r['ratio_max']:.2f}) |")
    return "\n".join(lines)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", type=int, default=256)
    ap.add_argument("--grid", default="2x2")
    ap.add_argument("--pairs", type=int, default=15, help="alternated calls per process")
    ap.add_argument("--runs", type=int, default=3, help="processes per step")
    ap.add_argument("--out", default="results")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    grid = tuple(int(v) for v in args.grid.split("x"))
    if args.child:
        print(json.dumps(_child(args.child, args.size, grid, args.pairs)))
        return
    print(f"# pfft CPU steps, {args.size}^3 complex64 on {args.grid}, {platform.node()}, "
          f"{os.cpu_count()} cores, {datetime.date.today()}", flush=True)
    rows = run(args.size, grid, args.pairs, args.runs)
    md = table(rows)
    print(md)
    write_results(rows, md, args.out, "cpu_steps")


if __name__ == "__main__":
    main()
