"""Real transforms on one device, per engine: pfft on a 1x1 grid against ``jnp.fft``.

For each size and precision, all in the same run (median of ``--repeats`` calls after
``--warmup``, inside ``jit``):

- a copy of the real array (the bandwidth unit);
- ``jnp.fft.rfftn`` and ``jnp.fft.irfftn``;
- pfft's ``rfftn``/``irfftn`` plans on a 1x1 mesh with ``engine="auto"``, ``"native"``
  and ``"xla"`` (on GPUs ``auto`` runs ``lax.fft`` for the innermost axes, the native
  kernels for strided ones), and on GPUs ``auto`` again after :func:`pfft.tune` measured
  each FFT step's engines on the device ("auto, tuned"; the run starts with no wisdom);
- ``pfft.dctn`` (type 2, ``engine="auto"``: one ``rfftn`` over the three axes with the
  pre- and post-processing of all of them around it) against ``jnp.fft.rfftn`` of the
  same array, and the same DCT-II one axis at a time (a real FFT, its twiddles and
  transposes per axis: :func:`pfft.engines.r2r.apply` three times);
- the strided transforms a pencil runs after its exchanges: a complex transform over
  axis 1 and over axis 0, the native kernel against ``jnp.fft.fft(x, axis=...)``, and a
  real transform over axes (0, 1) (the halved axis strided) against ``jnp.fft.rfftn``.

Each result is checked against ``jnp.fft`` on the device (relative L2 error). Prints a
Markdown table and writes it with a CSV under ``--out`` (``real_engines_<platform>``).

    python -m benchmarks.real_engines --platform gpu --sizes 256 512 --dtypes float32 float64
"""
from __future__ import annotations

import argparse
import gc
import os
import sys

import jax
import jax.numpy as jnp
import numpy as np

from .common import (median_time, read_info, read_table_rows, run_info, write_doc,
                     write_results)
from .engines import _rel_err, _short, device_and_header, on_one_device

jax.config.update("jax_enable_x64", True)

import pfft  # noqa: E402
from pfft.engines import native, r2r  # noqa: E402

ENGINES = ("auto", "native", "xla")
TOLERANCE = {"float32": 2e-5, "float64": 1e-12}


def _cases(n: int, dtype, mesh, has_native: bool) -> dict:
    """name -> (function, argument kind "r" real or "k" spectrum or "c" complex, reference
    name)."""
    cases = {"copy": (jnp.copy, "r", None),
             "jnp_rfftn": (jnp.fft.rfftn, "r", None),
             "jnp_irfftn": (lambda k: jnp.fft.irfftn(k, (n, n, n)), "k", None)}
    for engine in ENGINES:
        if engine == "native" and not has_native:
            continue
        plan = pfft.plan((n, n, n), dtype, mesh, kind="r2c", engine=engine)
        cases[f"{engine}_rfftn"] = (plan.forward, "r", "jnp_rfftn")
        cases[f"{engine}_irfftn"] = (plan.backward, "k", "jnp_irfftn")
        if engine == "auto" and hasattr(plan.engine, "choose"):
            # each FFT step's engine measured on the device (pfft.tune), then planned again
            pfft.tune((n, n, n), dtype, list(mesh.devices.flat), kind="r2c", repeats=5,
                      progress=False)
            tuned = pfft.plan((n, n, n), dtype, mesh, kind="r2c", engine="auto")
            cases["tuned_rfftn"] = (tuned.forward, "r", "jnp_rfftn")
            cases["tuned_irfftn"] = (tuned.backward, "k", "jnp_irfftn")
    cases["auto_dctn"] = (lambda x: pfft.dctn(x, 2), "r", None)
    dct2 = r2r.scipy_op("dct2", n)
    cases["peraxis_dctn"] = (lambda x: r2r.apply(r2r.apply(r2r.apply(x, dct2, 0), dct2, 1),
                                                 dct2, 2), "r", "auto_dctn")
    cases["jnp_fft1"] = (lambda c: jnp.fft.fft(c, axis=1), "c", None)
    cases["jnp_fft0"] = (lambda c: jnp.fft.fft(c, axis=0), "c", None)
    cases["jnp_rfft01"] = (lambda x: jnp.fft.rfftn(x, axes=(0, 1)), "r", None)
    if has_native:
        cases["native_fft1"] = (lambda c: native.fft(c, 1), "c", "jnp_fft1")
        cases["native_fft0"] = (lambda c: native.fft(c, 0), "c", "jnp_fft0")
        cases["native_rfft01"] = (lambda x: native.rfft(x, (0, 1)), "r", "jnp_rfft01")
    return cases


def run(sizes, dtypes, repeats: int, device, warmup: int = 2, progress=print) -> list[dict]:
    """One row per size and precision: each case's time and error, and ratios."""
    rows = []
    mesh, _, has_native = on_one_device(device)
    pfft.forget_wisdom()                       # "auto": the rule; "auto, tuned": measured
    for n in sizes:
        for dtype in dtypes:
            dtype = np.dtype(dtype)
            row = dict(n=n, dtype=dtype.name, mib=n ** 3 * dtype.itemsize / 2 ** 20, failed="")
            with jax.default_device(device):
                x = jax.random.normal(jax.random.key(1), (n, n, n), dtype)
                args = {"r": x, "k": jnp.fft.rfftn(x), "c": x.astype(jnp.result_type(dtype, 1j))}
            cases = _cases(n, dtype, mesh, has_native)
            refs = {}
            for name, (fn, kind, ref) in cases.items():
                try:
                    f = jax.jit(fn)
                    y = f(args[kind])
                    if ref is None:
                        refs[name] = y
                    else:
                        err = float(_rel_err(y, refs[ref]))
                        row[f"{name}_err"] = err
                        if not err <= TOLERANCE[dtype.name]:
                            row["failed"] += f" {name}:inaccurate"
                    del y
                    row[f"{name}_ms"] = 1e3 * median_time(f, args[kind], repeats=repeats,
                                                          warmup=warmup)
                except Exception as exc:       # noqa: BLE001 (reported, the run goes on)
                    row["failed"] += f" {name}:{_short(exc)}"
                    progress(f"  {n}^3 {dtype.name} {name} FAILED: {type(exc).__name__}: "
                             f"{str(exc)[:1000]}")
                gc.collect()
            for name in cases:
                base = {"rfftn": "jnp_rfftn", "irfftn": "jnp_irfftn", "dctn": "jnp_rfftn",
                        "fft1": "jnp_fft1", "fft0": "jnp_fft0",
                        "rfft01": "jnp_rfft01"}.get(name.partition("_")[2])
                if base and name != base and row.get(f"{name}_ms") and row.get(f"{base}_ms"):
                    row[f"{name}_ratio"] = row[f"{name}_ms"] / row[f"{base}_ms"]
            row["failed"] = row["failed"].strip()
            rows.append(row)
            progress(f"{n}^3 {dtype.name}: " + ", ".join(
                f"{k[:-3]} {v:.3g}" for k, v in row.items() if k.endswith("_ms")) + " ms"
                + (f"; FAILED {row['failed']}" if row["failed"] else ""))
            del x, args, cases, refs
            gc.collect()
            jax.clear_caches()
    return rows


COLUMNS = [("jnp_rfftn", "jnp rfftn"), ("auto_rfftn", "auto"), ("tuned_rfftn", "auto, tuned"),
           ("native_rfftn", "native"), ("xla_rfftn", "xla"), ("jnp_irfftn", "jnp irfftn"),
           ("auto_irfftn", "auto"), ("tuned_irfftn", "auto, tuned"),
           ("native_irfftn", "native"), ("xla_irfftn", "xla"), ("auto_dctn", "dctn II"),
           ("peraxis_dctn", "per axis"),
           ("jnp_fft1", "jnp fft axis 1"), ("native_fft1", "native"),
           ("jnp_fft0", "jnp fft axis 0"), ("native_fft0", "native"),
           ("jnp_rfft01", "jnp rfftn axes (0,1)"), ("native_rfft01", "native")]


def table(rows, header: str) -> str:
    # a column no row has (the tuned plans where auto does not choose per step) is left out
    columns = [(key, lab) for key, lab in COLUMNS
               if any(r.get(f"{key}_ms") is not None for r in rows)]
    head = "| size | dtype | copy (ms) | " + " | ".join(lab for _, lab in columns) + " |"
    out = [header, "", "**Real transforms and strided stages on one device** (ms; in "
           "brackets the ratio to the `jnp.fft` call before it, below 1 is faster)", "",
           head, "|" + "---|" * (3 + len(columns))]
    for r in rows:
        cells = []
        for key, _ in columns:
            t, ratio = r.get(f"{key}_ms"), r.get(f"{key}_ratio")
            cells.append("—" if t is None else f"{t:.3g}" + (f" ({ratio:.2f})" if ratio else ""))
        copy = r.get("copy_ms")
        out.append(f"| {r['n']}³ | {r['dtype']} | {'—' if copy is None else f'{copy:.3g}'} | "
                   + " | ".join(cells) + " |")
    out += ["", "pfft columns: `pfft.plan((n,)*3, dtype, make_mesh((1, 1), [device]), "
            "kind='r2c', engine=...)`'s forward and backward; auto, tuned: the auto plan "
            "made again after `pfft.tune` timed each of its FFT steps with both engines "
            "(where auto chooses per step: GPUs); dctn II: `pfft.dctn(x, 2)` "
            "with the default engine (on a GPU one `rfftn` over the three axes; on a CPU "
            "DUCC's DCT per axis), its ratio to "
            "`jnp.fft.rfftn`; per axis: the same DCT-II one axis at a time "
            "(`pfft.engines.r2r.apply` three times), checked against `pfft.dctn`; native: "
            "the kernel called "
            "directly (`native.fft(c, axis)`, `native.rfft(x, (0, 1))`). Every result is "
            "checked against the `jnp.fft` call it is compared with."]
    fails = [f"{r['n']}³ {r['dtype']}: {r['failed']}" for r in rows if r["failed"]]
    if fails:
        out += ["", "**Failed:** " + "; ".join(fails)]
    return "\n".join(out)


#: the GPU run's data in docs/data and the table it gives (``python -m benchmarks report``)
DOCS = {"real_engines_gpu.csv": ("gpu_real.md",)}


def report(data: str, figures: str) -> list[str]:
    """``data/gpu_real.md``: the table of a GPU run's ``real_engines_gpu.csv`` (where
    ``data`` holds one) and its caption."""
    path = os.path.join(data, "real_engines_gpu.csv")
    if not os.path.isfile(path):
        return []
    rows = read_table_rows(path, text=("dtype", "failed"), ints=("n",))
    text = table(rows, "").split("\n", 2)[2]           # without the (empty) header line
    return [write_doc(os.path.join(data, "gpu_real.md"), read_info(path), text)]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[64, 128])
    ap.add_argument("--dtypes", nargs="+", default=["float32", "float64"])
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--platform", choices=["cpu", "gpu"], default="cpu")
    ap.add_argument("--out", default="results")
    args = ap.parse_args(argv)
    device, header = device_and_header(args, "real_engines", argv)
    print(header, flush=True)
    rows = run(args.sizes, args.dtypes, args.repeats, device, args.warmup,
               progress=lambda s: print(s, file=sys.stderr, flush=True))
    text = table(rows, header)
    print(text.split("\n", 2)[2])
    keys = list(dict.fromkeys(k for r in rows for k in r))
    write_results([{k: r.get(k, "") for k in keys} for r in rows], text, args.out,
                  f"real_engines_{args.platform}",
                  info=run_info("benchmarks.real_engines", argv,
                                where=f"one {device.device_kind} ({device.platform})"))
    if any(r["failed"] for r in rows):
        sys.exit("FAILED: " + "; ".join(r["failed"] for r in rows if r["failed"]))


if __name__ == "__main__":
    main()
