"""Real transforms and gradient steps on simulated CPU devices.

For each grid, in the same run (median of repeated runs after a warm-up):

- ``rfftn`` (numpy layout, and the padded spectrum) and ``irfftn`` of a real array,
  as a fraction of the complex ``fftn`` of the same size on the same grid
  (issue-3 goal: rfftn / fftn <= 0.65);
- a gradient step ``grad(lambda x: sum(|rfftn(x)|^2 w))`` (one forward and one
  transposed transform) as a multiple of the forward ``rfftn`` (goal <= 2.2);
- single-device ``jnp.fft.rfftn`` / ``irfftn`` and the gradient step, and pfft's
  ``rfftn`` and ``irfftn`` as multiples of them (issue 15's baseline: the same
  operation on one device, measured in the same run).

    python -m benchmarks.rfftn_table [--size 256] [--grids 2x2 1x4] [--repeats 7]
"""
from __future__ import annotations

import argparse

from .common import (add_malloc_argument, apply_malloc, markdown_table, median_time,
                     parse_grids, run_header, simulate_cpu_devices, write_results)

simulate_cpu_devices(8)

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import pfft  # noqa: E402

jax.config.update("jax_enable_x64", True)


def _grad_step(transform, weight):
    def loss(x):
        return jnp.sum(jnp.abs(transform(x)) ** 2 * weight)
    return jax.jit(jax.grad(loss))


def run(n: int, grids, repeats: int, dtype=np.float32, progress=print):
    rng = np.random.default_rng(0)
    real = rng.standard_normal((n, n, n)).astype(dtype)
    cplx = (real + 1j * rng.standard_normal((n, n, n))).astype(np.result_type(dtype, 1j))
    ref = np.fft.rfftn(real.astype(np.float64))
    one = jax.device_put(real, jax.devices()[0])
    w_one = jnp.asarray(rng.random(ref.shape), dtype)
    t_one = median_time(jax.jit(jnp.fft.rfftn), one, repeats=repeats)
    k_one = jax.jit(jnp.fft.rfftn)(one)
    t_one_inv = median_time(jax.jit(lambda k: jnp.fft.irfftn(k, s=real.shape)), k_one,
                            repeats=repeats)
    t_one_grad = median_time(_grad_step(jnp.fft.rfftn, w_one), one, repeats=repeats)
    rows = []
    for grid in grids:
        progress(f"  {n}^3 {np.dtype(dtype).name} grid {'x'.join(map(str, grid))} ...")
        mesh = pfft.make_mesh(grid)
        c2c = pfft.plan(cplx.shape, cplx.dtype, mesh)
        r2c = pfft.plan(real.shape, dtype, mesh, kind="r2c")
        padded = pfft.plan(real.shape, dtype, mesh, kind="r2c", spectrum="padded")
        xr = jax.device_put(real, r2c.in_sharding)
        xc = jax.device_put(cplx, c2c.in_sharding)
        fwd = jax.jit(r2c.forward)
        t_c2c = median_time(jax.jit(c2c.forward), xc, repeats=repeats)
        t_r2c = median_time(fwd, xr, repeats=repeats)
        t_pad = median_time(jax.jit(padded.forward), xr, repeats=repeats)
        k = fwd(xr)
        t_inv = median_time(jax.jit(r2c.backward), k, repeats=repeats)
        weight = jax.device_put(jnp.asarray(rng.random(r2c.out_shape), dtype), r2c.out_sharding)
        t_grad = median_time(_grad_step(r2c.forward, weight), xr, repeats=repeats)
        err = float(np.linalg.norm(np.asarray(k) - ref) / np.linalg.norm(ref))
        rows.append(dict(
            size=n, dtype=np.dtype(dtype).name, grid="x".join(map(str, grid)),
            exchanges=f"{r2c.chain.exchanges} / {padded.chain.exchanges} / {c2c.chain.exchanges}",
            fftn_ms=1e3 * t_c2c, rfftn_ms=1e3 * t_r2c, padded_ms=1e3 * t_pad,
            irfftn_ms=1e3 * t_inv, grad_ms=1e3 * t_grad,
            rfftn_over_fftn=t_r2c / t_c2c, padded_over_fftn=t_pad / t_c2c,
            grad_over_forward=t_grad / t_r2c, one_device_rfftn_ms=1e3 * t_one,
            one_device_irfftn_ms=1e3 * t_one_inv, rfftn_over_one=t_r2c / t_one,
            irfftn_over_one=t_inv / t_one_inv,
            one_device_grad_over_forward=t_one_grad / t_one, rel_err=err))
    return rows


COLUMNS = [("grid", "grid", "{}"), ("exchanges", "all-to-alls r2c / padded / c2c", "{}"),
           ("fftn_ms", "fftn ms", "{:.1f}"), ("rfftn_ms", "rfftn ms", "{:.1f}"),
           ("padded_ms", "padded rfftn ms", "{:.1f}"), ("irfftn_ms", "irfftn ms", "{:.1f}"),
           ("grad_ms", "grad step ms", "{:.1f}"),
           ("rfftn_over_fftn", "**rfftn / fftn**", "{:.2f}"),
           ("padded_over_fftn", "padded / fftn", "{:.2f}"),
           ("grad_over_forward", "**grad / rfftn**", "{:.2f}"),
           ("one_device_rfftn_ms", "1-device jnp rfftn ms", "{:.1f}"),
           ("rfftn_over_one", "**rfftn / 1-device rfftn**", "{:.2f}"),
           ("one_device_irfftn_ms", "1-device jnp irfftn ms", "{:.1f}"),
           ("irfftn_over_one", "**irfftn / 1-device irfftn**", "{:.2f}"),
           ("one_device_grad_over_forward", "1-device grad / rfftn", "{:.2f}"),
           ("rel_err", "rel. error", "{:.1e}")]


def markdown(rows) -> str:
    return markdown_table(rows, COLUMNS)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=256)
    ap.add_argument("--grids", nargs="+", default=["2x2", "1x4"])
    ap.add_argument("--dtype", default="float32", choices=["float32", "float64"])
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--out", default="results")
    add_malloc_argument(ap)
    args = ap.parse_args(argv)
    malloc = apply_malloc(args.malloc, "benchmarks.rfftn_table", argv)
    grids = parse_grids(args.grids)
    print(run_header("rfftn benchmark", f"8 simulated CPU devices, {malloc}"))
    rows = run(args.size, grids, args.repeats, np.dtype(args.dtype).type)
    table = markdown(rows)
    print(table)
    write_results(rows, table, args.out, "rfftn_table")


if __name__ == "__main__":
    main()
