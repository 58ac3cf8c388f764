"""The chunk copies of pipelined windows, each timed alone against XLA's and a plain copy.

A pipelined window (:mod:`pfft.pipeline`) on the native or ``auto`` engine takes its
pieces out of a block and puts them back with pfft's chunk copies
(``native.take_chunks``, ``native.put_chunks``: on GPUs one copy kernel over every
chunk, on CPUs a ``memcpy`` a run) where XLA would slice and update. Their runs can be
narrow (a piece cut along the innermost axis). For the per-device programs of slab
and pencil plans (:mod:`benchmarks.per_device`: ``N³`` over ``p`` devices, complex64,
on the engine ``auto``), forward and backward, at each ``--pipelines`` k, every
distinct copy the program makes is timed by itself (median of ``--repeats`` after a
warm-up call), beside:

- XLA's copy of the same points (the take: the block split into its chunks, sliced,
  the chunk axis moved first; the put: the block, donated, updated at those points);
- a plain copy of the piece's bytes (``jnp.copy``: the bandwidth unit).

A copy's geometry is its block seen as ``(outer, chunks × chunk, inner)``: ``width``
points of each chunk, ``width × inner`` points a row. Both copies are checked equal.
Prints a Markdown table and writes it with a CSV under ``--out``
(``chunk_copies_<platform>``): GB/s is 2 × the piece's bytes / time.

    python -m benchmarks.chunk_copies --platform gpu --sizes 1024 --devices 8 \\
        --pipelines 4 8
"""
from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np

from pfft.engines import native

from . import per_device
from .common import first_device, markdown_table, write_results

TARGETS = {"pfft_take_chunks": "take", "pfft_put_chunks": "put", "pfft_put_chunks_new": "put"}
COLUMNS = ["platform", "device", "date", "jax", "command", "programs", "copy", "dtype",
           "outer", "chunks", "chunk", "width", "inner", "row_bytes", "piece_mib", "calls",
           "native_ms", "xla_ms", "plain_ms", "native_gbs", "xla_gbs", "plain_gbs",
           "native_over_plain", "xla_over_plain", "status"]


@dataclass(frozen=True)
class Geometry:
    """One chunk copy: ``copy`` ("take" or "put") of ``width`` points of each of
    ``chunks`` chunks of ``chunk`` points, of a block seen as ``(outer, chunks ×
    chunk, inner)`` of ``dtype``."""

    copy: str
    dtype: str
    outer: int
    chunks: int
    chunk: int
    width: int
    inner: int

    @property
    def block(self) -> tuple[int, int, int]:
        return (self.outer, self.chunks * self.chunk, self.inner)

    @property
    def piece(self) -> tuple[int, int, int, int]:
        return (self.chunks, self.outer, self.width, self.inner)

    @property
    def piece_bytes(self) -> int:
        return math.prod(self.piece) * np.dtype(self.dtype).itemsize


def _eqns(jaxpr):
    """Every equation of ``jaxpr`` and of the jaxprs inside it (branches, calls)."""
    for eqn in jaxpr.eqns:
        yield eqn
        for value in eqn.params.values():
            for sub in value if isinstance(value, (tuple, list)) else (value,):
                inner = getattr(sub, "jaxpr", sub)
                if hasattr(inner, "eqns"):
                    yield from _eqns(inner)


def copies_of(fn, *specs) -> dict[Geometry, set[int]]:
    """The chunk copies ``fn`` makes traced on ``specs``: each geometry and the starts
    it is made at (one call each; a call found in several platform branches once)."""
    found: dict[Geometry, set[int]] = {}
    for eqn in _eqns(jax.make_jaxpr(fn)(*specs).jaxpr):
        if eqn.primitive.name != "ffi_call" or eqn.params["target_name"] not in TARGETS:
            continue
        attrs = dict(eqn.params["attributes"])
        copy = TARGETS[eqn.params["target_name"]]
        block = eqn.invars[0].aval if copy == "take" else eqn.outvars[0].aval
        outer, chunks, chunk = (int(attrs[k]) for k in ("outer", "chunks", "chunk"))
        g = Geometry(copy, np.dtype(block.dtype).name, outer, chunks, chunk,
                     int(attrs["width"]), math.prod(block.shape) // (outer * chunks * chunk))
        found.setdefault(g, set()).add(int(attrs["start"]))
    return found


def program_copies(sizes, devices, plans, pipelines, directions, engine) -> dict:
    """Geometry -> (starts, the programs making it) over the per-device programs of
    ``plans`` (complex64) at each size, device count, pipeline and direction."""
    out: dict[Geometry, tuple[set, list]] = {}
    for case in per_device.cases(sizes, devices, plans, ("c2c",), ("auto",), pipelines,
                                 None, directions):
        if case.pipeline < 2:
            continue
        per_device._build(case, engine)
        if case.status:
            continue
        spec = jax.ShapeDtypeStruct(case.chain.in_layout.local_shape, case.in_dtype)
        flag = jax.ShapeDtypeStruct((), np.bool_)
        fn = per_device.program(case.core, variant=case.variant)
        name = (f"{case.n}³/{case.devices} {case.plan} k={case.pipeline}"
                + (" bwd" if case.direction == "backward" else ""))
        for g, starts in copies_of(fn, spec, flag).items():
            have = out.setdefault(g, (set(), []))
            have[0].update(starts)
            have[1].append(name)
    return out


def _xla_take(g: Geometry):
    def take(block):
        split = block.reshape(g.outer, g.chunks, g.chunk, g.inner)[:, :, :g.width]
        return jnp.moveaxis(split, 1, 0)
    return jax.jit(take)


def _xla_put(g: Geometry):
    def put(block, piece):
        split = block.reshape(g.outer, g.chunks, g.chunk, g.inner)
        split = split.at[:, :, :g.width].set(jnp.moveaxis(piece, 0, 1))
        return split.reshape(block.shape)
    return jax.jit(put, donate_argnums=0)


def _native_take(g: Geometry):
    return jax.jit(lambda block: native.take_chunks(block, 1, g.chunks, 0, g.width))


def _native_put(g: Geometry):
    return jax.jit(lambda block, piece: native.put_chunks(block, piece, 1, g.chunks, 0),
                   donate_argnums=0)


def _median_ms(fn, args, repeats: int, donated: bool) -> float:
    """Median ms of ``fn(*args)`` after a warm-up call; where ``donated``, each call's
    result is the next call's first argument."""
    args = list(args)
    out = fn(*args)
    out.block_until_ready()
    times = []
    for _ in range(repeats):
        if donated:
            args[0] = out
        start = time.perf_counter()
        out = fn(*args)
        out.block_until_ready()
        times.append(time.perf_counter() - start)
    return 1e3 * statistics.median(times)


def measure(g: Geometry, device, repeats: int) -> dict:
    """The three times of ``g`` on ``device`` (ms), the native copy checked against
    XLA's."""
    key = jax.random.key(1)
    with jax.default_device(device):
        block = jax.random.normal(key, g.block, g.dtype)
        piece = jax.random.normal(jax.random.fold_in(key, 1), g.piece, g.dtype)
    plain = _median_ms(jax.jit(jnp.copy), (piece,), repeats, False)
    if g.copy == "take":
        native_fn, xla_fn = _native_take(g), _xla_take(g)
        if not bool(jnp.array_equal(native_fn(block), xla_fn(block))):
            raise AssertionError(f"{g}: the chunk copy differs from XLA's")
        args, donated = (block,), False
    else:
        native_fn, xla_fn = _native_put(g), _xla_put(g)
        want = xla_fn(jnp.copy(block), piece)
        if not bool(jnp.array_equal(native_fn(jnp.copy(block), piece), want)):
            raise AssertionError(f"{g}: the chunk copy differs from XLA's")
        del want
        args, donated = (block, piece), True
    ms = {"native_ms": _median_ms(native_fn, args, repeats, donated)}
    if donated:                                   # the block was given to the native put
        with jax.default_device(device):
            args = (jax.random.normal(key, g.block, g.dtype), piece)
    ms["xla_ms"] = _median_ms(xla_fn, args, repeats, donated)
    ms["plain_ms"] = plain
    return ms


def rows(found: dict, device, repeats: int, meta: dict, progress=print) -> list[dict]:
    """One row per geometry, largest pieces first."""
    out = []
    for g in sorted(found, key=lambda g: (-g.piece_bytes, g.copy, g.inner * g.width)):
        starts, programs = found[g]
        row = dict(meta, programs="; ".join(dict.fromkeys(programs)), copy=g.copy,
                   dtype=g.dtype, outer=g.outer, chunks=g.chunks, chunk=g.chunk,
                   width=g.width, inner=g.inner,
                   row_bytes=g.width * g.inner * np.dtype(g.dtype).itemsize,
                   piece_mib=g.piece_bytes / 2 ** 20, calls=len(starts), status="ok")
        try:
            row.update(measure(g, device, repeats))
        except Exception as exc:                 # noqa: BLE001 (reported, run goes on)
            row["status"] = f"error: {type(exc).__name__}: {str(exc).splitlines()[0][:120]}"
        for key in ("native", "xla", "plain"):
            if f"{key}_ms" in row:
                row[f"{key}_gbs"] = 2 * g.piece_bytes / (row[f"{key}_ms"] * 1e-3) / 1e9
        if "plain_ms" in row:
            row["native_over_plain"] = row["native_ms"] / row["plain_ms"]
            row["xla_over_plain"] = row["xla_ms"] / row["plain_ms"]
        progress(f"{g.copy} {g.block} width {g.width}: " + (
            f"native {row['native_ms']:.3g} ms, xla {row['xla_ms']:.3g}, plain copy "
            f"{row['plain_ms']:.3g}" if row["status"] == "ok" else row["status"]))
        out.append({k: row.get(k, "") for k in COLUMNS})
    return out


def table(rows_: list[dict], header: str) -> str:
    columns = [("copy", "copy", "{}"), ("outer", "outer", "{}"), ("chunks", "chunks", "{}"),
               ("width", "points of a chunk", "{}"), ("inner", "inner", "{}"),
               ("row_bytes", "row (bytes)", "{}"), ("piece_mib", "piece (MiB)", "{:.4g}"),
               ("calls", "calls", "{}"), ("native_ms", "native (ms)", "{:.3g}"),
               ("xla_ms", "XLA (ms)", "{:.3g}"), ("plain_ms", "plain copy (ms)", "{:.3g}"),
               ("native_gbs", "native GB/s", "{:.0f}"),
               ("native_over_plain", "native / plain", "{:.2f}"),
               ("xla_over_plain", "XLA / plain", "{:.2f}"), ("programs", "programs", "{}")]
    view = [{k: (v if v != "" else "–") for k, v in r.items()} for r in rows_]
    for r in view:
        if r["status"] != "ok":
            r["native_ms"] = r["status"]
    return "\n".join([header, "", markdown_table(view, columns), "",
                      "Every figure measured. Each copy is timed alone; a put writes into "
                      "its block donated (in place). GB/s: 2 × the piece's bytes / time. "
                      "plain copy: `jnp.copy` of the piece (the bandwidth unit)."])


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--platform", choices=["cpu", "gpu"], default="cpu")
    ap.add_argument("--sizes", type=int, nargs="+", default=[1024])
    ap.add_argument("--devices", type=int, nargs="+", default=[8])
    ap.add_argument("--plans", nargs="+", choices=per_device.PLANS,
                    default=list(per_device.PLANS))
    ap.add_argument("--pipelines", type=int, nargs="+", default=[4, 8])
    ap.add_argument("--directions", nargs="+", choices=list(per_device.DIRECTIONS),
                    default=list(per_device.DIRECTIONS))
    ap.add_argument("--repeats", type=int, default=10)
    ap.add_argument("--out", default="results")
    args = ap.parse_args(argv)
    device = first_device(args.platform)
    engine = per_device.engines_for(device, ["auto"])["auto"]
    if isinstance(engine, str):
        sys.exit(f"no chunk copies here: {engine}")
    command = "python -m benchmarks.chunk_copies " + " ".join(
        argv if argv is not None else sys.argv[1:])
    meta = {k: v for k, v in per_device.machine(device, command).items()
            if k in COLUMNS}
    header = (f"pfft's chunk copies, {meta['date']}, {meta['device']}, jax {meta['jax']}; "
              f"median of {args.repeats} after a warm-up; `{command}`")
    print(header, flush=True)
    found = program_copies(args.sizes, args.devices, args.plans,
                           [k for k in args.pipelines if k > 1], args.directions, engine)
    if not found:
        sys.exit("no chunk copies in these programs")
    out = rows(found, device, args.repeats, meta,
               progress=lambda s: print(s, file=sys.stderr, flush=True))
    text = table(out, header)
    print(text.split("\n", 2)[2])
    write_results(out, text, args.out, f"chunk_copies_{meta['platform']}")
    failed = [r["status"] for r in out if r["status"] != "ok"]
    if failed:
        sys.exit("FAILED: " + "; ".join(failed))


if __name__ == "__main__":
    main()
