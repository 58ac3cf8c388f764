"""The figures of ``python -m benchmarks transforms`` and ``peers``
(:mod:`benchmarks.suite`): from the rows of a run or of its CSV
(:func:`benchmarks.suite_rows.read_csv`), without JAX."""
from __future__ import annotations

import os
import sys

import numpy as np

from .common import pyplot, save_plot
from .suite_rows import CHAIN, JAXDECOMP, JNP, PFFT


def _sweep(rows):
    """The sweep's distributed measurements (not one device's) and their
    ``(shape, dtype, kind)`` keys, smallest first."""
    sweep = [r for r in rows if r["study"] == "sweep" and r["ms"] != "" and r["impl"] != JNP]
    keys = sorted({(r["shape"], r["dtype"], r["kind"]) for r in sweep},
                  key=lambda k: (int(k[0].split("x")[0]), k[1], k[2]))
    return sweep, keys


def ratios_plot(rows, path, note=None, impls=(PFFT, CHAIN, JAXDECOMP)) -> str | None:
    """A panel per size, dtype and kind: each implementation's time over one device's,
    a bar per grid."""
    sweep, keys = _sweep(rows)
    if not keys:
        return None
    plt = pyplot()
    fig, axes = plt.subplots(len(keys), 1, figsize=(9, 2.8 * len(keys)), squeeze=False)
    for ax, key in zip(axes[:, 0], keys):
        rs = [r for r in sweep if (r["shape"], r["dtype"], r["kind"]) == key]
        grids = list(dict.fromkeys(r["grid"] for r in rs))
        present = [i for i in impls if any(r["impl"] == i for r in rs)]
        xs = np.arange(len(grids))
        w = 0.8 / max(1, len(present))
        for k, impl in enumerate(present):
            vals = [next((r["ratio"] for r in rs if r["impl"] == impl and r["grid"] == g),
                         np.nan) for g in grids]
            ax.bar(xs + (k - (len(present) - 1) / 2) * w, vals, w, label=impl)
        ax.axhline(1.0, color="k", lw=0.8)
        ax.set_xticks(xs, grids)
        ax.set_title(f"{key[0]} {key[1]} {key[2]}", fontsize=9)
        ax.set_ylabel("time / jnp 1 device")
        ax.legend(fontsize=7)
    return save_plot(fig, path, note)


def one_device_plot(rows, path, note=None) -> str | None:
    """pfft's time over one device's against the grid: a line per size, dtype and kind."""
    sweep, keys = _sweep(rows)
    if not keys:
        return None
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7, 3.8))
    grids = list(dict.fromkeys(r["grid"] for r in sweep if r["impl"] == PFFT))
    for key in keys:
        rs = {r["grid"]: r["ratio"] for r in sweep
              if (r["shape"], r["dtype"], r["kind"]) == key and r["impl"] == PFFT}
        ax.plot(range(len(grids)), [rs.get(g, np.nan) for g in grids], marker="o",
                ls="-" if key[1] in ("complex64", "float32") else "--",
                label=f"{key[0].split('x')[0]}³ {key[1]} {key[2]}")
    ax.axhline(1.0, color="grey", lw=0.8)
    ax.set_xticks(range(len(grids)), grids)
    ax.set(xlabel="grid", ylabel="pfft / jnp 1 device")
    ax.legend(fontsize=7)
    return save_plot(fig, path, note)


def scaling_plot(rows, path, note=None) -> str | None:
    """Strong scaling (pfft's best grid per device count) and weak scaling."""
    sweep, keys = _sweep(rows)
    weak = [r for r in rows if r["study"] == "weak" and r["impl"] == PFFT]
    if not keys and not weak:
        return None
    plt = pyplot()
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 4))
    for key in keys:
        rs = [r for r in sweep if (r["shape"], r["dtype"], r["kind"]) == key and r["impl"] == PFFT]
        best = {}
        for r in rs:
            if r["devices"] not in best or r["ms"] < best[r["devices"]]:
                best[r["devices"]] = r["ms"]
        d = sorted(best)
        a1.plot(d, [best[k] for k in d], "o-", label=" ".join(key))
    a1.set(xscale="log", yscale="log", xlabel="simulated devices (2 cores)",
           ylabel="pfft ms (best grid)", title="strong scaling (overheads, not speed-up)")
    a1.legend(fontsize=7)
    if weak:
        a2.plot([r["devices"] for r in weak], [r["ms"] for r in weak], "o-", label="pfft")
        a2.plot([r["devices"] for r in weak], [r["single_ms"] for r in weak], "s--",
                label="jnp 1 device, same global shape")
        a2.plot([r["devices"] for r in weak], [r["model_ms"] for r in weak], "^:", label="model")
        a2.legend(fontsize=7)
    a2.set(xscale="log", yscale="log", xlabel="simulated devices", ylabel="ms",
           title="weak scaling (fixed size per device)")
    for ax in (a1, a2):
        ax.set_xticks([1, 2, 4, 8], ["1", "2", "4", "8"])
        ax.minorticks_off()
    return save_plot(fig, path, note)


def model_plot(rows, path, note=None) -> str | None:
    """Measured time against the cost model, per implementation."""
    pm = [r for r in rows if r["model_ms"] != "" and r["ms"] != ""]
    if not pm:
        return None
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(5.5, 5))
    for impl, mk in ((JNP, "s"), (PFFT, "o"), (CHAIN, "x")):
        rs = [r for r in pm if r["impl"] == impl]
        ax.scatter([r["model_ms"] for r in rs], [r["ms"] for r in rs], marker=mk, label=impl)
    lo = min(min(r["model_ms"], r["ms"]) for r in pm)
    hi = max(max(r["model_ms"], r["ms"]) for r in pm)
    ax.plot([lo, hi], [lo, hi], "k-", lw=0.8)
    ax.set(xscale="log", yscale="log", xlabel="model ms", ylabel="measured ms",
           title="cost model vs measured")
    ax.legend(fontsize=7)
    return save_plot(fig, path, note)


def plots(rows, out, note: str | None = None, prefix: str = "") -> list[str]:
    """``ratios.png``, ``scaling.png`` and ``model.png`` (each named with ``prefix``)
    under ``out``, those the rows have data for; ``note`` (machine, date, command)
    along the bottom of each."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        print("plots need matplotlib (pip install 'pfft[bench]')", file=sys.stderr)
        return []
    return [p for p in (ratios_plot(rows, os.path.join(out, prefix + "ratios.png"), note),
                        scaling_plot(rows, os.path.join(out, prefix + "scaling.png"), note),
                        model_plot(rows, os.path.join(out, prefix + "model.png"), note)) if p]
