"""pfft.mpi strong and weak scaling: run under ``mpirun -n R``, prints JSON rows on rank 0.

    OMP_NUM_THREADS=1 .venv/bin/mpirun -n 4 .venv/bin/python -m benchmarks.mpi_scaling \
        --sizes 128 --weak-base 64

Forward c2c transforms of this rank count's default grid (``pfft.dims_create``: 2
ranks a slab, 4 ranks 2x2). Each rank runs XLA on one thread (one rank per core, MPI's
usual placement); each time is the slowest rank's, median of ``--repeats`` after two
warm-up calls, each call started after a barrier. Strong scaling: ``--sizes`` N³ on
every rank count; weak scaling: ``--weak-base`` b³ per rank (global shape b³·R, the
doubled axes first). Relative L2 error against ``numpy.fft.fftn`` in float64.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics

os.environ.setdefault("MPI4JAX_NO_WARN_JAX_VERSION", "1")
os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false "
                                   "intra_op_parallelism_threads=1")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from mpi4py import MPI  # noqa: E402

jax.config.update("jax_enable_x64", True)

import pfft.mpi  # noqa: E402

from .common import weak_shape  # noqa: E402
from .mpi_timing import slowest_rank_times  # noqa: E402

COMM = MPI.COMM_WORLD


def bench(shape, dtype, repeats: int) -> dict:
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
    (times,) = slowest_rank_times([lambda: fwd(x).block_until_ready()], repeats, COMM)
    return {"ms": 1e3 * statistics.median(times), "rel_err": float(np.sqrt(sq[0] / sq[1])),
            "grid": "x".join(map(str, grid.dims)), "exchanges": plan.chain.exchanges}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="*", default=[128])
    ap.add_argument("--weak-base", type=int, default=0, help="0: no weak-scaling point")
    ap.add_argument("--dtype", default="complex64")
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args(argv)
    ranks = COMM.Get_size()
    cases = [("mpi-strong", (n,) * 3) for n in args.sizes]
    if args.weak_base:
        cases.append(("mpi-weak", weak_shape(args.weak_base, ranks)))
    for study, shape in cases:
        r = bench(shape, np.dtype(args.dtype), args.repeats)
        if COMM.Get_rank() == 0:
            print(json.dumps({"study": study, "impl": "pfft.mpi", "shape": list(shape),
                              "dtype": args.dtype, "ranks": ranks, **r}), flush=True)


if __name__ == "__main__":
    main()
