"""pfft's XLA transport across processes: 2 processes x 2 CPU devices, one 2x2 mesh.

Each test starts two workers (this file run as a script) that join with
``jax.distributed.initialize`` on a free localhost port, build the global array with
``jax.make_array_from_callback``, transform it with ``pfft.fftn``/``rfftn``/``ifftn``
on a mesh spanning both processes (collectives between processes: gloo), gather
the result with ``process_allgather`` and compare it with numpy in float64.
"""
from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
OK = "PFFT_MULTIPROCESS_OK"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _run_workers(case: str, timeout: float = 120) -> list[str]:
    port = _free_port()
    env = dict(os.environ)
    env.update(XLA_FLAGS="--xla_force_host_platform_device_count=2", JAX_PLATFORMS="cpu",
               OMP_NUM_THREADS="1",
               PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")])))
    procs = [subprocess.Popen([sys.executable, __file__, case, str(port), str(i)], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
             for i in range(2)]
    deadline = time.monotonic() + timeout
    outs = []
    for p in procs:
        try:
            out, _ = p.communicate(timeout=max(1.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            for q in procs:
                q.kill()
            out = p.communicate()[0]
            raise AssertionError(f"worker timed out (deadlock?):\n{out[-4000:]}") from None
        outs.append(out)
    for i, (p, out) in enumerate(zip(procs, outs)):
        assert p.returncode == 0, f"process {i} exited {p.returncode}:\n{out[-6000:]}"
        assert OK in out, f"process {i}: no success marker:\n{out[-6000:]}"
    return outs


def _outputs(procs, timeout: float = 300) -> list[str]:
    """Every process's output once all have exited 0 (killing all where one hangs)."""
    outs = []
    for p in procs:
        try:
            outs.append(p.communicate(timeout=timeout)[0])
        except subprocess.TimeoutExpired:
            for q in procs:
                q.kill()
            raise AssertionError(f"timed out:\n{p.communicate()[0][-4000:]}") from None
    for i, (p, out) in enumerate(zip(procs, outs)):
        assert p.returncode == 0, f"process {i} exited {p.returncode}:\n{out[-6000:]}"
    return outs


def test_fftn_ifftn_across_two_processes():
    _run_workers("c2c")


def test_rfftn_irfftn_across_two_processes():
    _run_workers("r2c")


def test_taylor_green_solver_across_two_processes(tmp_path):
    """Scaling out across processes: the Taylor-Green DNS (32³ float32 to t = 0.5) as one JAX
    program over 2 processes x 4 CPU devices (``--distributed``, a 2x4 mesh spanning
    both) gives the energy history of the same solver on one device."""
    port = _free_port()
    env = dict(os.environ)
    env.update(XLA_FLAGS="--xla_force_host_platform_device_count=4", JAX_PLATFORMS="cpu",
               OMP_NUM_THREADS="1",
               PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")])))
    procs = [subprocess.Popen(
        [sys.executable, "-m", "benchmarks.apps.taylor_green", "--quick", "--distributed",
         "--coordinator", f"127.0.0.1:{port}", "--num-processes", "2", "--process-id", str(i),
         "--grid", "2x4", "--out", str(tmp_path)], cwd=ROOT, env=env,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) for i in range(2)]
    outs = _outputs(procs)
    assert "jax.distributed: 2 processes, 8 devices" in outs[0]
    diff = float(re.search(r"max \|E_pfft - E_one device\| for t <= 0.5: (\S+)",
                           outs[0]).group(1))
    assert diff < 1e-5, diff                 # float32 rounding; measured 1.5e-8
    t, energy = np.loadtxt(tmp_path / "taylor_green_32_2x4_float32.txt").T[:2]
    assert np.allclose(t, np.arange(6) * 0.1) and abs(energy[0] - 0.125) < 1e-7


def test_nbody_across_two_processes(tmp_path):
    """Scaling out across processes, the particle-mesh N-body app: 32³ particles, float32,
    8 KDK steps (the ``--quick`` size) as one JAX program over 2 processes x 4 CPU
    devices (``--distributed``, a 2x4 mesh spanning both: the linear field drawn block
    by block, particles and halos across processes) gives the final density and
    ``P(k)`` of the same code on 8 devices of one process, run beside it."""
    size = ["--n", "32", "--box", "256", "--steps", "8", "--halo", "4", "--dtype", "float32",
            "--no-grad", "--save-final", "--grid", "2x4"]
    port = _free_port()
    env = dict(os.environ)
    env.update(XLA_FLAGS="--xla_force_host_platform_device_count=4", JAX_PLATFORMS="cpu",
               OMP_NUM_THREADS="1",
               PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")])))
    solo_env = {k: v for k, v in env.items() if k != "XLA_FLAGS"}   # the app's 8 devices
    cmd = [sys.executable, "-m", "benchmarks.apps.nbody"] + size
    procs = [subprocess.Popen(
        cmd + ["--distributed", "--coordinator", f"127.0.0.1:{port}", "--num-processes", "2",
               "--process-id", str(i), "--skip-one-device", "--out", str(tmp_path / "two")],
        cwd=ROOT, env=env,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) for i in range(2)]
    procs.append(subprocess.Popen(cmd + ["--out", str(tmp_path / "one")], cwd=ROOT,
                                  env=solo_env, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True))
    outs = _outputs(procs)
    assert "jax.distributed: 2 processes, 8 devices" in outs[0]
    assert "ran to a = 1.000" in outs[0] and "ran to a" not in outs[1]   # process 0 speaks
    name = "nbody_32_2x4_float32"
    two = json.loads((tmp_path / "two" / f"{name}.json").read_text())
    one = json.loads((tmp_path / "one" / f"{name}.json").read_text())
    assert two["processes"] == 2 and "processes" not in one
    d2 = np.load(tmp_path / "two" / f"{name}_delta.npy")
    d1 = np.load(tmp_path / "one" / f"{name}_delta.npy")
    assert d2.shape == d1.shape == (32, 32, 32) and d2.dtype == np.float32
    # the same program on the same 2x4 mesh: measured bitwise equal (0.0); the bound
    # allows float32 round-off (8 ulp) in the order of cross-process reductions
    assert np.linalg.norm(d2 - d1) / np.linalg.norm(d1) < 1e-6
    for key in ("power_a0", "power_final", "measured"):
        assert np.allclose(two["growth"][key], one["growth"][key], rtol=1e-6, atol=0), key
    assert abs(two["max_displacement"] - one["max_displacement"]) < 1e-6
    assert max(two["mass_error"]) < 1e-8                  # measured 3.2e-10 (float32 field)
    # the one-process run's comparison with one device (float32 round-off, measured
    # 1.2e-5); the distributed run skips its own (--skip-one-device): the same code
    # on fields gathered with pfft.to_host, which the final delta above goes through
    assert one["vs_one_device"]["relative_l2"] < 1e-4
    assert abs(two["growth"]["measured"][0] - 0.948) < 0.005   # 32³: see test_apps.py


# -- the worker -------------------------------------------------------------------------
def _worker(case: str, port: int, process_id: int) -> None:
    import jax

    jax.config.update("jax_enable_x64", True)
    jax.distributed.initialize(f"127.0.0.1:{port}", num_processes=2, process_id=process_id)
    import jax.numpy as jnp
    import numpy as np
    from jax.experimental import multihost_utils
    from jax.sharding import NamedSharding, PartitionSpec as P

    import pfft

    assert jax.process_count() == 2 and jax.device_count() == 4, jax.devices()
    assert jax.local_device_count() == 2
    mesh = pfft.make_mesh((2, 2))
    assert {d.process_index for d in mesh.devices[0]} == {0}    # a grid row per process

    def rel_err(got, want):
        got, want = np.asarray(got, np.complex128), np.asarray(want, np.complex128)
        assert got.shape == want.shape, (got.shape, want.shape)
        return float(np.linalg.norm(got - want) / np.linalg.norm(want))

    def distribute(x, spec):
        return jax.make_array_from_callback(x.shape, NamedSharding(mesh, spec),
                                            lambda index: x[index])

    def collect(y):
        return np.asarray(multihost_utils.process_allgather(y, tiled=True))

    tol = {np.dtype(np.complex64): 1e-6, np.dtype(np.complex128): 1e-12}
    rng = np.random.default_rng(0)                # the same data in both processes
    for shape in [(16, 12, 10), (9, 6, 7)]:
        for dtype in (np.complex64, np.complex128):
            dtype = np.dtype(dtype)
            if case == "c2c":
                x = (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
                spec = P("x", "y", None) if shape[0] % 2 == 0 and shape[1] % 2 == 0 else P()
                xs = distribute(x, spec)
                k = jax.jit(pfft.fftn)(xs)
                err = rel_err(collect(k), np.fft.fftn(x.astype(np.complex128)))
                assert err <= tol[dtype], (shape, dtype, err)
                back = pfft.ifftn(k, norm="backward")
                err = rel_err(collect(back), x)
                assert err <= tol[dtype], ("ifftn", shape, dtype, err)
                ortho = pfft.fftn(xs, norm="ortho")
                err = rel_err(collect(ortho), np.fft.fftn(x.astype(np.complex128), norm="ortho"))
                assert err <= tol[dtype], ("ortho", shape, dtype, err)
            else:
                real = np.finfo(dtype).dtype
                x = rng.standard_normal(shape).astype(real)
                xs = distribute(x, P("x", "y", None) if shape[0] % 2 == 0 and shape[1] % 2 == 0
                                else P())
                k = pfft.rfftn(xs)
                assert k.dtype == dtype, k.dtype
                err = rel_err(collect(k), np.fft.rfftn(x.astype(np.float64)))
                assert err <= tol[dtype], ("rfftn", shape, dtype, err)
                back = pfft.irfftn(k, s=shape, axes=(0, 1, 2))
                err = rel_err(collect(back), x)
                assert err <= tol[dtype], ("irfftn", shape, dtype, err)
                # a gradient across processes too
                g = jax.jit(jax.grad(lambda v: jnp.sum(jnp.abs(pfft.rfftn(v)) ** 2)))(xs)
                want = jax.grad(lambda v: jnp.sum(jnp.abs(jnp.fft.rfftn(v)) ** 2))(
                    jnp.asarray(x, jnp.float64))
                err = rel_err(collect(g), want)
                assert err <= 10 * tol[dtype], ("grad rfftn", shape, dtype, err)
    print(f"{OK} {case} process {process_id}", flush=True)
    jax.distributed.shutdown()


if __name__ == "__main__":
    _worker(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))
