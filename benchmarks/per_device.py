"""What a device of a ``p``-device plan runs, measured on one device.

For an ``N³`` transform over ``p`` devices, the per-device program of pfft's slab plan
(grid ``(p,)``) and pencil plan (grid ``pfft.dims_create(p, 2)``), complex64 ``fftn``
(``c2c``) and float32 ``rfftn`` (``r2c``), forward and (``--directions``) backward, the
plan's inverse (``ifftn``, ``irfftn``: the complex spectrum in): the device's block (``N³/p``
points, as the plan's input layout cuts it), its local transforms and each exchange's
local work (packing, unpacking) exactly as the plan's transform runs them
(``core.transform.apply``, the plan core built over a stand-in transport), with the
transfer itself replaced by one copy of the same bytes
(:class:`benchmarks.device_program.CopyTransport`). Engines: ``native`` (pfft's kernels:
cuFFT on GPUs, DUCC on CPUs), ``xla`` (``lax.fft``) and ``auto`` (the per-stage engine
:class:`pfft.engines.choice.PerStageEngine`: ``lax.fft`` for transforms over the
innermost axes, native for strided ones; what ``engine="auto"`` runs on GPUs).

For each configuration, in one run:

- the time of the program (median of ``--repeats`` runs after one warm-up call that
  also checks the result; calls under 2 ms are timed in a batch of back-to-back calls:
  :func:`benchmarks.common.median_time`);
- the time of a plain copy of the block (``jnp.copy``: the bandwidth unit);
- the time of the stand-in transfers alone (each exchange's copy, timed by itself):
  what the program spends in copies that a real exchange replaces by the transfer;
  the rest is the device's local work, what :mod:`benchmarks.model` adds the modelled
  transfers to;
- the local work's floor: the device's own FFT of a block of the same size
  (:func:`benchmarks.device_program.floor_transform`: ``jnp.fft.fftn`` or ``rfftn``,
  cuFFT's 3-D transform on a GPU) plus one copy of the bytes each exchange moves (the
  block copy's time scaled to them: for ``c2c`` one copy of the block per exchange),
  and the local work over it (goal: at most 1.05);
- each step of the program (what ``print(plan)`` lists) timed alone against a floor of
  its own, and the step most over its floor where that is over 1.05
  (:mod:`benchmarks.stage_times`; a step's failed figure is marked, the case stands);
- the memory the program needs, from ``compiled.memory_analysis()`` (arguments +
  outputs + temporaries), in blocks of its input: kept, and with the input donated
  (``donate_argnums``, less what XLA aliases);
- the program's output for a block of a few point sources against its exact value at
  every point (:mod:`benchmarks.exact`: the same block-level math, which such a
  block keeps to a few vectors per axis, in float64; compared on the device, so at
  any size): ``exact_err``, the largest error over the largest value; and, for
  blocks up to ``--check-max-mib``, the relative L2 error of its output for a
  pseudo-random block against numpy in float64 of the same block-level math
  (:func:`block_math`): ``numpy_err``. Each engine is checked against these
  references, never against another engine.

Configurations whose compiled program would not fit the device's memory are marked
and not run; so are those left when ``--budget-s`` seconds have passed (the time the
steps alone take counts). A failing case (an error, an out-of-memory) is marked and the
run goes on; the run exits with status 1 if any case raised an error or a result was
wrong (beyond 1e-5). Writes
``per_device_<platform>.{md,csv}`` under ``--out``; every CSV row carries the machine,
the date and the command (:mod:`benchmarks.model` reads them).

    python -m benchmarks.per_device --platform cpu --sizes 32 --devices 4 8
    XLA_PYTHON_CLIENT_MEM_FRACTION=0.95 python -m benchmarks.per_device --platform gpu \\
        --sizes 1024 2048 512 --devices 4 8 64 256 --budget-s 100 --out results
"""
from __future__ import annotations

import argparse
import gc
import math
import os
import sys
import time
import traceback
import warnings
from dataclasses import dataclass, field

# what XLA may take of a GPU's memory (its default is 75 %): the largest blocks need it
os.environ.setdefault("XLA_PYTHON_CLIENT_MEM_FRACTION", "0.95")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from pfft.autodiff import BACKWARD, FORWARD, Variant  # noqa: E402
from pfft.memory import compiled_memory  # noqa: E402
from pfft.mesh_plan import MeshPlacement  # noqa: E402
from pfft.plan_core import PlanCore  # noqa: E402
from pfft.problem import Problem  # noqa: E402
from pfft.layout import default_layout  # noqa: E402
from pfft.chain_search import Chain  # noqa: E402
from pfft.stages import Exchange  # noqa: E402

from . import exact, stage_times  # noqa: E402
from .common import first_device, median_time, write_results  # noqa: E402
from .device_program import (ENGINES, PLANS, Compiler, CopyTransport,  # noqa: E402
                             block_math, device_memory as _device_memory, engines_for,
                             exchange_bytes, failure_text as _short, floor_fft_ms,
                             floor_transform, grid_of, machine, make_block, program,
                             rel_diff, transfer, transfer_spec)
from .model_report import measured_table  # noqa: E402

__all__ = ["Case", "cases", "engines_for", "program", "run", "rows", "failures", "machine",
           "main", "COLUMNS", "CopyTransport", "transfer", "block_math", "exchange_bytes"]

KINDS = ("c2c", "r2c")
DIRECTIONS = {"forward": FORWARD, "backward": BACKWARD}   # a plan's forward and inverse
TOLERANCE = 1e-5              # single precision: largest error to the exact values (over the
                              # largest value), relative L2 error to numpy
BATCH_S = 2e-3                # calls shorter than this are timed in back-to-back batches
FITS = 0.97                   # share of the device's memory a program may plan to use

#: The CSV's columns. ``exchange_mib``: the bytes entering each exchange of the chain;
#: ``fft_ms``: the device's own FFT of a block of the same size, ``floor_ms`` that plus
#: one copy of each exchange's bytes (``copy_ms`` scaled to them); the last four: per step.
COLUMNS = ["platform", "device", "device_memory_gib", "date", "jax", "command", "n",
           "devices", "plan", "grid", "kind", "direction", "engine", "fft_engines",
           "block_mib", "exchanges", "exchange_groups", "exchange_sizes", "exchange_mib", "ms",
           "copy_ms", "copies_ms", "local_ms", "local_over_copy", "fft_ms", "floor_ms",
           "local_over_floor", "kept_blocks", "donated_blocks", "kept_gib", "donated_gib",
           "exact_err", "numpy_err", "status", "stage_ms", "stage_floor_ms", "stages",
           "worst_stage"]


@dataclass
class Case:
    """One configuration: ``n³`` over ``devices`` on a ``plan`` grid, one kind, one
    engine, the plan's forward or backward (inverse) program (``direction``).

    ``status`` is empty while the case can run, else why it did not ("does not fit
    ...", "not run ...") or how it failed ("error: ...", "OOM"). The other attributes
    are filled as the case is built, compiled and run.
    """

    n: int
    devices: int
    plan: str
    kind: str
    engine: str
    direction: str = "forward"
    status: str = ""
    grid: tuple[int, ...] = ()
    core: PlanCore | None = None
    transfers: list = field(default_factory=list)
    fft_engines: str = ""
    compiled: object = None
    result: dict = field(default_factory=dict)
    stages: list = field(default_factory=list)      # stage_times.Stage, one per step

    @property
    def name(self) -> str:
        """``"32³ p=4 slab c2c auto"``, with ``" backward"`` for the inverse."""
        return (f"{self.n}³ p={self.devices} {self.plan} {self.kind} {self.engine}"
                + (" backward" if self.direction == "backward" else ""))

    @property
    def variant(self) -> Variant:
        """The plan's variant this case runs."""
        return DIRECTIONS[self.direction]

    @property
    def chain(self) -> Chain:
        """The chain the program runs (the forward one, or it reversed)."""
        return self.core.transform.chain_for(self.variant)

    @property
    def in_dtype(self) -> np.dtype:
        """The input block's dtype: real for a forward ``r2c``, else complex64."""
        real = self.kind == "r2c" and self.direction == "forward"
        return np.dtype(np.float32 if real else np.complex64)


def cases(sizes, devices, plans=PLANS, kinds=KINDS, engines=ENGINES,
          directions=("forward",)) -> list[Case]:
    """Every configuration, in groups of one size and direction that :func:`run` takes
    in order: each size's forward in the order given, the first size's backward right
    after its forward and the other sizes' backward after every forward (what a
    budget leaves out is the backward of the later sizes first).

    Raises
    ------
    ValueError
        For an unknown direction.
    """
    unknown = [d for d in directions if d not in DIRECTIONS]
    if unknown:
        raise ValueError(f"directions must be among {tuple(DIRECTIONS)}, got {unknown}")
    forward = [(n, "forward") for n in sizes if "forward" in directions]
    backward = [(n, "backward") for n in sizes if "backward" in directions]
    groups = forward[:1] + backward[:1] + forward[1:] + backward[1:]
    return [Case(n, p, plan, kind, engine, d) for n, d in groups for p in devices
            for plan in plans for kind in kinds for engine in engines]


def _build(case: Case, engine) -> None:
    """The plan core of ``case`` over a stand-in transport (``case.status`` says why
    there is none: a grid the default layout cannot use whole)."""
    case.grid = grid_of(case.plan, case.devices)
    if case.plan == "pencil" and case.grid[0] == 1:
        case.status = f"no pencil grid of {case.devices} devices"
        return
    mesh_shape = tuple(zip(("x", "y"), case.grid))
    shape = (case.n,) * 3
    layout = default_layout(shape, (0, 1, 2), mesh_shape)
    if layout.unused_mesh_axes:
        case.status = f"not a {case.plan}: {case.n}³ cannot be cut over {case.grid}"
        return
    problem = Problem(shape, np.complex64, (0, 1, 2), kind=case.kind, in_layout=layout)
    # blocks split as a mesh plan's (evenly); the program runs on one device's block
    case.core = PlanCore(problem, placement=MeshPlacement(None, mesh_shape), engine=engine,
                         transport=CopyTransport(mesh_shape))


def _lower(case: Case, device):
    """Trace ``case``'s program (kept and donated) for ``device``; record its transfers
    and, for the per-stage engine, which engine each FFT stage runs."""
    on = jax.sharding.make_single_device_sharding(device)
    specs = (jax.ShapeDtypeStruct(case.chain.in_layout.local_shape, case.in_dtype,
                                  sharding=on),
             jax.ShapeDtypeStruct((), np.bool_, sharding=on))
    fn = program(case.core, case.transfers, variant=case.variant)
    kept = jax.jit(fn).lower(*specs)
    if hasattr(case.core.engine, "choose"):     # the engine of each FFT step, as resolved
        case.fft_engines = ", ".join(case.core.transform.program(case.variant).engines())
    with warnings.catch_warnings():                 # donated buffers of other shapes
        warnings.simplefilter("ignore")
        donated = jax.jit(program(case.core, variant=case.variant),
                          donate_argnums=0).lower(*specs)
    return kept, donated


def _timed(fn, *args, repeats: int, warmup: int = 0) -> float:
    """Median ms of ``fn(*args)`` after ``warmup`` calls (by default none: the caller's
    first call, which checks the result, warmed it up), in batches of back-to-back
    calls where one call is under :data:`BATCH_S` (:func:`benchmarks.common.median_time`)."""
    return 1e3 * median_time(fn, *args, repeats=repeats, warmup=warmup, batch_s=BATCH_S)


def run(cases_: list[Case], device, *, repeats: int = 5, check_max_mib: float = 4.0,
        budget_s: float | None = None, workers: int | None = None, progress=print) -> list[Case]:
    """Build, compile and run every case on ``device``; fills each case's ``result``
    and ``status``. Cases are taken in groups of one size and direction, in the order
    given: a group's programs are compiled together (in threads), then run one after
    the other."""
    start = time.monotonic()
    limit = _device_memory(device)
    engines = engines_for(device, sorted({c.engine for c in cases_}))
    comp = Compiler(device, workers or min(16, os.cpu_count() or 1))
    live = jax.device_put(np.bool_(True), device)
    late = f"not run: past the {budget_s:g} s budget" if budget_s is not None else ""

    def over_budget() -> bool:
        return budget_s is not None and time.monotonic() - start > budget_s

    for n, direction in dict.fromkeys((c.n, c.direction) for c in cases_):
        group = [c for c in cases_ if (c.n, c.direction) == (n, direction)]
        if over_budget():
            for c in group:
                c.status = c.status or late
            continue
        pending = {id(c): _prepare(c, engines[c.engine], device, comp, limit) for c in group}
        for c in group:
            if pending[id(c)] is not None:
                _compiled(c, pending[id(c)], limit)
        comp.settle()                             # no compilation beside the timings
        for c in group:
            if c.status or c.compiled is None:
                continue
            if over_budget():
                c.status = late
                continue
            _guarded(c, _measure, c, comp, live, repeats, check_max_mib)
            c.compiled = None
            gc.collect()
            progress(_line(c))
    comp.pool.shutdown()
    return cases_


def _guarded(c: Case, fn, *args):
    """``fn(*args)``; an exception marks ``c`` (its status) and the run goes on."""
    try:
        return fn(*args)
    except Exception as exc:                      # noqa: BLE001 (reported, run goes on)
        c.status = _short(exc)
        traceback.print_exc(file=sys.stderr)
        return None


def _prepare(c: Case, engine, device, comp: Compiler, limit: int):
    """Build and lower ``c`` and submit its compilations (its programs, their steps
    alone, the helpers that make, copy and sample its blocks); ``None`` if it cannot run."""
    if isinstance(engine, str):                   # why the engine is not available
        c.status = engine
        return None

    def prepare():
        _build(c, engine)
        if c.status:
            return None
        shape = c.chain.in_layout.local_shape
        nbytes = math.prod(shape) * c.in_dtype.itemsize
        if 2 * nbytes > limit:                    # its input and output alone
            c.status = (f"does not fit: 2 blocks of {nbytes / 2**30:.1f} GiB > "
                        f"{limit / 2**30:.0f} GiB")
            return None
        kept, donated = _lower(c, device)
        comp.helper(("block", shape, c.in_dtype), make_block(shape, c.in_dtype))
        comp.helper(("copy",), jnp.copy, (shape, c.in_dtype))
        for t in c.transfers:
            comp.helper(("transfer",), transfer, transfer_spec(*t), ((), np.bool_))
        comp.helper(("points", shape, c.in_dtype), exact.make_points(shape, c.in_dtype),
                    ((3, len(shape)), np.int32), ((3,), c.in_dtype))
        key, fn, spec = floor_transform(c.core, c.kind, c.variant)   # the floor's FFT
        comp.helper(("block",) + spec, make_block(*spec))
        comp.helper(key, fn, spec)
        c.stages = stage_times.prepare(c.core.transform, c.variant, c.in_dtype, comp, c.name)
        return comp.submit(kept), comp.submit(donated)
    return _guarded(c, prepare)


def _compiled(c: Case, futures, limit: int) -> None:
    """Wait for ``c``'s programs; read their memory; mark it if it would not fit."""
    def collect():
        kept, donated = (f.result() for f in futures)
        _memory(c, kept, donated)
        if c.result["kept_bytes"] > FITS * limit:
            c.status = (f"does not fit: needs {c.result['kept_bytes'] / 2**30:.1f} GiB of "
                        f"{limit / 2**30:.0f} GiB")
        else:
            c.compiled = kept
    _guarded(c, collect)


def _memory(c: Case, kept, donated) -> None:
    """Arguments + outputs + temporaries of both compiled programs, in input blocks."""
    block = math.prod(c.chain.in_layout.local_shape) * c.in_dtype.itemsize
    for name, compiled in (("kept", kept), ("donated", donated)):
        held = compiled_memory(compiled, block)
        if held is None:                          # pragma: no cover - backend without it
            continue
        c.result[f"{name}_bytes"] = held.total
        c.result[f"{name}_blocks"] = held.blocks
    c.result.setdefault("kept_bytes", 0)


def _measure(c: Case, comp: Compiler, live, repeats: int, check_max_mib: float) -> None:
    """Check ``c`` against its exact values and (small blocks) numpy, time it, its
    copies, a block copy and each of its steps alone (:mod:`benchmarks.stage_times`)."""
    shape = c.chain.in_layout.local_shape
    _check_exact(c, comp, live)
    x = comp.helper(("block", shape, c.in_dtype), make_block(shape, c.in_dtype)).result()()
    y = c.compiled(x, live)                       # the warm-up call
    block_mib = x.size * x.dtype.itemsize / 2 ** 20
    if block_mib <= check_max_mib:
        c.result["numpy_err"] = rel_diff(y, block_math(np.asarray(x), c.chain, c.variant.inverse))
    del y
    c.result["ms"] = _timed(c.compiled, x, live, repeats=repeats)
    c.result["copy_ms"] = _timed(comp.helper(("copy",), jnp.copy, (shape, c.in_dtype)).result(), x,
                                 repeats=repeats)
    del x
    c.result["transfer_ms"] = _transfer_ms(c.transfers, comp, live, repeats)
    c.result["copies_ms"] = sum(c.result["transfer_ms"])
    try:                          # the floor's FFT; where it fails (OOM) the case stands
        c.result["fft_ms"] = floor_fft_ms(comp, c.core, c.kind, c.variant,
                                          lambda fn, a: _timed(fn, a, repeats=repeats, warmup=1))
    except Exception as exc:                      # noqa: BLE001 (reported, run goes on)
        print(f"{c.name}: no floor: {_short(exc)}", file=sys.stderr)
    stage_times.measure(c.stages, list(zip(c.transfers, c.result["transfer_ms"])), comp, live,
                        lambda fn, *a: _timed(fn, *a, repeats=repeats, warmup=1), c.name)


def _transfer_ms(transfers, comp: Compiler, live, repeats: int) -> list[float]:
    """The stand-in copy of each of ``transfers``, timed by itself (ms, in order)."""
    out = []
    for t in transfers:
        spec = transfer_spec(*t)
        fn = comp.helper(("transfer",), transfer, spec, ((), np.bool_)).result()
        a = jnp.zeros(*spec, device=comp.device)
        out.append(_timed(fn, a, live, repeats=repeats, warmup=1))
        del a
    return out


def _check_exact(c: Case, comp: Compiler, live) -> None:
    """``c`` run on a block of three point sources (on the zero and last bins of the
    halved axis where it ends in a complex-to-real transform), every point of its
    output against the exact values (:mod:`benchmarks.exact`), on the device."""
    shape = c.chain.in_layout.local_shape
    places, amps, block = exact.point_sources(
        shape, c.in_dtype.kind == "f", exact.halved_axis(c.chain, c.variant.inverse),
        seed=c.n + c.devices)
    make = comp.helper(("points", shape, c.in_dtype), exact.make_points(shape, c.in_dtype),
                       (places.shape, np.int32), (amps.shape, c.in_dtype)).result()
    y = c.compiled(make(places.astype(np.int32), amps.astype(c.in_dtype)), live)
    err, top = exact.device_errors(y, exact.through_chain(block, c.chain, c.variant.inverse))
    c.result["exact_err"] = err / top


def _line(c: Case) -> str:
    r = c.result
    if c.status:
        return f"{c.name}: {c.status}"
    return (f"{c.name}: {r['ms']:.3g} ms (copy {r['copy_ms']:.3g}, in copies "
            f"{r['copies_ms']:.3g}), memory {r.get('kept_blocks', math.nan):.2f} / "
            f"{r.get('donated_blocks', math.nan):.2f} blocks; {stage_times.summary(c.stages)}")


def failures(cases_: list[Case]) -> list[str]:
    """What failed: errors and results beyond :data:`TOLERANCE` (a program that ran out
    of memory is marked in the table, not counted here: it says how much fits)."""
    out = []
    for c in cases_:
        what = c.name
        if c.status.startswith("error"):
            out.append(f"{what}: {c.status}")
        for key in ("exact_err", "numpy_err"):
            v = c.result.get(key)
            if v is not None and not v <= TOLERANCE:
                out.append(f"{what}: {key} {v:.1e}")
    return out


def rows(cases_: list[Case], meta: dict) -> list[dict]:
    """One CSV row (:data:`COLUMNS`) per case; ``meta`` fills the machine's columns."""
    out = []
    for c in cases_:
        r = c.result
        row = dict(meta, n=c.n, devices=c.devices, plan=c.plan,
                   grid="x".join(map(str, c.grid or grid_of(c.plan, c.devices))),
                   kind=c.kind, direction=c.direction, engine=c.engine,
                   fft_engines=c.fft_engines, status=c.status or "ok")
        if c.core is not None:
            layout = c.chain.in_layout
            names = [m for m, _ in layout.mesh_shape]
            row["block_mib"] = math.prod(layout.local_shape) * c.in_dtype.itemsize / 2 ** 20
            ex = [st for st in c.chain.stages if isinstance(st, Exchange)]
            groups = [((st.mesh_axis,) if isinstance(st.mesh_axis, str) else st.mesh_axis)
                      for st in ex]
            row["exchanges"] = len(ex)
            row["exchange_groups"] = ";".join("+".join(str(names.index(m)) for m in g)
                                              for g in groups)
            row["exchange_sizes"] = ";".join(str(st.size) for st in ex)
            if c.transfers:                       # traced
                moved = exchange_bytes(c.core, c.transfers, c.variant)
                row["exchange_mib"] = ";".join(f"{b / 2**20:.6g}" for b in moved)
        for key in ("ms", "copy_ms", "copies_ms", "fft_ms", "exact_err", "numpy_err"):
            row[key] = r.get(key, "")
        if "ms" in r:
            row["local_ms"] = r["ms"] - r["copies_ms"]
            row["local_over_copy"] = row["local_ms"] / r["copy_ms"]
        if "fft_ms" in r:                         # + one copy of each exchange's bytes
            row["floor_ms"] = r["fft_ms"] + r["copy_ms"] * sum(moved) / 2 ** 20 / row["block_mib"]
            row["local_over_floor"] = row["local_ms"] / row["floor_ms"]
        for key in ("kept", "donated"):
            if f"{key}_bytes" in r and r[f"{key}_bytes"]:
                row[f"{key}_blocks"] = r[f"{key}_blocks"]
                row[f"{key}_gib"] = r[f"{key}_bytes"] / 2 ** 30
        row.update(stage_times.columns(c.stages))
        out.append({k: row.get(k, "") for k in COLUMNS})
    return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--platform", choices=["cpu", "gpu"], default="cpu")
    ap.add_argument("--sizes", type=int, nargs="+", default=[512, 1024, 2048])
    ap.add_argument("--devices", type=int, nargs="+", default=[4, 8, 64, 256])
    ap.add_argument("--plans", nargs="+", choices=PLANS, default=list(PLANS))
    ap.add_argument("--kinds", nargs="+", choices=KINDS, default=list(KINDS))
    ap.add_argument("--engines", nargs="+", choices=ENGINES, default=list(ENGINES))
    ap.add_argument("--directions", nargs="+", choices=list(DIRECTIONS), default=["forward"],
                    help="the plan's forward program, its backward (inverse) one, or both "
                         "(default: %(default)s)")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--check-max-mib", type=float, default=4.0,
                    help="largest input block (MiB) checked against numpy on the host")
    ap.add_argument("--budget-s", type=float, default=None,
                    help="start no configuration after this many seconds")
    ap.add_argument("--workers", type=int, default=None, help="threads compiling (default: "
                    "the cores, at most 16)")
    ap.add_argument("--out", default="results")
    args = ap.parse_args(argv)
    device = first_device(args.platform)
    command = "python -m benchmarks.per_device " + " ".join(
        argv if argv is not None else sys.argv[1:])
    meta = machine(device, command)
    header = (f"pfft per-device programs, {meta['date']}, {meta['device']} "
              f"({meta['device_memory_gib']} GiB for XLA), jax {meta['jax']}; median of "
              f"{args.repeats} after a warm-up; `{command}`")
    print(header, flush=True)
    started = time.monotonic()
    done = run(cases(args.sizes, args.devices, args.plans, args.kinds, args.engines,
                     args.directions), device,
               repeats=args.repeats, check_max_mib=args.check_max_mib, budget_s=args.budget_s,
               workers=args.workers, progress=lambda s: print(s, file=sys.stderr, flush=True))
    out = rows(done, meta)
    text = measured_table(out, header + f" ({time.monotonic() - started:.0f} s)")
    print(text.split("\n", 2)[2])
    write_results(out, text, args.out, f"per_device_{meta['platform']}")
    failed = failures(done)
    if failed:
        sys.exit("FAILED: " + "; ".join(failed))


if __name__ == "__main__":
    main()
