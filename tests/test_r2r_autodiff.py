"""Gradients of the real-to-real transforms: ``grad``/``vjp``/``jvp``/``vmap`` against dense
matrices (scipy applied to the identity), against ``jax.scipy.fft.dctn`` on one device,
and ``check_grads`` to second order; the cotangent keeps the input's sharding."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.fft as sf
from jax.test_util import check_grads

import pfft
from conftest import rel_err

SCIPY = {"dct": sf.dct, "dst": sf.dst}


def _matrix(kind, n, norm, orth=None):
    """scipy's transform of ``kind`` on ``n`` points as a dense matrix."""
    return SCIPY[kind[:3]](np.eye(n), int(kind[3]), axis=0, norm=norm, orthogonalize=orth)


def _apply(mats, x):
    return np.einsum("ai,bj,ck,ijk->abc", *mats, x)


@pytest.mark.parametrize("grid", [(2, 2), (4,)])
@pytest.mark.parametrize("kinds, norm, orth", [
    (("dct2", "dst3", "dct1"), "backward", None),
    (("dst2", "dct4", "dst1"), "ortho", None),
    (("dct3", "dst4", "dct2"), "forward", True),
    (("dst3", "dct2", "dst2"), "ortho", False)])
def test_vjp_jvp_vmap_match_dense_matrices(kinds, norm, orth, grid):
    mesh = pfft.make_mesh(grid)
    shape = (4, 6, 5)
    plan = pfft.plan(shape, np.float64, mesh, kinds=kinds, norm=norm, orthogonalize=orth)
    mats = [_matrix(k, n, norm, orth) for k, n in zip(kinds, shape)]
    rng = np.random.default_rng(0)
    x, ct = rng.standard_normal(shape), rng.standard_normal(shape)
    xs = jax.device_put(x, plan.in_sharding)
    y, vjp = jax.vjp(plan.forward, xs)
    assert rel_err(y, _apply(mats, x)) < 1e-13
    (g,) = vjp(jax.device_put(ct, plan.out_sharding))
    assert rel_err(g, _apply([m.T for m in mats], ct)) < 1e-13
    assert g.sharding == xs.sharding                     # the cotangent's sharding kept
    _, back = jax.vjp(plan.backward, jax.device_put(ct, plan.out_sharding))
    inv = [np.linalg.inv(m) for m in mats]
    assert rel_err(back(xs)[0], _apply([m.T for m in inv], x)) < 1e-12
    _, tangent = jax.jvp(plan.forward, (xs,), (jax.device_put(ct, plan.in_sharding),))
    assert rel_err(tangent, _apply(mats, ct)) < 1e-13
    batch = jax.vmap(plan.forward)(np.stack([x, ct]))
    assert rel_err(batch[1], _apply(mats, ct)) < 1e-13


@pytest.mark.parametrize("kinds", [("dct2", "dst1", "dct4"), ("fft", "rfft", "dst2")])
def test_check_grads_to_second_order(kinds):
    mesh = pfft.make_mesh((2, 2))
    plan = pfft.plan((4, 6, 5), np.float64, mesh, kinds=kinds, norm="ortho")
    x = np.random.default_rng(1).standard_normal((4, 6, 5))

    def forward(a):
        y = plan.forward(a)
        return jnp.real(y) + 0.5 * jnp.imag(y) if jnp.iscomplexobj(y) else y
    # jitted: each derivative compiles once instead of dispatching op by op
    check_grads(jax.jit(forward), (x,), order=2, modes=("fwd", "rev"))
    if "rfft" not in kinds:
        check_grads(jax.jit(plan.backward), (x,), order=2, modes=("fwd", "rev"))


@pytest.mark.parametrize("norm", [None, "ortho"])
def test_grad_of_dctn_matches_jax_scipy_on_one_device(norm):
    """``jax.scipy.fft.dctn`` (type 2 only there; norm None or "ortho") is the one-device
    reference for values and gradients."""
    t = 2
    x = np.random.default_rng(2).standard_normal((5, 6, 7))
    w = np.random.default_rng(3).standard_normal((5, 6, 7))

    def loss(fn):
        return lambda a: jnp.sum(w * fn(a, t, norm=norm) ** 2)
    assert rel_err(pfft.dctn(x, t, norm=norm), jax.scipy.fft.dctn(x, t, norm=norm)) < 1e-13
    got = jax.jit(jax.grad(loss(pfft.dctn)))(x)
    assert rel_err(got, jax.jit(jax.grad(loss(jax.scipy.fft.dctn)))(x)) < 1e-13
    got = jax.jit(jax.grad(loss(pfft.idctn)))(x)
    assert rel_err(got, jax.jit(jax.grad(loss(jax.scipy.fft.idctn)))(x)) < 1e-13


def test_grad_through_sharded_dstn_in_jit_keeps_the_sharding():
    mesh = pfft.make_mesh((2, 4))
    x = np.random.default_rng(4).standard_normal((8, 8, 6))
    xs = pfft.device_put(x, mesh)
    m = [_matrix("dst1", n, "ortho") for n in x.shape]
    with jax.set_mesh(mesh):
        g = jax.jit(jax.grad(lambda a: jnp.sum(jnp.sin(pfft.dstn(a, 1, norm="ortho")))))(xs)
    want = _apply([a.T for a in m], np.cos(_apply(m, x)))
    assert rel_err(g, want) < 1e-13
    assert g.sharding == xs.sharding
