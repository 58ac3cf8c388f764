"""pfft.mpi against mpi4py-fft (FFTW) on 4 or 8 MPI ranks: forward ``fftn`` or DCT-II.

Set-up (bench-only, not part of ``make test``): mpi4py-fft compiles against a system
FFTW, so its headers and libraries come first::

    apt-get install -y libfftw3-dev        # offline: dpkg -i the libfftw3-*.deb files
    PATH=$PWD/.venv/bin:$PATH .venv/bin/pip install mpi4py-fft

Run (``make bench-mpi`` runs both transforms on the 2x2 grid)::

    OMP_NUM_THREADS=1 .venv/bin/mpirun -n 4 .venv/bin/python -m benchmarks.mpi_vs_mpi4pyfft \\
        [--transform fftn|dctn] [--grid 2x2|1x4] [--sizes 128 256] [--dtypes ...] [--repeats 7]
    OMP_NUM_THREADS=1 .venv/bin/mpirun -n 8 .venv/bin/python -m benchmarks.mpi_vs_mpi4pyfft \\
        --grid 2x4|1x8 ...

``--transform fftn`` (default): forward complex-to-complex transforms of N^3 arrays
(``--dtypes`` default complex64 complex128), numpy's scaling on both sides, checked
against ``numpy.fft.fftn`` at N <= 128; one-device ``jnp.fft.fftn`` for scale.

``--transform dctn``: DCT-II on every axis of a real N^3 array (default float64
float32): ``pfft.mpi.plan(..., kinds=("dct2",) * 3)`` against mpi4py-fft's ``PFFT``
with FFTW's REDFT10 (``mpi4py_fft.fftw.dctn``, ``type=2``) on each axis, both with
scipy's unnormalised scaling (``norm="backward"``). Before timing, both are checked
against ``scipy.fft.dctn`` of the gathered array on rank 0 at ``--check-size`` (16^3),
and at timed sizes N <= 128 block by block; one-device ``scipy.fft.dctn``
(``workers=1``) for scale.

Grids: ``2x2`` pencils (mpi4py-fft ``grid=(2, 2, 1)``) or ``1x4``, a slab over the 4
ranks (pfft.mpi ``ProcessGrid`` dims ``(1, 4)``, mpi4py-fft ``grid=(4, 1, 1)``, its
own slab); on 8 ranks ``2x4`` and ``1x8`` likewise: both libraries take the same input
blocks. mpi4py-fft runs with its
defaults (FFTW_MEASURE plans, ``collapse=False``) and ``forward(u, uh,
normalize=False)``, which copies the input in and the output out.

Each measurement: two warm-up calls, then ``--repeats`` timed calls of each library,
interleaved (so both see the same background load), each started after a barrier and
timed as the slowest rank's time; medians are reported, the ratio as the median of
the paired ratios. The one-device baseline runs on rank 0 alone (one thread, the
other ranks asleep in a barrier). Without mpi4py-fft the script says how to install
it and exits 0.
"""
from __future__ import annotations

import argparse
import functools
import os
import platform
import statistics
import time

os.environ.setdefault("MPI4JAX_NO_WARN_JAX_VERSION", "1")
os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false "
                                   "intra_op_parallelism_threads=1")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import scipy.fft  # noqa: E402
from mpi4py import MPI  # noqa: E402

jax.config.update("jax_enable_x64", True)

import pfft.mpi  # noqa: E402

from .mpi_timing import quiet_barrier, slowest_rank_times  # noqa: E402

COMM = MPI.COMM_WORLD
RANK = COMM.Get_rank()
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


def timed(fns, repeats: int) -> list[list[float]]:
    """The slowest rank's time of each of ``fns`` (ms), ``repeats`` times, interleaved
    (call 1 of each, call 2 of each, ...) so that both see the same background load."""
    return [[1e3 * t for t in ts] for ts in slowest_rank_times(fns, repeats, COMM, warmup=2)]


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
                f(x).block_until_ready()
        else:
            def call():
                scipy.fft.dctn(a, type=2, workers=1)
        call()
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            call()
            times.append(time.perf_counter() - start)
        result = 1e3 * statistics.median(times)
    quiet_barrier(COMM)
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


def random_block(rng, shape, dtype) -> np.ndarray:
    """Random normal values of ``dtype`` (complex: both parts)."""
    a = rng.standard_normal(shape)
    if np.issubdtype(dtype, np.complexfloating):
        a = a + 1j * rng.standard_normal(shape)
    return a.astype(dtype)


def reference(transform: str, x: np.ndarray) -> np.ndarray:
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


def gather_on_root(block: np.ndarray, slices, shape) -> np.ndarray | None:
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
    """Both libraries' forward of one ``n^3`` array, gathered on rank 0 and compared
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
    t_pfft, t_m4f = timed([lambda: fwd(x).block_until_ready(),
                           lambda: fft.forward(u, uh, normalize=False)], repeats)
    err = blockwise_errors(transform, plan, fwd, fft, u, uh, dtype) if check else None
    fft.destroy()
    return {"pfft": statistics.median(t_pfft), "mpi4py-fft": statistics.median(t_m4f),
            "ratio": statistics.median(a / b for a, b in zip(t_pfft, t_m4f)), "err": err,
            "engine": getattr(plan.engine, "name", "xla")}


def machine_line(load_start: float) -> str:
    """The conditions the table was measured under."""
    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            model = next(line.split(":", 1)[1].strip() for line in f
                         if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return (f"{COMM.Get_size()} MPI ranks on {os.cpu_count()} cores ({model}), one thread "
            f"each (OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}, one XLA "
            f"thread); 1-minute load average {load_start:.2f} at start, "
            f"{os.getloadavg()[0]:.2f} at end")


def print_fftn(rows, grid: str, repeats: int, load_start: float) -> None:
    print(f"\n{COMM.Get_size()} MPI ranks, {GRIDS[grid][2]}, forward c2c, median of {repeats} "
          f"(ms; slowest rank)")
    print(machine_line(load_start) + "\n")
    print("| N³ | dtype | pfft.mpi | mpi4py-fft (FFTW) | pfft.mpi / mpi4py-fft (median of pairs) "
          "| jnp.fft.fftn, 1 device | pfft.mpi / 1 device |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for n, name, r, ref in rows:
        print(f"| {n}³ | {name} | {r['pfft']:.0f} | {r['mpi4py-fft']:.0f} | "
              f"{r['ratio']:.2f} | {ref:.0f} | {r['pfft'] / ref:.2f} |")


def print_dctn(rows, grid: str, repeats: int, load_start: float) -> None:
    print(f"\n{COMM.Get_size()} MPI ranks, {GRIDS[grid][2]}, forward DCT-II on every axis (scipy's "
          f"norm='backward' on both sides), median of {repeats} (ms; slowest rank)")
    print(machine_line(load_start) + "\n")
    print("| N³ | dtype | grid | pfft.mpi (ms) | mpi4py-fft, FFTW (ms) "
          "| pfft.mpi / mpi4py-fft (median of pairs) | scipy.fft.dctn, 1 device, workers=1 (ms) "
          "| rel. err pfft.mpi / mpi4py-fft |")
    print("|---|---|---|---:|---:|---:|---:|---|")
    for n, name, r, ref in rows:
        err = f"{r['err'][0]:.1e} / {r['err'][1]:.1e}" if r["err"] else "–"
        print(f"| {n}³ | {name} | {grid} | {r['pfft']:.1f} | {r['mpi4py-fft']:.1f} | "
              f"{r['ratio']:.2f} | {ref:.1f} | {err} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--transform", choices=["fftn", "dctn"], default="fftn")
    parser.add_argument("--grid", choices=sorted(GRIDS), default="2x2")
    parser.add_argument("--sizes", type=int, nargs="+", default=[128, 256])
    parser.add_argument("--dtypes", nargs="+", default=None,
                        help="default: complex64 complex128 (fftn), float64 float32 (dctn)")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--check-size", type=int, default=16,
                        help="dctn: the size of the gathered check before timing")
    args = parser.parse_args()
    ranks = int(np.prod(GRIDS[args.grid][0]))
    if COMM.Get_size() != ranks:
        raise SystemExit(f"--grid {args.grid} runs under mpirun -n {ranks}")
    try:
        import mpi4py_fft  # noqa: F401
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
    load_start = os.getloadavg()[0]
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
            rows.append((n, name, r, ref))
            if RANK == 0 and not real:           # the line benchmarks/suite.py parses
                print(f"# {n}^3 {name}: pfft.mpi {r['pfft']:.1f} ms, "
                      f"mpi4py-fft {r['mpi4py-fft']:.1f} ms, jnp.fft.fftn 1 device {ref:.1f} ms"
                      + (f", rel. err vs numpy {r['err'][0]:.1e} / {r['err'][1]:.1e}"
                         if r["err"] else ""), flush=True)
            elif RANK == 0:
                print(f"# dctn {n}^3 {name} {args.grid}: pfft.mpi {r['pfft']:.1f} ms "
                      f"(engine {r['engine']}), mpi4py-fft {r['mpi4py-fft']:.1f} ms, "
                      f"ratio {r['ratio']:.2f}, scipy.fft.dctn 1 device {ref:.1f} ms"
                      + (f", rel. err vs scipy {r['err'][0]:.1e} / {r['err'][1]:.1e}"
                         if r["err"] else ""), flush=True)
    if RANK == 0:
        (print_dctn if real else print_fftn)(rows, args.grid, args.repeats, load_start)


if __name__ == "__main__":
    main()
