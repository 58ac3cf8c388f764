"""Inverse transforms of any size through XLA's FFT give numpy's answer.

XLA's GPU FFT leaves an inverse unscaled from ``pfft.engines.lax_fft.SCALE_LIMIT``
(2³¹) output elements on; pfft rewrites such inverses (:mod:`pfft.engines.lax_fft`).
Blocks that large do not fit a CI machine, so these tests lower the limit to 1 (every
inverse is rewritten) and check, on CPU devices through the xla engine, that

- the rewritten programs hold no inverse FFT at all (only forward ones): the rewrite
  is what runs, so a GPU would never reach XLA's unscaled path;
- and that they give numpy's values in float64, for every kind (c2c, r2c/c2r of
  spectra that are not Hermitian, odd and even lengths, DCTs and DSTs, a 1-D FFT of a
  split axis), both directions, on a slab and a pencil grid.

Below the limit XLA's own inverse runs (checked too: the rewrite costs a pass or two),
and so it does on CPUs at any size (their XLA FFT scales every inverse): the tests
take the CPU off ``lax_fft.EXACT_PLATFORMS`` to run the rewrite there.
"""
import re

import jax
import numpy as np
import pytest
import scipy.fft
from jax.sharding import NamedSharding, PartitionSpec as P

import pfft
from conftest import NORMS, random_array, rel_err, use_engine
from pfft.engines import lax_fft

# one stablehlo.fft: its type and the element count of its result
_FFT = re.compile(r"stablehlo\.fft .*type\s*=\s*(\w+).*->\s*tensor<([0-9x]+)x[a-z]")
GRIDS = [(4,), (2, 2)]


def fft_ops(fn, *args) -> list[tuple[str, int]]:
    """(type, output elements) of every FFT ``jax.jit(fn)`` lowers to."""
    text = jax.jit(fn).lower(*args).as_text()
    return [(t, int(np.prod([int(d) for d in dims.split("x")])))
            for t, dims in _FFT.findall(text)]


@pytest.fixture
def limit(monkeypatch):
    """Sets ``SCALE_LIMIT`` (plans and JAX's traces made anew on both sides)."""
    monkeypatch.setattr(lax_fft, "EXACT_PLATFORMS", ())    # rewrite on CPUs too

    def set_limit(value):
        monkeypatch.setattr(lax_fft, "SCALE_LIMIT", value)
        pfft.clear_plan_cache()
        jax.clear_caches()
    yield set_limit
    pfft.clear_plan_cache()
    jax.clear_caches()


@pytest.fixture
def xla_engine(monkeypatch, devices):
    use_engine("xla", monkeypatch, devices)


def _no_inverse(fn, *args):
    ops = fft_ops(fn, *args)
    assert ops and not [op for op in ops if op[0] in ("IFFT", "IRFFT")], ops


@pytest.mark.parametrize("grid", GRIDS, ids=str)
@pytest.mark.parametrize("shape", [(8, 12, 6), (4, 6, 9)], ids=str)
def test_complex_inverses_rewritten_match_numpy(grid, shape, limit, xla_engine):
    limit(1)
    mesh = pfft.make_mesh(grid)
    x = random_array(np.random.default_rng(0), shape, np.complex128)
    xs = pfft.device_put(x, mesh)
    plan = pfft.plan(shape, np.complex128, mesh)
    _no_inverse(plan.backward, xs)
    for norm in NORMS:
        assert rel_err(pfft.ifftn(xs, norm=norm), np.fft.ifftn(x, norm=norm)) < 1e-13, norm
        assert rel_err(pfft.fftn(xs, norm=norm), np.fft.fftn(x, norm=norm)) < 1e-13, norm
    for axes in [(0,), (1, 2), (2, 0)]:
        got = pfft.ifftn(xs, axes=axes)
        assert rel_err(got, np.fft.ifftn(x, axes=axes)) < 1e-13, axes


@pytest.mark.parametrize("grid", GRIDS, ids=str)
@pytest.mark.parametrize("real_shape", [(8, 12, 6), (4, 8, 9), (8, 4, 7)], ids=str)
def test_real_inverses_rewritten_match_numpy(grid, real_shape, limit, xla_engine):
    """irfftn of a random half spectrum (not Hermitian: its zero and Nyquist bins have
    imaginary parts numpy drops), even and odd halved lengths, over 1, 2 and 3 axes;
    and rfftn, its forward plan."""
    limit(1)
    mesh = pfft.make_mesh(grid)
    rng = np.random.default_rng(1)
    x = rng.standard_normal(real_shape)
    plan = pfft.plan(real_shape, np.float64, mesh, kind="r2c")
    spectrum = random_array(rng, plan.out_shape, np.complex128)
    ks = jax.device_put(spectrum, plan.out_sharding)
    _no_inverse(plan.backward, ks)
    assert rel_err(plan.backward(ks), np.fft.irfftn(spectrum, real_shape, axes=(0, 1, 2))) < 1e-13
    assert rel_err(plan.forward(jax.device_put(x, plan.in_sharding)),
                   np.fft.rfftn(x)) < 1e-13
    for axes, s, norm in [((2,), None, "ortho"), ((0, 2), None, "forward"),
                          ((1, 2), (8, 5), "backward"), ((0, 1, 2), (6, 12, 10), "ortho")]:
        half = random_array(rng, real_shape, np.complex128)
        got = pfft.irfftn(pfft.device_put(half, mesh), s=s, axes=axes, norm=norm)
        want = np.fft.irfftn(half, s=s, axes=axes, norm=norm)
        assert got.shape == want.shape and rel_err(got, want) < 1e-13, (axes, s, norm)


@pytest.mark.parametrize("grid", GRIDS, ids=str)
@pytest.mark.parametrize("kind", ["dct", "dst"])
def test_r2r_inverses_rewritten_match_scipy(grid, kind, limit, xla_engine):
    """DCTs and DSTs of every type: types II and III go through complex-to-real
    inverses of XLA's FFT, the others through forward ones."""
    limit(1)
    mesh = pfft.make_mesh(grid)
    x = np.random.default_rng(2).standard_normal((8, 6, 5))
    forward = pfft.dctn if kind == "dct" else pfft.dstn
    ref = scipy.fft.dctn if kind == "dct" else scipy.fft.dstn
    for type_ in (1, 2, 3, 4):
        got = forward(pfft.device_put(x, mesh), type_, norm="ortho")
        assert rel_err(got, ref(x, type_, norm="ortho")) < 1e-13, type_


def test_split_axis_inverse_rewritten_matches_numpy(limit, xla_engine):
    """A 1-D inverse FFT of an axis split over the devices (the six-step algorithm)."""
    limit(1)
    mesh = pfft.make_mesh((8,))
    x = random_array(np.random.default_rng(3), (3, 256), np.complex128)
    xs = jax.device_put(x, NamedSharding(mesh, P(None, mesh.axis_names[0])))
    _no_inverse(lambda a: pfft.ifft(a, axis=1), xs)
    got = pfft.ifft(xs, axis=1)
    assert got.sharding.spec == xs.sharding.spec
    assert rel_err(got, np.fft.ifft(x, axis=1)) < 1e-13


def test_below_the_limit_xla_scales_its_own_inverses(limit, xla_engine):
    """The rewrite takes only inverses of ``SCALE_LIMIT`` output elements or more: a
    limit just above a block leaves XLA's IFFT and IRFFT in the program, one at it
    rewrites them."""
    mesh = pfft.make_mesh((1,))
    shape = (8, 12, 6)
    xs = pfft.device_put(np.zeros(shape, np.complex128), mesh)
    for kind, dtype, op in [("c2c", np.complex128, "IFFT"), ("r2c", np.float64, "IRFFT")]:
        size = int(np.prod(shape))
        limit(size + 1)
        plan = pfft.plan(shape, dtype, mesh, kind=kind)
        arg = xs if kind == "c2c" else pfft.device_put(
            np.zeros(plan.out_shape, np.complex128), mesh)
        assert [t for t, _ in fft_ops(plan.backward, arg)] == [op], kind
        limit(size)
        plan = pfft.plan(shape, dtype, mesh, kind=kind)
        _no_inverse(plan.backward, arg)


def test_auto_sends_large_inverses_to_the_native_kernel():
    """On GPUs the per-stage engine runs an inverse over the innermost axes with XLA
    (its 1/n comes free) only below the limit; from there the native kernel, exact at
    every size, runs it."""
    from pfft.engines.per_stage import PerStageEngine

    engine = PerStageEngine()
    shape = (4, 8, 16)
    small = dict(real=False, scales_inverse=True, scale=1 / 128, n=128, out_size=512,
                 dtype=np.complex64)
    assert engine.choose((1, 2), shape, **small).name == "xla"
    big = dict(small, out_size=lax_fft.SCALE_LIMIT)
    assert engine.choose((1, 2), shape, **big).name == "native"
    forward = dict(big, scales_inverse=False, scale=1.0)
    assert engine.choose((1, 2), shape, **forward).name == "xla"


def test_cpus_keep_xlas_own_inverse(monkeypatch):
    """On CPU devices XLA's inverse runs at every size (no rewrite to pay for)."""
    monkeypatch.setattr(lax_fft, "SCALE_LIMIT", 1)
    x = np.zeros((4, 6, 5), np.complex64)
    ops = fft_ops(lambda a: lax_fft.fft(a, "ifft", a.shape), x)
    assert [t for t, _ in ops] == ["IFFT"]
    ops = fft_ops(lambda a: lax_fft.fft(a, "irfft", (4, 6, 8)), x)
    assert [t for t, _ in ops] == ["IRFFT"]
    eager = np.asarray(lax_fft.fft(jax.numpy.asarray(x + 1), "ifft", x.shape))
    np.testing.assert_allclose(eager, np.fft.ifftn(x + 1), atol=1e-6)
