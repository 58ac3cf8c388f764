"""Arrays split over a tuple of mesh axes, in the mesh's order and in the other order,
on Auto and Explicit meshes, under ``jit``: the transforms and shifts match numpy.

A 2x3 grid is where XLA's partitioner can abort the whole process on a reshard that
moves the major part of such a tuple (its two sizes do not divide each other, see
:func:`pfft.sharding._may_abort_resharding`), a 2x4 grid where it cannot. On an Auto
mesh pfft cannot see the layout under ``jit`` and reshards to its own; on an Explicit
mesh it plans from the layout. Each case runs in a fresh process, so an abort fails
that case, not the run.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

CHILD = r"""
import json, sys
import jax, jax.numpy as jnp, numpy as np
jax.config.update("jax_enable_x64", True)
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P
import pfft

kind, grid, axis, order = sys.argv[1], tuple(map(int, sys.argv[2].split("x"))), \
    int(sys.argv[3]), tuple(sys.argv[4].split(","))
t = AxisType.Auto if kind == "auto" else AxisType.Explicit
mesh = jax.make_mesh(grid, ("x", "y"), axis_types=(t, t),
                     devices=jax.devices("cpu")[:grid[0] * grid[1]])
spec = P(*([None] * axis + [order]))
rng = np.random.default_rng(0)
c = rng.standard_normal((24, 24, 5)) + 1j * rng.standard_normal((24, 24, 5))
r = rng.standard_normal((24, 24, 10))
grad = lambda f: jax.grad(lambda v: jnp.sum(jnp.abs(f(v)) ** 2))
cases = {
    "fftn": (pfft.fftn, np.fft.fftn, c),
    "ifftn": (pfft.ifftn, np.fft.ifftn, c),
    "rfftn": (pfft.rfftn, np.fft.rfftn, r),
    "fftshift": (pfft.fftshift, np.fft.fftshift, r),
    "ifftshift": (pfft.ifftshift, np.fft.ifftshift, c),
    "fftshift(fftn)": (lambda v: pfft.fftshift(pfft.fftn(v)),
                       lambda a: np.fft.fftshift(np.fft.fftn(a)), c),
    "ifftn(fftn)": (lambda v: pfft.ifftn(pfft.fftn(v)), lambda a: a, c),
    "irfftn(rfftn)": (lambda v: pfft.irfftn(pfft.rfftn(v), s=v.shape, axes=(0, 1, 2)), lambda a: a, r),
    "grad rfftn": (grad(pfft.rfftn), lambda a: np.asarray(grad(jnp.fft.rfftn)(a)), r),
}
errors = {}
for name, (fn, ref, a) in cases.items():
    x = jax.device_put(a, NamedSharding(mesh, spec))
    got, want = np.asarray(jax.jit(fn)(x)), ref(a)
    errors[name] = float(np.linalg.norm(got - want) / np.linalg.norm(want))
print(json.dumps(errors))
"""


@pytest.mark.parametrize("kind", ["auto", "explicit"])
@pytest.mark.parametrize("grid, axis, order", [
    ("2x3", 0, "y,x"), ("2x3", 0, "x,y"), ("2x3", 1, "y,x"), ("2x3", 1, "x,y"),
    ("2x4", 0, "y,x"), ("2x4", 1, "x,y")])
def test_tuple_orders_under_jit_match_numpy(kind, grid, axis, order):
    env = {**os.environ, "JAX_PLATFORMS": "cpu",
           "XLA_FLAGS": "--xla_force_host_platform_device_count=8"}
    proc = subprocess.run([sys.executable, "-c", CHILD, kind, grid, str(axis), order],
                          env=env, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    errors = json.loads(proc.stdout.strip().splitlines()[-1])
    assert all(e <= 1e-12 for e in errors.values()), errors
