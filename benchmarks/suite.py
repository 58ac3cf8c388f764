"""Transforms against one device and against the peers: ``python -m benchmarks
transforms`` and ``python -m benchmarks peers``.

In one run, for every size, dtype, kind (``c2c``, ``r2c``) and device grid:
single-device ``jnp.fft.fftn``/``rfftn`` (the baseline of every ratio), pfft, a
straightforward ``shard_map`` + ``all_to_all`` chain, and optionally jaxDecomp (in its
own environment, as a subprocess: ``benchmarks/peers/jaxdecomp_bench.py``); their median
times (the calls of one grid interleaved), ratios, relative L2 errors against
``numpy.fft`` in float64, memory per device from XLA's compiled executable, and the
cost model of :mod:`benchmarks.model` calibrated by a copy and a bare
``lax.all_to_all`` timed in the same run. Then weak scaling (fixed size per device),
pfft.mpi on 1, 2, 4 MPI ranks, and pfft.mpi against mpi4py-fft on 4 and 8 ranks, under
``mpirun`` (:mod:`benchmarks.mpi`).

The topics differ in their defaults only:

- ``transforms``: 64³-256³, complex64 and complex128, ``c2c`` and ``r2c``, every slab and
  pencil grid of 1, 2, 4, 8 devices, weak scaling from 128³ a device; no peers, no MPI;
- ``peers``: 128³ and 256³, ``c2c`` only, no weak scaling, with jaxDecomp and
  mpi4py-fft (4 and 8 ranks).

``--mpi-ranks 1 2 4`` adds pfft.mpi's scaling on those rank counts to either.

Writes ``TOPIC.csv`` (one row per measurement), ``TOPIC.json`` (the run), ``TOPIC.md``
(the tables) and PNG plots under ``--out``. Simulated devices share the machine's cores:
on a CPU these numbers measure the overheads of distribution, not speed-up.

    python -m benchmarks transforms --quick          # 32³, seconds (the smoke test)
    python -m benchmarks transforms --sizes 128 256 --dtypes complex64 --grids 1 4 2x2 8 2x4
    python -m benchmarks peers --sizes 128 256 --grids 4 8 2x2 1x4 2x4 4x2 --repeats 5
    python -m benchmarks transforms --from-csv docs/data/transforms.csv   # re-render
"""
from __future__ import annotations

import argparse
import csv
import json
import math
import os
import re
import shutil
import subprocess
import sys
import time

from . import common
from .common import (add_malloc_argument, apply_malloc, median_time, pyplot, read_info,
                     run_info, save_plot, simulate_cpu_devices, weak_shape, write_doc,
                     write_info)

simulate_cpu_devices(8)

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import NamedSharding, PartitionSpec as P  # noqa: E402

import pfft  # noqa: E402
from pfft.tuning import candidate_grids  # noqa: E402

from . import model  # noqa: E402

jax.config.update("jax_enable_x64", True)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
COLUMNS = ["study", "impl", "shape", "n", "dtype", "kind", "grid", "devices", "exchanges",
           "ms", "single_ms", "ratio", "rel_err", "model_ms", "over_model", "copy_ms",
           "a2a_ms", "peak_bytes", "block_bytes", "peak_over_block", "xla_peak_bytes",
           "version", "note"]
JNP = "jnp.fft 1 device"
PFFT = "pfft"
CHAIN = "shard_map chain"
JAXDECOMP = "jaxDecomp"


TOPICS = ("transforms", "peers")


# -- helpers ------------------------------------------------------------------------------
def grid_name(grid) -> str:
    return "x".join(map(str, grid))


def parse_grid(text: str) -> tuple[int, ...]:
    return tuple(int(v) for v in text.lower().split("x"))


def default_grids(counts=(1, 2, 4, 8)) -> list[tuple[int, ...]]:
    """Every slab and pencil grid of each device count."""
    return [g for c in counts for g in candidate_grids(c)]


class Progress:
    """tqdm when installed, else one line per step on stderr."""

    def __init__(self, total: int, enabled: bool = True):
        self.total, self.done, self.bar = total, 0, None
        self.enabled = enabled
        if enabled:
            try:
                from tqdm.auto import tqdm
                self.bar = tqdm(total=total, desc="pfft benchmarks", unit="step")
            except ImportError:
                pass

    def step(self, text: str) -> None:
        self.done += 1
        if self.bar is not None:
            self.bar.set_postfix_str(text[:60])
            self.bar.update(1)
        elif self.enabled:
            print(f"[{self.done}/{self.total}] {text}", file=sys.stderr, flush=True)

    def note(self, text: str) -> None:
        if self.bar is not None:
            self.bar.write(text, file=sys.stderr)
        elif self.enabled:
            print(text, file=sys.stderr, flush=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def compiled(fn, x):
    """``fn`` compiled for ``x`` and its memory per device: (executable, arg+out+temp-alias
    bytes, XLA's own peak estimate)."""
    exe = jax.jit(fn).lower(x).compile()
    m = exe.memory_analysis()
    if m is None:
        return exe, float("nan"), float("nan")
    total = (m.argument_size_in_bytes + m.output_size_in_bytes + m.temp_size_in_bytes
             - m.alias_size_in_bytes)
    return exe, total, getattr(m, "peak_memory_in_bytes", float("nan"))


def ms(fn, x, repeats: int) -> float:
    return 1e3 * median_time(fn, x, repeats=repeats)


def rel_err(got, want) -> float:
    return float(np.linalg.norm(np.asarray(got) - want) / np.linalg.norm(want))


def local_bytes(x) -> int:
    return x.addressable_shards[0].data.nbytes


# -- calibration: a copy and a bare all-to-all on the same grid ----------------------------
def calibration_calls(x, mesh, spec) -> dict:
    """``{"copy": (fn, x), mesh axis name: (fn, x), ...}``: one pass over every device's block
    (``a + 1`` into a fresh buffer, as an FFT's output is) and a bare tiled
    ``lax.all_to_all`` over each mesh axis of size > 1."""
    calls = {"copy": (jax.jit(lambda a: a + 1), x)}
    spec = tuple(spec) + (None,) * (x.ndim - len(spec))
    for name, size in mesh.shape.items():
        if size == 1:
            continue
        gather = next(i for i, s in enumerate(spec) if s == name or (isinstance(s, tuple) and name in s))
        scatter = next((i for i, s in enumerate(spec) if s is None
                        and x.shape[i] % size == 0), None)
        if scatter is None:
            continue
        out_spec = list(spec)
        out_spec[gather], out_spec[scatter] = None, name

        def body(a, name=name, gather=gather, scatter=scatter):
            return jax.lax.all_to_all(a, name, scatter, gather, tiled=True)
        calls[name] = (jax.jit(jax.shard_map(body, mesh=mesh, in_specs=P(*spec),
                                             out_specs=P(*out_spec))), x)
    return calls


def calibration(names, times) -> dict:
    """The calibration's medians by name: ``{"copy_ms": ..., "a2a_ms": {axis: ...}}``."""
    got = dict(zip(names, times))
    return {"copy_ms": got.pop("copy"), "a2a_ms": got}


def model_for(shape, grid, mesh, itemsize, kind, cal, chain=None) -> float:
    """The cost model in ms with this grid's measured copy and all-to-all bandwidths."""
    devices = math.prod(grid)
    v = itemsize * math.prod(shape) / devices                # the calibration's c2c block
    mem_bw = v / (cal["copy_ms"] * 1e-3)
    names = list(mesh.axis_names)
    bws = []
    for name, p in zip(names, grid):
        t = cal["a2a_ms"].get(name)
        bws.append((1 - 1 / p) * v / (t * 1e-3) if t else math.inf)
    exchanges = None
    if chain is not None:
        exchanges = [names.index(s.mesh_axis) if isinstance(s.mesh_axis, str)
                     else tuple(names.index(m) for m in s.mesh_axis)
                     for s in chain.stages if hasattr(s, "mesh_axis")]
    r = model.predict(shape, grid, itemsize, mem_bw=mem_bw, a2a_bw=bws, kind=kind,
                      exchanges=exchanges)
    return 1e3 * r["total_s"]


def row(**kw) -> dict:
    r = {c: "" for c in COLUMNS}
    r.update(kw)
    if r.get("ms") not in ("", None) and r.get("single_ms") not in ("", None):
        r["ratio"] = r["ms"] / r["single_ms"]
    if r.get("model_ms") not in ("", None) and r.get("ms") not in ("", None):
        r["over_model"] = r["ms"] / r["model_ms"]
    if r.get("peak_bytes") not in ("", None) and r.get("block_bytes"):
        r["peak_over_block"] = r["peak_bytes"] / r["block_bytes"]
    return r


# -- the sweep: one device, pfft, the straightforward chain ---------------------------------
def straightforward_chain(mesh):
    """fft, all_to_all, fft, all_to_all, fft in shard_map, as a user would first write it:
    the jitted function and the input's spec."""
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


def inputs(shape, dtype):
    rng = np.random.default_rng(0)
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)


def interleaved(calls, repeats: int) -> list[float]:
    """Median ms of each ``(fn, x)`` in ``calls``, timed round-robin (call 1 of each, call 2
    of each, ...) after one warm-up each, so that all see the same background load."""
    for fn, x in calls:
        fn(x).block_until_ready()
    times = [[] for _ in calls]
    for _ in range(repeats):
        for (fn, x), out in zip(calls, times):
            t0 = time.perf_counter()
            fn(x).block_until_ready()
            out.append(1e3 * (time.perf_counter() - t0))
    return [float(np.median(t)) for t in times]


def sweep_cell(study, shape, dtype, kinds, grids, repeats, progress, with_chain=True):
    """All measurements for one global shape and complex dtype. On each grid the
    single-device baseline, pfft and the chain are timed interleaved (:func:`interleaved`),
    and each ratio divides by the baseline timed beside it."""
    rows = []
    dtype = np.dtype(dtype)
    real_dtype = np.dtype(np.finfo(dtype).dtype)
    host = inputs(shape, dtype)
    n = max(shape)
    sname = "x".join(map(str, shape))
    one = jax.devices()[0]
    single = {}
    copy1 = ms(jax.jit(lambda a: a + 1), jax.device_put(host, one), repeats)
    for kind in kinds:
        if kind == "c2c":
            data, ref = host, np.fft.fftn(host.astype(np.complex128))
            fn = jnp.fft.fftn
        else:
            data = np.ascontiguousarray(host.real).astype(real_dtype)
            ref, fn = np.fft.rfftn(data.astype(np.float64)), jnp.fft.rfftn
        x1 = jax.device_put(data, one)
        exe, peak, xpeak = compiled(fn, x1)
        t = ms(exe, x1, repeats)
        mdl = 1e3 * model.predict(shape, (1,), dtype.itemsize, kind=kind,
                                  mem_bw=dtype.itemsize * math.prod(shape) / (copy1 * 1e-3),
                                  a2a_bw=math.inf)["total_s"]
        single[kind] = (exe, x1, data, ref)
        rows.append(row(study=study, impl=JNP, shape=sname, n=n, dtype=dtype.name, kind=kind,
                        grid="1", devices=1, exchanges=0, ms=t, single_ms=t,
                        rel_err=rel_err(exe(x1), ref), model_ms=mdl, copy_ms=copy1,
                        peak_bytes=peak, block_bytes=data.nbytes, xla_peak_bytes=xpeak,
                        version=f"jax {jax.__version__}"))
    for grid in grids:
        mesh = pfft.make_mesh(grid, axis_types="auto")
        devices = math.prod(grid)
        cplan = pfft.plan(shape, dtype, mesh)
        xc = jax.device_put(host, cplan.in_sharding)
        ccalls = calibration_calls(xc, mesh, cplan.in_sharding.spec)
        cal = None
        if "c2c" not in kinds:
            cal = calibration(list(ccalls), interleaved(list(ccalls.values()), repeats))
        for kind in kinds:
            jexe, x1, data, ref = single[kind]
            plan = cplan if kind == "c2c" else pfft.plan(shape, real_dtype, mesh, kind="r2c")
            x = xc if kind == "c2c" else jax.device_put(data, plan.in_sharding)
            exe, peak, xpeak = compiled(plan.forward, x)
            err = rel_err(exe(x), ref)
            calls = [(jexe, x1), (exe, x)]
            chain = None
            if with_chain and kind == "c2c" and devices > 1:
                try:
                    naive, spec = straightforward_chain(mesh)
                    xn = jax.device_put(host, NamedSharding(mesh, spec))
                    cexe, cpeak, cxpeak = compiled(naive, xn)
                    chain = dict(exe=cexe, x=xn, peak=cpeak, xpeak=cxpeak,
                                 err=rel_err(cexe(xn), ref))
                    calls.append((cexe, xn))
                except Exception as e:          # noqa: BLE001 - e.g. a shape the chain cannot split
                    chain = dict(error=f"failed: {type(e).__name__}")
            ncal = len(ccalls) if cal is None else 0     # calibrate beside the c2c transforms
            times = interleaved(calls + list(ccalls.values())[:ncal] if ncal else calls, repeats)
            if ncal:
                cal = calibration(list(ccalls), times[len(calls):])
            a2a = " ".join(f"{k}:{v:.1f}" for k, v in cal["a2a_ms"].items())
            common = dict(study=study, shape=sname, n=n, dtype=dtype.name, kind=kind,
                          grid=grid_name(grid), devices=devices, single_ms=times[0],
                          copy_ms=cal["copy_ms"], a2a_ms=a2a, block_bytes=local_bytes(x))
            mdl = model_for(shape, grid, mesh, dtype.itemsize, kind, cal, plan.chain)
            prow = row(impl=PFFT, exchanges=plan.chain.exchanges, ms=times[1], rel_err=err,
                       model_ms=mdl, peak_bytes=peak, xla_peak_bytes=xpeak,
                       version=f"pfft {pfft.__version__}", **common)
            rows.append(prow)
            if chain is not None and "error" in chain:
                rows.append(row(impl=CHAIN, note=chain["error"], **common))
            elif chain is not None:
                rows.append(row(impl=CHAIN, exchanges=len(cal["a2a_ms"]), ms=times[2],
                                rel_err=chain["err"],
                                model_ms=model_for(shape, grid, mesh, dtype.itemsize, kind, cal),
                                peak_bytes=chain["peak"], xla_peak_bytes=chain["xpeak"],
                                **{**common, "block_bytes": local_bytes(chain["x"])}))
            del exe, calls, chain
            if x is not xc:
                del x
            progress.step(f"{study} {sname} {dtype.name} {kind} {grid_name(grid)}: pfft "
                          f"{prow['ms']:.1f} ms ({prow['ratio']:.2f}x), model {prow['model_ms']:.1f} ms")
        del xc, ccalls
    return rows


# -- peers and MPI, as subprocesses ---------------------------------------------------------
def peer_python(path: str | None) -> str | None:
    for cand in [path, os.path.join(ROOT, ".venv-peers", "bin", "python")]:
        if cand and os.path.exists(cand):
            return cand
    return None


def run_jaxdecomp(python, sizes, dtypes, grids, repeats, singles, progress, timeout):
    """jaxDecomp rows (c2c only: it has no real transform) from its own environment."""
    if python is None:
        return [row(study="sweep", impl=JAXDECOMP, note="not run: no .venv-peers "
                    "(python3 -m venv .venv-peers && .venv-peers/bin/pip install jaxdecomp packaging)")]
    cmd = [python, os.path.join(ROOT, "benchmarks", "peers", "jaxdecomp_bench.py"),
           "--sizes", *map(str, sizes), "--dtypes", *dtypes,
           "--grids", *[grid_name(g) for g in grids], "--repeats", str(repeats)]
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return [row(study="sweep", impl=JAXDECOMP, note=f"not run: timed out after {timeout} s")]
    rows = []
    for line in proc.stdout.splitlines():
        if not line.startswith("{"):
            continue
        d = json.loads(line)
        if "error" in d and "n" not in d:
            return [row(study="sweep", impl=JAXDECOMP, note=d["error"])]
        n, dt = d["n"], d["dtype"]
        rows.append(row(study="sweep", impl=JAXDECOMP, shape=f"{n}x{n}x{n}", n=n, dtype=dt,
                        kind="c2c", grid=d["grid"], devices=math.prod(parse_grid(d["grid"])),
                        ms=d.get("ms", ""), single_ms=d["single_ms"],
                        rel_err=d.get("rel_err", ""),
                        version=f"jaxdecomp {d['jaxdecomp']}, jax {d['jax']}",
                        note=d.get("error", "ratio to jnp.fft.fftn timed in its own process; "
                                            f"main run's: {singles.get((n, dt), float('nan')):.1f} ms; "
                                            "output (Y,Z,X)")))
    if not rows:
        rows.append(row(study="sweep", impl=JAXDECOMP,
                        note=f"failed (rc {proc.returncode}): {proc.stderr.strip()[-300:]}"))
    progress.step(f"jaxDecomp: {len(rows)} rows")
    return rows


def mpirun() -> str | None:
    cand = os.path.join(os.path.dirname(sys.executable), "mpirun")
    return cand if os.path.exists(cand) else shutil.which("mpirun")


def mpi_env():
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
    env.update(OMP_NUM_THREADS="1", MPI4JAX_NO_WARN_JAX_VERSION="1",
               PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))
    return env


def run_mpi_scaling(ranks, sizes, weak_base, dtype, repeats, progress, timeout):
    """pfft.mpi on 1, 2, 4 ranks (``benchmarks.mpi --scaling``)."""
    launcher = mpirun()
    if launcher is None:
        return [row(study="mpi-strong", impl="pfft.mpi", note="not run: no mpirun")]
    rows = []
    for r in ranks:
        cmd = [launcher, "-n", str(r), sys.executable, "-m", "benchmarks.mpi", "--scaling",
               "--sizes", *map(str, sizes), "--weak-base", str(weak_base), "--dtype", dtype,
               "--repeats", str(repeats)]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                                  env=mpi_env(), cwd=ROOT)
        except subprocess.TimeoutExpired:
            rows.append(row(study="mpi-strong", impl="pfft.mpi", devices=r,
                            note=f"timed out after {timeout} s"))
            continue
        got = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
        if not got:
            rows.append(row(study="mpi-strong", impl="pfft.mpi", devices=r,
                            note=f"failed (rc {proc.returncode}): {proc.stderr.strip()[-300:]}"))
        for d in got:
            shape = d["shape"]
            rows.append(row(study=d["study"], impl="pfft.mpi", shape="x".join(map(str, shape)),
                            n=max(shape), dtype=d["dtype"], kind="c2c", grid=d["grid"],
                            devices=r, exchanges=d["exchanges"], ms=d["ms"],
                            rel_err=d["rel_err"], note="MPI ranks, 1 XLA thread each"))
        progress.step(f"pfft.mpi on {r} rank(s): {len(got)} rows")
    return rows


MPI4PYFFT_LINE = re.compile(r"# (\d+)\^3 (\w+): pfft\.mpi ([\d.]+) ms, mpi4py-fft ([\d.]+) ms, "
                            r"jnp\.fft\.fftn 1 device ([\d.]+) ms(?:, rel\. err vs numpy "
                            r"([\d.e+-]+) / ([\d.e+-]+))?")


# the grids mpi4py-fft runs on, as mpirun ranks: 4 ranks in a 2x2 pencil, 8 in a 2x4
MPI4PYFFT_GRIDS = (("2x2", 4), ("2x4", 8))


def run_mpi4pyfft(sizes, repeats, progress, timeout):
    """mpi4py-fft (FFTW) against pfft.mpi on 4 ranks (2x2) and 8 ranks (2x4), via
    :mod:`benchmarks.mpi`."""
    launcher = mpirun()
    try:
        import mpi4py_fft
        version = f"mpi4py-fft {mpi4py_fft.__version__}"
    except ImportError as e:
        return [row(study="mpi4py-fft", impl="mpi4py-fft", note=f"not run: {e}")]
    if launcher is None:
        return [row(study="mpi4py-fft", impl="mpi4py-fft", note="not run: no mpirun")]
    rows = []
    for grid, ranks in MPI4PYFFT_GRIDS:
        cmd = [launcher, "-n", str(ranks), sys.executable, "-m", "benchmarks.mpi",
               "--grid", grid, "--sizes", *map(str, sizes), "--repeats", str(repeats),
               "--out", ""]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                                  env=mpi_env(), cwd=ROOT)
        except subprocess.TimeoutExpired:
            rows.append(row(study="mpi4py-fft", impl="mpi4py-fft", grid=grid, devices=ranks,
                            note=f"timed out after {timeout} s"))
            continue
        found = list(MPI4PYFFT_LINE.finditer(proc.stdout))
        for m in found:
            n, dt = int(m[1]), m[2]
            for impl, t, err in (("pfft.mpi", m[3], m[6]), ("mpi4py-fft", m[4], m[7])):
                rows.append(row(study="mpi4py-fft", impl=impl, shape=f"{n}x{n}x{n}", n=n,
                                dtype=dt, kind="c2c", grid=grid, devices=ranks, ms=float(t),
                                single_ms=float(m[5]), rel_err=float(err) if err else "",
                                version=version if impl == "mpi4py-fft" else "",
                                note=f"{ranks} MPI ranks, 1 thread each; baseline: jnp on "
                                     "rank 0 alone, 1 thread"))
        if not found:
            rows.append(row(study="mpi4py-fft", impl="mpi4py-fft", grid=grid, devices=ranks,
                            note=f"failed (rc {proc.returncode}): {proc.stderr.strip()[-300:]}"))
    progress.step(f"mpi4py-fft: {len(rows)} rows")
    return rows


# -- output -----------------------------------------------------------------------------------
def fmt(v, spec="{:.1f}"):
    if v in ("", None) or (isinstance(v, float) and math.isnan(v)):
        return "–"
    return spec.format(v) if isinstance(v, (int, float)) else str(v)


def md_table(head, lines) -> str:
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    out += ["| " + " | ".join(line) + " |" for line in lines]
    return "\n".join(out)


def sweep_table(rows, study="sweep") -> str:
    cells = {}
    for r in rows:
        if r["study"] == study and r["grid"]:
            cells.setdefault((r["shape"], r["dtype"], r["kind"], r["grid"]), {})[r["impl"]] = r
    lines = []
    for (shape, dt, kind, grid), c in cells.items():
        p = c.get(PFFT)
        if p is None:
            continue
        ch, jd = c.get(CHAIN, {}), c.get(JAXDECOMP, {})

        def cell(r):
            return f"{fmt(r.get('ms'))} ({fmt(r.get('ratio'), '{:.2f}')})" if r else "–"
        lines.append([shape.split("x")[0] + "³" if len(set(shape.split("x"))) == 1 else shape,
                      dt, kind, grid, str(p["exchanges"]), fmt(p["single_ms"]), cell(p), cell(ch),
                      cell(jd), fmt(p["model_ms"]), fmt(p["over_model"], "{:.2f}"),
                      fmt(p["rel_err"], "{:.1e}"), fmt(ch.get("rel_err"), "{:.1e}"),
                      fmt(jd.get("rel_err"), "{:.1e}")])
    head = ["size", "dtype", "kind", "grid", "a2a", "jnp 1 dev ms", "pfft ms (ratio)",
            "shard_map chain ms (ratio)", "jaxDecomp ms (ratio)", "model ms", "pfft / model",
            "pfft err", "chain err", "jaxDecomp err"]
    return md_table(head, lines)


def memory_table(rows) -> str:
    """Bytes per device of the compiled executables, as multiples of the local input block."""
    cells = {}
    for r in rows:
        if r["study"] == "sweep" and r["peak_bytes"] != "":
            cells.setdefault((r["shape"], r["dtype"], r["kind"]), {}).setdefault(r["grid"], {})[r["impl"]] = r
    lines = []
    for (shape, dt, kind), grids in cells.items():
        j = grids.get("1", {}).get(JNP)
        for grid, c in grids.items():
            p, ch = c.get(PFFT), c.get(CHAIN, {})
            if p is None:
                continue
            lines.append([shape, dt, kind, grid, f"{p['block_bytes'] / 2**20:.1f}",
                          fmt(j["peak_over_block"] if j else "", "{:.2f}"),
                          fmt(p["peak_over_block"], "{:.2f}"),
                          fmt(p["xla_peak_bytes"] / p["block_bytes"], "{:.2f}"),
                          fmt(ch.get("peak_over_block"), "{:.2f}")])
    return md_table(["shape", "dtype", "kind", "grid", "input block MiB",
                     "jnp 1 dev (arg+out+temp) / array", "pfft (arg+out+temp) / block",
                     "pfft XLA peak_memory / block", "chain (arg+out+temp) / block"], lines)


def single_table(rows) -> str:
    lines = [[r["shape"], r["dtype"], r["kind"], fmt(r["ms"]), fmt(r["model_ms"]),
              fmt(r["over_model"], "{:.2f}"), fmt(r["copy_ms"]), fmt(r["rel_err"], "{:.1e}"),
              fmt(r["peak_over_block"], "{:.2f}")]
             for r in rows if r["impl"] == JNP and r["study"] == "sweep"]
    return md_table(["shape", "dtype", "kind", "jnp 1 dev ms", "model ms (3 passes)",
                     "measured / model", "copy ms", "rel. err", "peak / array"], lines)


def calibration_table(rows) -> str:
    seen, lines = set(), []
    for r in rows:
        if r["impl"] != PFFT or r["kind"] != "c2c" or r["study"] != "sweep":
            continue
        key = (r["shape"], r["dtype"], r["grid"])
        if key in seen:
            continue
        seen.add(key)
        v = r["block_bytes"]
        bw = v / (r["copy_ms"] * 1e-3) / 1e9
        a2a = []
        for part in filter(None, r["a2a_ms"].split()):
            name, t = part.split(":")
            p = dict(zip(("x", "y"), parse_grid(r["grid"])))[name]
            a2a.append(f"{name}: {float(t):.1f} ms ({(1 - 1 / p) * v / (float(t) * 1e-3) / 1e9:.2f} GB/s)")
        lines.append([r["shape"], r["dtype"], r["grid"], f"{v / 2**20:.1f}",
                      f"{r['copy_ms']:.1f} ({bw:.2f} GB/s)", "; ".join(a2a) or "–"])
    return md_table(["shape", "dtype", "grid", "block MiB", "copy ms (GB/s per device)",
                     "bare all_to_all per mesh axis (GB/s per device)"], lines)


def strong_table(rows) -> str:
    """pfft and the best of each implementation per device count, from the sweep."""
    lines = []
    groups = {}
    for r in rows:
        if r["study"] == "sweep" and r["impl"] in (PFFT, CHAIN, JAXDECOMP) and r["ms"] != "":
            groups.setdefault((r["shape"], r["dtype"], r["kind"]), []).append(r)
    for (shape, dt, kind), rs in groups.items():
        base = [r for r in rs if r["impl"] == PFFT and r["devices"] == 1]
        t1 = base[0]["ms"] if base else None
        for d in sorted({r["devices"] for r in rs}):
            best = {}
            for r in rs:
                if r["devices"] == d and (r["impl"] not in best or r["ms"] < best[r["impl"]]["ms"]):
                    best[r["impl"]] = r
            p = best.get(PFFT)
            if p is None:
                continue
            lines.append([shape, dt, kind, str(d), f"{p['ms']:.1f} ({p['grid']})",
                          fmt(t1 / p["ms"] if t1 else "", "{:.2f}"), fmt(p["ratio"], "{:.2f}"),
                          *(f"{best[i]['ms']:.1f} ({best[i]['grid']})" if i in best else "–"
                            for i in (CHAIN, JAXDECOMP))])
    return md_table(["shape", "dtype", "kind", "devices", "pfft best ms (grid)",
                     "speed-up vs pfft 1 dev", "pfft / jnp 1 dev", "chain best ms (grid)",
                     "jaxDecomp best ms (grid)"], lines)


def weak_table(rows) -> str:
    ps = [r for r in rows if r["study"] == "weak" and r["impl"] == PFFT]
    t1 = next((r["ms"] for r in ps if r["devices"] == 1), None)
    lines = [[r["shape"], r["dtype"], r["grid"], str(r["devices"]), fmt(r["single_ms"]),
              fmt(r["ms"]), fmt(r["ratio"], "{:.2f}"), fmt(t1 / r["ms"] if t1 else "", "{:.2f}"),
              fmt(r["model_ms"]), fmt(r["over_model"], "{:.2f}"), fmt(r["rel_err"], "{:.1e}"),
              fmt(r["peak_over_block"], "{:.2f}")] for r in ps]
    return md_table(["global shape", "dtype", "grid", "devices", "jnp 1 dev ms", "pfft ms",
                     "pfft / jnp", "weak efficiency t(1)/t(P)", "model ms", "pfft / model",
                     "rel. err", "peak / block"], lines)


def mpi_table(rows) -> str:
    ms1 = {(r["study"], r["dtype"]): r["ms"] for r in rows
           if r["impl"] == "pfft.mpi" and r["devices"] == 1 and r["ms"] != ""
           and r["study"].startswith("mpi-")}
    lines = []
    for r in rows:
        if r["impl"] != "pfft.mpi" or not r["study"].startswith("mpi-"):
            continue
        if r["ms"] == "":
            lines.append([r["study"], "–", "–", str(r["devices"]), "–", "–", "–", r["note"]])
            continue
        t1 = ms1.get((r["study"], r["dtype"]))
        lines.append([r["study"], r["shape"], r["grid"], str(r["devices"]), fmt(r["ms"]),
                      fmt(t1 / r["ms"] if t1 else "", "{:.2f}"), fmt(r["rel_err"], "{:.1e}"), ""])
    return md_table(["study", "global shape", "grid", "ranks", "pfft.mpi ms",
                     "t(1 rank) / t(R) (strong: speed-up, weak: efficiency)", "rel. err", "note"],
                    lines)


def mpi4pyfft_table(rows) -> str:
    rs = [r for r in rows if r["study"] == "mpi4py-fft"]
    lines = [[r["impl"], r["shape"], r["dtype"], f"{r['devices']} ({r['grid']})", fmt(r["ms"]),
              fmt(r["single_ms"]), fmt(r["ratio"], "{:.2f}"), fmt(r["rel_err"], "{:.1e}"),
              r["version"] or r["note"]]
             for r in rs]
    return md_table(["impl", "shape", "dtype", "ranks (grid)", "ms", "jnp 1 dev ms (1 thread)",
                     "ratio", "rel. err", "version / note"], lines)


def notes_table(rows) -> str:
    rs = [r for r in rows if r["ms"] == "" and r["note"]]
    return "\n".join(f"- {r['impl']} ({r['study']}, {r['grid'] or '-'}): {r['note']}" for r in rs)


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


# -- the docs' tables (python -m benchmarks report) ------------------------------------------
def _size(shape: str) -> str:
    sides = shape.split("x")
    return sides[0] + "³" if len(set(sides)) == 1 else shape


def _span(values) -> str:
    values = sorted(v for v in values if v not in ("", None) and not math.isnan(v))
    if not values:
        return "–"
    return f"{values[0]:.2f}" if len(values) == 1 else f"{values[0]:.2f}–{values[-1]:.2f}"


def one_device_doc(rows) -> str:
    """pfft against one device: the table and, per size, dtype and kind, the range of
    the ratio over the grids."""
    ps = [r for r in rows if r["study"] == "sweep" and r["impl"] == PFFT and r["ms"] != ""]
    lines = [[_size(r["shape"]), r["dtype"], r["kind"], r["grid"], str(r["exchanges"]),
              fmt(r["single_ms"]), fmt(r["ms"]), f"**{fmt(r['ratio'], '{:.2f}')}**"]
             for r in ps]
    table = md_table(["N³", "dtype", "kind", "grid", "exch.", "one device ms", "pfft ms",
                      "**pfft / one device**"], lines)
    keys = list(dict.fromkeys((r["shape"], r["dtype"], r["kind"]) for r in ps))
    summary = "\n".join(
        f"- {_size(shape)} {dtype} {kind}: pfft takes **{_span(r['ratio'] for r in ps if (r['shape'], r['dtype'], r['kind']) == (shape, dtype, kind))}** "
        f"of one device's time over the grids." for shape, dtype, kind in keys)
    return table + "\n\n" + summary


def peers_doc(rows) -> str:
    """pfft, the straightforward chain and jaxDecomp on each grid; then pfft.mpi and
    mpi4py-fft under mpirun beside pfft on as many simulated devices."""
    cells = {}
    for r in rows:
        if r["study"] == "sweep" and r["grid"] and r["impl"] != JNP:
            cells.setdefault((r["shape"], r["dtype"], r["grid"]), {})[r["impl"]] = r

    def cell(r):
        return f"{fmt(r.get('ms'))} ({fmt(r.get('ratio'), '{:.2f}')})" if r else "–"
    lines, faster = [], {CHAIN: [0, 0], JAXDECOMP: [0, 0]}
    for (shape, dtype, grid), c in cells.items():
        p = c.get(PFFT)
        if p is None:
            continue
        lines.append([_size(shape), dtype, grid, cell(p), cell(c.get(CHAIN)),
                      cell(c.get(JAXDECOMP))])
        for impl in faster:
            if c.get(impl, {}).get("ms") not in ("", None):
                faster[impl][0] += p["ms"] < c[impl]["ms"]
                faster[impl][1] += 1
    out = [md_table(["N³", "dtype", "grid", "pfft ms (/ one device)",
                     "shard_map chain ms (/ one device)", "jaxDecomp ms (/ its one device)"],
                    lines)]
    out.append("\n".join(f"- pfft is faster than {impl} on {won} of {of} rows."
                         for impl, (won, of) in faster.items() if of))
    mpi = [r for r in rows if r["study"] == "mpi4py-fft" and r["ms"] != ""]
    if mpi:
        sweep = {(r["shape"], r["dtype"], r["grid"]): r for r in rows
                 if r["study"] == "sweep" and r["impl"] == PFFT and r["ms"] != ""}
        by = {}
        for r in mpi:
            by.setdefault((r["shape"], r["dtype"], r["grid"], r["devices"]), {})[r["impl"]] = r
        lines = []
        for (shape, dtype, grid, ranks), c in by.items():
            one = sweep.get((shape, dtype, grid))
            lines.append([_size(shape), dtype, f"{ranks} ({grid})",
                          fmt(one["ms"]) if one else "–",
                          fmt(c.get("pfft.mpi", {}).get("ms")),
                          fmt(c.get("mpi4py-fft", {}).get("ms"))])
        out.append(md_table(["N³", "dtype", "devices or ranks (grid)",
                             "pfft, one process, simulated devices ms", "pfft.mpi, MPI ranks ms",
                             "mpi4py-fft (FFTW), MPI ranks ms"], lines))
    return "\n\n".join(out)


def cost_model_doc(rows) -> str:
    """Measured time over the cost model (median and range per implementation and size),
    and memory per device at the largest size."""
    lines = []
    for impl in (JNP, PFFT, CHAIN):
        for shape in dict.fromkeys(r["shape"] for r in rows if r["study"] == "sweep"):
            vals = [r["over_model"] for r in rows if r["impl"] == impl and r["shape"] == shape
                    and r["study"] == "sweep" and r["over_model"] != ""]
            if vals:
                lines.append([impl, _size(shape), f"{float(np.median(vals)):.2f}", _span(vals)])
    out = [md_table(["implementation", "N³", "measured / model (median)", "range"], lines)]
    biggest = max((r["n"] for r in rows if r["study"] == "sweep" and r["n"] != ""), default=None)
    mem = [r for r in rows if r["study"] == "sweep" and r["n"] == biggest and r["impl"] == PFFT
           and r["peak_bytes"] != ""]
    if mem:
        chain = {(r["dtype"], r["kind"], r["grid"]): r for r in rows
                 if r["study"] == "sweep" and r["impl"] == CHAIN and r["n"] == biggest}
        lines = [[_size(r["shape"]), r["dtype"], r["kind"], r["grid"],
                  f"{r['block_bytes'] / 2**20:.0f}", fmt(r["peak_over_block"], "{:.2f}"),
                  fmt(r["xla_peak_bytes"] / r["block_bytes"], "{:.2f}"),
                  fmt(chain.get((r["dtype"], r["kind"], r["grid"]), {}).get("peak_over_block"),
                      "{:.2f}")] for r in mem]
        out.append(md_table(["N³", "dtype", "kind", "grid", "input block MiB",
                             "pfft (arg + out + temp) / block", "pfft XLA peak / block",
                             "chain (arg + out + temp) / block"], lines))
    return "\n\n".join(out)


#: the docs' tables and figures: data file in docs/data -> what report() makes of it
DOCS = {"peers.csv": ("fftn.md", "peers.md", "fftn.png", "peers.png"),
        "transforms.csv": ("transforms.md", "transforms_model.png", "transforms_scaling.png")}


def report(data: str, figures: str) -> list[str]:
    """``fftn`` and ``peers`` (tables in ``data``, figures in ``figures``) from
    ``data/peers.csv``, the cost model's and the scaling's from ``data/transforms.csv``:
    the paths written."""
    done = []
    peers = os.path.join(data, "peers.csv")
    if os.path.exists(peers):
        rows, info = read_csv(peers), read_info(peers)
        done += [write_doc(os.path.join(data, "fftn.md"), info, one_device_doc(rows)),
                 write_doc(os.path.join(data, "peers.md"), info, peers_doc(rows)),
                 one_device_plot(rows, os.path.join(figures, "fftn.png"), common.figure_note(info)),
                 ratios_plot(rows, os.path.join(figures, "peers.png"), common.figure_note(info))]
    sweep = os.path.join(data, "transforms.csv")
    if os.path.exists(sweep):
        rows, info = read_csv(sweep), read_info(sweep)
        note = common.figure_note(info)
        done += [write_doc(os.path.join(data, "transforms.md"), info, cost_model_doc(rows)),
                 model_plot(rows, os.path.join(figures, "transforms_model.png"), note),
                 scaling_plot(rows, os.path.join(figures, "transforms_scaling.png"), note)]
    return [p for p in done if p]


# -- main -----------------------------------------------------------------------------------
def build_parser(topic: str = "transforms"):
    ap = argparse.ArgumentParser(prog=f"python -m benchmarks {topic}",
                                 description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="*", default=[64, 128, 256],
                    help="N of the N³ sweep (none: no sweep)")
    ap.add_argument("--dtypes", nargs="+", default=["complex64", "complex128"],
                    choices=["complex64", "complex128"])
    ap.add_argument("--kinds", nargs="+", default=["c2c", "r2c"], choices=["c2c", "r2c"])
    ap.add_argument("--grids", nargs="+", default=["all"],
                    help="'all' (every slab and pencil grid of 1, 2, 4, 8 devices) or e.g. 1 4 2x2")
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--weak-base", type=int, default=128,
                    help="weak scaling: base³ per device on 1, 2, 4, 8 devices (0: skip)")
    ap.add_argument("--peers", nargs="*", default=[], choices=["jaxdecomp", "mpi4py-fft"],
                    help="peers to run (none: --peers with no value)")
    ap.add_argument("--peer-python", default=None,
                    help="python with jaxdecomp (default .venv-peers/bin/python)")
    ap.add_argument("--mpi-ranks", type=int, nargs="*", default=[],
                    help="pfft.mpi scaling on these rank counts, e.g. 1 2 4 (none: no value)")
    ap.add_argument("--mpi-sizes", type=int, nargs="+", default=[128])
    ap.add_argument("--mpi-weak-base", type=int, default=64)
    ap.add_argument("--timeout", type=int, default=1800, help="per subprocess, seconds")
    ap.add_argument("--quick", action="store_true",
                    help="smoke config: 32³ complex64, grids 1 2 4 2x2, 2 repeats, weak base 16, "
                         "no peers, no MPI")
    ap.add_argument("--out", default="results")
    ap.add_argument("--no-progress", action="store_true")
    ap.add_argument("--from-csv", default=None, help="re-render tables and plots from a CSV "
                    "this benchmark wrote")
    add_malloc_argument(ap)
    if topic == "peers":
        ap.set_defaults(sizes=[128, 256], kinds=["c2c"], weak_base=0,
                        peers=["jaxdecomp", "mpi4py-fft"], mpi_sizes=[128, 256])
    return ap


def read_csv(path) -> list[dict]:
    """Rows of a CSV this benchmark wrote, numbers as numbers."""
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    for r in rows:
        for k, v in r.items():
            if k in ("study", "impl", "shape", "dtype", "kind", "grid", "a2a_ms", "version", "note"):
                continue
            try:
                r[k] = int(v) if v.lstrip("-").isdigit() else float(v) if v else ""
            except ValueError:
                pass
    return rows


def render(rows, header, footer, cmd) -> str:
    sections = [
        ("Distributed FFT vs single-device jnp.fft (ms, ratio to jnp 1 device, same run)",
         sweep_table(rows)),
        ("Memory per device (compiled executable)", memory_table(rows)),
        ("Single device: jnp.fft vs the cost model", single_table(rows)),
        ("Calibration: one copy pass and a bare all_to_all on each grid, timed interleaved with the transforms", calibration_table(rows)),
        ("Strong scaling (fixed size; simulated devices share the cores)", strong_table(rows)),
    ]
    if any(r["study"] == "weak" for r in rows):
        sections.append(("Weak scaling (fixed size per device)", weak_table(rows)))
    if any(r["study"].startswith("mpi-") for r in rows):
        sections.append(("pfft.mpi over MPI ranks", mpi_table(rows)))
    if any(r["study"] == "mpi4py-fft" for r in rows):
        sections.append(("mpi4py-fft (FFTW) vs pfft.mpi, 4 and 8 ranks", mpi4pyfft_table(rows)))
    notes = notes_table(rows)
    if notes:
        sections.append(("Not run / failed", notes))
    return f"{header}\ncommand: {cmd}\n{footer}\n\n" + "\n\n".join(
        f"### {title}\n\n{body}" for title, body in sections)


def main(argv=None, topic: str | None = None) -> list[dict]:
    topic = topic or (common.LAUNCH[-1] if common.LAUNCH else "transforms")
    if topic not in TOPICS:
        raise SystemExit(f"benchmarks.suite runs {', '.join(TOPICS)}, not {topic!r}")
    args = build_parser(topic).parse_args(argv)
    if args.from_csv:
        rows = read_csv(args.from_csv)
        for r in rows:
            if r["impl"] != "" and r["ms"] != "" and r["single_ms"] != "":
                r["ratio"] = r["ms"] / r["single_ms"]
        print(render(rows, f"re-rendered from {args.from_csv}", "", "(see the CSV's run)"))
        os.makedirs(args.out, exist_ok=True)
        for p in plots(rows, args.out):
            print(f"wrote {p}")
        return rows
    malloc = apply_malloc(args.malloc, "benchmarks.suite", argv)
    if args.quick:
        args.sizes, args.dtypes, args.repeats, args.weak_base = [32], ["complex64"], 2, 16
        if args.grids == ["all"]:
            args.grids = ["1", "2", "4", "2x2"]
        args.peers, args.mpi_ranks = [], []
    grids = default_grids() if args.grids == ["all"] else [parse_grid(g) for g in args.grids]
    grids = [g for g in grids if math.prod(g) <= len(jax.devices())]
    counts = sorted({math.prod(g) for g in grids})
    info = run_info("benchmarks.suite", argv,
                    f"{len(jax.devices())} simulated CPU devices, {malloc}")
    header = (f"pfft {info['pfft']}, jax {info['jax']}, numpy {np.__version__}, "
              f"{info['machine']}, {len(jax.devices())} simulated CPU devices, {info['date']}, "
              f"load average {info['load']:.1f}, {malloc}")
    print(header, file=sys.stderr, flush=True)
    total = (len(args.sizes) * len(args.dtypes) * len(grids) * len(args.kinds)
             + (len(counts) if args.weak_base and args.sizes else 0)
             + ("jaxdecomp" in args.peers and "c2c" in args.kinds and bool(args.sizes))
             + ("mpi4py-fft" in args.peers) + len(args.mpi_ranks))
    progress = Progress(total, enabled=not args.no_progress)
    rows = []
    start = time.perf_counter()
    for n in args.sizes:
        for dt in args.dtypes:
            rows += sweep_cell("sweep", (n,) * 3, dt, args.kinds, grids, args.repeats, progress)
    if args.weak_base and args.sizes:
        for c in counts:
            grid = pfft.dims_create(c) if c > 1 else (1,)
            grid = tuple(g for g in grid if g > 1) if c > 1 and 1 in grid else grid
            rows += sweep_cell("weak", weak_shape(args.weak_base, c), args.dtypes[0], ["c2c"],
                               [grid], args.repeats, progress, with_chain=False)
    singles = {(r["n"], r["dtype"]): r["ms"] for r in rows
               if r["impl"] == JNP and r["study"] == "sweep" and r["kind"] == "c2c"}
    if "jaxdecomp" in args.peers and "c2c" in args.kinds and args.sizes:
        rows += run_jaxdecomp(peer_python(args.peer_python), args.sizes, args.dtypes, grids,
                              args.repeats, singles, progress, args.timeout)
    if "mpi4py-fft" in args.peers:
        rows += run_mpi4pyfft(args.mpi_sizes, args.repeats, progress, args.timeout)
    if args.mpi_ranks:
        rows += run_mpi_scaling(args.mpi_ranks, args.mpi_sizes, args.mpi_weak_base,
                                args.dtypes[0], args.repeats, progress, args.timeout)
    progress.close()
    load1 = os.getloadavg()
    footer = (f"{time.perf_counter() - start:.0f} s; 1-minute load average before the run "
              f"{info['load']:.1f}, at its end {load1[0]:.1f} (the run's own threads count too)"
              + (" — TAKEN UNDER LOAD (other processes were using the cores)"
                 if info["load"] > 2.5 else ""))
    text = render(rows, header, footer, info["command"])
    print(text)
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, f"{topic}.csv")
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS)
        w.writeheader()
        w.writerows(rows)
    write_info(path, info)
    with open(os.path.join(args.out, f"{topic}.md"), "w") as f:
        f.write(text + "\n")
    for p in plots(rows, args.out, prefix=f"{topic}_"):
        print(f"wrote {p}")
    print(f"wrote {path}, {topic}.json and {topic}.md")
    return rows


if __name__ == "__main__":
    main()
