"""pfft.mpi under ``mpirun``: against mpi4py-fft (FFTW) on the same ranks, and its scaling.

Run under ``mpirun``, one process per rank, each with one XLA thread::

    OMP_NUM_THREADS=1 .venv/bin/mpirun -n 4 .venv/bin/python -m benchmarks mpi \\
        [--transform fftn|dctn] [--grid 2x2|1x4] [--sizes 128 256] [--dtypes ...] [--repeats 7]
    OMP_NUM_THREADS=1 .venv/bin/mpirun -n 8 .venv/bin/python -m benchmarks mpi --grid 2x4|1x8 ...
    OMP_NUM_THREADS=1 .venv/bin/mpirun -n 4 .venv/bin/python -m benchmarks mpi --scaling \\
        --sizes 128 --weak-base 64

(``python -m benchmarks.mpi`` is the same program.) ``make bench-mpi`` runs the
comparisons on 4 ranks; ``python -m benchmarks mpi`` without ``mpirun`` (the one-rank
world) is refused: ``python -m benchmarks transforms --mpi-ranks 1 2 4`` and ``python
-m benchmarks peers`` start ``mpirun`` themselves.

**Against mpi4py-fft** (bench-only: it compiles against a system FFTW)::

    apt-get install -y libfftw3-dev        # offline: dpkg -i the libfftw3-*.deb files
    PATH=$PWD/.venv/bin:$PATH .venv/bin/pip install mpi4py-fft

``--transform fftn`` (default): forward complex-to-complex transforms of N³ arrays
(``--dtypes`` default complex64 complex128), numpy's scaling on both sides, checked
against ``numpy.fft.fftn`` at N <= 128; one-device ``jnp.fft.fftn`` for scale.
``--transform dctn``: DCT-II on every axis of a real N³ array (default float64
float32): ``pfft.mpi.plan(..., kinds=("dct2",) * 3)`` against mpi4py-fft's ``PFFT``
with FFTW's REDFT10 on each axis, both with scipy's unnormalised scaling; before
timing both are checked against ``scipy.fft.dctn`` of the gathered array on rank 0 at
``--check-size`` (16³), and at timed sizes N <= 128 block by block; one-device
``scipy.fft.dctn`` (``workers=1``) for scale.

Grids: ``2x2`` pencils (mpi4py-fft ``grid=(2, 2, 1)``) or ``1x4``, a slab over the 4
ranks; on 8 ranks ``2x4`` and ``1x8`` likewise: both libraries take the same input
blocks. mpi4py-fft runs with its defaults (FFTW_MEASURE plans, ``collapse=False``)
and ``forward(u, uh, normalize=False)``.

Each measurement: two warm-up calls, then ``--repeats`` timed calls of each library,
interleaved (both see the same background load), each started after a barrier and
timed as the slowest rank's time (:func:`benchmarks.common.slowest_rank_times`);
medians are reported, the ratio as the median of the paired ratios. The one-device
baseline runs on rank 0 alone (one thread, the other ranks asleep in a barrier).
Rank 0 prints a table and writes ``mpi_TRANSFORM_GRID.{csv,json,md}`` under ``--out``.
Without mpi4py-fft the program says how to install it and exits 0.

**Scaling** (``--scaling``): forward c2c transforms on this rank count's default grid
(``pfft.dims_create``), strong (``--sizes`` N³ on every rank count) and weak
(``--weak-base`` b³ per rank); one JSON row per case on rank 0, for
:mod:`benchmarks.suite`.
"""
from __future__ import annotations

import argparse
import functools
import glob
import json
import os
import statistics

from . import common

INSTALL = ("apt-get install -y libfftw3-dev (FFTW for its build), then "
           "PATH=$PWD/.venv/bin:$PATH .venv/bin/pip install mpi4py-fft")
# grid name -> (pfft.mpi ProcessGrid dims, mpi4py-fft grid, words)
GRIDS = {"2x2": ((2, 2), (2, 2, 1), "2x2 pencil grid"),
         "1x4": ((1, 4), (4, 1, 1), "1x4 slab grid"),
         "2x4": ((2, 4), (2, 4, 1), "2x4 pencil grid"),
         "1x8": ((1, 8), (8, 1, 1), "1x8 slab grid")}
DTYPES = {"fftn": ["complex64", "complex128"], "dctn": ["float64", "float32"]}
# every group of axes mpi4py-fft may hand one serial transform (collapse=True merges some)
AXIS_GROUPS = [(0,), (1,), (2,), (0, 1), (1, 2), (0, 1, 2)]
COLUMNS = ["transform", "n", "dtype", "ranks", "grid", "pfft_mpi_ms", "mpi4py_fft_ms",
           "ratio", "one_device_ms", "one_device", "pfft_mpi_err", "mpi4py_fft_err"]


def _start() -> None:
    """Set up one rank: one XLA thread, then jax, mpi4py and pfft.mpi (imported here, not
    at the top, so that :func:`report` runs without MPI)."""
    global jax, jnp, np, scipy, MPI, pfft, COMM, RANK
    os.environ.setdefault("MPI4JAX_NO_WARN_JAX_VERSION", "1")
    os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false "
                                       "intra_op_parallelism_threads=1")
    import jax
    import jax.numpy as jnp
    import numpy as np
    import scipy.fft
    from mpi4py import MPI

    jax.config.update("jax_enable_x64", True)
    import pfft.mpi

    COMM, RANK = MPI.COMM_WORLD, MPI.COMM_WORLD.Get_rank()


def timed(fns, repeats: int) -> list[list[float]]:
    """The slowest rank's time of each of ``fns`` (ms), ``repeats`` times, interleaved."""
    return [[1e3 * t for t in ts]
            for ts in common.slowest_rank_times(fns, repeats, COMM, warmup=2)]


def one_device(transform: str, n: int, dtype, repeats: int) -> float:
    """The transform on rank 0 alone (others sleep in a barrier), in ms: ``jnp.fft.fftn``
    (one XLA thread) or ``scipy.fft.dctn`` (``workers=1``)."""
    result = 0.0
    if RANK == 0:
        a = np.random.default_rng(0).standard_normal((n,) * 3).astype(dtype)
        if transform == "fftn":
            x = jnp.asarray(a)
            f = jax.jit(jnp.fft.fftn)

            def call():
                return f(x)
        else:
            def call():
                scipy.fft.dctn(a, type=2, workers=1)
        result = 1e3 * common.median_time(call, repeats=repeats)
    common.quiet_barrier(COMM)
    return COMM.bcast(result)


def make_pair(transform: str, n: int, dtype, grid: str):
    """pfft.mpi's plan (jitted forward) and mpi4py-fft's ``PFFT`` for one case."""
    from mpi4py_fft import PFFT
    from mpi4py_fft.fftw import dctn, idctn

    dims, m4f_grid, _ = GRIDS[grid]
    pgrid = pfft.mpi.ProcessGrid(COMM, dims)
    if transform == "fftn":
        plan = pfft.mpi.plan((n, n, n), dtype, pgrid)
        transforms = None
    else:
        plan = pfft.mpi.plan((n, n, n), dtype, pgrid, kinds=("dct2",) * 3)
        pair = (functools.partial(dctn, type=2), functools.partial(idctn, type=2))
        transforms = {axes: pair for axes in AXIS_GROUPS}
    fft = PFFT(COMM, (n, n, n), axes=(0, 1, 2), dtype=dtype, grid=m4f_grid, backend="fftw",
               transforms=transforms)
    if tuple(plan.local_in_slices) != tuple(fft.local_slice(False)):
        raise RuntimeError(f"rank {RANK}: the libraries' input blocks differ on {grid}: "
                           f"{plan.local_in_slices} and {fft.local_slice(False)}")
    return plan, jax.jit(plan.forward), fft


def random_block(rng, shape, dtype):
    """Random normal values of ``dtype`` (complex: both parts)."""
    a = rng.standard_normal(shape)
    if np.issubdtype(dtype, np.complexfloating):
        a = a + 1j * rng.standard_normal(shape)
    return a.astype(dtype)


def reference(transform: str, x):
    """numpy's ``fftn`` or scipy's unnormalised DCT-II, in double precision."""
    if transform == "fftn":
        return np.fft.fftn(x.astype(np.complex128))
    return scipy.fft.dctn(x.astype(np.float64), type=2)


def blockwise_errors(transform, plan, fwd, fft, u, uh, dtype, seed=2) -> tuple[float, float]:
    """Relative L2 errors of both libraries' forward against :func:`reference` of the
    same global array, every rank comparing its own output blocks."""
    n = plan.shape[0]
    xg = random_block(np.random.default_rng(seed), (n,) * 3, dtype)
    want = reference(transform, xg)
    k = np.asarray(fwd(jnp.asarray(xg[plan.local_in_slices])))
    u[:] = xg[fft.local_slice(False)]
    fft.forward(u, uh, normalize=False)
    sq = [np.sum(np.abs(k - want[plan.local_out_slices]) ** 2),
          np.sum(np.abs(np.asarray(uh) - want[fft.local_slice(True)]) ** 2),
          np.sum(np.abs(want[plan.local_out_slices]) ** 2)]
    total = COMM.allreduce(np.array(sq))
    return float(np.sqrt(total[0] / total[2])), float(np.sqrt(total[1] / total[2]))


def gather_on_root(block, slices, shape):
    """The global array from every rank's ``block`` at ``slices``, on rank 0 only."""
    parts = COMM.gather((tuple(slices), np.asarray(block)), root=0)
    if RANK != 0:
        return None
    out = np.zeros(shape, parts[0][1].dtype)
    filled = np.zeros(shape, bool)
    for where, part in parts:
        out[where] = part
        filled[where] = True
    if not filled.all():
        raise RuntimeError(f"the ranks' output blocks do not cover the {shape} array")
    return out


def gathered_check(transform: str, n: int, dtype, grid: str) -> tuple[float, float] | None:
    """Both libraries' forward of one ``n³`` array, gathered on rank 0 and compared
    there with :func:`reference` (relative L2 errors; ``None`` on other ranks)."""
    from mpi4py_fft import newDistArray

    dtype = np.dtype(dtype)
    plan, fwd, fft = make_pair(transform, n, dtype, grid)
    xg = random_block(np.random.default_rng(3), (n,) * 3, dtype)
    k = np.asarray(fwd(jnp.asarray(xg[plan.local_in_slices])))
    u = newDistArray(fft, False)
    u[:] = xg[fft.local_slice(False)]
    uh = np.asarray(fft.forward(u, normalize=False)).copy()
    got_pfft = gather_on_root(k, plan.local_out_slices, (n,) * 3)
    got_m4f = gather_on_root(uh, fft.local_slice(True), (n,) * 3)
    fft.destroy()
    if RANK != 0:
        return None
    want = reference(transform, xg)
    scale = np.linalg.norm(want)
    return (float(np.linalg.norm(got_pfft - want) / scale),
            float(np.linalg.norm(got_m4f - want) / scale))


def bench(transform: str, n: int, dtype, grid: str, repeats: int, check: bool) -> dict:
    from mpi4py_fft import newDistArray

    dtype = np.dtype(dtype)
    rng = np.random.default_rng(1)
    plan, fwd, fft = make_pair(transform, n, dtype, grid)
    x = jnp.asarray(random_block(rng, plan.local_in_shape, dtype))
    u = newDistArray(fft, False)
    u[:] = random_block(rng, u.shape, dtype)
    uh = newDistArray(fft, True)
    t_pfft, t_m4f = timed([lambda: fwd(x),
                           lambda: fft.forward(u, uh, normalize=False)], repeats)
    err = blockwise_errors(transform, plan, fwd, fft, u, uh, dtype) if check else None
    fft.destroy()
    return {"pfft": statistics.median(t_pfft), "mpi4py-fft": statistics.median(t_m4f),
            "ratio": statistics.median(a / b for a, b in zip(t_pfft, t_m4f)), "err": err,
            "engine": getattr(plan.engine, "name", "xla")}


# -- the tables -------------------------------------------------------------------------
def _fmt(value, spec="{:.1f}") -> str:
    """``value`` formatted, "–" where it was not recorded (blank or NaN)."""
    if value in ("", None) or float(value) != float(value):
        return "–"
    return spec.format(float(value))


def table(rows: list[dict]) -> str:
    """pfft.mpi against mpi4py-fft, one row per transform, size and dtype (and the date of
    each row's run, where the rows say)."""
    dated = all("date" in r for r in rows)
    lines = ["| transform | N³ | dtype | ranks (grid) | pfft.mpi ms | mpi4py-fft (FFTW) ms "
             "| **pfft.mpi / mpi4py-fft** (median of paired calls) | one device ms "
             "| rel. err pfft.mpi / mpi4py-fft |" + (" measured |" if dated else ""),
             "|---|---|---|---|---:|---:|---:|---:|---|" + ("---|" if dated else "")]
    for r in rows:
        one = _fmt(r["one_device_ms"])
        one += f" ({r['one_device']})" if one != "–" else ""
        err = ("–" if _fmt(r["pfft_mpi_err"]) == "–"
               else f"{float(r['pfft_mpi_err']):.1e} / {float(r['mpi4py_fft_err']):.1e}")
        lines.append(f"| `{r['transform']}` | {r['n']}³ | {r['dtype']} | {r['ranks']} "
                     f"({r['grid']}) | {_fmt(r['pfft_mpi_ms'])} | {_fmt(r['mpi4py_fft_ms'])} | "
                     f"**{_fmt(r['ratio'], '{:.2f}')}** | {one} | {err} |"
                     + (f" {r['date']} |" if dated else ""))
    return "\n".join(lines)


def report(data: str, figures: str) -> list[str]:
    """The docs' MPI table (``data/mpi.md``: every ``mpi_*.csv`` run in ``data``, each
    with its caption) and figure (``figures/mpi.png``)."""
    paths = [p for p in sorted(glob.glob(os.path.join(data, "mpi_*.csv")))   # not mpi_gpu's
             if not os.path.basename(p).startswith(("mpi_gpu", "mpi_cpu"))]
    if not paths:
        return []
    runs = [(common.read_results(p, text=("transform", "dtype", "grid", "one_device"),
                                 ints=("n", "ranks")), common.read_info(p)) for p in paths]
    runs.sort(key=lambda run: run[1].get("date", ""), reverse=True)      # newest first
    rows = [{**r, "date": info.get("date", "")} for rs, info in runs for r in rs]
    parts = [table(rows)] + [common.caption(info) for _, info in runs]
    out = os.path.join(data, "mpi.md")
    with open(out, "w") as f:
        f.write("\n\n".join(parts) + "\n")
    plt = common.pyplot()
    fig, ax = plt.subplots(figsize=(1.0 * len(rows) + 3, 3.6))
    labels = [f"{r['transform']} {r['n']}³\n{r['dtype']}\n{r['ranks']} ({r['grid']})"
              for r in rows]
    ax.bar(range(len(rows)), [r["pfft_mpi_ms"] / r["mpi4py_fft_ms"] for r in rows], 0.6)
    ax.axhline(1.0, color="grey", lw=0.8)
    ax.set_xticks(range(len(rows)), labels, fontsize=7)
    ax.set_ylabel("pfft.mpi / mpi4py-fft (medians)")
    dates = sorted({info.get("date", "") for _, info in runs})
    common.save_plot(fig, os.path.join(figures, "mpi.png"),
                     f"{runs[0][1].get('machine', '')}; MPI ranks sharing its cores; "
                     f"{', '.join(dates)}. mpirun -n RANKS python -m benchmarks mpi "
                     "--transform fftn|dctn --grid GRID (docs/data/mpi_*.json)")
    return [out, os.path.join(figures, "mpi.png")]


#: the docs' tables and figures: data files in docs/data -> what report() makes of them
DOCS = {"mpi_*.csv": ("mpi.md", "mpi.png")}


# -- the two programs -------------------------------------------------------------------
def compare(args) -> None:
    """pfft.mpi against mpi4py-fft on this world's ranks."""
    ranks = int(np.prod(GRIDS[args.grid][0]))
    if COMM.Get_size() != ranks:
        raise SystemExit(f"--grid {args.grid} runs under mpirun -n {ranks}")
    try:
        import mpi4py_fft
    except ImportError as e:
        if RANK == 0:
            print(f"mpi4py-fft not installed: {INSTALL} ({e})", flush=True)
        return
    dtypes = args.dtypes or DTYPES[args.transform]
    real = args.transform == "dctn"
    for name in dtypes:
        if np.issubdtype(np.dtype(name), np.complexfloating) == real:
            raise SystemExit(f"--dtypes {name}: {args.transform} takes "
                             f"{'real' if real else 'complex'} dtypes")
    info = None
    if RANK == 0:
        info = common.run_info(
            "benchmarks.mpi", args.argv,
            f"{ranks} MPI ranks ({GRIDS[args.grid][2]}), one thread each "
            f"(OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}), "
            f"mpi4py-fft {mpi4py_fft.__version__}, median of {args.repeats}, slowest rank")
        print(common.run_header(f"pfft.mpi against mpi4py-fft, {args.transform}", info),
              flush=True)
    if real:
        for name in dtypes:
            err = gathered_check("dctn", args.check_size, name, args.grid)
            if RANK == 0:
                print(f"# check {args.check_size}^3 {name} {args.grid}: rel. err vs "
                      f"scipy.fft.dctn of the gathered array: pfft.mpi {err[0]:.1e}, "
                      f"mpi4py-fft {err[1]:.1e}", flush=True)
    rows = []
    for n in args.sizes:
        for name in dtypes:
            r = bench(args.transform, n, name, args.grid, args.repeats, check=(n <= 128))
            ref = one_device(args.transform, n, name, args.repeats)
            if RANK != 0:
                continue
            rows.append(dict(transform=args.transform, n=n, dtype=name, ranks=ranks,
                             grid=args.grid, pfft_mpi_ms=r["pfft"],
                             mpi4py_fft_ms=r["mpi4py-fft"], ratio=r["ratio"],
                             one_device_ms=ref,
                             one_device="jnp.fft.fftn" if not real else "scipy.fft.dctn",
                             pfft_mpi_err=r["err"][0] if r["err"] else "",
                             mpi4py_fft_err=r["err"][1] if r["err"] else ""))
            if not real:                       # the line benchmarks/suite.py parses
                print(f"# {n}^3 {name}: pfft.mpi {r['pfft']:.1f} ms, "
                      f"mpi4py-fft {r['mpi4py-fft']:.1f} ms, jnp.fft.fftn 1 device {ref:.1f} ms"
                      + (f", rel. err vs numpy {r['err'][0]:.1e} / {r['err'][1]:.1e}"
                         if r["err"] else ""), flush=True)
    if RANK == 0 and rows:
        text = table(rows)
        print(text, flush=True)
        if args.out:
            common.write_results(rows, text, args.out, f"mpi_{args.transform}_{args.grid}",
                                 info)


def scaling(args) -> None:
    """pfft.mpi's forward c2c on this rank count's default grid: JSON rows on rank 0."""
    ranks = COMM.Get_size()
    cases = [("mpi-strong", (n,) * 3) for n in args.sizes]
    if args.weak_base:
        cases.append(("mpi-weak", common.weak_shape(args.weak_base, ranks)))
    dtype = np.dtype((args.dtypes or ["complex64"])[0])
    for study, shape in cases:
        grid = pfft.mpi.ProcessGrid(COMM)
        plan = pfft.mpi.plan(shape, dtype, grid)
        rng = np.random.default_rng(0)
        host = (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
        x = jnp.asarray(host[plan.local_in_slices])
        fwd = jax.jit(plan.forward)
        k = np.asarray(fwd(x))
        ref = np.fft.fftn(host.astype(np.complex128))
        sq = COMM.allreduce(np.array([np.sum(np.abs(k - ref[plan.local_out_slices]) ** 2),
                                      np.sum(np.abs(ref[plan.local_out_slices]) ** 2)]))
        del ref, host, k
        (seconds,) = common.compare(lambda: fwd(x), repeats=args.repeats,
                                    **common.slowest_rank(COMM))
        if RANK == 0:
            print(json.dumps({"study": study, "impl": "pfft.mpi", "shape": list(shape),
                              "dtype": dtype.name, "ranks": ranks,
                              "ms": 1e3 * seconds,
                              "rel_err": float(np.sqrt(sq[0] / sq[1])),
                              "grid": "x".join(map(str, grid.dims)),
                              "exchanges": plan.chain.exchanges}), flush=True)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(prog="mpirun -n RANKS python -m benchmarks mpi",
                                 description=__doc__.splitlines()[0])
    ap.add_argument("--scaling", action="store_true",
                    help="pfft.mpi alone on the default grid: JSON rows (strong and weak)")
    ap.add_argument("--transform", choices=["fftn", "dctn"], default="fftn")
    ap.add_argument("--grid", choices=sorted(GRIDS), default="2x2")
    ap.add_argument("--sizes", type=int, nargs="*", default=None,
                    help="N of the N³ arrays (default 128 256; with --scaling 128)")
    ap.add_argument("--weak-base", type=int, default=0,
                    help="--scaling: base³ per rank (0: no weak-scaling point)")
    ap.add_argument("--dtypes", "--dtype", nargs="+", default=None,
                    help="default: complex64 complex128 (fftn), float64 float32 (dctn)")
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--check-size", type=int, default=16,
                    help="dctn: the size of the gathered check before timing")
    ap.add_argument("--out", default="results", help="where rank 0 writes the table ('': nowhere)")
    args = ap.parse_args(argv)
    args.argv = argv
    _start()
    if args.scaling:
        args.sizes = [128] if args.sizes is None else args.sizes
        scaling(args)
        return
    args.sizes = [128, 256] if args.sizes is None else args.sizes
    compare(args)


if __name__ == "__main__":
    main()
