"""What a newcomer's first mistakes are told: a mesh axis that splits no dimension (at
``pfft.device_put`` and at the transform), a real dtype given to ``pfft.plan`` without
``kind``, a gradient taken on an Explicit-axes mesh outside ``jit`` and outside a mesh
context, and ``python -m pfft`` on one CPU device. Each message names the thing, the
value and what to do."""
import os
import subprocess
import sys
import warnings
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import pfft
from conftest import rel_err
from pfft.autodiff import explain_mesh_context_errors
from pfft.mesh_plan import ReplicationWarning

ROOT = Path(__file__).resolve().parents[1]
JAX_ERROR = ("Length of device assignment 1 is not equal to the size of the mesh 8 of aval "
             "f32[]({Explicit: ('x', 'y')}). Please enter your `jit` into a mesh context via "
             "`jax.set_mesh`.")


# -- a mesh axis that splits no dimension -------------------------------------------

def test_device_put_says_which_mesh_axis_splits_no_dimension():
    mesh = pfft.make_mesh((2, 4))
    with pytest.warns(ReplicationWarning) as record:
        x = pfft.device_put(np.ones((6, 6, 6)), mesh)
    text = str(record[0].message)
    assert text.startswith("pfft.device_put: mesh axis 'y' (4 devices) splits no dimension of "
                           "the array (6, 6, 6): "), text
    assert "a dimension that 4 divides" in text and "pfft.make_mesh((2,))" in text, text
    assert "axes" not in text.replace("mesh axes", ""), text     # not the axes= argument
    assert record[0].filename == __file__             # points at the caller's line
    assert x.shape == (6, 6, 6)


def test_device_put_is_quiet_where_every_mesh_axis_splits_a_dimension():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pfft.device_put(np.ones((8, 8, 8)), pfft.make_mesh((2, 4)))
        pfft.device_put(np.ones((1, 64, 64)), pfft.make_mesh((2, 4)))   # one axis over both
        pfft.device_put(np.ones((6, 6, 6)), None)


def test_device_put_names_every_idle_mesh_axis():
    with pytest.warns(ReplicationWarning, match=r"mesh axes 'x' \(2 devices\) and 'y' \(2 "
                      r"devices\) split no dimension of the array \(3, 3, 3\).*mesh=None"):
        pfft.device_put(np.ones((3, 3, 3)), pfft.make_mesh((2, 2)))


def test_the_transform_says_mesh_axis_and_dimension_not_axes():
    mesh = pfft.make_mesh((2, 4))
    x = np.ones((6, 6, 10))
    pfft.clear_plan_cache()
    with pytest.warns(ReplicationWarning) as record:
        k = pfft.fftn(x, mesh=mesh)
    text = str(record[0].message)
    assert "repeats work" in text and "mesh axis 'y' (4 devices) splits no dimension of the " \
        "array (6, 6, 10)" in text, text
    assert "Give axes" not in text and "split no axis" not in text, text
    assert record[0].filename == __file__
    assert rel_err(k, np.fft.fftn(x)) <= 1e-12


# -- pfft.plan with a real dtype and no kind -----------------------------------------

def test_plan_of_a_real_dtype_without_kind_says_it_is_complex():
    mesh = pfft.make_mesh((2, 2))
    with pytest.warns(UserWarning, match=r'dtype float32 is real.*complex fftn \(complex64; '
                      r'kind="c2c"\).*pass kind="r2c"') as record:
        plan = pfft.plan((12, 8, 4), np.float32, mesh)
    assert record[0].filename == __file__
    assert plan.kind == "c2c" and plan.dtype == np.complex64
    head = str(plan).splitlines()[0]
    assert 'complex64 (planned for float32 without kind=' in head and 'kind="r2c"' in head, head
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert pfft.plan((12, 8, 4), np.float32, mesh) is plan      # once per shape and dtype
        assert pfft.plan((12, 8, 4), np.float32, mesh, kind="c2c") is plan
        real = pfft.plan((12, 8, 4), np.float32, mesh, kind="r2c")
        pfft.plan((12, 8, 6), np.complex64, mesh)
        pfft.plan((12, 8, 6), np.float64, mesh, kinds=("dct2",) * 3)
    assert "planned for" not in str(real) and real.kind == "r2c"
    with pytest.warns(UserWarning, match="dtype float64 is real"):
        pfft.plan((12, 8, 4), np.float64, mesh)                      # another dtype


def test_plan_of_a_complex_dtype_prints_no_note():
    plan = pfft.plan((10, 6, 4), np.complex128, pfft.make_mesh((2, 2)))
    assert "planned for" not in str(plan)


# -- gradients on an Explicit-axes mesh outside jit --------------------------------------

def _loss(a):
    return jnp.sum(jnp.abs(pfft.rfftn(a)) ** 2)


def test_grad_outside_jit_and_mesh_context_is_explained():
    mesh = pfft.make_mesh(8)
    x = pfft.device_put(np.random.default_rng(0).standard_normal((16, 8, 8)), mesh)
    with pytest.warns(UserWarning, match=r"outside jax.jit and outside a mesh context") as record:
        try:
            jax.grad(_loss)(x)
        except ValueError as err:             # JAX's own error, raised after pfft's transform
            assert "mesh context" in str(err)
    text = str([w for w in record if "mesh context" in str(w.message)][0].message)
    assert "with jax.set_mesh(mesh):" in text and "jax.jit(jax.grad(f))(x)" in text, text
    want = jax.grad(lambda a: jnp.sum(jnp.abs(jnp.fft.rfftn(a)) ** 2))(np.asarray(x))
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        with jax.set_mesh(mesh):              # the fix the quickstart shows
            g = jax.grad(_loss)(x)
        g_jit = jax.jit(jax.grad(_loss))(x)   # or under jit
        jax.jvp(pfft.fftn, (x,), (x,))        # forward mode needs no mesh context
    assert rel_err(g, want) <= 1e-12 and rel_err(g_jit, want) <= 1e-12
    assert g.sharding.is_equivalent_to(x.sharding, 3)


def test_grad_on_an_auto_mesh_outside_jit_is_not_warned():
    mesh = pfft.make_mesh(8, axis_types="auto")
    x = pfft.device_put(np.ones((16, 8, 8)), mesh)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        g = jax.grad(_loss)(x)
    assert g.shape == x.shape


def test_jax_mesh_context_error_inside_a_transform_is_reraised_with_the_fix(monkeypatch):
    mesh = pfft.make_mesh((2, 2))
    plan = pfft.plan((8, 8, 8), np.complex128, mesh)

    def refuses(variant):
        def run(x):
            raise ValueError(JAX_ERROR)
        return run
    monkeypatch.setattr(plan, "_jitted_for", refuses)
    with pytest.raises(ValueError, match=r"with jax.set_mesh\(mesh\):") as info:
        plan.forward(np.ones((8, 8, 8), np.complex128))
    assert str(info.value).startswith("pfft: ") and "jit it" in str(info.value)
    assert str(info.value.__cause__) == JAX_ERROR
    with pytest.raises(ValueError, match="^something else$"):
        with explain_mesh_context_errors():
            raise ValueError("something else")


# -- python -m pfft on one CPU device -------------------------------------------------

def test_show_config_on_one_cpu_device_says_how_to_simulate_more(tmp_path):
    env = {k: v for k, v in os.environ.items()
           if k not in ("XLA_FLAGS", "JAX_NUM_CPU_DEVICES", "PYTHONPATH")}
    env.update(JAX_PLATFORMS="cpu", PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-m", "pfft"], env=env, cwd=tmp_path,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "cpu: 1 device(s)" in out.stdout, out.stdout
    assert "XLA_FLAGS=--xla_force_host_platform_device_count=8" in out.stdout, out.stdout
    assert 'jax.config.update("jax_num_cpu_devices", 8) before JAX starts' in out.stdout


def test_show_config_with_several_cpu_devices_gives_no_hint():
    assert len(jax.devices("cpu")) > 1
    assert "jax_num_cpu_devices" not in pfft.config.config_text()
