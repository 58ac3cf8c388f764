"""What a plan holds on a device: ``plan.memory()`` of each kind of plan, on each grid,
through each engine, beside the same transforms written with JAX alone and the floor
of XLA's own all-to-all.

For each case (complex ``fftn``: c2c; ``rfftn``: r2c; ``dctn`` of type 2 on every
axis; a mixed plan, ``kinds=("fft", "fft", "dct2")``; ``rfftn`` with the 3/2 rule,
``padding=1.5``), each grid (one device, a slab over 8, a 2x4 pencil) and each engine
(``native``, ``xla``, ``auto``), ``pfft.plan(...).memory()``: both directions' compiled
programs, with the input kept and donated, in blocks of the device's part of the forward
input (:mod:`pfft.memory`). Beside them, "JAX alone" (``--engines jax``): the
complex ``fftn``, ``rfftn`` and ``dctn`` as a user writes them without pfft
(:func:`jax_program`: ``jnp.fft`` and ``jax.scipy.fft`` on one device, ``jnp.fft`` and
``lax.all_to_all`` in a ``shard_map`` over a slab or a pencil), measured the same way. Then the
floor: a bare ``all_to_all`` in a ``shard_map`` (one block of a 64³ complex64 array
over p = 2, 4, 8 devices).
Figures are XLA's accounting of the compiled programs (``memory_analysis()``): nothing
runs, and they are the same from run to run.

With ``--overwrite-n N`` it also measures ``overwrite_x=True`` against the default on
``--overwrite-grids``, for the complex ``fftn`` and the ``dctn`` at ``N³``: the blocks a
forward program holds and its time (median of ``--repeats``, the plans alternated in
each repeat), the input kept and donated (a fresh copy of the input donated to every
call, made before the clock starts).

    python -m benchmarks memory [--n 64] [--grids 1 8 2x4] [--engines native xla auto jax]
        [--cases c2c r2c dct mixed padded] [--floor 2 4 8] [--overwrite-n 256]
        [--overwrite-grids 1 4 2x2] [--repeats 7] [--out DIR]

Writes ``memory.{csv,json,md}`` under ``--out`` (docs/data for the docs' table), and
with ``--overwrite-n`` ``memory_overwrite.{csv,json,md}``.
"""
from __future__ import annotations

import argparse
import os

from .common import (markdown_table, parse_grids, read_info, read_results, run_header,
                     run_info, simulate_cpu_devices, write_doc, write_results)

__all__ = ["CASES", "ENGINES", "measure_plan", "measure_floor", "doc", "report", "main"]

#: case -> (what it is, pfft.plan's arguments besides shape, mesh and engine)
CASES = {
    "c2c": ("complex64 `fftn`", dict(dtype="complex64", kind="c2c")),
    "r2c": ("float32 `rfftn`", dict(dtype="float32", kind="r2c")),
    "dct": ("float32 `dctn`, type 2", dict(dtype="float32", kinds=("dct2",) * 3)),
    "mixed": ("complex64, `kinds=(fft, fft, dct2)`", dict(dtype="complex64",
                                                          kinds=("fft", "fft", "dct2"))),
    "padded": ("float32 `rfftn`, `padding=1.5`", dict(dtype="float32", kind="r2c",
                                                       padding=1.5)),
}
ENGINES = ("native", "xla", "auto")
#: the cases written with JAX alone (one device: all; a slab: c2c and r2c; a pencil:
#: c2c), as columns named so
JAX_ALONE = "jax"
JAX_CASES = ("c2c", "r2c", "dct")
COLUMN_NAMES = {JAX_ALONE: "JAX alone"}
DIRECTIONS = ("forward", "backward")


def _grid_name(grid) -> str:
    return "x".join(map(str, grid))


def _layout(grid) -> str:
    return "one device" if grid == (1,) else "slab" if len(grid) == 1 else "pencil"


def _figures(kept, donated) -> dict:
    """A row's figures from the kept and donated programs' memory
    (:class:`pfft.memory.ProgramMemory`), in blocks of their unit."""
    block = kept.block
    return dict(block_bytes=block, kept_blocks=kept.blocks, donated_blocks=donated.blocks,
                argument_blocks=kept.argument / block, output_blocks=kept.output / block,
                kept_temporaries_blocks=kept.temporaries / block,
                donated_temporaries_blocks=donated.temporaries / block,
                aliased_blocks=donated.aliased / block,
                work_area_bytes=max(kept.work_area, donated.work_area))


def measure_plan(case: str, n: int, grid, engine: str) -> list[dict]:
    """One row per direction: ``plan.memory()`` of ``case`` at ``n³`` on ``grid``."""
    import numpy as np

    import pfft

    _, kwargs = CASES[case]
    kwargs = dict(kwargs, dtype=np.dtype(kwargs["dtype"]))
    plan = pfft.plan((n,) * 3, mesh=pfft.make_mesh(grid), engine=engine, **kwargs)
    memory = plan.memory()
    out = []
    for direction in DIRECTIONS:
        kept, donated = (getattr(memory, direction)[how] for how in ("kept", "donated"))
        out.append(dict(case=case, n=n, in_shape="x".join(map(str, plan.in_shape)),
                        grid=_grid_name(grid), layout=_layout(grid), engine=engine,
                        chosen=plan.engine.name, direction=direction,
                        **_figures(kept, donated), peak_bytes=memory.peak))
    return out


def jax_program(case: str, inverse: bool, n: int, grid: tuple[int, ...]):
    """``(fn, argument, block bytes)``: the transform of ``case`` at ``n³`` (its
    backward where ``inverse``) written with JAX alone, as a user would. On one device
    (``grid`` ``(1,)``) ``jnp.fft.fftn``/``ifftn``, ``rfftn``/``irfftn`` or
    ``jax.scipy.fft.dctn``/``idctn``; over a slab ``(p,)`` (c2c and r2c) or a pencil
    ``(p, q)`` (c2c) ``jnp.fft`` and ``lax.all_to_all`` in a ``shard_map`` in numpy's
    axis order: the slab's forward splits axis 0, transforms axes 1 and 2, exchanges,
    transforms axis 0; the pencil's splits axes 0 and 1, transforms axis 2, then axis 1
    and axis 0 each after an exchange; the backwards the other way. ``block``: the
    device's part of the forward input."""
    import math

    import jax
    import jax.numpy as jnp
    import jax.scipy.fft as jsf
    import numpy as np
    from jax.sharding import NamedSharding, PartitionSpec as P

    real = case in ("r2c", "dct")
    p = math.prod(grid)
    block = n ** 3 // p * (4 if real else 8)
    spectrum = (n, n, n // 2 + 1) if case == "r2c" else (n,) * 3
    shape, dtype = ((spectrum, np.complex64 if case != "dct" else np.float32) if inverse
                    else ((n,) * 3, np.float32 if real else np.complex64))
    if p == 1:
        fn = {("c2c", False): jnp.fft.fftn, ("c2c", True): jnp.fft.ifftn,
              ("r2c", False): jnp.fft.rfftn, ("r2c", True): lambda a: jnp.fft.irfftn(a, (n,) * 3),
              ("dct", False): lambda a: jsf.dctn(a, type=2),
              ("dct", True): lambda a: jsf.idctn(a, type=2)}[case, inverse]
        return fn, jax.ShapeDtypeStruct(shape, dtype), block
    if not _jax_writes(case, grid):
        raise ValueError(f"jax_program: no program written for {case!r} on {grid}")
    if len(grid) == 2:
        fn, specs = _pencil(inverse, grid)
        return fn, jax.ShapeDtypeStruct(shape, dtype, sharding=specs), block
    mesh = jax.make_mesh((p,), ("x",), devices=jax.devices()[:p])

    def forward(b):                           # split along axis 0
        b = jnp.fft.rfftn(b, axes=(1, 2)) if real else jnp.fft.fftn(b, axes=(1, 2))
        return jnp.fft.fft(jax.lax.all_to_all(b, "x", 1, 0, tiled=True), axis=0)

    def backward(b):                          # split along axis 1
        b = jax.lax.all_to_all(jnp.fft.ifft(b, axis=0), "x", 0, 1, tiled=True)
        return jnp.fft.irfftn(b, (n, n), axes=(1, 2)) if real else jnp.fft.ifftn(b, axes=(1, 2))

    specs = (P(None, "x"), P("x")) if inverse else (P("x"), P(None, "x"))
    fn = jax.shard_map(backward if inverse else forward, mesh=mesh, in_specs=specs[0],
                       out_specs=specs[1])
    return fn, jax.ShapeDtypeStruct(shape, dtype, sharding=NamedSharding(mesh, specs[0])), block


def _pencil(inverse: bool, grid: tuple[int, int]):
    """The complex pencil transform of :func:`jax_program` over ``grid`` and its input's
    sharding."""
    import jax
    import jax.numpy as jnp
    from jax.sharding import NamedSharding, PartitionSpec as P

    mesh = jax.make_mesh(grid, ("x", "y"), devices=jax.devices()[:grid[0] * grid[1]])
    a2a = jax.lax.all_to_all

    def forward(b):                          # split along axes 0 ('x') and 1 ('y')
        b = a2a(jnp.fft.fft(b, axis=2), "y", 2, 1, tiled=True)       # axis 1 local
        b = a2a(jnp.fft.fft(b, axis=1), "x", 1, 0, tiled=True)       # axis 0 local
        return jnp.fft.fft(b, axis=0)

    def backward(b):                         # split along axes 1 ('x') and 2 ('y')
        b = a2a(jnp.fft.ifft(b, axis=0), "x", 0, 1, tiled=True)
        b = a2a(jnp.fft.ifft(b, axis=1), "y", 1, 2, tiled=True)
        return jnp.fft.ifft(b, axis=2)

    specs = (P(None, "x", "y"), P("x", "y")) if inverse else (P("x", "y"), P(None, "x", "y"))
    fn = jax.shard_map(backward if inverse else forward, mesh=mesh, in_specs=specs[0],
                       out_specs=specs[1])
    return fn, NamedSharding(mesh, specs[0])


def measure_jax(case: str, n: int, grid) -> list[dict]:
    """One row per direction: :func:`jax_program` of ``case`` at ``n³`` on ``grid``,
    as :func:`measure_plan` measures a plan."""
    from pfft.memory import program_memory

    out = []
    for direction in DIRECTIONS:
        fn, arg, block = jax_program(case, direction == "backward", n, tuple(grid))
        kept, donated = (program_memory(fn, arg, donate=d, block=block) for d in (False, True))
        out.append(dict(case=case, n=n, in_shape="x".join([str(n)] * 3), grid=_grid_name(grid),
                        layout=_layout(grid), engine=JAX_ALONE, chosen=JAX_ALONE,
                        direction=direction, **_figures(kept, donated),
                        peak_bytes=max(kept.total, donated.total)))
    return out


def _jax_writes(case: str, grid) -> bool:
    """Whether :func:`jax_program` has ``case`` on ``grid``: every case on one device,
    c2c and r2c on a slab, c2c on a pencil (a real pencil's half spectrum would need
    padding to be cut evenly)."""
    grid = tuple(grid)
    return case in JAX_CASES and (grid == (1,) or (len(grid) == 1 and case != "dct")
                                  or (len(grid) == 2 and case == "c2c"))


def measure_floor(p: int, n: int) -> dict:
    """The bare all-to-all of one block of an ``n³`` complex64 array over ``p``
    devices (``jax.lax.all_to_all(b, "x", 0, 0, tiled=True)`` in a ``shard_map``)."""
    import jax
    import numpy as np
    from jax.sharding import NamedSharding, PartitionSpec as P

    from pfft.memory import program_memory

    mesh = jax.make_mesh((p,), ("x",), devices=jax.devices()[:p])
    swap = jax.shard_map(lambda b: jax.lax.all_to_all(b, "x", 0, 0, tiled=True), mesh=mesh,
                         in_specs=P("x"), out_specs=P("x"))
    arg = jax.ShapeDtypeStruct((n,) * 3, np.complex64, sharding=NamedSharding(mesh, P("x")))
    block = n ** 3 * 8 // p
    kept, donated = (program_memory(swap, arg, donate=d, block=block) for d in (False, True))
    return dict(case="all-to-all", n=n, in_shape="x".join([str(n)] * 3), grid=str(p),
                layout="slab", engine="", chosen="", direction="", **_figures(kept, donated),
                peak_bytes=kept.total)


# -- the docs' tables -------------------------------------------------------------------

def _cell(row: dict | None) -> str:
    if row is None:
        return "–"
    return f"{row['kept_blocks']:.2f} / {row['donated_blocks']:.2f}"


def plans_table(rows: list[dict]) -> str:
    """One line per case and grid; per engine and direction, kept / donated blocks."""
    plans = [r for r in rows if r["case"] != "all-to-all"]
    engines = [e for e in ENGINES + (JAX_ALONE,) if any(r["engine"] == e for r in plans)]
    index = {(r["case"], r["grid"], r["engine"], r["direction"]): r for r in plans}
    lines = []
    for case, grid in dict.fromkeys((r["case"], r["grid"]) for r in plans):
        first = next(r for r in plans if (r["case"], r["grid"]) == (case, grid))
        line = dict(case=CASES[case][0] if case in CASES else case,
                    n=first["in_shape"].replace("x", "×"),
                    grid=f"{first['layout']} {grid}" if grid != "1" else "one device")
        for e in engines:
            for d in DIRECTIONS:
                line[f"{e} {d}"] = _cell(index.get((case, grid, e, d)))
        lines.append(line)
    columns = [("case", "plan", "{}"), ("n", "input", "{}"), ("grid", "grid", "{}")]
    columns += [(f"{e} {d}", f"{COLUMN_NAMES.get(e, e)} {d}", "{}") for e in engines
                for d in DIRECTIONS]
    return markdown_table(lines, columns)


def floor_table(rows: list[dict]) -> str:
    """The bare all-to-all's rows: kept / donated and what they are made of."""
    def parts(r: dict, how: str) -> str:
        text = (f"{r['argument_blocks']:.2f} + {r['output_blocks']:.2f} + "
                f"{r[how + '_temporaries_blocks']:.2f}")
        return text + (f" − {r['aliased_blocks']:.2f}" if how == "donated" else "")
    floor = [dict(r, kept_parts=parts(r, "kept"), donated_parts=parts(r, "donated"))
             for r in rows if r["case"] == "all-to-all"]
    columns = [("grid", "devices", "{}"), ("in_shape", "array", "{}"),
               ("kept_blocks", "kept", "{:.2f}"), ("donated_blocks", "donated", "{:.2f}"),
               ("kept_parts", "kept: argument + output + temporaries", "{}"),
               ("donated_parts", "donated: argument + output + temporaries − aliased", "{}")]
    return markdown_table([dict(r, in_shape=r["in_shape"].replace("x", "×") + " complex64")
                           for r in floor], columns)


def time_overwrite(case: str, n: int, grid, repeats: int) -> list[dict]:
    """``case``'s forward at ``n³`` on ``grid`` with ``overwrite_x`` off and on, the
    input kept and donated: blocks held and median milliseconds, one row each."""
    import jax
    import numpy as np

    from . import common
    import pfft

    _, kwargs = CASES[case]
    kwargs = dict(kwargs, dtype=np.dtype(kwargs["dtype"]))
    mesh = pfft.make_mesh(grid)
    plans = {o: pfft.plan((n,) * 3, mesh=mesh, overwrite_x=o, **kwargs) for o in (False, True)}
    x = jax.device_put(np.random.default_rng(0).standard_normal((n,) * 3).astype(kwargs["dtype"]),
                       plans[False].in_sharding)
    fresh = {}

    def before():                       # the input each donating call gives away
        fresh["x"] = common.block(x.copy())

    calls, names = [], []
    for o, plan in plans.items():
        for how in ("kept", "donated"):
            fn = jax.jit(plan.forward, donate_argnums=(0,) if how == "donated" else ())
            common.block(fn(x.copy()))                  # compiled before the clock
            calls.append(lambda fn=fn, how=how: fn(x if how == "kept" else fresh["x"]))
            names.append((o, how))
    before()
    medians = common.compare(*calls, repeats=repeats, warmup=0, before=before)
    return [dict(case=case, n=n, grid=_grid_name(grid), layout=_layout(grid),
                 chosen=plans[o].engine.name, overwrite_x=str(o), input=how,
                 blocks=getattr(plans[o].memory().forward[how], "blocks"), ms=1e3 * t)
            for (o, how), t in zip(names, medians)]


def overwrite_table(rows: list[dict]) -> str:
    """``overwrite_x`` against the default: blocks and ms, kept and donated."""
    by = {(r["case"], r["grid"], r["overwrite_x"], r["input"]): r for r in rows}
    out = []
    for case, grid in dict.fromkeys((r["case"], r["grid"]) for r in rows):
        cell = {f"{o}_{how}": by[case, grid, o, how] for o in ("False", "True")
                for how in ("kept", "donated")}
        first = cell["False_kept"]
        out.append(dict(what=f"{CASES[case][0]}, {first['n']}³", grid=grid,
                        layout=first["layout"], engine=first["chosen"],
                        **{f"{k}_b": v["blocks"] for k, v in cell.items()},
                        **{f"{k}_ms": v["ms"] for k, v in cell.items()}))
    columns = [("what", "forward", "{}"), ("layout", "grid", "{}"), ("engine", "engine", "{}")]
    for o, name in (("False", "default"), ("True", "overwrite_x")):
        for how in ("kept", "donated"):
            columns += [(f"{o}_{how}_b", f"{name}, {how}: blocks", "{:.2f}"),
                        (f"{o}_{how}_ms", "ms", "{:.1f}")]
    return markdown_table(out, columns)


OVERWRITE_KEY = ("The forward program with `overwrite_x=True` against the default: blocks a "
                 "device holds and the median time, the input kept (the caller's array is "
                 "copied first) and donated (`jax.jit(f, donate_argnums=0)`: the first "
                 "transform runs in its buffer).")


def doc(rows: list[dict], auto: str = "") -> list[str]:
    """The page section's parts: the plans' table, its key, the floor's table."""
    key = ("Blocks a device holds, the input kept / donated (`jax.jit(f, "
           "donate_argnums=0)`), in multiples of the device's part of the forward input "
           "(for the padded plan: of its finer physical grid, the input shown). Engine `auto` is pfft's "
           "default" + (f": `{auto}` here" if auto else "") + ". JAX alone: the same "
           "transform without pfft, `jnp.fft.fftn`, `rfftn` or `jax.scipy.fft.dctn` (and "
           "their inverses) on one device, over a slab or a pencil `jnp.fft` and "
           "`jax.lax.all_to_all` in a `shard_map` (the axes in numpy's order); – where "
           "not written.")
    parts = [plans_table(rows), key]
    if any(r["case"] == "all-to-all" for r in rows):
        parts += ["**The floor**: XLA's own all-to-all alone (`jax.lax.all_to_all(b, \"x\", "
                  "0, 0, tiled=True)` in a `shard_map`), measured the same way, in blocks of "
                  "its input.", floor_table(rows)]
    return parts


#: the docs' tables: data file in docs/data -> what report() makes of it
DOCS = {"memory.csv": ("memory.md",)}
TEXT = ("case", "in_shape", "grid", "layout", "engine", "chosen", "direction")
INTS = ("n", "block_bytes", "work_area_bytes", "peak_bytes")
OVERWRITE_TEXT = ("case", "grid", "layout", "chosen", "overwrite_x", "input")


def report(data: str, figures: str) -> list[str]:
    """``data/memory.md`` from ``data/memory.csv`` and its run record (and
    ``memory_overwrite.md`` from ``memory_overwrite.csv`` where there is one)."""
    done = []
    path = os.path.join(data, "memory.csv")
    if os.path.exists(path):
        rows = read_results(path, text=TEXT, ints=INTS)
        auto = sorted({r["chosen"] for r in rows if r["engine"] == "auto"})
        done.append(write_doc(os.path.join(data, "memory.md"), read_info(path),
                              *doc(rows, ", ".join(auto))))
    path = os.path.join(data, "memory_overwrite.csv")
    if os.path.exists(path):
        rows = read_results(path, text=OVERWRITE_TEXT, ints=("n",))
        done.append(write_doc(os.path.join(data, "memory_overwrite.md"), read_info(path),
                              overwrite_table(rows), OVERWRITE_KEY))
    return done


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(prog="python -m benchmarks memory",
                                 description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=64, help="N of the N³ plans")
    ap.add_argument("--grids", nargs="+", default=["1", "8", "2x4"])
    ap.add_argument("--engines", nargs="+", default=list(ENGINES) + [JAX_ALONE],
                    choices=ENGINES + (JAX_ALONE,),
                    help=f"pfft's engines, and {JAX_ALONE!r}: the transform with JAX alone")
    ap.add_argument("--cases", nargs="+", default=list(CASES), choices=list(CASES))
    ap.add_argument("--floor", type=int, nargs="*", default=[2, 4, 8],
                    help="device counts of the bare all-to-all (none: skip it)")
    ap.add_argument("--overwrite-n", type=int, default=0,
                    help="N of overwrite_x's timing (0: skip it)")
    ap.add_argument("--overwrite-grids", nargs="+", default=["1", "4", "2x2"])
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--out", default="results")
    args = ap.parse_args(argv)
    simulate_cpu_devices(8)
    info = run_info("benchmarks.memory", argv)
    print(run_header("memory benchmark", info), flush=True)
    rows = []
    for case in args.cases:
        for grid in parse_grids(args.grids):
            for engine in args.engines:
                if engine == JAX_ALONE and not _jax_writes(case, grid):
                    continue
                print(f"  {case} {_grid_name(grid)} {engine} ...", flush=True)
                rows += (measure_jax(case, args.n, grid) if engine == JAX_ALONE
                         else measure_plan(case, args.n, grid, engine))
    rows += [measure_floor(p, args.n) for p in args.floor]
    auto = ", ".join(sorted({r["chosen"] for r in rows if r["engine"] == "auto"}))
    text = "\n\n".join(doc(rows, auto))
    print(text)
    write_results(rows, text, args.out, "memory", info)
    if args.overwrite_n:
        timed = []
        for case in ("c2c", "dct"):
            for grid in parse_grids(args.overwrite_grids):
                print(f"  overwrite_x: {case} {args.overwrite_n}³ {_grid_name(grid)} ...",
                      flush=True)
                timed += time_overwrite(case, args.overwrite_n, grid, args.repeats)
        text = overwrite_table(timed)
        print(text)
        write_results(timed, text, args.out, "memory_overwrite", info)
    report(args.out, args.out)                      # the tables with their captions


if __name__ == "__main__":
    main()
