"""Transforms against one device and against the peers: ``python -m benchmarks
transforms`` and ``python -m benchmarks peers``.

In one run, for every size, dtype, kind (``c2c``, ``r2c``) and device grid:
single-device ``jnp.fft.fftn``/``rfftn`` (the baseline of every ratio), pfft, a
straightforward ``shard_map`` + ``all_to_all`` chain, and optionally jaxDecomp (in its
own environment, as a subprocess: ``benchmarks/peers/jaxdecomp_bench.py``); their median
times (the calls of one grid interleaved), ratios, relative L2 errors against
``numpy.fft`` in float64, memory per device from XLA's compiled executable, and the
cost model of :mod:`benchmarks.cost_model` calibrated by a copy and a bare
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
(the tables) and PNG plots under ``--out``. This module measures; the rows' columns are
:mod:`benchmarks.suite_rows`', the tables and the docs' text
:mod:`benchmarks.suite_report`'s, the figures :mod:`benchmarks.suite_plots`', the runs in
other processes (jaxDecomp, MPI) :mod:`benchmarks.suite_peers`'. Simulated devices share
the machine's cores: on a CPU these numbers measure the overheads of distribution, not
speed-up.

    python -m benchmarks transforms --quick          # 32³, seconds (the smoke test)
    python -m benchmarks transforms --sizes 128 256 --dtypes complex64 --grids 1 4 2x2 8 2x4
    python -m benchmarks peers --sizes 128 256 --grids 4 8 2x2 1x4 2x4 4x2 --repeats 5
    python -m benchmarks transforms --from-csv docs/data/transforms.csv   # re-render
"""
from __future__ import annotations

import argparse
import csv
import functools
import math
import os
import sys
import time

from . import common
from .common import (add_malloc_argument, apply_malloc, compare, median_time, run_info,
                     simulate_cpu_devices, weak_shape, write_info)
from .suite_report import render
from .suite_rows import CHAIN, COLUMNS, JNP, PFFT, grid_name, parse_grid, read_csv, row

simulate_cpu_devices(8)

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import NamedSharding, PartitionSpec as P  # noqa: E402

import pfft  # noqa: E402
from pfft.tuning import candidate_grids  # noqa: E402

from . import cost_model  # noqa: E402
from .suite_peers import (peer_python, run_jaxdecomp, run_mpi4pyfft,  # noqa: E402
                          run_mpi_scaling)
from .suite_plots import plots  # noqa: E402

jax.config.update("jax_enable_x64", True)

TOPICS = ("transforms", "peers")


# -- helpers ------------------------------------------------------------------------------
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
    r = cost_model.predict(shape, grid, itemsize, mem_bw=mem_bw, a2a_bw=bws, kind=kind,
                           exchanges=exchanges)
    return 1e3 * r["total_s"]


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
    """Median ms of each ``(fn, x)`` in ``calls``, timed alternately (call 1 of each,
    call 2 of each, ...) after one warm-up each, so that all see the same background
    load (:func:`benchmarks.common.compare`)."""
    return [1e3 * t for t in compare(*(functools.partial(fn, x) for fn, x in calls),
                                     repeats=repeats)]


def single_device(study, shape, dtype, kinds, host, repeats) -> tuple[list[dict], dict]:
    """One device's ``jnp.fft.fftn`` / ``rfftn`` of ``host`` for each kind (the
    baselines): their rows, and by kind the compiled call, its input, the input on the
    host and numpy's result in float64."""
    dtype = np.dtype(dtype)
    real_dtype = np.dtype(np.finfo(dtype).dtype)
    one = jax.devices()[0]
    copy1 = ms(jax.jit(lambda a: a + 1), jax.device_put(host, one), repeats)
    rows, single = [], {}
    for kind in kinds:
        if kind == "c2c":
            data, ref, fn = host, np.fft.fftn(host.astype(np.complex128)), jnp.fft.fftn
        else:
            data = np.ascontiguousarray(host.real).astype(real_dtype)
            ref, fn = np.fft.rfftn(data.astype(np.float64)), jnp.fft.rfftn
        x1 = jax.device_put(data, one)
        exe, peak, xpeak = compiled(fn, x1)
        t = ms(exe, x1, repeats)
        mdl = 1e3 * cost_model.predict(
            shape, (1,), dtype.itemsize, kind=kind,
            mem_bw=dtype.itemsize * math.prod(shape) / (copy1 * 1e-3),
            a2a_bw=math.inf)["total_s"]
        single[kind] = (exe, x1, data, ref)
        rows.append(row(study=study, impl=JNP, shape=grid_name(shape), n=max(shape),
                        dtype=dtype.name, kind=kind, grid="1", devices=1, exchanges=0, ms=t,
                        single_ms=t, rel_err=rel_err(exe(x1), ref), model_ms=mdl,
                        copy_ms=copy1, peak_bytes=peak, block_bytes=data.nbytes,
                        xla_peak_bytes=xpeak, version=f"jax {jax.__version__}"))
    return rows, single


def chain_case(mesh, host, ref) -> dict:
    """The straightforward chain on ``mesh`` compiled (``exe``), its input (``x``), memory
    and error against ``ref``; ``error`` where it cannot run (a shape it cannot split)."""
    try:
        naive, spec = straightforward_chain(mesh)
        xn = jax.device_put(host, NamedSharding(mesh, spec))
        cexe, cpeak, cxpeak = compiled(naive, xn)
        return dict(exe=cexe, x=xn, peak=cpeak, xpeak=cxpeak, err=rel_err(cexe(xn), ref))
    except Exception as e:          # noqa: BLE001 - e.g. a shape the chain cannot split
        return dict(error=f"failed: {type(e).__name__}")


def grid_rows(study, shape, dtype, kinds, grid, single, repeats, progress,
              with_chain=True) -> list[dict]:
    """pfft (and, for ``c2c`` on several devices, the chain) on ``grid`` for each kind,
    timed interleaved with the one-device baseline; the grid's copy and all-to-alls
    timed beside the first kind (the calibration of the model's rows)."""
    dtype = np.dtype(dtype)
    mesh = pfft.make_mesh(grid, axis_types="auto")
    cplan = pfft.plan(shape, dtype, mesh)
    xc = jax.device_put(single["host"], cplan.in_sharding)
    ccalls = calibration_calls(xc, mesh, cplan.in_sharding.spec)
    cal = None
    if "c2c" not in kinds:
        cal = calibration(list(ccalls), interleaved(list(ccalls.values()), repeats))
    rows = []
    for kind in kinds:
        jexe, x1, data, ref = single[kind]
        plan = cplan if kind == "c2c" else pfft.plan(shape, np.finfo(dtype).dtype, mesh,
                                                     kind="r2c")
        x = xc if kind == "c2c" else jax.device_put(data, plan.in_sharding)
        exe, peak, xpeak = compiled(plan.forward, x)
        calls = [(jexe, x1), (exe, x)]
        chain = None
        if with_chain and kind == "c2c" and math.prod(grid) > 1:
            chain = chain_case(mesh, single["host"], ref)
            calls += [(chain["exe"], chain["x"])] if "exe" in chain else []
        ncal = len(ccalls) if cal is None else 0     # calibrate beside the c2c transforms
        times = interleaved(calls + list(ccalls.values())[:ncal], repeats)
        if ncal:
            cal = calibration(list(ccalls), times[len(calls):])
        common_ = dict(study=study, shape=grid_name(shape), n=max(shape), dtype=dtype.name,
                       kind=kind, grid=grid_name(grid), devices=math.prod(grid),
                       single_ms=times[0], copy_ms=cal["copy_ms"], block_bytes=local_bytes(x),
                       a2a_ms=" ".join(f"{k}:{v:.1f}" for k, v in cal["a2a_ms"].items()))
        prow = row(impl=PFFT, exchanges=plan.chain.exchanges, ms=times[1],
                   rel_err=rel_err(exe(x), ref), peak_bytes=peak, xla_peak_bytes=xpeak,
                   model_ms=model_for(shape, grid, mesh, dtype.itemsize, kind, cal, plan.chain),
                   version=f"pfft {pfft.__version__}", **common_)
        rows += [prow] + chain_rows(chain, times, cal, common_, shape, grid, mesh, dtype)
        del exe, calls, chain, x
        progress.step(f"{study} {common_['shape']} {dtype.name} {kind} {common_['grid']}: "
                      f"pfft {prow['ms']:.1f} ms ({prow['ratio']:.2f}x), model "
                      f"{prow['model_ms']:.1f} ms")
    return rows


def chain_rows(chain, times, cal, common_, shape, grid, mesh, dtype) -> list[dict]:
    """The chain's row on one grid (its time the third of ``times``), or a note why it
    did not run; none where it was not run."""
    if chain is None:
        return []
    if "error" in chain:
        return [row(impl=CHAIN, note=chain["error"], **common_)]
    return [row(impl=CHAIN, exchanges=len(cal["a2a_ms"]), ms=times[2], rel_err=chain["err"],
                model_ms=model_for(shape, grid, mesh, dtype.itemsize, "c2c", cal),
                peak_bytes=chain["peak"], xla_peak_bytes=chain["xpeak"],
                **{**common_, "block_bytes": local_bytes(chain["x"])})]


def sweep_cell(study, shape, dtype, kinds, grids, repeats, progress, with_chain=True):
    """All measurements for one global shape and complex dtype. On each grid the
    single-device baseline, pfft and the chain are timed interleaved (:func:`interleaved`),
    and each ratio divides by the baseline timed beside it."""
    host = inputs(shape, dtype)
    rows, single = single_device(study, shape, dtype, kinds, host, repeats)
    single["host"] = host
    for grid in grids:
        rows += grid_rows(study, shape, dtype, kinds, grid, single, repeats, progress,
                          with_chain)
    return rows


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


def rerender(path: str, out: str) -> list[dict]:
    """``--from-csv``: the tables and plots of a CSV this benchmark wrote, again."""
    rows = read_csv(path)
    for r in rows:
        if r["impl"] != "" and r["ms"] != "" and r["single_ms"] != "":
            r["ratio"] = r["ms"] / r["single_ms"]
    print(render(rows, f"re-rendered from {path}", "", "(see the CSV's run)"))
    os.makedirs(out, exist_ok=True)
    for p in plots(rows, out):
        print(f"wrote {p}")
    return rows


def weak_grids(counts) -> list[tuple[int, tuple[int, ...]]]:
    """Each device count's grid for weak scaling: ``pfft.dims_create``'s, its axes of
    one dropped."""
    out = []
    for c in counts:
        grid = pfft.dims_create(c) if c > 1 else (1,)
        out.append((c, tuple(g for g in grid if g > 1) if c > 1 and 1 in grid else grid))
    return out


def measure(args, grids, progress) -> list[dict]:
    """Every row of the run: the sweep, weak scaling, the peers and pfft.mpi."""
    counts = sorted({math.prod(g) for g in grids})
    rows = []
    for n in args.sizes:
        for dt in args.dtypes:
            rows += sweep_cell("sweep", (n,) * 3, dt, args.kinds, grids, args.repeats, progress)
    if args.weak_base and args.sizes:
        for c, grid in weak_grids(counts):
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
    return rows


def steps(args, grids) -> int:
    """The progress bar's steps: one per grid cell, weak scale, peer and rank count."""
    counts = {math.prod(g) for g in grids}
    return (len(args.sizes) * len(args.dtypes) * len(grids) * len(args.kinds)
            + (len(counts) if args.weak_base and args.sizes else 0)
            + ("jaxdecomp" in args.peers and "c2c" in args.kinds and bool(args.sizes))
            + ("mpi4py-fft" in args.peers) + len(args.mpi_ranks))


def write(rows, text, info, out, topic) -> None:
    """``TOPIC.csv``, ``TOPIC.json``, ``TOPIC.md`` and the plots under ``out``."""
    os.makedirs(out, exist_ok=True)
    path = os.path.join(out, f"{topic}.csv")
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS)
        w.writeheader()
        w.writerows(rows)
    write_info(path, info)
    with open(os.path.join(out, f"{topic}.md"), "w") as f:
        f.write(text + "\n")
    for p in plots(rows, out, prefix=f"{topic}_"):
        print(f"wrote {p}")
    print(f"wrote {path}, {topic}.json and {topic}.md")


def main(argv=None, topic: str | None = None) -> list[dict]:
    topic = topic or (common.LAUNCH[-1] if common.LAUNCH else "transforms")
    if topic not in TOPICS:
        raise SystemExit(f"benchmarks.suite runs {', '.join(TOPICS)}, not {topic!r}")
    args = build_parser(topic).parse_args(argv)
    if args.from_csv:
        return rerender(args.from_csv, args.out)
    malloc = apply_malloc(args.malloc, "benchmarks.suite", argv)
    if args.quick:
        args.sizes, args.dtypes, args.repeats, args.weak_base = [32], ["complex64"], 2, 16
        if args.grids == ["all"]:
            args.grids = ["1", "2", "4", "2x2"]
        args.peers, args.mpi_ranks = [], []
    grids = default_grids() if args.grids == ["all"] else [parse_grid(g) for g in args.grids]
    grids = [g for g in grids if math.prod(g) <= len(jax.devices())]
    info = run_info("benchmarks.suite", argv,
                    f"{len(jax.devices())} simulated CPU devices, {malloc}")
    header = (f"pfft {info['pfft']}, jax {info['jax']}, numpy {np.__version__}, "
              f"{info['machine']}, {len(jax.devices())} simulated CPU devices, {info['date']}, "
              f"load average {info['load']:.1f}, {malloc}")
    print(header, file=sys.stderr, flush=True)
    progress = Progress(steps(args, grids), enabled=not args.no_progress)
    start = time.monotonic()
    rows = measure(args, grids, progress)
    progress.close()
    footer = (f"{time.monotonic() - start:.0f} s; 1-minute load average before the run "
              f"{info['load']:.1f}, at its end {os.getloadavg()[0]:.1f} (the run's own "
              "threads count too)" + (" — TAKEN UNDER LOAD (other processes were using the "
                                      "cores)" if info["load"] > 2.5 else ""))
    text = render(rows, header, footer, info["command"])
    print(text)
    write(rows, text, info, args.out, topic)
    return rows


if __name__ == "__main__":
    main()
