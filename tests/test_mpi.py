"""The MPI transport: scripts in ``tests/mpi_scripts`` run under ``mpirun -n 1, 2, 4``.

Each run has a timeout, so a deadlock fails the test instead of hanging the suite;
a run passes when ``mpirun`` exits 0 and rank 0 printed the success marker (every
script asserts against numpy, or the single-process JAX gradient, on every rank).
The ranks share the machine's cores (oversubscribed; one thread each).
"""
from __future__ import annotations

import importlib.util
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = Path(__file__).resolve().parent / "mpi_scripts"
MPIRUN = Path(sys.executable).parent / "mpirun"
OK = "PFFT_MPI_OK"

_missing = [m for m in ("mpi4py", "mpi4jax") if importlib.util.find_spec(m) is None]
pytestmark = [
    pytest.mark.skipif(bool(_missing), reason=f"MPI tests need {' and '.join(_missing)} "
                       f"(`make install` installs them)"),
    pytest.mark.skipif(not MPIRUN.exists(), reason=f"no mpirun next to {sys.executable} "
                       f"(`pip install mpich`)"),
]


def mpi_env(**extra) -> dict:
    """One CPU device and one thread per rank (conftest's 8 devices are not for MPI)."""
    env = dict(os.environ)
    env.update(OMP_NUM_THREADS="1", JAX_PLATFORMS="cpu", MPI4JAX_NO_WARN_JAX_VERSION="1",
               XLA_FLAGS="--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1",
               PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")])))
    env.update(extra)
    return env


def run_mpi(n: int, script: str, *args: str, timeout: float = 120, env=None):
    """Run ``mpirun -n n python script args``; returns (returncode, output, seconds).

    On timeout the whole process group (mpirun and its ranks) is killed and the
    return code is ``None``.
    """
    return run_mpi_argv(n, [str(SCRIPTS / script), *args], SCRIPTS, timeout=timeout, env=env)


def run_mpi_argv(n: int, argv, cwd, *, timeout: float = 120, env=None):
    """``mpirun -n n python *argv`` in ``cwd``, as :func:`run_mpi`."""
    cmd = [str(MPIRUN), "-n", str(n), sys.executable, *map(str, argv)]
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, env=env or mpi_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=timeout)
        code = proc.returncode
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        code = None
    return code, out, time.perf_counter() - start


def assert_ok(n, script, *args, **kwargs):
    code, out, took = run_mpi(n, script, *args, **kwargs)
    tail = out[-6000:]
    assert code is not None, f"mpirun -n {n} {script} timed out (deadlock?) after {took:.0f} s:\n{tail}"
    assert code == 0, f"mpirun -n {n} {script} exited {code}:\n{tail}"
    assert OK in out, f"mpirun -n {n} {script}: no success marker:\n{tail}"
    return out


@pytest.mark.parametrize("n", [1, 2, 4])
def test_transforms_match_numpy(n):
    """c2c and r2c (numpy and padded spectrum), forward and back, every grid of n ranks,
    divisible and uneven sizes, batch axes, complex64/128, all norms."""
    out = assert_ok(n, "transforms.py")
    assert "MPIPlan(fftn (10, 6, 7) complex64" in out        # print(plan) shows the chain


@pytest.mark.parametrize("n", [1, 2, 4])
def test_gradients_match_single_process_jax(n):
    """grad, vjp, jvp and vmap of MPI plans against jax.numpy.fft on the whole array."""
    assert_ok(n, "gradients.py")


@pytest.mark.parametrize("n", [1, 2, 4])
def test_one_plan_core_behaves_as_pfft_plan(n):
    """pfft.mpi.plan against pfft.plan on every grid of n ranks: the same arguments,
    errors, dtypes and features (padding, wavenumbers, k2, vmap, tune), with balanced
    blocks (mpi_scripts/parity.py)."""
    out = assert_ok(n, "parity.py")
    assert "MPIPlan(fftn (9, 10, 7) complex128" in out


@pytest.mark.parametrize("n", [4])      # 4 ranks: slab and pencil grids (2 ranks: 18 s more)
def test_r2r_and_mixed_plans_match_scipy(n):
    """Real-to-real plans over MPI: pfft.mpi.plan(kinds=...) with DCT/DST types 1-4, every norm and
    orthogonalize, on even and uneven (padded, balanced) blocks of every grid of n
    ranks, against scipy.fft; mixed ("fft", "rfft", "dst1") plans forward and back, the
    per-kind wavenumbers of each rank's block, and gradients against pfft.plan on one
    device (mpi_scripts/r2r.py)."""
    out = assert_ok(n, "r2r.py")
    assert "MPIPlan(mixed (9, 7, 5) complex128" in out and "dst1 axis 2 (local)" in out


def test_environment_checks():
    """MPI not initialised, dims not matching the rank count, several local devices: errors;
    a GPU run over an MPI that is not CUDA-aware: a warning."""
    assert_ok(1, "env_checks.py", timeout=60,
              env=mpi_env(XLA_FLAGS="--xla_force_host_platform_device_count=2"))


@pytest.mark.parametrize("mode", ["hook", "install"])
def test_failing_rank_aborts_the_job(mode):
    """A rank raising before a collective ends the job with an error and a clear
    message, while the other rank waits in an all-to-all: pfft.mpi's excepthook (from
    the ProcessGrid, or ``pfft.mpi.install_excepthook()``) calls MPI_Abort. Without it
    the failed rank blocks in MPI_Finalize and the other in the all-to-all, and mpich's
    mpirun waits for both for ever (the timeout here only guards against that)."""
    code, out, took = run_mpi(2, "fault.py", mode, timeout=120)
    assert code is not None, f"job hung instead of aborting:\n{out[-3000:]}"
    assert code != 0
    assert "deliberate failure on rank 1" in out
    assert "pfft.mpi: uncaught RuntimeError on rank 1 of 2; calling MPI_Abort" in out
    assert "PFFT_MPI_UNREACHABLE" not in out


@pytest.mark.parametrize("n", [1, 2])
def test_public_helpers(n):
    """pfft.mpi.mpi_layout, plan_cache_info and clear_plan_cache, MPIPlan.zeros_output
    and install_excepthook (see mpi_scripts/api.py)."""
    out = assert_ok(n, "api.py")
    if n == 1:      # the hook on one rank reports the error and lets the program go on
        assert "a reported, survived error" in out


def test_docs_example(tmp_path):
    """docs/mpi.md's example runs under ``mpirun -n 4`` and prints the plan shown there."""
    page = (ROOT / "docs" / "mpi.md").read_text()
    code = re.findall(r"```py\n(.*?)```", page, flags=re.S)
    printed = re.search(r"prints on rank 0\n\n```text\n(.*?)```", page, flags=re.S)
    assert len(code) == 1 and printed, "docs/mpi.md: one ```py example and its printed plan"
    (tmp_path / "example.py").write_text(code[0])
    cmd = [str(MPIRUN), "-n", "4", sys.executable, str(tmp_path / "example.py")]
    proc = subprocess.run(cmd, cwd=tmp_path, env=mpi_env(), capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert printed.group(1).strip() in proc.stdout, proc.stdout


@pytest.mark.parametrize("n", [1, 2, 4])
def test_halo_exchange_and_reduce(n):
    """pfft.mpi.halo_exchange against np.pad of the global array (periodic and zero
    edges, default and other splits, every grid of n ranks), halo_reduce by the
    dot-product test, jax.grad/vjp of each giving the other; argument errors."""
    assert_ok(n, "halo.py", timeout=90)


def test_taylor_green_solver_under_mpirun(tmp_path):
    """The Taylor-Green DNS (benchmarks/apps/taylor_green.py, 32³ float32 to
    t = 0.5) through pfft.mpi on 4 ranks (2x2 process grid) gives the energy history
    of the same solver on one device with jnp.fft (run beside rank 0)."""
    code, out, took = run_mpi_argv(4, ["-m", "benchmarks.apps.taylor_green", "--mpi",
                                       "--grid", "2x2", "--quick", "--out", tmp_path],
                                   ROOT, timeout=300)
    assert code == 0, f"exited {code} after {took:.0f} s:\n{out[-6000:]}"
    assert "pfft.mpi over 4 MPI ranks" in out
    diff = float(re.search(r"max \|E_pfft - E_one device\| for t <= 0.5: (\S+)", out).group(1))
    assert diff < 1e-5, diff                 # float32 rounding; measured 1.5e-8
    t, energy = np.loadtxt(tmp_path / "taylor_green_32_mpi2x2_float32.txt").T[:2]
    assert np.allclose(t, np.arange(6) * 0.1) and abs(energy[0] - 0.125) < 1e-7
    assert np.all(np.diff(energy) < 0)

