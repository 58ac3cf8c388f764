"""pfft.mpi with several MPI ranks sharing one device, against one process on it.

Run under ``mpirun``; every rank uses the same device (GPU 0, or the CPU):

    mpirun -n 2 python -m benchmarks.mpi_gpu --platform gpu --size 256
    .venv/bin/mpirun -n 2 .venv/bin/python -m benchmarks.mpi_gpu --platform cpu --size 64

For each engine (``--engines``; default xla, and native where its kernels are built)
it plans ``pfft.mpi.plan((n, n, n), dtype, ProcessGrid(COMM_WORLD, dims))`` on a
``--grid`` of ranks (default ``Rx1``: a slab), checks the forward transform against
``numpy.fft.fftn`` in float64 (up to ``--check-max``; the round trip
``backward(forward(x)) == x`` always), and times it: each call started after a
barrier, the slowest rank's time, median of ``--repeats`` after ``--warmup`` calls.
Rank 0 then times the same transform in its own process on the same device, alone
(the other ranks wait): ``jnp.fft.fftn`` and ``pfft.plan`` on a 1x1 mesh with the same
engine. Prints a Markdown table on rank 0 and writes ``mpi_<platform>.{md,csv}``
under ``--out``; exits with status 1 when a result is off.

On GPUs mpi4jax either stages every exchange through host memory
(``MPI4JAX_USE_CUDA_MPI=0``, any MPI) or hands device pointers to a CUDA-aware MPI
(``=1``): ``--cuda-mpi 0``, ``1``, or ``if-aware`` (1 if the MPI library says it is
CUDA-aware, ``MPIX_Query_cuda_support``, else exit quietly without running). Ranks
sharing a GPU need ``XLA_PYTHON_CLIENT_PREALLOCATE=false`` (set here unless given)
and share its memory (``XLA_PYTHON_CLIENT_MEM_FRACTION``, default 0.9 / ranks).
"""
from __future__ import annotations

import argparse
import datetime
import os
import platform
import sys


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=256, help="n of the n³ global array")
    ap.add_argument("--dtype", default="complex64")
    ap.add_argument("--grid", default=None, help="process grid, e.g. 2x1 (default: ranks x 1)")
    ap.add_argument("--engines", nargs="+", default=None,
                    help="local FFT engines (default: xla, and native where built)")
    ap.add_argument("--repeats", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--check-max", type=int, default=256,
                    help="largest n checked against numpy in float64 on every rank")
    ap.add_argument("--platform", choices=["cpu", "gpu"], default="gpu")
    ap.add_argument("--gpu", default="0", help="the GPU every rank uses (CUDA_VISIBLE_DEVICES, "
                                               "unless set)")
    ap.add_argument("--cuda-mpi", choices=["0", "1", "if-aware"], default="0",
                    help="MPI4JAX_USE_CUDA_MPI on GPUs (0: stage through the host)")
    ap.add_argument("--out", default="results")
    return ap.parse_args(argv)


ARGS = parse_args() if __name__ == "__main__" else None

# before JAX starts: the environment the ranks share
os.environ.setdefault("MPI4JAX_NO_WARN_JAX_VERSION", "1")
from mpi4py import MPI  # noqa: E402

COMM = MPI.COMM_WORLD
RANK, SIZE = COMM.Get_rank(), COMM.Get_size()
if ARGS is not None and ARGS.platform == "gpu":
    os.environ.setdefault("CUDA_VISIBLE_DEVICES", ARGS.gpu)        # all ranks: one GPU
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    os.environ.setdefault("XLA_PYTHON_CLIENT_MEM_FRACTION", f"{min(0.9, 0.9 / SIZE):.2f}")
elif ARGS is not None:
    os.environ.setdefault("JAX_PLATFORMS", "cpu")                  # one CPU device per rank
    cores = max(1, (os.cpu_count() or 1) // SIZE)                   # ranks share the cores
    os.environ.setdefault("PFFT_NUM_THREADS", str(cores))
    os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false "
                                       "intra_op_parallelism_threads=1")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

jax.config.update("jax_enable_x64", True)

import pfft  # noqa: E402
import pfft.mpi  # noqa: E402
from pfft.engines import native  # noqa: E402

from .common import (compare, median_time, quiet_barrier, run_info, slowest_rank,  # noqa: E402
                     write_results)
from .mpi_gpu_report import table  # noqa: E402

TOLERANCE = {"complex64": 1e-5, "complex128": 1e-12}


def say(*a) -> None:
    if RANK == 0:
        print(*a, flush=True)


def set_cuda_mpi(mode: str) -> str:
    """Set ``MPI4JAX_USE_CUDA_MPI`` (before the first GPU collective); describe the transport."""
    aware = pfft.mpi.mpi_cuda_support()
    word = {True: "says CUDA-aware", False: "not CUDA-aware", None: "CUDA support unknown"}[aware]
    if mode == "if-aware":
        if aware is not True:
            say(f"skipped: the MPI library is {word}; device buffers would not work "
                f"(MPI4JAX_USE_CUDA_MPI=0 is the run that counts)")
            sys.exit(0)
        mode = "1"
    os.environ["MPI4JAX_USE_CUDA_MPI"] = mode
    return (f"device buffers to MPI (MPI4JAX_USE_CUDA_MPI=1; MPI {word})" if mode == "1" else
            f"staged through host memory (MPI4JAX_USE_CUDA_MPI=0; MPI {word})")


def timed(fn, x, repeats: int, warmup: int) -> float:
    """Median over repeats of the slowest rank's time for ``fn(x)``, each call after a barrier."""
    (t,) = compare(lambda: fn(x), repeats=repeats, warmup=warmup, **slowest_rank(COMM))
    return t


def global_err(got_sq_diff: float, ref_sq: float) -> float:
    s = COMM.allreduce(np.array([got_sq_diff, ref_sq]))
    return float(np.sqrt(s[0] / s[1])) if s[1] else float(np.sqrt(s[0]))


def bench(shape, dtype, grid, engine, device, transport, repeats, warmup, check_max) -> dict:
    plan = pfft.mpi.plan(shape, dtype, grid, engine=engine)
    used = getattr(plan.engine, "name", "xla")
    if used != engine:
        raise RuntimeError(f"pfft.mpi.plan(engine={engine!r}) runs {used}: "
                           f"{native.unavailable_reason(device.platform)}")
    rng = np.random.default_rng(0)                 # the same global array on every rank
    host = (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    x = jax.device_put(host[plan.local_in_slices], device)
    fwd, bwd = jax.jit(plan.forward), jax.jit(plan.backward)
    k = fwd(x)
    err = None
    if shape[0] <= check_max:
        ref = np.fft.fftn(host.astype(np.complex128))[plan.local_out_slices]
        got = np.asarray(k).astype(np.complex128)
        err = global_err(float(np.sum(np.abs(got - ref) ** 2)), float(np.sum(np.abs(ref) ** 2)))
        del ref, got
    back = np.asarray(bwd(k)).astype(np.complex128)
    mine = host[plan.local_in_slices].astype(np.complex128)
    round_trip = global_err(float(np.sum(np.abs(back - mine) ** 2)),
                            float(np.sum(np.abs(mine) ** 2)))
    del k, back, mine
    t_mpi = timed(fwd, x, repeats, warmup)
    del x

    # the same transform in one process on the same device: rank 0 alone, the others wait
    t_jnp = t_one = None
    if RANK == 0:
        full = jax.device_put(host, device)
        t_jnp = median_time(jax.jit(jnp.fft.fftn), full, repeats=repeats, warmup=warmup)
        one = pfft.plan(shape, dtype, pfft.make_mesh((1, 1), [device]), engine=engine)
        xo = jax.device_put(full, one.in_sharding)
        t_one = median_time(jax.jit(one.forward), xo, repeats=repeats, warmup=warmup)
        del full, xo
    quiet_barrier(COMM)
    return dict(n=shape[0], dtype=np.dtype(dtype).name, ranks=SIZE,
                grid="x".join(map(str, grid.dims)), engine=engine, exchanges=plan.chain.exchanges,
                transport=transport, device=device.device_kind, mpi_ms=t_mpi * 1e3,
                one_jnp_ms=None if t_jnp is None else t_jnp * 1e3,
                one_pfft_ms=None if t_one is None else t_one * 1e3,
                ratio=None if t_jnp is None else t_mpi / t_jnp,
                rel_err=err, round_trip_err=round_trip)


def main(args) -> None:
    device = jax.devices()[0]
    want = "cpu" if args.platform == "cpu" else "gpu"
    if (device.platform == "cpu") != (want == "cpu"):
        raise SystemExit(f"rank {RANK}: asked for {want}, JAX runs on {device.platform}")
    transport = ("CPU (mpi4jax on host buffers)" if want == "cpu"
                 else set_cuda_mpi(args.cuda_mpi))
    dims = tuple(int(d) for d in (args.grid or f"{SIZE}x1").split("x"))
    grid = pfft.mpi.ProcessGrid(COMM, dims)
    engines = args.engines or (["xla", "native"] if native.available(want) else ["xla"])
    dtype = np.dtype(args.dtype)
    shape = (args.size,) * 3
    header = (f"Device: {device.device_kind} ({device.platform}), {SIZE} MPI ranks on it "
              f"({MPI.Get_library_version().splitlines()[0].strip()}); jax {jax.__version__}, "
              f"Python {platform.python_version()}, host {os.cpu_count()} cores; "
              f"{datetime.date.today()}; median of {args.repeats} after {args.warmup} warm-up "
              f"calls.")
    say(header)
    info = None
    if RANK == 0:                       # the run's record (NAME.json), for the docs' caption
        info = run_info("benchmarks.mpi_gpu", None,
                        where=f"{SIZE} MPI ranks sharing one {device.device_kind} "
                              f"({device.platform}); "
                              f"{' '.join(MPI.Get_library_version().splitlines()[0].split())}")
        info["command"] = f"mpirun -n {SIZE} {info['command']}"
    rows, bad = [], []
    for engine in engines:
        r = bench(shape, dtype, grid, engine, device, transport, args.repeats, args.warmup,
                  args.check_max)
        rows.append(r)
        tol = TOLERANCE.get(dtype.name, 1e-5)
        for key in ("rel_err", "round_trip_err"):
            if r[key] is not None and not r[key] <= tol:
                bad.append(f"{engine} {key} {r[key]:.1e} > {tol:.0e}")
        if RANK == 0:                   # the single-process times exist on rank 0 only
            err = "—" if r["rel_err"] is None else format(r["rel_err"], ".1e")
            say(f"{args.size}^3 {dtype.name} {r['grid']} {engine}: pfft.mpi {r['mpi_ms']:.2f} "
                f"ms, 1 process jnp.fft.fftn {r['one_jnp_ms']:.2f} ms, pfft 1x1 "
                f"{r['one_pfft_ms']:.2f} ms, rel. error {err}")
            # written after each engine: a later one that aborts the job leaves these
            name = f"mpi_{want}" + ("_cuda_mpi" if os.environ.get("MPI4JAX_USE_CUDA_MPI") == "1"
                                    else "")
            write_results([{k: ("" if v is None else v) for k, v in row.items()} for row in rows],
                          table(rows, header), args.out, name, info=info)
    if RANK == 0:
        print(table(rows, header).split("\n", 2)[2], flush=True)   # the header came first
    if bad:
        say("FAILED: " + "; ".join(bad))
        sys.exit(1)


if __name__ == "__main__":
    main(ARGS)
