"""Fixed costs on simulated CPU devices: what a tiny exchange and a tiny kernel call cost.

Small blocks (64³ and below) are where fixed costs show (issue 15). In one run, median
of repeated calls after a warm-up, each jitted once:

- ``dispatch``: a jitted ``shard_map`` that returns its input plus one: the floor of
  any jitted call on the grid (launch, argument handling, synchronisation);
- ``all_to_all``: one tiled ``lax.all_to_all`` of a block of ``B`` bytes per device
  over a mesh axis of ``p`` devices;
- ``p - 1 permutes``: the same exchange as ``p - 1`` ``lax.ppermute`` shifts plus the
  piece that stays, as pfft's pieces path runs it where JAX has no swap;
- ``swap``: the same exchange as one swap of ``p`` pieces (XLA's tuple all-to-all,
  :func:`pfft.transports.swap.swap`), as pfft's pieces path runs it (:mod:`pfft.pieces`);
- the native engine's kernel call (:func:`pfft.engines.native.fft`) and XLA's FFT on
  one device, on a block of ``B`` bytes, next to a jitted ``x + 1`` of the same block;
- a whole jitted pfft ``rfftn`` of 16³ on a slab of ``p`` devices against one-device
  ``jnp.fft.rfftn``: everything fixed about a distributed transform.

The exchange columns subtract nothing: each is the whole jitted call, to be read
against ``dispatch``.

    python -m benchmarks.fixed_costs [--devices 4 8] [--kib 1 16 256 4096] [--repeats 51] [--plot]

``--plot`` draws the exchange costs against block size with the block size above which
pfft's ``fuse_exchanges="auto"`` shifts pieces where it cannot swap them
(:func:`pfft.pieces.shifts_pay`). The permutes and the swap cut and stack the block
with copies of their own here, which pfft's FFTs do as they write and read the pieces.
"""
from __future__ import annotations

import argparse
import os
from functools import partial

from .common import (markdown_table, median_time, run_header, save_plot,
                     simulate_cpu_devices, write_results)

simulate_cpu_devices(8)

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax import lax  # noqa: E402
from jax.sharding import NamedSharding, PartitionSpec as P  # noqa: E402

from pfft.engines import native  # noqa: E402
from pfft.transports import swap as swap_module  # noqa: E402

AXIS = "d"


def _on_mesh(fn, mesh):
    return jax.jit(jax.shard_map(fn, mesh=mesh, in_specs=P(AXIS), out_specs=P(AXIS)))


def _permutes(x, p: int):
    """The exchange as ``p - 1`` shifts: the piece for device ``me + k`` goes ``k`` on."""
    me = lax.axis_index(AXIS)
    width = x.shape[1] // p
    received = []
    for k in range(p):
        piece = lax.dynamic_slice_in_dim(x, ((me + k) % p) * width, width, axis=1)
        if k:
            piece = lax.ppermute(piece, AXIS, [(i, (i + k) % p) for i in range(p)])
        received.append(piece)                       # came from device me - k
    by_source = jnp.take(jnp.stack(received), (me - jnp.arange(p)) % p, axis=0)
    return by_source.reshape(p * x.shape[0], width)


def _swap(x, p: int):
    """The exchange as one swap: piece ``k`` (columns ``k``) to device ``k``, the
    received pieces stacked by source."""
    width = x.shape[1] // p
    pieces = [x[:, k * width:(k + 1) * width] for k in range(p)]
    return jnp.concatenate(swap_module.swap(pieces, AXIS), axis=0)


def exchange_rows(devices, kib_list, repeats):
    rows = []
    for p in devices:
        mesh = jax.make_mesh((p,), (AXIS,), devices=jax.devices()[:p],
                             axis_types=(jax.sharding.AxisType.Explicit,))
        for kib in kib_list:
            # a (rows, 8p) complex64 block of ``kib`` KiB per device
            cols = p * 8
            rows_local = max(1, kib * 1024 // 8 // cols)
            x = jnp.asarray(np.random.default_rng(0).standard_normal((p * rows_local, cols)),
                            jnp.complex64)
            x = jax.device_put(x, NamedSharding(mesh, P(AXIS)))
            nbytes = rows_local * cols * 8
            fns = {
                "dispatch": _on_mesh(lambda b: b + 1, mesh),
                "all_to_all": _on_mesh(
                    lambda b: lax.all_to_all(b, AXIS, 1, 0, tiled=True), mesh),
                "permutes": _on_mesh(partial(_permutes, p=p), mesh),
            }
            if swap_module.AVAILABLE:
                fns["swap"] = _on_mesh(partial(_swap, p=p), mesh)
            ref = np.asarray(fns["all_to_all"](x))
            for name in ("permutes", "swap"):
                if name in fns and not np.array_equal(ref, np.asarray(fns[name](x))):
                    raise RuntimeError(f"the {name} exchange does not equal the all-to-all")
            t = {k: median_time(f, x, repeats=repeats) for k, f in fns.items()}
            t.setdefault("swap", float("nan"))
            rows.append(dict(devices=p, block_bytes=nbytes,
                             dispatch_us=1e6 * t["dispatch"],
                             all_to_all_us=1e6 * t["all_to_all"],
                             permutes_us=1e6 * t["permutes"],
                             swap_us=1e6 * t["swap"],
                             permutes_over_all_to_all=t["permutes"] / t["all_to_all"],
                             swap_over_all_to_all=t["swap"] / t["all_to_all"]))
    return rows


def plan_rows(devices, repeats, n: int = 16):
    """A whole jitted ``rfftn`` of ``n³`` float32 (the smallest blocks) on a slab of
    ``p`` devices and on one device: the fixed cost of a distributed transform."""
    import pfft

    x = np.random.default_rng(0).standard_normal((n, n, n)).astype(np.float32)
    one = jax.device_put(x, jax.devices()[0])
    t_one = median_time(jax.jit(jnp.fft.rfftn), one, repeats=repeats)
    rows = []
    for p in devices:
        plan = pfft.plan(x.shape, np.float32, pfft.make_mesh((p,)), kind="r2c")
        xs = jax.device_put(x, plan.in_sharding)
        t = median_time(jax.jit(plan.forward), xs, repeats=repeats)
        rows.append(dict(devices=p, size=n, one_device_us=1e6 * t_one, pfft_us=1e6 * t,
                         exchanges=plan.chain.exchanges))
    return rows


def kernel_rows(kib_list, repeats):
    rows = []
    dev = jax.devices()[0]
    for kib in kib_list:
        n = max(8, kib * 1024 // 8 // 8)
        x = jax.device_put(jnp.ones((8, n), jnp.complex64), dev)
        t_add = median_time(jax.jit(lambda b: b + 1), x, repeats=repeats)
        t_xla = median_time(jax.jit(lambda b: jnp.fft.fft(b, axis=1)), x, repeats=repeats)
        row = dict(block_bytes=8 * n * 8, jit_add_us=1e6 * t_add, xla_fft_us=1e6 * t_xla,
                   native_fft_us=float("nan"))
        if native.available("cpu"):
            t_nat = median_time(jax.jit(lambda b: native.fft(b, 1)), x, repeats=repeats)
            row["native_fft_us"] = 1e6 * t_nat
        rows.append(row)
    return rows


EXCHANGE_COLUMNS = [("devices", "devices", "{}"), ("block_bytes", "block bytes / device", "{}"),
                    ("dispatch_us", "jitted x+1 µs", "{:.0f}"),
                    ("all_to_all_us", "one all_to_all µs", "{:.0f}"),
                    ("permutes_us", "p−1 permutes µs", "{:.0f}"),
                    ("swap_us", "one swap µs", "{:.0f}"),
                    ("permutes_over_all_to_all", "permutes / all_to_all", "{:.2f}"),
                    ("swap_over_all_to_all", "swap / all_to_all", "{:.2f}")]
KERNEL_COLUMNS = [("block_bytes", "block bytes", "{}"), ("jit_add_us", "jitted x+1 µs", "{:.0f}"),
                  ("xla_fft_us", "XLA fft µs", "{:.0f}"),
                  ("native_fft_us", "native fft µs", "{:.0f}")]

PLAN_COLUMNS = [("devices", "devices", "{}"), ("size", "N (N³ float32)", "{}"),
                ("exchanges", "exchanges", "{}"),
                ("one_device_us", "1-device jnp rfftn µs", "{:.0f}"),
                ("pfft_us", "pfft rfftn µs", "{:.0f}")]


def plot(rows, path: str, note: str | None = None) -> None:
    """Exchange time against block size per device: one all-to-all and ``p - 1``
    permutes for each device count, the jitted no-op beneath them, and the block size
    from which ``fuse_exchanges="auto"`` chooses the permutes; ``note`` at the bottom."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from pfft.pieces import SHIFT_BYTES

    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for i, p in enumerate(sorted({int(r["devices"]) for r in rows})):
        mine = sorted((int(r["block_bytes"]), r) for r in rows if int(r["devices"]) == p)
        size = [b for b, _ in mine]
        colour = plt.cm.tab10(i)
        for key, style, what in (("all_to_all_us", "-o", "one all_to_all"),
                                 ("permutes_us", "--s", f"{p - 1} permutes"),
                                 ("swap_us", "-.^", "one swap"),
                                 ("dispatch_us", ":", "jitted x+1")):
            ax.plot(size, [float(r[key]) for _, r in mine], style, color=colour, ms=4,
                    label=f"{p} devices: {what}")
        if p > 2:
            ax.axvline((p - 2) * SHIFT_BYTES, color=colour, lw=0.8, alpha=0.6)
            ax.text((p - 2) * SHIFT_BYTES / 1.12, 0.97,
                    f"no swap: permutes from {(p - 2) * SHIFT_BYTES // 1024} KiB ({p} devices)",
                    transform=ax.get_xaxis_transform(), rotation=90, fontsize=6.5,
                    color=colour, va="top", ha="right")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("block bytes per device")
    ax.set_ylabel("whole jitted call, µs")
    ax.set_title("fixed costs of one exchange")
    ax.legend(fontsize=6.5, ncol=2, loc="upper left")
    save_plot(fig, path, note)
    print(f"plot: {path}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--devices", nargs="+", type=int, default=[4, 8])
    ap.add_argument("--kib", nargs="+", type=int, default=[1, 16, 256, 4096])
    ap.add_argument("--repeats", type=int, default=51)
    ap.add_argument("--out", default="results")
    ap.add_argument("--plot", action="store_true")
    args = ap.parse_args(argv)
    print(run_header("fixed costs"))
    ex = exchange_rows(args.devices, args.kib, args.repeats)
    ke = kernel_rows(args.kib, args.repeats)
    pl = plan_rows(args.devices, args.repeats)
    table = "\n\n".join([markdown_table(ex, EXCHANGE_COLUMNS), markdown_table(ke, KERNEL_COLUMNS),
                          markdown_table(pl, PLAN_COLUMNS)])
    print(table)
    write_results(ex, table, args.out, "fixed_costs")
    if args.plot:
        plot(ex, os.path.join(args.out, "fixed_costs.png"))


if __name__ == "__main__":
    main()
