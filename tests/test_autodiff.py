"""grad, vjp, jvp, linearize, jacfwd/jacrev and vmap through pfft's transforms.

References: jax.numpy.fft on one device (same function, same cotangent), central
finite differences in float64, dense DFT matrices, and Python loops for vmap.
"""
import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.test_util import check_grads

import pfft
from pfft.hlo import count_collectives
from pfft.stages import Exchange
from conftest import planned_collectives, rel_err

GRIDS = [(1,), (2, 2), (1, 4), (4,), (2, 4)]
GRAD_TOL = {np.float32: 1e-5, np.float64: 1e-12}
COMPLEX = {np.float32: np.complex64, np.float64: np.complex128}


def _transforms(mesh, shape):
    """(name, pfft function, jnp reference, input dtype kind) for the four transforms."""
    s = shape
    return {
        "fftn": (functools.partial(pfft.fftn, mesh=mesh), jnp.fft.fftn, "complex"),
        "ifftn": (functools.partial(pfft.ifftn, mesh=mesh), jnp.fft.ifftn, "complex"),
        "rfftn": (functools.partial(pfft.rfftn, mesh=mesh), jnp.fft.rfftn, "real"),
        "irfftn": (functools.partial(pfft.irfftn, s=s, axes=tuple(range(len(s))), mesh=mesh),
                   functools.partial(jnp.fft.irfftn, s=s), "half"),
    }


def _input(rng, kind, shape, dtype):
    if kind == "real":
        return rng.standard_normal(shape).astype(dtype)
    if kind == "half":
        shape = shape[:-1] + (shape[-1] // 2 + 1,)
    z = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
    return z.astype(COMPLEX[dtype])


def _loss(transform):
    """A non-linear real loss with a weight that tells bins (and their order) apart."""
    def loss(x):
        y = transform(x)
        w = jnp.arange(y.size, dtype=jnp.abs(y).dtype).reshape(y.shape) / y.size
        return jnp.sum(w * jnp.abs(y) ** 2) + jnp.sum(jnp.sin(jnp.real(y)))
    return loss


@pytest.mark.parametrize("grid", GRIDS)
@pytest.mark.parametrize("name", ["fftn", "ifftn", "rfftn", "irfftn"])
@pytest.mark.parametrize("dtype,shape", [(np.float32, (8, 12, 6)), (np.float64, (5, 7, 9))])
def test_grad_matches_jax_numpy_on_one_device(grid, name, dtype, shape):
    mesh = pfft.make_mesh(grid)
    ours, ref, kind = _transforms(mesh, shape)[name]
    x = _input(np.random.default_rng(0), kind, shape, dtype)
    xs = pfft.device_put(x, mesh)
    got = jax.jit(jax.grad(_loss(ours)))(xs)
    want = jax.grad(_loss(ref))(jnp.asarray(x))
    assert got.dtype == want.dtype and got.shape == want.shape
    assert rel_err(got, want) <= GRAD_TOL[dtype]
    # the cotangent comes back in the input's sharding: nothing was gathered
    assert got.sharding.is_equivalent_to(xs.sharding, x.ndim)


@pytest.mark.parametrize("name", ["fftn", "ifftn", "rfftn", "irfftn"])
def test_vjp_and_jvp_match_jax_numpy_with_a_random_cotangent(name):
    mesh = pfft.make_mesh((2, 2))
    shape = (6, 8, 7)
    ours, ref, kind = _transforms(mesh, shape)[name]
    rng = np.random.default_rng(1)
    x = _input(rng, kind, shape, np.float64)
    t = _input(rng, kind, shape, np.float64)
    y, vjp = jax.vjp(jax.jit(ours), pfft.device_put(x, mesh))
    y_ref, vjp_ref = jax.vjp(ref, jnp.asarray(x))
    ct = rng.standard_normal(y.shape) + (1j * rng.standard_normal(y.shape)
                                         if np.iscomplexobj(y) else 0)
    ct = ct.astype(y.dtype)
    assert rel_err(vjp(ct)[0], vjp_ref(ct)[0]) <= 1e-12
    _, tangent = jax.jvp(jax.jit(ours), (x,), (t,))
    _, tangent_ref = jax.jvp(ref, (jnp.asarray(x),), (jnp.asarray(t),))
    assert rel_err(tangent, tangent_ref) <= 1e-12
    y_lin, f_lin = jax.linearize(jax.jit(ours), x)
    assert rel_err(f_lin(t), tangent_ref) <= 1e-12 and rel_err(y_lin, y_ref) <= 1e-12


@pytest.mark.parametrize("name", ["fftn", "ifftn", "rfftn", "irfftn"])
@pytest.mark.parametrize("grid", [(2, 2)])
def test_gradients_against_finite_differences(name, grid):
    """check_grads: forward and reverse mode, second order, central differences."""
    mesh = pfft.make_mesh(grid, axis_types="auto")
    shape = (4, 4, 5)
    ours, _, kind = _transforms(mesh, shape)[name]
    x = _input(np.random.default_rng(2), kind, shape, np.float64)
    f = jax.jit(lambda a: _loss(ours)(a))
    check_grads(f, (x,), order=2, modes=("fwd", "rev"), eps=1e-4, atol=1e-5, rtol=1e-5)


def _dft(n, inverse=False):
    k = np.arange(n)
    return np.exp((2j if inverse else -2j) * np.pi * np.outer(k, k) / n)


def test_jacobians_are_the_dense_dft_matrices():
    mesh = pfft.make_mesh((2, 2))
    shape = (4, 2, 6)
    dense = np.kron(np.kron(_dft(4), _dft(2)), _dft(6))
    z = _input(np.random.default_rng(3), "complex", shape, np.float64)
    for jac_fn in (jax.jacfwd, jax.jacrev):
        jac = jax.jit(jac_fn(lambda a: pfft.fftn(a, mesh=mesh), holomorphic=True))(z)
        assert rel_err(np.asarray(jac).reshape(48, 48), dense) <= 1e-13
    # real input: rows of the dense matrix for the kept bins, real and imaginary parts
    x = np.random.default_rng(4).standard_normal(shape)
    keep = dense.reshape(4, 2, 6, 48)[:, :, :4].reshape(32, 48)

    def split(a):
        k = pfft.rfftn(a, mesh=mesh)
        return jnp.stack([k.real, k.imag])
    for jac_fn in (jax.jacfwd, jax.jacrev):
        jac = np.asarray(jax.jit(jac_fn(split))(x)).reshape(2, 32, 48)
        assert rel_err(jac[0] + 1j * jac[1], keep) <= 1e-13


@pytest.mark.parametrize("grid", [(2, 2), (8,), (1,)])
def test_vmap_matches_a_python_loop(grid):
    mesh = pfft.make_mesh(grid)
    rng = np.random.default_rng(5)
    xs = rng.standard_normal((3, 8, 8, 6))
    for f in (lambda a: pfft.rfftn(a, mesh=mesh),
              lambda a: pfft.fftn(a + 0j, mesh=mesh),
              lambda a: pfft.irfftn(pfft.rfftn(a, mesh=mesh), s=(8, 8, 6), axes=(0, 1, 2), mesh=mesh)):
        got = jax.vmap(f)(xs)
        want = np.stack([np.asarray(f(x)) for x in xs])
        assert rel_err(got, want) <= 1e-12
    # vmap of a gradient, and vmap over another axis
    g = jax.jit(jax.vmap(jax.grad(_loss(lambda a: pfft.rfftn(a, mesh=mesh)))))(xs)
    g_ref = jax.vmap(jax.grad(_loss(jnp.fft.rfftn)))(xs)
    assert rel_err(g, g_ref) <= 1e-12
    got = jax.vmap(lambda a: pfft.rfftn(a, mesh=mesh), in_axes=3, out_axes=0)(xs.transpose(1, 2, 3, 0))
    assert rel_err(got, np.fft.rfftn(xs, axes=(1, 2, 3))) <= 1e-12


@pytest.mark.parametrize("kind", ["c2c", "r2c"])
def test_plan_forward_and_backward_are_differentiable(kind):
    mesh = pfft.make_mesh((2, 4))
    shape = (8, 8, 10)
    dtype = np.float64 if kind == "r2c" else np.complex128
    plan = pfft.plan(shape, dtype, mesh, kind=kind)
    x = _input(np.random.default_rng(6), "real" if kind == "r2c" else "complex", shape,
               np.float64)
    ref_f = jnp.fft.rfftn if kind == "r2c" else jnp.fft.fftn
    ref_b = (functools.partial(jnp.fft.irfftn, s=shape) if kind == "r2c" else jnp.fft.ifftn)
    g = jax.jit(jax.grad(_loss(plan.forward)))(pfft.device_put(x, mesh))
    assert rel_err(g, jax.grad(_loss(ref_f))(x)) <= 1e-12
    k = np.asarray(plan.forward(x))
    g = jax.jit(jax.grad(_loss(plan.backward)))(k)
    assert rel_err(g, jax.grad(_loss(ref_b))(k)) <= 1e-12


def test_padded_spectrum_plans_are_differentiable():
    mesh = pfft.make_mesh((2, 2))
    plan = pfft.plan((8, 8, 8), np.float64, mesh, kind="r2c", spectrum="padded")
    x = np.random.default_rng(7).standard_normal((8, 8, 8))

    def ref(a):                                  # numpy's bins, zero-padded like the plan's
        return jnp.pad(jnp.fft.rfftn(a), [(0, 0), (0, 0), (0, 1)])
    g = jax.jit(jax.grad(_loss(plan.forward)))(pfft.device_put(x, mesh))
    assert rel_err(g, jax.grad(_loss(ref))(x)) <= 1e-12


@pytest.mark.parametrize("transform", ["fftn", "rfftn"])
def test_a_gradient_costs_one_transform(transform):
    """The compiled gradient of a linear loss is one transposed plan: exactly the
    plan's collectives (2 exchanges for fftn on a divisible pencil grid), no all-gather."""
    mesh = pfft.make_mesh((2, 2))
    fn = getattr(pfft, transform)
    dtype = np.complex128 if transform == "fftn" else np.float64
    x = pfft.device_put(np.ones((16, 16, 16), dtype), mesh)
    plan = pfft.plan(x.shape, x.dtype, mesh, kind="r2c" if transform == "rfftn" else "c2c")
    weight = jnp.asarray(np.random.default_rng(8).standard_normal(plan.out_shape))

    def linear(a):
        return jnp.sum(jnp.real(fn(a, mesh=mesh)) * weight)

    def quadratic(a):
        return jnp.sum(jnp.abs(fn(a, mesh=mesh)) ** 2 * weight)

    exchanges = [st for st in plan.chain.stages if isinstance(st, Exchange)]
    assert len(exchanges) == 2
    ops = plan.collectives()
    assert ops == plan.collectives(reverse=True)
    # exchanges as p - 1 shifts of pieces where they pay for them, else all-to-alls
    assert ops == planned_collectives(plan)
    assert ops["all-to-all"] + ops["collective-permute"] >= 2
    for loss, times in ((linear, 1), (quadratic, 2)):     # backward only; fwd + bwd
        got = count_collectives(jax.jit(jax.grad(loss)).lower(x).compile().as_text())
        assert got == {op: times * k for op, k in ops.items()}, loss.__name__
        assert jax.jit(jax.grad(loss))(x).sharding.is_equivalent_to(x.sharding, 3)
