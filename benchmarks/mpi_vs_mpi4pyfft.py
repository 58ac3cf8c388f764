"""pfft.mpi against mpi4py-fft (FFTW) on a 2x2 pencil grid of MPI ranks.

Run (bench-only set-up, not part of ``make test``)::

    apt-get install -y libfftw3-dev                   # FFTW headers for mpi4py-fft's build
    PATH=$PWD/.venv/bin:$PATH .venv/bin/pip install mpi4py-fft
    OMP_NUM_THREADS=1 .venv/bin/mpirun -n 4 .venv/bin/python -m benchmarks.mpi_vs_mpi4pyfft

Forward complex-to-complex transforms of N^3 arrays, numpy's scaling on both sides.
Each measurement: two warm-up calls, then ``--repeats`` timed calls of each library,
interleaved (so both see the same background load), each started after a barrier
and timed as the slowest rank's time; medians are reported, the ratio as the median
of the paired ratios, with one-device ``jnp.fft.fftn`` (rank 0 alone, one XLA thread,
the other ranks asleep) for scale.
"""
from __future__ import annotations

import argparse
import os
import statistics
import time

os.environ.setdefault("MPI4JAX_NO_WARN_JAX_VERSION", "1")
os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false "
                                   "intra_op_parallelism_threads=1")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from mpi4py import MPI  # noqa: E402

jax.config.update("jax_enable_x64", True)

import pfft.mpi  # noqa: E402

from .mpi_timing import quiet_barrier, slowest_rank_times  # noqa: E402

COMM = MPI.COMM_WORLD
RANK = COMM.Get_rank()


def timed(fns, repeats: int) -> list[list[float]]:
    """The slowest rank's time of each of ``fns`` (ms), ``repeats`` times, interleaved
    (call 1 of each, call 2 of each, ...) so that both see the same background load."""
    return [[1e3 * t for t in ts] for ts in slowest_rank_times(fns, repeats, COMM, warmup=2)]


def one_device(n: int, dtype, repeats: int) -> float:
    """``jnp.fft.fftn`` on rank 0 alone (others sleep in a barrier), in ms."""
    result = 0.0
    if RANK == 0:
        x = jnp.asarray(np.random.default_rng(0).standard_normal((n,) * 3).astype(dtype))
        f = jax.jit(jnp.fft.fftn)
        f(x).block_until_ready()
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            f(x).block_until_ready()
            times.append(time.perf_counter() - start)
        result = 1e3 * statistics.median(times)
    quiet_barrier(COMM)
    return COMM.bcast(result)


def bench(n: int, dtype, repeats: int, check: bool) -> dict:
    from mpi4py_fft import PFFT, newDistArray

    dtype = np.dtype(dtype)
    rng = np.random.default_rng(1)
    # pfft.mpi
    grid = pfft.mpi.ProcessGrid(COMM, (2, 2))
    plan = pfft.mpi.plan((n, n, n), dtype, grid)
    shape = plan.local_in_shape
    x = jnp.asarray((rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype))
    fwd = jax.jit(plan.forward)
    # mpi4py-fft, FFTW, 2x2 pencils
    fft = PFFT(COMM, (n, n, n), axes=(0, 1, 2), dtype=dtype, grid=(2, 2, 1), backend="fftw")
    u = newDistArray(fft, False)
    u[:] = rng.standard_normal(u.shape) + 1j * rng.standard_normal(u.shape)
    uh = newDistArray(fft, True)
    t_pfft, t_m4f = timed([lambda: fwd(x).block_until_ready(),
                           lambda: fft.forward(u, uh, normalize=False)], repeats)
    err = None
    if check:                                     # both against numpy on the same array
        xg = np.random.default_rng(2).standard_normal((n,) * 3).astype(dtype)
        want = np.fft.fftn(xg)
        k = np.asarray(fwd(jnp.asarray(xg[plan.local_in_slices])))
        u[:] = xg[fft.local_slice(False)]
        fft.forward(u, uh, normalize=False)
        sq = [np.sum(np.abs(k - want[plan.local_out_slices]) ** 2),
              np.sum(np.abs(np.asarray(uh) - want[fft.local_slice(True)]) ** 2),
              np.sum(np.abs(want[plan.local_out_slices]) ** 2)]
        total = COMM.allreduce(np.array(sq))
        err = (np.sqrt(total[0] / total[2]), np.sqrt(total[1] / total[2]))
    fft.destroy()
    return {"pfft": statistics.median(t_pfft), "mpi4py-fft": statistics.median(t_m4f),
            "ratio": statistics.median(a / b for a, b in zip(t_pfft, t_m4f)), "err": err}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[128, 256])
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    if COMM.Get_size() != 4:
        raise SystemExit("run under mpirun -n 4 (a 2x2 pencil grid)")
    rows = []
    for n in args.sizes:
        for dtype in (np.complex64, np.complex128):
            r = bench(n, dtype, args.repeats, check=(n <= 128))
            ref = one_device(n, dtype, args.repeats)
            rows.append((n, np.dtype(dtype).name, r, ref))
            if RANK == 0:
                print(f"# {n}^3 {np.dtype(dtype).name}: pfft.mpi {r['pfft']:.1f} ms, "
                      f"mpi4py-fft {r['mpi4py-fft']:.1f} ms, jnp.fft.fftn 1 device {ref:.1f} ms"
                      + (f", rel. err vs numpy {r['err'][0]:.1e} / {r['err'][1]:.1e}"
                         if r["err"] else ""), flush=True)
    if RANK == 0:
        print(f"\n4 MPI ranks, 2x2 pencil grid, forward c2c, median of {args.repeats} "
              f"(ms; slowest rank)\n")
        print("| N³ | dtype | pfft.mpi | mpi4py-fft (FFTW) | pfft.mpi / mpi4py-fft (median of pairs) "
              "| jnp.fft.fftn, 1 device | pfft.mpi / 1 device |")
        print("|---|---|---:|---:|---:|---:|---:|")
        for n, name, r, ref in rows:
            print(f"| {n}³ | {name} | {r['pfft']:.0f} | {r['mpi4py-fft']:.0f} | "
                  f"{r['ratio']:.2f} | {ref:.0f} | {r['pfft'] / ref:.2f} |")


if __name__ == "__main__":
    main()
