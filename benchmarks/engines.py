"""Local FFTs on one device: pfft on a 1x1 grid and its native kernels against jnp.fft.

For each size and dtype, all measured in the same run, each time the median of
``--repeats`` runs after ``--warmup`` calls (inside ``jit``):

- a copy of the array (``jnp.copy``: one read and one write, the bandwidth unit);
- ``jnp.fft.fftn``;
- pfft's public API, a plan (:func:`pfft.plan`) on a 1x1 mesh of this one device, with
  ``engine="native"`` (pfft's DUCC / cuFFT kernels) and with ``engine="xla"``;
- the native three-axis kernel alone (``native.fft``), out of place and in place on a
  donated buffer;
- one strided axis-0 transform, ``native.fft(x, 0)`` (out of place and in place)
  against ``jnp.fft.fft(x, axis=0)``.

Prints three Markdown tables (three-axis transforms against ``jnp.fft.fftn`` with the
target of a ratio <= 1.1; the axis-0 kernel's speed-up with its target of >= 1.5x;
achieved GB/s against the copy's) and writes them with a CSV under ``--out``
(``engines.{md,csv}``, ``engines_gpu.*`` for ``--platform gpu``). A case that fails
(out of memory, an error from a kernel) is marked in the tables and the run exits
with status 1, as it does when a result is further than the tolerance from its
reference (numpy in float64 up to ``--check-max``, ``jnp.fft`` on the device above).

    python -m benchmarks.engines [--sizes 128 256] [--repeats 7] [--out results]
    python -m benchmarks.engines --platform gpu --sizes 256 512 1024 --dtypes complex64
"""
from __future__ import annotations

import argparse
import datetime
import gc
import math
import os
import platform
import sys
import traceback

import jax
import jax.numpy as jnp
import numpy as np

from .common import (compare, median_time, read_info, read_table_rows, run_info, write_doc,
                     write_results)

jax.config.update("jax_enable_x64", True)

import pfft  # noqa: E402
from pfft.engines import native  # noqa: E402

RATIO_GOAL = 1.1          # target: pfft on a 1x1 grid / jnp.fft.fftn at most this
SPEEDUP_GOAL = 1.5        # target: jnp.fft.fft(x, axis=0) / the strided axis-0 kernel
TOLERANCE = {"complex64": 1e-5, "complex128": 1e-12}   # relative L2 error

# the timed cases: key, label, whether it is a three-axis transform (else axis 0)
CASES = [("copy", "copy", None),
         ("jnp_fftn", "jnp.fft.fftn", True),
         ("pfft_native", "pfft 1x1, native", True),
         ("pfft_xla", "pfft 1x1, xla", True),
         ("native_fftn", "native kernel", True),
         ("native_fftn_inplace", "native kernel in place", True),
         ("jnp_fft0", "jnp.fft.fft axis 0", False),
         ("native_fft0", "native axis 0", False),
         ("native_fft0_inplace", "native axis 0 in place", False)]


def median_time_donated(fn, x, repeats: int = 7, warmup: int = 1) -> float:
    """Median time of ``x = fn(x)`` where ``fn`` donates its argument (each call's
    output the next one's input), through :func:`benchmarks.common.compare`."""
    state = [x]

    def step():
        state[0] = fn(state[0])
        return state[0]
    (t,) = compare(step, repeats=repeats, warmup=warmup)
    return t


def _short(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}"
    return "OOM" if "RESOURCE_EXHAUSTED" in text or "out of memory" in text.lower() else "error"


@jax.jit
def _rel_err(a, b):
    """Relative L2 error of ``a`` against ``b``, on the device (fused: no temporary)."""
    a, b = a.astype(b.dtype), b
    return jnp.sqrt(jnp.sum(jnp.abs(a - b) ** 2) / jnp.sum(jnp.abs(b) ** 2))


def _random(n: int, dtype, device) -> jax.Array:
    """A complex normal n³ array made on ``device`` (no host copy of 8 GiB at 1024³)."""
    with jax.default_device(device):
        return jax.random.normal(jax.random.key(0), (n, n, n), dtype)


def on_one_device(device):
    """A 1x1 mesh on ``device``, its platform's name ("cpu" or "gpu") and whether the
    native engine is built for it: what every one-device benchmark starts from."""
    platform_name = "cpu" if device.platform == "cpu" else "gpu"
    return pfft.make_mesh((1, 1), [device]), platform_name, native.available(platform_name)


def run(sizes, dtypes, repeats, device, *, warmup: int = 2, check_max: int = 256,
        progress=print):
    """Time every case for each size and dtype; one row (a dict) per pair."""
    rows = []
    for n in sizes:
        for dtype in dtypes:
            rows.append(_run_one(n, np.dtype(dtype), repeats, device, warmup, check_max,
                                 progress))
            gc.collect()
            jax.clear_caches()
    return rows


def _run_one(n: int, dtype: np.dtype, repeats: int, device, warmup: int, check_max: int,
             progress) -> dict:
    """One size and dtype: every case checked, then timed; its row."""
    mesh, platform_name, has_native = on_one_device(device)
    r = dict(n=n, dtype=dtype.name, device=device.device_kind,
             mib=n ** 3 * dtype.itemsize / 2 ** 20,
             threads=native.num_threads() if platform_name == "cpu" else "", failed="")
    failures = []

    def note(key, exc):
        failures.append(f"{key}:{_short(exc)}")
        progress(f"  {n}^3 {dtype.name} {key} FAILED: {type(exc).__name__}: "
                 f"{str(exc)[:2000]}")
        traceback.print_exc(file=sys.stderr)

    x = _random(n, dtype, device)
    fns, args = _programs(n, dtype, x, mesh, has_native)
    _check(r, fns, args, x, device, n <= check_max, note)
    _time(r, fns, args, x, repeats, warmup, failures, note)
    tol = TOLERANCE.get(dtype.name, 1e-5)
    for key, _, _ in CASES:
        err = r.get(f"{key}_err")
        if err is not None and not err <= tol:
            failures.append(f"{key}:inaccurate")
    r["failed"] = " ".join(failures)
    progress(f"{n}^3 {dtype.name}: " + ", ".join(
        f"{label} {r[k + '_ms']:.3g}" for k, label, _ in CASES if r.get(k + "_ms"))
        + " ms" + (f"; FAILED {r['failed']}" if failures else ""))
    return _derive(r)


def _programs(n: int, dtype: np.dtype, x, mesh, has_native) -> tuple[dict, dict]:
    """The jitted function of each case that runs here, and the input of those that do
    not take ``x`` itself (a plan's, on its sharding)."""
    fns = {"copy": jax.jit(jnp.copy),
           "jnp_fftn": jax.jit(jnp.fft.fftn),
           "jnp_fft0": jax.jit(lambda a: jnp.fft.fft(a, axis=0))}
    args = {}
    for engine in ("native", "xla"):
        if engine == "native" and not has_native:
            continue
        plan = pfft.plan((n, n, n), dtype, mesh, engine=engine)
        if getattr(plan.engine, "name", "xla") != engine:   # fell back: not native
            continue
        fns[f"pfft_{engine}"] = jax.jit(plan.forward)
        args[f"pfft_{engine}"] = jax.device_put(x, plan.in_sharding)
    if has_native:
        fns["native_fftn"] = jax.jit(lambda a: native.fft(a, (0, 1, 2)))
        fns["native_fftn_inplace"] = jax.jit(
            lambda a: native.fft(a, (0, 1, 2), inplace=True), donate_argnums=0)
        fns["native_fft0"] = jax.jit(lambda a: native.fft(a, 0))
        fns["native_fft0_inplace"] = jax.jit(
            lambda a: native.fft(a, 0, inplace=True), donate_argnums=0)
    return fns, args


def _check(r: dict, fns: dict, args: dict, x, device, on_host: bool, note) -> None:
    """Each case's error (``KEY_err``) against numpy in float64 where the host can
    (``on_host``), else against jnp.fft; a failure is noted and the others go on."""
    for three_axis in (True, False):
        keys = [k for k, _, t in CASES if t is three_axis and k in fns]
        try:
            if on_host:
                host = np.asarray(x).astype(np.complex128)
                ref = jax.device_put(np.fft.fftn(host) if three_axis
                                     else np.fft.fft(host, axis=0), device)
                del host
                r["reference" if three_axis else "reference0"] = "numpy float64"
            else:
                ref = fns["jnp_fftn" if three_axis else "jnp_fft0"](x)
                r["reference" if three_axis else "reference0"] = "jnp.fft"
        except Exception as exc:        # noqa: BLE001 (reported, run goes on)
            note("reference", exc)
            continue
        for key in keys:
            try:
                y = fns[key](x + 0) if key.endswith("_inplace") else fns[key](args.get(key, x))
                r[f"{key}_err"] = float(_rel_err(y, ref))
                del y
            except Exception as exc:    # noqa: BLE001
                note(key, exc)
        del ref
        gc.collect()


def _time(r: dict, fns: dict, args: dict, x, repeats: int, warmup: int, failures: list,
          note) -> None:
    """Each case's median time (``KEY_ms``), those that failed left out."""
    for key, _, _ in CASES:
        if key not in fns or any(f.startswith(key + ":") for f in failures):
            continue
        try:
            if key.endswith("_inplace"):
                t = median_time_donated(fns[key], x + 0, repeats, warmup)
            else:
                t = median_time(fns[key], args.get(key, x), repeats=repeats, warmup=warmup)
            r[f"{key}_ms"] = t * 1e3
        except Exception as exc:        # noqa: BLE001
            note(key, exc)
        gc.collect()


def _derive(r: dict) -> dict:
    """Add ratios, speed-ups and GB/s to a row of times."""
    nbytes = r["mib"] * 2 ** 20
    for key, _, _ in CASES:
        t = r.get(f"{key}_ms")
        r[f"{key}_gbs"] = 2 * nbytes / (t * 1e-3) / 1e9 if t else None
    copy = r.get("copy_ms")
    for key, _, three_axis in CASES:
        t = r.get(f"{key}_ms")
        r[f"{key}_of_copy"] = copy / t if (t and copy) else None
        base = r.get("jnp_fftn_ms" if three_axis else "jnp_fft0_ms")
        if three_axis is not None and key not in ("jnp_fftn", "jnp_fft0"):
            r[f"{key}_ratio"] = t / base if (t and base) else None
    return r


def _ms(v) -> str:
    if v is None:
        return "—"
    return f"{v:.0f}" if v >= 100 else f"{v:.1f}" if v >= 10 else f"{v:.2f}" if v >= 1 \
        else f"{v:.3f}"


def _cell(r, key, fmt) -> str:
    """A value, or why it is missing (failed, OOM, not available)."""
    v = r.get(key)
    if v is not None:
        return fmt(v)
    case = key
    for suffix in ("_ms", "_err", "_gbs", "_ratio", "_of_copy"):
        case = case.removesuffix(suffix)
    for f in r.get("failed", "").split():
        name, _, why = f.partition(":")
        if name == case and why != "inaccurate":
            return why
    return "n/a"


def _gbs(v) -> str:
    return f"{v:.0f}" if v >= 10 else f"{v:.1f}"


def _yes(v, ok) -> str:
    return "—" if v is None else ("**yes**" if ok(v) else "**no**")


def _err(v) -> str:
    return f"{v:.1e}"


def table(rows, header: str = "") -> str:
    """The three Markdown tables (and their footnotes) for ``rows``."""
    out = [header, ""] if header else []
    out += _fftn_table(rows) + _axis0_table(rows) + _bandwidth_table(rows)
    fails = [f"{r['n']}³ {r['dtype']}: {r['failed']}" for r in rows if r.get("failed")]
    if fails:
        out += ["", "**Failed:** " + "; ".join(fails)]
    return "\n".join(out)


def _fftn_table(rows) -> list[str]:
    """The three-axis FFT against ``jnp.fft.fftn``: its lines."""
    out = ["**Three-axis FFT on one device against `jnp.fft.fftn`** (target: pfft on "
            f"a 1x1 grid ≤ {RATIO_GOAL}× `jnp.fft.fftn`)", "",
            "| size | dtype | jnp.fft.fftn (ms) | pfft 1x1, native (ms) | ratio | goal met | "
            "pfft 1x1, xla (ms) | ratio | native kernel (ms) | ratio | native kernel in "
            "place, donated (ms) | ratio | rel. L2 error: pfft native / pfft xla / native kernel / "
            "jnp |",
            "|" + "---|" * 13]
    for r in rows:
        errs = " / ".join(_cell(r, f"{k}_err", _err) for k in ("pfft_native", "pfft_xla",
                                                              "native_fftn", "jnp_fftn"))
        out.append(
            f"| {r['n']}³ | {r['dtype']} | {_cell(r, 'jnp_fftn_ms', _ms)} | "
            f"{_cell(r, 'pfft_native_ms', _ms)} | {_cell(r, 'pfft_native_ratio', '{:.2f}'.format)} | "
            f"{_yes(r.get('pfft_native_ratio'), lambda v: v <= RATIO_GOAL)} | "
            f"{_cell(r, 'pfft_xla_ms', _ms)} | {_cell(r, 'pfft_xla_ratio', '{:.2f}'.format)} | "
            f"{_cell(r, 'native_fftn_ms', _ms)} | {_cell(r, 'native_fftn_ratio', '{:.2f}'.format)} | "
            f"{_cell(r, 'native_fftn_inplace_ms', _ms)} | "
            f"{_cell(r, 'native_fftn_inplace_ratio', '{:.2f}'.format)} | {errs} |")
    out += ["", "Ratio: time / `jnp.fft.fftn`'s time in the same run (below 1 is faster). "
            "pfft 1x1: `jax.jit(pfft.plan((n, n, n), dtype, mesh, engine=...).forward)` on "
            "`pfft.make_mesh((1, 1), [device])`, the public API with the engine forced "
            "(on GPUs `engine=\"auto\"` picks xla). native kernel: `native.fft(x, (0, 1, 2))` "
            "called directly. Errors against " + _refs(rows, "reference") + ".", ""]
    return out


def _axis0_table(rows) -> list[str]:
    """The strided axis-0 kernel against ``jnp.fft.fft(x, axis=0)``: its lines."""
    out = ["**Strided axis-0 kernel against `jnp.fft.fft(x, axis=0)`** (target: ≥ "
            f"{SPEEDUP_GOAL}× faster)", "",
            "| size | dtype | jnp.fft.fft(x, axis=0) (ms) | native axis 0 (ms) | × faster | "
            "goal met | native axis 0 in place, donated (ms) | × faster | rel. L2 error |",
            "|" + "---|" * 9]
    for r in rows:
        sp = {k: (1 / r[f"{k}_ratio"] if r.get(f"{k}_ratio") else None)
              for k in ("native_fft0", "native_fft0_inplace")}
        out.append(
            f"| {r['n']}³ | {r['dtype']} | {_cell(r, 'jnp_fft0_ms', _ms)} | "
            f"{_cell(r, 'native_fft0_ms', _ms)} | "
            f"{'—' if sp['native_fft0'] is None else format(sp['native_fft0'], '.2f') + '×'} | "
            f"{_yes(sp['native_fft0'], lambda v: v >= SPEEDUP_GOAL)} | "
            f"{_cell(r, 'native_fft0_inplace_ms', _ms)} | "
            f"{'—' if sp['native_fft0_inplace'] is None else format(sp['native_fft0_inplace'], '.2f') + '×'} | "
            f"{_cell(r, 'native_fft0_err', _err)} |")
    out += ["", "× faster: `jnp.fft.fft`'s time / the kernel's (out of place decides the goal). "
            "Errors against " + _refs(rows, "reference0") + ".", ""]
    return out


def _bandwidth_table(rows) -> list[str]:
    """Each case's bandwidth against a device-to-device copy: its lines."""
    labels = [(k, lab) for k, lab, _ in CASES if k != "copy"]
    out = ["**Achieved bandwidth against a device-to-device copy**", "",
            "| size | dtype | array (MiB) | copy (ms) | copy (GB/s) | "
            + " | ".join(lab for _, lab in labels) + " |",
            "|" + "---|" * (5 + len(labels))]
    for r in rows:
        cells = []
        for k, _ in labels:
            g, f = r.get(f"{k}_gbs"), r.get(f"{k}_of_copy")
            cells.append(_cell(r, f"{k}_gbs", str) if g is None else
                         _gbs(g) + (f" ({100 * f:.0f}%)" if f else ""))
        out.append(f"| {r['n']}³ | {r['dtype']} | {r['mib']:.4g} | {_cell(r, 'copy_ms', _ms)} | "
                   f"{_cell(r, 'copy_gbs', _gbs)} | " + " | ".join(cells) + " |")
    out += ["", "GB/s = 2 × (array bytes) / time: the array read once and written once, "
            "10⁹ bytes per GB; the copy (`jax.jit(jnp.copy)`, one read and one write) is "
            "measured the same way, and (%) is the transform's GB/s as a share of the "
            "copy's (= copy time / transform time). A transform that needs more than one "
            "pass over memory stays below 100%.", "",
            "Each time: median of the repeats after the warm-up calls, inside `jax.jit`, "
            "`block_until_ready` included. — or n/a: not run (kernel unavailable); OOM / "
            "error / inaccurate: the case failed (see the log)."]
    return out


def _refs(rows, key) -> str:
    kinds = sorted({r.get(key, "") for r in rows} - {""})
    names = {"numpy float64": "numpy in float64 (`np.fft`)",
             "jnp.fft": "`jnp.fft` on the device (sizes above `--check-max`)"}
    return " and ".join(names.get(k, k) for k in kinds) or "nothing (not checked)"


def describe(device) -> str:
    """One line on the machine, the software and the date."""
    mem = ""
    try:
        stats = device.memory_stats() or {}
        if stats.get("bytes_limit"):
            mem = f", {stats['bytes_limit'] / 2 ** 30:.0f} GiB for XLA"
    except Exception:                            # noqa: BLE001 (not every backend has it)
        pass
    cpu = platform.processor() or platform.machine()
    return (f"Device: {device.device_kind} ({device.platform}{mem}); host {cpu}, "
            f"{os.cpu_count()} cores; jax {jax.__version__}, Python "
            f"{platform.python_version()}; native engine "
            f"{'available' if native.available('cpu' if device.platform == 'cpu' else 'gpu') else 'unavailable'}"
            f"{', ' + str(native.num_threads()) + ' CPU threads' if device.platform == 'cpu' else ''}; "
            f"{datetime.date.today()}")


#: the GPU run's data in docs/data and the table it gives (``python -m benchmarks report``)
DOCS = {"engines_gpu.csv": ("gpu_one_device.md",)}
TEXT = ("dtype", "device", "failed", "reference", "reference0", "threads")


def report(data: str, figures: str) -> list[str]:
    """``data/gpu_one_device.md``: the tables of a GPU run's ``engines_gpu.csv`` (where
    ``data`` holds one) and its caption."""
    path = os.path.join(data, "engines_gpu.csv")
    if not os.path.isfile(path):
        return []
    rows = read_table_rows(path, text=TEXT, ints=("n",))
    return [write_doc(os.path.join(data, "gpu_one_device.md"), read_info(path), table(rows))]


def device_and_header(args, module: str, argv):
    """The device ``args.platform`` names (exits where there is none) and the header of
    a one-device benchmark's table: the device, the timing (``args.repeats``,
    ``args.warmup``) and the command (``python -m benchmarks.<module> ...``)."""
    try:
        device = jax.devices(args.platform)[0]
    except RuntimeError as exc:
        sys.exit(f"no {args.platform} device: {exc}")
    header = (describe(device) + f". Median of {args.repeats} runs after {args.warmup} "
              f"warm-up calls; command `python -m benchmarks.{module} "
              f"{' '.join(argv if argv is not None else sys.argv[1:])}`.")
    return device, header


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[128, 256])
    ap.add_argument("--dtypes", nargs="+", default=["complex64", "complex128"])
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--check-max", type=int, default=256,
                    help="largest n checked against numpy in float64 on the host (above: "
                         "against jnp.fft on the device)")
    ap.add_argument("--platform", choices=["cpu", "gpu"], default="cpu")
    ap.add_argument("--out", default="results")
    args = ap.parse_args(argv)
    device, header = device_and_header(args, "engines", argv)
    if not native.available(args.platform):
        print(f"native {args.platform} engine unavailable (its columns stay empty): "
              f"{native.unavailable_reason(args.platform)}", file=sys.stderr)
    print(header, flush=True)
    rows = run(args.sizes, [np.dtype(d) for d in args.dtypes], args.repeats, device,
               warmup=args.warmup, check_max=args.check_max,
               progress=lambda s: print(s, file=sys.stderr, flush=True))
    text = table(rows, header)
    print(text.split("\n", 2)[2] if text.startswith(header) else text)
    for r in rows:          # CSV: blanks for missing values
        for k, v in r.items():
            if v is None or (isinstance(v, float) and not math.isfinite(v)):
                r[k] = ""
    keys = list(dict.fromkeys(k for r in rows for k in r))
    write_results([{k: r.get(k, "") for k in keys} for r in rows], text, args.out,
                  "engines" if args.platform == "cpu" else "engines_gpu",
                  info=run_info("benchmarks.engines", argv,
                                where=f"one {device.device_kind} ({device.platform})"))
    if any(r["failed"] for r in rows):
        sys.exit(f"FAILED: {'; '.join(r['failed'] for r in rows if r['failed'])}")


if __name__ == "__main__":
    main()
