"""What fresh memory costs a single call on CPU: page faults, with and without glibc
keeping freed blocks.

A jitted call on XLA:CPU allocates its output (and its temporaries) per call. glibc
serves blocks of 32 MiB and more with a fresh ``mmap`` and returns them on ``free``, so
every call faults in its pages again (4 KiB at a time where the machine gives no
transparent huge pages); smaller blocks are kept on the heap and reused. A 256³
complex64 array on 4 devices is exactly 32 MiB per device: pfft's blocks there fault
on every call, where a jitted time step (one executable, buffers kept) does not.

Each configuration runs in a child process: the glibc default, then
``MALLOC_MMAP_MAX_=0`` with a large ``MALLOC_TRIM_THRESHOLD_`` (freed blocks stay on
the heap, below 64 MiB per thread's arena). In each, pfft and one-device ``jnp.fft``
of the same array alternate call by call; the table gives medians, the minor page
faults per call (``getrusage``), the ratio, and how far pfft's result is from the
one-device result.

    python -m benchmarks.fresh_memory [--size 256] [--grid 2x2] [--kinds fftn rfftn] [--pairs 9]
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys

from .common import markdown_table, write_results

SETTINGS = {
    "glibc default": {},
    "freed blocks kept": {"MALLOC_MMAP_MAX_": "0", "MALLOC_TRIM_THRESHOLD_": str(1 << 40)},
}


def _child(kind: str, size: int, grid: tuple[int, ...], pairs: int) -> dict:
    from .common import simulate_cpu_devices

    simulate_cpu_devices(8)
    import resource
    import statistics
    import time

    import jax
    import jax.numpy as jnp
    import numpy as np

    import pfft

    dtype = np.complex64 if kind == "fftn" else np.float32
    u = np.random.default_rng(0).random((size,) * 3).astype(dtype)
    mesh = pfft.make_mesh(grid)
    x = pfft.device_put(u, mesh)
    one = jax.device_put(u, jax.devices()[0])
    fns = {"pfft": (jax.jit(getattr(pfft, kind)), x),
           "one device": (jax.jit(getattr(jnp.fft, kind)), one)}
    times = {k: [] for k in fns}
    faults = {k: [] for k in fns}
    got, want = (np.asarray(fn(arg)) for fn, arg in fns.values())
    error = float(np.linalg.norm(got - want) / np.linalg.norm(want))
    for _ in range(pairs):
        for name, (fn, arg) in fns.items():
            before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
            start = time.perf_counter()
            out = fn(arg)
            out.block_until_ready()
            times[name].append(time.perf_counter() - start)
            faults[name].append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
            del out
    return {f"{k} ms": statistics.median(v) * 1e3 for k, v in times.items()} | {
        f"{k} faults": statistics.median(v) for k, v in faults.items()} | {"error": error}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=256)
    ap.add_argument("--grid", default="2x2")
    ap.add_argument("--kinds", nargs="+", default=["fftn", "rfftn"], choices=["fftn", "rfftn"])
    ap.add_argument("--pairs", type=int, default=9)
    ap.add_argument("--out", default="results")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    grid = tuple(int(v) for v in args.grid.split("x"))
    if args.child:
        print(json.dumps(_child(args.child, args.size, grid, args.pairs)))
        return
    rows = []
    for kind in args.kinds:
        for setting, env in SETTINGS.items():
            cmd = [sys.executable, "-m", "benchmarks.fresh_memory", "--child", kind,
                   "--size", str(args.size), "--grid", args.grid, "--pairs", str(args.pairs)]
            proc = subprocess.run(cmd, env=os.environ | env, capture_output=True, text=True,
                                  check=True)
            r = json.loads(proc.stdout.strip().splitlines()[-1])
            row = {"kind": kind, "size": args.size, "grid": args.grid, "allocator": setting,
                   **r, "ratio": r["pfft ms"] / r["one device ms"]}
            rows.append(row)
            print(f"{kind} {args.size}^3 {args.grid}, {setting}: pfft {r['pfft ms']:.1f} ms "
                  f"({r['pfft faults']:.0f} faults), one device {r['one device ms']:.1f} ms "
                  f"({r['one device faults']:.0f} faults), ratio {row['ratio']:.2f}", flush=True)
    columns = [("kind", "transform", "{}"), ("size", "N³", "{}"), ("grid", "grid", "{}"),
               ("allocator", "allocator", "{}"), ("one device ms", "1 device ms", "{:.1f}"),
               ("one device faults", "1 device faults/call", "{:.0f}"),
               ("pfft ms", "pfft ms", "{:.1f}"), ("pfft faults", "pfft faults/call", "{:.0f}"),
               ("ratio", "**pfft / 1 device**", "{:.2f}"),
               ("error", "pfft vs 1 device (rel. L2)", "{:.1e}")]
    table = markdown_table(rows, columns)
    print(f"pfft fresh memory, {platform.machine()}, {os.cpu_count()} cores, "
          f"{datetime.date.today()}")
    print(table)
    write_results(rows, table, args.out, "fresh_memory")


if __name__ == "__main__":
    main()
