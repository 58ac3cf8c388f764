"""Large blocks on CPU: time and page faults per call, with and without a kernel switch.

At 256³ and above each device's block is tens of MiB; XLA:CPU maps such buffers anew on
every call and faults them in, so a call's time depends on how many pages it faults
and how big they are. For each grid this times single-device ``jnp.fft.fftn`` and
pfft's ``fftn`` called alternately (:func:`benchmarks.common.paired_medians`'s scheme,
with the minor page faults of each call from ``getrusage``) and reports median ms,
median faults per call and the ratio to one device.

The CPU kernels read their huge-page switch once per process
(``kernels/cpu/huge_pages.h``), so the measurement runs in child processes:
``--switch`` runs it twice, with the switch unset (pfft's default) and set.

    python -m benchmarks.page_faults [--size 256] [--dtype complex128]
        [--grids 4 2x2 1x4 8 2x4 4x2] [--repeats 12] [--switch PFFT_NO_HUGEPAGE_ADVICE]
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time

SWITCHES = ("PFFT_NO_HUGEPAGE_ADVICE",)


def _call(fn, x) -> tuple[float, int]:
    """Wall ms and minor page faults (whole process) of one call."""
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    start = time.perf_counter()
    fn(x).block_until_ready()
    ms = 1e3 * (time.perf_counter() - start)
    return ms, resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before


def measure(n: int, dtype: str, grids, repeats: int, progress=print) -> list[dict]:
    """One row per grid: one device and pfft, called alternately ``repeats`` times after
    a warm-up each."""
    from .common import parse_grids, simulate_cpu_devices
    simulate_cpu_devices(8)
    import jax
    import jax.numpy as jnp
    import numpy as np

    import pfft
    jax.config.update("jax_enable_x64", True)
    rng = np.random.default_rng(0)
    host = (rng.standard_normal((n,) * 3) + 1j * rng.standard_normal((n,) * 3)).astype(dtype)
    one = jax.jit(jnp.fft.fftn)
    x1 = jax.device_put(host, jax.devices()[0])
    rows = []
    for grid in parse_grids(grids):
        label = "x".join(map(str, grid))
        plan = pfft.plan(host.shape, dtype, pfft.make_mesh(grid))
        x = jax.device_put(host, plan.in_sharding)
        calls = ((one, x1), (jax.jit(plan.forward), x))
        for fn, arg in calls:
            fn(arg).block_until_ready()
        samples = ([], [])
        for _ in range(repeats):
            for out, (fn, arg) in zip(samples, calls):
                out.append(_call(fn, arg))
        (t1, f1), (tp, fp) = [(statistics.median(s[0] for s in out),
                               int(statistics.median(s[1] for s in out))) for out in samples]
        rows.append(dict(size=n, dtype=dtype, grid=label, one_ms=t1, one_faults=f1,
                         pfft_ms=tp, pfft_faults=fp, ratio=tp / t1))
        progress(f"  {label}: one device {t1:.1f} ms ({f1} faults), pfft {tp:.1f} ms "
                 f"({fp} faults), {tp / t1:.2f}")
        del x
    return rows


def _child(args, switch: str | None) -> list[dict]:
    """Rows measured in a fresh process with ``switch`` set (or none)."""
    env = dict(os.environ)
    for name in SWITCHES:
        env.pop(name, None)
    if switch:
        env[switch] = "1"
    cmd = [sys.executable, "-m", "benchmarks.page_faults", "--child", "--size", str(args.size),
           "--dtype", args.dtype, "--repeats", str(args.repeats), "--grids", *args.grids]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main(argv=None) -> None:
    from .common import markdown_table, write_results
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=256)
    ap.add_argument("--dtype", default="complex128", choices=["complex64", "complex128"])
    ap.add_argument("--grids", nargs="+", default=["4", "2x2", "1x4", "8", "2x4", "4x2"])
    ap.add_argument("--repeats", type=int, default=12)
    ap.add_argument("--switch", choices=SWITCHES, default=None,
                    help="also measure with this switch set (a second child process)")
    ap.add_argument("--out", default="results")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(measure(args.size, args.dtype, args.grids, args.repeats,
                                 progress=lambda s: print(s, file=sys.stderr))))
        return
    print(f"pfft page faults, {datetime.date.today()}, {platform.node()}, {os.cpu_count()} "
          f"cores, {args.size}^3 {args.dtype}, 8 simulated CPU devices", flush=True)
    rows = []
    for switch in (None, args.switch) if args.switch else (None,):
        print(f"{switch or 'default'} ...", flush=True)
        for r in _child(args, switch):
            rows.append(dict(r, setting=f"{switch}=1" if switch else "default"))
    columns = [("setting", "setting", "{}"), ("grid", "grid", "{}"),
               ("one_ms", "1-dev ms", "{:.1f}"), ("one_faults", "1-dev faults", "{}"),
               ("pfft_ms", "pfft ms", "{:.1f}"), ("pfft_faults", "pfft faults", "{}"),
               ("ratio", "**pfft / 1 dev**", "{:.2f}")]
    table = markdown_table(rows, columns)
    print(table)
    write_results(rows, table, args.out, f"page_faults_{args.size}_{args.dtype}")


if __name__ == "__main__":
    main()
