"""Properties every transform must have, under hypothesis, on every grid: round trip,
linearity, Parseval, the shift theorem, Hermitian symmetry of a real input's spectrum,
agreement of slab, pencil and single-device plans, and bitwise determinism."""
import numpy as np
from hypothesis import given, settings, strategies as st

import pfft
from conftest import GRIDS, random_array, rel_err

TOL = {np.complex64: 2e-6, np.complex128: 1e-12}
shapes = st.tuples(*[st.integers(1, 24)] * 3)
grids = st.sampled_from(GRIDS)
dtypes = st.sampled_from([np.complex64, np.complex128])
seeds = st.integers(0, 2**16)


def _real(dtype):
    return np.float32 if dtype == np.complex64 else np.float64


@settings(max_examples=20)
@given(shape=shapes, grid=grids, dtype=dtypes, seed=seeds)
def test_round_trips_are_the_identity(shape, grid, dtype, seed):
    rng = np.random.default_rng(seed)
    mesh = pfft.make_mesh(grid)
    x = random_array(rng, shape, dtype)
    assert rel_err(pfft.ifftn(pfft.fftn(x, mesh=mesh)), x) <= TOL[dtype]
    r = random_array(rng, shape, _real(dtype))
    assert rel_err(pfft.irfftn(pfft.rfftn(r, mesh=mesh), s=shape, axes=(0, 1, 2)), r) <= TOL[dtype]


@settings(max_examples=20)
@given(shape=shapes, grid=grids, dtype=dtypes, seed=seeds,
       a=st.complex_numbers(max_magnitude=4, allow_nan=False, allow_infinity=False))
def test_linearity(shape, grid, dtype, seed, a):
    rng = np.random.default_rng(seed)
    mesh = pfft.make_mesh(grid)
    x, y = random_array(rng, shape, dtype), random_array(rng, shape, dtype)
    lhs = pfft.fftn((a * x + y).astype(dtype), mesh=mesh)
    rhs = a * np.asarray(pfft.fftn(x, mesh=mesh)) + np.asarray(pfft.fftn(y, mesh=mesh))
    assert rel_err(lhs, rhs) <= 4 * TOL[dtype]


@settings(max_examples=20)
@given(shape=shapes, grid=grids, dtype=dtypes, seed=seeds)
def test_parseval(shape, grid, dtype, seed):
    rng = np.random.default_rng(seed)
    mesh = pfft.make_mesh(grid)
    x = random_array(rng, shape, dtype)
    energy = np.sum(np.abs(x.astype(np.complex128)) ** 2)
    k = np.asarray(pfft.fftn(x, mesh=mesh, norm="ortho"), np.complex128)
    assert abs(np.sum(np.abs(k) ** 2) - energy) <= 4 * TOL[dtype] * energy
    # the half spectrum of a real array counts its interior bins twice
    r = random_array(rng, shape, _real(dtype))
    kr = np.asarray(pfft.rfftn(r, mesh=mesh, norm="ortho"), np.complex128)
    n = shape[-1]
    w = np.full(n // 2 + 1, 2.0)
    w[0] = 1.0
    if n % 2 == 0:
        w[-1] = 1.0
    energy = np.sum(r.astype(np.float64) ** 2)
    assert abs(np.sum(w * np.abs(kr) ** 2) - energy) <= 4 * TOL[dtype] * energy


@settings(max_examples=20)
@given(shape=shapes, grid=grids, dtype=dtypes, seed=seeds,
       shift=st.tuples(*[st.integers(-30, 30)] * 3))
def test_shift_theorem(shape, grid, dtype, seed, shift):
    rng = np.random.default_rng(seed)
    mesh = pfft.make_mesh(grid)
    x = random_array(rng, shape, dtype)
    k = np.asarray(pfft.fftn(x, mesh=mesh), np.complex128)
    k_shifted = pfft.fftn(np.roll(x, shift, axis=(0, 1, 2)), mesh=mesh)
    phase = np.ones(shape, np.complex128)
    for axis, (n, d) in enumerate(zip(shape, shift)):
        f = np.exp(-2j * np.pi * np.fft.fftfreq(n) * n * d / n)
        phase = phase * f.reshape([-1 if a == axis else 1 for a in range(3)])
    assert rel_err(k_shifted, k * phase) <= 8 * TOL[dtype]


@settings(max_examples=20)
@given(shape=shapes, grid=grids, dtype=dtypes, seed=seeds)
def test_real_input_has_a_hermitian_spectrum_that_rfftn_halves(shape, grid, dtype, seed):
    mesh = pfft.make_mesh(grid)
    r = random_array(np.random.default_rng(seed), shape, _real(dtype))
    full = np.asarray(pfft.fftn(r, mesh=mesh), np.complex128)
    mirrored = np.conj(np.roll(np.flip(full, axis=(0, 1, 2)), 1, axis=(0, 1, 2)))
    assert rel_err(full, mirrored) <= TOL[dtype]
    half = pfft.rfftn(r, mesh=mesh)
    assert rel_err(half, full[..., :shape[-1] // 2 + 1]) <= TOL[dtype]


@settings(max_examples=15)
@given(shape=shapes, dtype=dtypes, seed=seeds,
       pair=st.sampled_from([((8,), (2, 4)), ((4,), (2, 2)), ((1, 8), (4, 2)), ((2,), (1, 2))]))
def test_slab_pencil_and_single_device_agree(shape, dtype, seed, pair):
    x = random_array(np.random.default_rng(seed), shape, dtype)
    single = np.asarray(pfft.fftn(x))
    for grid in pair:
        assert rel_err(pfft.fftn(x, mesh=pfft.make_mesh(grid)), single) <= TOL[dtype]
        r = x.real.copy()
        assert rel_err(pfft.rfftn(r, mesh=pfft.make_mesh(grid)), np.asarray(pfft.rfftn(r))) \
            <= TOL[dtype]


@settings(max_examples=10)
@given(shape=shapes, grid=grids, dtype=dtypes, seed=seeds)
def test_the_same_call_twice_is_bitwise_identical(shape, grid, dtype, seed):
    mesh = pfft.make_mesh(grid)
    x = random_array(np.random.default_rng(seed), shape, dtype)
    first = np.asarray(pfft.fftn(x, mesh=mesh))
    pfft.clear_plan_cache()                              # a fresh plan and compilation too
    second = np.asarray(pfft.fftn(x, mesh=mesh))
    assert np.array_equal(first.view(np.uint8), second.view(np.uint8))
