"""pfft's transforms on a GPU through both GPU engines, against numpy and scipy in float64.

``engine="auto"`` runs ``lax.fft`` for transforms over the innermost axes and pfft's cuFFT
kernels for strided ones; ``engine="native"`` runs the kernels for every transform. Each
test runs with each on a one-GPU mesh: fftn/ifftn, rfftn/irfftn (``s``, ``axes``,
``norm``), dctn/dstn, fftshift, gradients and vmap; and what one GPU of an 8-GPU
plan runs (:mod:`benchmarks.per_device`). Runs where JAX has a GPU and pfft's
GPU kernels are loaded; elsewhere every test skips with the reason.
"""
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.fft

import pfft
from conftest import NORMS, TOL, random_array, rel_err
from pfft.engines import native


def _gpus() -> list:
    try:
        return jax.devices("gpu")
    except RuntimeError:
        return []


GPUS = _gpus()
pytestmark = pytest.mark.skipif(
    not GPUS or not native.available("gpu"),
    reason="needs a GPU JAX can use and pfft's GPU kernels: "
           + ("JAX has no GPU here" if not GPUS else str(native.unavailable_reason("gpu"))))
REAL = {np.complex64: np.float32, np.complex128: np.float64}


@pytest.fixture(autouse=True)
def _gpu_is_the_default_device():
    """Arrays made without a place go to the GPU, as for a user whose JAX has one (the
    suite's default is the CPU): ``jax.grad`` seeds a scalar loss's cotangent on the
    default device, which must hold the loss."""
    if not GPUS:
        yield
        return
    with jax.default_device(GPUS[0]):
        yield


@pytest.fixture(params=["auto", "native"])
def engine(request, monkeypatch):
    """The GPU engine every transform of the test runs on (its plans are made anew)."""
    monkeypatch.setenv("PFFT_ENGINE", request.param)
    pfft.clear_plan_cache()
    yield request.param
    pfft.clear_plan_cache()


@pytest.fixture
def mesh():
    return pfft.make_mesh((1, 1), GPUS[:1])


def _put(x, mesh):
    return pfft.device_put(np.asarray(x), mesh)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
@pytest.mark.parametrize("shape", [(16, 12, 10), (9, 7, 11), (3, 4, 5, 6), (4099, 3, 2)], ids=str)
def test_fftn_and_ifftn(shape, dtype, engine, mesh):
    x = random_array(np.random.default_rng(1), shape, dtype)
    wide = x.astype(np.complex128)
    # every norm over all axes; one each over a leading, a middle and two strided axes
    cases = [(None, n) for n in NORMS] + [((0,), "ortho"), ((-2,), "backward"),
                                          ((0, 2), "forward")]
    for axes, norm in cases:
        k = pfft.fftn(_put(x, mesh), axes=axes, norm=norm)
        assert k.dtype == dtype
        assert rel_err(k, np.fft.fftn(wide, axes=axes, norm=norm)) <= TOL[dtype], (axes, norm)
        back = pfft.ifftn(k, axes=axes, norm=norm)
        assert rel_err(back, x) <= TOL[dtype], (axes, norm)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
@pytest.mark.parametrize("shape", [(16, 12, 10), (9, 7, 11), (3, 4, 5, 6), (6, 3, 3)], ids=str)
def test_rfftn_and_irfftn(shape, dtype, engine, mesh):
    x = random_array(np.random.default_rng(2), shape, REAL[dtype])
    wide = x.astype(np.float64)
    # every norm over all axes; a strided halved axis, the innermost pair, a padded and
    # a cropped length
    cases = [(None, None, n) for n in NORMS] + [
        ((0, 1), None, "ortho"), ((1, 2), None, "forward"), ((-1,), (12,), "backward"),
        ((0, 2), (5, 8), "ortho")]
    for axes, s, norm in cases:
        k = pfft.rfftn(_put(x, mesh), s=s, axes=axes, norm=norm)
        want = np.fft.rfftn(wide, s=s, axes=axes, norm=norm)
        assert k.shape == want.shape and rel_err(k, want) <= TOL[dtype], (axes, s, norm)
        back = pfft.irfftn(k, s=s, axes=axes, norm=norm)
        want = np.fft.irfftn(want, s=s, axes=axes, norm=norm)
        assert back.dtype == REAL[dtype]
        assert rel_err(back, want) <= TOL[dtype], (axes, s, norm)


@pytest.mark.parametrize("kind", ["dct", "dst"])
@pytest.mark.parametrize("type", [1, 2, 3, 4])
def test_dctn_and_dstn(kind, type, engine, mesh):
    x = np.random.default_rng(3).standard_normal((9, 8, 7))
    forward, inverse = ((pfft.dctn, pfft.idctn) if kind == "dct" else (pfft.dstn, pfft.idstn))
    ref = scipy.fft.dctn if kind == "dct" else scipy.fft.dstn
    for norm in (None, "ortho"):
        y = forward(_put(x, mesh), type, norm=norm)
        assert rel_err(y, ref(x, type, norm=norm)) <= 1e-12, norm
        assert rel_err(inverse(y, type, norm=norm), x) <= 1e-12, norm


def test_fftshift_and_ifftshift(engine, mesh):
    x = np.random.default_rng(4).standard_normal((9, 8, 7))
    for axes in (None, 0, (1, 2)):
        np.testing.assert_array_equal(np.asarray(pfft.fftshift(_put(x, mesh), axes)),
                                      np.fft.fftshift(x, axes))
        np.testing.assert_array_equal(np.asarray(pfft.ifftshift(_put(x, mesh), axes)),
                                      np.fft.ifftshift(x, axes))


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_gradients_match_jnp(dtype, engine, mesh):
    rng = np.random.default_rng(5)
    x = random_array(rng, (8, 6, 10), REAL[dtype])

    def loss(rfftn):               # weights 1, 2, ... along the output's last axis
        def f(a):
            k = rfftn(a)
            return jnp.sum(jnp.abs(k * (jnp.arange(k.shape[-1]) + 1.0)) ** 2)
        return f

    for axes in (None, (0, 1)):
        g = jax.grad(loss(lambda a: pfft.rfftn(a, axes=axes)))(_put(x, mesh))
        want = jax.grad(loss(lambda a: jnp.fft.rfftn(a, axes=axes)))(jnp.asarray(x))
        assert rel_err(g, want) <= 10 * TOL[dtype], axes
    z = random_array(rng, (8, 6, 10), dtype)
    g = jax.grad(loss(lambda a: pfft.ifftn(a, axes=(0,))))(_put(z, mesh))
    want = jax.grad(loss(lambda a: jnp.fft.ifftn(a, axes=(0,))))(jnp.asarray(z))
    assert rel_err(g, want) <= 10 * TOL[dtype]


def test_vmap_over_a_batch(engine, mesh):
    x = random_array(np.random.default_rng(6), (3, 8, 6, 5), np.complex128)
    got = jax.vmap(pfft.fftn)(jax.device_put(x, GPUS[0]))
    assert rel_err(got, np.fft.fftn(x, axes=(1, 2, 3))) <= 1e-12
    got = jax.vmap(lambda a: pfft.rfftn(a, axes=(0, 1)))(jax.device_put(x.real, GPUS[0]))
    assert rel_err(got, np.fft.rfftn(x.real, axes=(1, 2))) <= 1e-12


def test_auto_routes_strided_transforms_to_the_kernels(engine, mesh):
    """On one GPU, "auto" runs a transform over the innermost axes with lax.fft and one
    over a leading axis with pfft's kernels; "native" runs both with the kernels."""
    full = pfft.plan((16, 12, 10), np.complex64, mesh)
    lead = pfft.plan((16, 12, 10), np.complex64, mesh, axes=(0,))
    assert full.engine.name == engine and lead.engine.name == engine
    if engine == "auto":
        assert full.fft_engines() == ["xla"] and lead.fft_engines() == ["native"]
        assert "by native" in str(lead)
    else:
        assert full.fft_engines() is None


def device_program_errors(device, engine_name: str, plan: str, kind: str, direction: str,
                          n: int = 32, devices: int = 8) -> dict:
    """Relative errors against numpy's block-level math in float64 of what one device of
    a ``devices``-device ``plan`` runs, on ``device``, its exchanges replaced by a copy
    (:mod:`benchmarks.per_device`): the argument kept, and donated."""
    from benchmarks import device_program, per_device
    engine = device_program.engines_for(device, [engine_name])[engine_name]
    if isinstance(engine, str):
        pytest.skip(engine)
    case = per_device.Case(n, devices, plan, kind, engine_name, direction)
    per_device._build(case, engine)
    assert not case.status, case.status
    rng = np.random.default_rng(17)
    block = random_array(rng, case.chain.in_layout.local_shape, np.complex128)
    block = (block.real if case.in_dtype.kind == "f" else block).astype(case.in_dtype)
    want = device_program.block_math(block, case.chain, case.variant.inverse)
    live = jax.device_put(np.bool_(True), device)
    errors = {}
    for donate in (False, True):
        run = jax.jit(device_program.program(case.core, variant=case.variant),
                      donate_argnums=0 if donate else ())
        with warnings.catch_warnings():     # a real transform's input: donated in vain
            warnings.simplefilter("ignore", UserWarning)
            got = run(jax.device_put(block, device), live)
        errors["donated" if donate else "kept"] = rel_err(got, want)
    return errors


@pytest.mark.parametrize("direction", ["forward", "backward"])
@pytest.mark.parametrize("kind", ["c2c", "r2c"])
@pytest.mark.parametrize("plan", ["slab", "pencil"])
def test_per_device_programs_match_numpy(plan, kind, direction, engine):
    """What one GPU of an 8-GPU slab or 2x4 pencil plan runs, on this GPU (its exchanges
    a stand-in copy), forward and backward, kept and donated, equal to numpy's
    block-level math."""
    errors = device_program_errors(GPUS[0], engine, plan, kind, direction)
    assert max(errors.values()) < 1e-5, errors
