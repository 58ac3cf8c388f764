"""Local FFT engines on one device: pfft's native kernels against jnp.fft.

For each size and dtype, median of repeated runs after a warm-up, all measured in
the same run: a plain copy (one memory pass, the floor's unit), ``jnp.fft.fftn``,
the native three-axis transform out of place and in place on a donated buffer
(inside ``jit``), and a single strided axis-0 transform against
``jnp.fft.fft(x, axis=0)``. Ratios are native / jnp. The copy's rate counts bytes
read plus written. Writes ``engines.md`` and ``engines.csv`` under ``--out``.

    python -m benchmarks.engines [--sizes 128 256] [--repeats 7] [--out results]
    python -m benchmarks.engines --platform gpu --sizes 256 512 1024 --dtypes complex64
"""
from __future__ import annotations

import argparse
import datetime
import os
import platform
import statistics
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np

from .common import median_time, write_results

jax.config.update("jax_enable_x64", True)

from pfft.engines import native  # noqa: E402


def median_time_donated(fn, x, repeats: int = 7, warmup: int = 1) -> float:
    """Median time of ``x = fn(x)`` where ``fn`` donates its argument (fresh input each call)."""
    for _ in range(warmup):
        x = fn(x)
    x.block_until_ready()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        x = fn(x)
        x.block_until_ready()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def run(sizes, dtypes, repeats, device, progress=print):
    rows = []
    axes = (0, 1, 2)
    for n in sizes:
        for dtype in dtypes:
            rng = np.random.default_rng(0)
            host = (rng.standard_normal((n, n, n)) + 1j * rng.standard_normal((n, n, n))).astype(dtype)
            x = jax.device_put(host, device) + 0    # an XLA-owned buffer
            copy = jax.jit(jnp.copy)
            jfftn = jax.jit(jnp.fft.fftn)
            nfftn = jax.jit(lambda a: native.fft(a, axes))
            nfftn_ip = jax.jit(lambda a: native.fft(a, axes, inplace=True), donate_argnums=0)
            jfft0 = jax.jit(lambda a: jnp.fft.fft(a, axis=0))
            nfft0 = jax.jit(lambda a: native.fft(a, 0))
            nfft0_ip = jax.jit(lambda a: native.fft(a, 0, inplace=True), donate_argnums=0)
            if n <= 256:                            # numpy float64 reference
                ref = np.fft.fftn(host.astype(np.complex128))
                err = float(np.linalg.norm(np.asarray(nfftn(x)) - ref) / np.linalg.norm(ref))
            else:                                   # too big for the host: against jnp
                ref = jfftn(x)
                err = float(jnp.linalg.norm(nfftn(x) - ref) / jnp.linalg.norm(ref))
            del ref, host
            t_copy = median_time(copy, x, repeats=repeats)
            r = dict(n=n, dtype=np.dtype(dtype).name, threads=native.num_threads(),
                     copy_ms=t_copy * 1e3, copy_gbs=2 * x.nbytes / t_copy / 1e9,
                     jnp_fftn_ms=median_time(jfftn, x, repeats=repeats) * 1e3,
                     native_fftn_ms=median_time(nfftn, x, repeats=repeats) * 1e3,
                     native_fftn_inplace_ms=median_time_donated(nfftn_ip, x + 0, repeats) * 1e3,
                     jnp_fft0_ms=median_time(jfft0, x, repeats=repeats) * 1e3,
                     native_fft0_ms=median_time(nfft0, x, repeats=repeats) * 1e3,
                     native_fft0_inplace_ms=median_time_donated(nfft0_ip, x + 0, repeats) * 1e3,
                     rel_err=err)
            rows.append(r)
            progress(f"{n}^3 {r['dtype']}: copy {r['copy_ms']:.1f}, jnp fftn {r['jnp_fftn_ms']:.1f}, "
                     f"native {r['native_fftn_ms']:.1f} / in place {r['native_fftn_inplace_ms']:.1f}, "
                     f"axis 0 jnp {r['jnp_fft0_ms']:.1f} native {r['native_fft0_ms']:.1f} ms")
            del x
    return rows


def table(rows) -> str:
    head = ("| size | dtype | copy (ms, GB/s) | jnp.fft.fftn (ms) | native fftn (ms) | ratio | "
            "native fftn in place, donated (ms) | ratio | jnp.fft.fft axis 0 (ms) | "
            "native axis 0 (ms) | ratio | native axis 0 in place (ms) | ratio | rel. L2 error† |")
    lines = [head, "|" + "---|" * 14]
    foot = "† native fftn against numpy in float64 up to 256³, against jnp.fft.fftn above."
    for r in rows:
        lines.append(
            f"| {r['n']}³ | {r['dtype']} | {r['copy_ms']:.1f} ({r['copy_gbs']:.1f}) | {r['jnp_fftn_ms']:.1f} | "
            f"{r['native_fftn_ms']:.1f} | {r['native_fftn_ms'] / r['jnp_fftn_ms']:.2f} | "
            f"{r['native_fftn_inplace_ms']:.1f} | {r['native_fftn_inplace_ms'] / r['jnp_fftn_ms']:.2f} | "
            f"{r['jnp_fft0_ms']:.1f} | {r['native_fft0_ms']:.1f} | "
            f"{r['native_fft0_ms'] / r['jnp_fft0_ms']:.2f} | {r['native_fft0_inplace_ms']:.1f} | "
            f"{r['native_fft0_inplace_ms'] / r['jnp_fft0_ms']:.2f} | {r['rel_err']:.1e} |")
    return "\n".join(lines + ["", foot])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[128, 256])
    ap.add_argument("--dtypes", nargs="+", default=["complex64", "complex128"])
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--platform", choices=["cpu", "gpu"], default="cpu")
    ap.add_argument("--out", default="results")
    args = ap.parse_args(argv)
    if not native.available(args.platform):
        sys.exit(f"native {args.platform} engine unavailable: "
                 f"{native.unavailable_reason(args.platform)}")
    device = jax.devices(args.platform)[0]
    print(f"jax {jax.__version__}, {device.device_kind}, {platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} cores, native engine {native.num_threads()} CPU threads, "
          f"{datetime.date.today()}", flush=True)
    rows = run(args.sizes, [np.dtype(d) for d in args.dtypes], args.repeats, device,
               progress=lambda s: print(s, file=sys.stderr, flush=True))
    text = table(rows)
    print(text)
    write_results(rows, text, args.out, "engines" if args.platform == "cpu" else "engines_gpu")


if __name__ == "__main__":
    main()
