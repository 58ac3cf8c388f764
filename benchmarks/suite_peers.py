"""The runs of ``python -m benchmarks transforms`` and ``peers`` (:mod:`benchmarks.suite`)
that go in other processes: jaxDecomp in its own environment
(``benchmarks/peers/jaxdecomp_bench.py``), and pfft.mpi and mpi4py-fft under ``mpirun``
(:mod:`benchmarks.mpi`). Each returns rows of :data:`benchmarks.suite_rows.COLUMNS`
(a row with a note where it could not run)."""
from __future__ import annotations

import json
import math
import os
import re
import shutil
import subprocess
import sys

from .suite_rows import JAXDECOMP, grid_name, parse_grid, row

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


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
