"""Dealiasing plans (padding=1.5, the 3/2 rule): the forward keeps the low
frequencies of the finer grid's spectrum, the backward zero-pads them back."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import pfft
from conftest import random_array, rel_err
from pfft.stages import LocalFFT, RealFFT, Resize


def _keep(n_big, n, halved=False):
    """Indices of the spectrum of n_big points that an n-point spectrum keeps."""
    if halved:
        return np.arange(n // 2 + 1)
    return np.r_[np.arange(-(-n // 2)), np.arange(n_big - n // 2, n_big)]


def _truncate(k, spectral, halved_axis=None):
    for a, n in enumerate(spectral):
        k = np.take(k, _keep(k.shape[a], n, a == halved_axis), axis=a)
    return k


def _numpy_forward(y, n, real=False, norm="backward"):
    """The forward of a dealiasing plan in numpy: the FFT of ``y`` on its (fine) grid,
    the lowest ``n`` frequencies of each axis kept (``n//2 + 1`` bins of the halved
    last axis of a real transform), scaled as numpy's transform of ``n`` points."""
    k = np.fft.rfftn(y) if real else np.fft.fftn(y)
    k = _truncate(k, n, halved_axis=len(n) - 1 if real else None)
    ratio = np.prod(n) / np.prod(y.shape)
    return k * (ratio if norm == "backward" else np.sqrt(ratio))


def _numpy_backward(k, n, m, real=False):
    """The backward of a dealiasing plan in numpy: the ``n``-grid spectrum ``k``
    zero-padded to the fine grid ``m`` and inverse transformed there, scaled so that
    a band-limited field keeps its values (numpy's ``ifftn`` on the ``n`` grid)."""
    last = len(n) - 1
    big = np.zeros(m[:-1] + (m[-1] // 2 + 1,) if real else m, complex)
    big[np.ix_(*[_keep(mm, nn, real and a == last) for a, (mm, nn) in enumerate(zip(m, n))])] = k
    x = np.fft.irfftn(big, s=m, axes=range(len(m))) if real else np.fft.ifftn(big)
    return x * np.prod(m) / np.prod(n)


def _band_limited(shape_n, shape_m, rng, real=False):
    """The same band-limited field sampled on the N grid and on the finer M grid."""
    k = rng.standard_normal(shape_n) + 1j * rng.standard_normal(shape_n)
    for a, n in enumerate(shape_n):                 # drop the Nyquist modes: exact on both grids
        if n % 2 == 0:
            index = [slice(None)] * 3
            index[a] = n // 2
            k[tuple(index)] = 0
    x_n = np.fft.ifftn(k)
    big = np.zeros(shape_m, complex)
    index = np.ix_(*[_keep(m, n) for m, n in zip(shape_m, shape_n)])
    big[index] = k
    x_m = np.fft.ifftn(big) * np.prod(shape_m) / np.prod(shape_n)
    if real:
        x_n, x_m = x_n.real, x_m.real
    return x_n, x_m


@pytest.mark.parametrize("grid", [(1,), (2, 2), (4,), (2, 4)])
@pytest.mark.parametrize("norm", ["backward", "ortho"])
def test_dealiased_complex_plan(grid, norm):
    mesh = pfft.make_mesh(grid)
    n = (8, 12, 10)
    plan = pfft.plan(n, np.complex128, mesh, padding=1.5, norm=norm)
    assert plan.in_shape == (12, 18, 15) and plan.out_shape == n
    assert repr(plan).count("truncate") == 3
    x_n, x_m = _band_limited(n, plan.in_shape, np.random.default_rng(0))
    k = plan.forward(x_m)
    assert rel_err(k, np.fft.fftn(x_n, norm=norm)) <= 1e-12    # the N-grid spectrum
    assert rel_err(plan.backward(k), x_m) <= 1e-12             # back on the fine grid
    # any field: truncation of the fine grid's spectrum, rescaled to the N grid
    y = np.random.default_rng(1).standard_normal(plan.in_shape) + 0j
    want = _truncate(np.fft.fftn(y, norm=norm), n)
    if norm == "backward":
        want = want * np.prod(n) / np.prod(plan.in_shape)
    else:
        want = want * np.sqrt(np.prod(n) / np.prod(plan.in_shape))
    assert rel_err(plan.forward(y), want) <= 1e-12


@pytest.mark.parametrize("grid", [(1,), (2, 2), (1, 4), (2, 4)])
@pytest.mark.parametrize("n", [(8, 8, 8), (6, 10, 7)])
def test_dealiased_real_plan(grid, n):
    mesh = pfft.make_mesh(grid)
    plan = pfft.plan(n, np.float64, mesh, kind="r2c", padding=1.5)
    assert plan.out_shape == n[:2] + (n[2] // 2 + 1,)
    x_n, x_m = _band_limited(n, plan.in_shape, np.random.default_rng(2), real=True)
    k = plan.forward(x_m)
    assert rel_err(k, np.fft.rfftn(x_n)) <= 1e-12
    assert rel_err(plan.backward(k), x_m) <= 1e-12
    kx, ky, kz = plan.wavenumbers()
    assert np.allclose(np.asarray(kx).ravel(), np.fft.fftfreq(n[0]))
    assert np.allclose(np.asarray(kz).ravel(), np.fft.rfftfreq(n[2]))


def test_the_three_halves_rule_removes_aliasing_of_a_product():
    """u*v computed on the padded grid has no aliased modes in the kept spectrum."""
    mesh = pfft.make_mesh((2, 2))
    n = (8, 8, 8)
    plan = pfft.plan(n, np.float64, mesh, kind="r2c", padding=1.5)
    rng = np.random.default_rng(3)
    u_hat = np.fft.rfftn(rng.standard_normal(n))
    v_hat = np.fft.rfftn(rng.standard_normal(n))
    for k in (u_hat, v_hat):          # the 3/2 rule is exact below the Nyquist modes
        k[4], k[:, 4], k[..., 4] = 0, 0, 0
    u, v = plan.backward(u_hat), plan.backward(v_hat)
    assert rel_err(u, _numpy_backward(u_hat, n, plan.in_shape, real=True)) <= 1e-12
    got = plan.forward(u * v)
    # exact, in numpy: the product of the two band-limited fields on a grid of 2N,
    # where it has no aliases, then its lowest N frequencies
    fine = tuple(2 * a for a in n)
    exact = _numpy_forward(_numpy_backward(u_hat, n, fine, real=True)
                           * _numpy_backward(v_hat, n, fine, real=True), n, real=True)
    assert rel_err(got, exact) <= 1e-12
    # on the N grid itself the product aliases: the kept spectrum differs
    field = [np.fft.irfftn(k, s=n, axes=(0, 1, 2)) for k in (u_hat, v_hat)]
    aliased = np.fft.rfftn(field[0] * field[1])
    assert rel_err(aliased, exact) > 1e-2


@pytest.mark.parametrize("grid", [(1,), (2, 2), (1, 4)])
@pytest.mark.parametrize("real", [False, True])
def test_any_field_and_any_spectrum_match_numpy(grid, real):
    """Not only band-limited data: the forward is numpy's FFT on the fine grid, cut to
    the lowest N frequencies and rescaled; the backward zero-pads and inverse
    transforms on the fine grid (both in numpy, independently of pfft)."""
    mesh = pfft.make_mesh(grid)
    n = (6, 10, 7)
    plan = pfft.plan(n, np.float64 if real else np.complex128, mesh,
                     kind="r2c" if real else "c2c", padding=1.5)
    rng = np.random.default_rng(5)
    y = rng.standard_normal(plan.in_shape)
    if not real:
        y = y + 1j * rng.standard_normal(plan.in_shape)
    assert rel_err(plan.forward(y), _numpy_forward(y, n, real)) <= 1e-12
    k = np.fft.rfftn(rng.standard_normal(n)) if real else \
        rng.standard_normal(n) + 1j * rng.standard_normal(n)
    assert rel_err(plan.backward(k), _numpy_backward(k, n, plan.in_shape, real)) <= 1e-12


@pytest.mark.parametrize("engine", ["native", "xla"])
@pytest.mark.parametrize("grid", [(1,), (4,)])
@pytest.mark.parametrize("real", [False, True])
def test_each_axis_is_truncated_before_the_next_is_transformed_where_that_pays(
        real, grid, engine):
    """With the CPU kernels a dealiased plan's forward transforms one axis per FFT and
    truncates it before the next (the halved axis first, then from the innermost
    out), so the later FFTs run on fewer points, and the backward zero-pads each axis
    just before its inverse FFT. XLA's FFT takes the local axes in one call (alone,
    each axis would cost it a transpose). The values are numpy's either way."""
    if engine == "native" and not pfft.engines.native.available("cpu"):
        pytest.skip(f"native CPU engine: {pfft.engines.native.unavailable_reason('cpu')}")
    n = (6, 10, 8)
    plan = pfft.plan(n, np.float64 if real else np.complex128, pfft.make_mesh(grid),
                     kind="r2c" if real else "c2c", padding=1.5, engine=engine)
    stages = plan.chain.stages
    ffts = [i for i, st in enumerate(stages) if isinstance(st, (LocalFFT, RealFFT))]
    if engine == "native":
        assert sorted(stages[i].axes for i in ffts) == [(0,), (1,), (2,)]
        if real:
            assert stages[ffts[0]].axes == (2,)
        for i in ffts:                 # each FFT's own axis truncated right after it
            assert isinstance(stages[i + 1], Resize)
            assert stages[i + 1].axis == stages[i].axes[0]
    else:                              # the axes local at first in one FFT
        assert len(stages[ffts[0]].axes) == (3 if grid == (1,) else 2)
    rng = np.random.default_rng(7)
    y = random_array(rng, plan.in_shape, np.float64 if real else np.complex128)
    assert rel_err(plan.forward(y), _numpy_forward(y, n, real)) <= 1e-12
    k = np.fft.rfftn(rng.standard_normal(n)) if real else random_array(rng, n, np.complex128)
    assert rel_err(plan.backward(k), _numpy_backward(k, n, plan.in_shape, real)) <= 1e-12


def _dft_rows(freqs, m, sign):
    """The dense DFT of ``m`` points, one row per integer frequency in ``freqs``:
    exp(sign 2 pi i f j / m), summed directly (no FFT)."""
    return np.exp(sign * 2j * np.pi * np.outer(freqs, np.arange(m)) / m)


@pytest.mark.parametrize("grid", [(2, 2), (4,)])
@pytest.mark.parametrize("real", [False, True])
def test_odd_lengths_keep_the_frequencies_a_dense_dft_gives(grid, real):
    """Odd spectral lengths (the halved one too; one even, for the grid to split),
    fine grids ``ceil(1.5 n)`` odd and even. The forward keeps, in numpy's order, the
    integer frequencies -(n//2) .. (n-1)//2 (0 .. n//2 on the halved axis) of the fine
    grid's DFT, scaled by n/m per axis; the backward sums those modes on the fine
    grid, scaled by 1/n (for a real result the real part, each bin of the odd halved
    axis but 0 counted twice: it has no Nyquist bin). The reference is a dense DFT
    matrix per axis built from the frequencies, not numpy.fft and an index cut."""
    mesh = pfft.make_mesh(grid)
    n = (5, 8, 7)
    plan = pfft.plan(n, np.float64 if real else np.complex128, mesh,
                     kind="r2c" if real else "c2c", padding=1.5)
    m = plan.in_shape
    assert m == (8, 12, 11)                                   # ceil(1.5 n)
    freqs = [np.r_[0:(v + 1) // 2, -(v // 2):0] for v in n]   # numpy's order
    if real:
        freqs[-1] = np.arange(n[-1] // 2 + 1)
    assert plan.out_shape == tuple(len(f) for f in freqs)
    rng = np.random.default_rng(6)
    y = random_array(rng, m, np.float64 if real else np.complex128)
    rows = [_dft_rows(f, mm, -1) for f, mm in zip(freqs, m)]
    want = np.einsum("ai,bj,ck,ijk->abc", *rows, y) * np.prod(n) / np.prod(m)
    assert rel_err(plan.forward(y), want) <= 1e-14         # 5x the error measured: 1.8e-15
    k = random_array(rng, plan.out_shape, np.complex128)
    cols = [_dft_rows(f, mm, +1).T for f, mm in zip(freqs, m)]
    if real:
        cols[-1] = cols[-1] * np.where(freqs[-1] == 0, 1.0, 2.0)
    want = np.einsum("ia,jb,kc,abc->ijk", *cols, k) / np.prod(n)
    back = plan.backward(k)
    assert back.shape == m
    assert rel_err(back, want.real if real else want) <= 1e-14


@pytest.mark.parametrize("grid", [(1,), (4,), (2, 2)])
def test_dealiased_plans_are_differentiable(grid):
    """The gradient of a loss through the forward against jax.grad of numpy's
    definition in jnp (the fine grid's rfftn, cut and rescaled): on one device and a
    slab the CPU kernels' plans truncate each axis before the next, on a pencil the
    axes come local one at a time."""
    mesh = pfft.make_mesh(grid)
    n = (8, 6, 4)
    plan = pfft.plan(n, np.float64, mesh, kind="r2c", padding=1.5)
    assert plan.in_shape == (12, 9, 6)
    x = np.random.default_rng(4).standard_normal(plan.in_shape)

    def loss(a):
        return jnp.sum(jnp.abs(plan.forward(a)) ** 2)

    def ref(a):
        k = jnp.fft.rfftn(a)
        idx = [_keep(12, 8), _keep(9, 6), _keep(6, 4, True)]
        k = k[np.ix_(*idx)] * np.prod(n) / np.prod(plan.in_shape)
        return jnp.sum(jnp.abs(k) ** 2)
    g = jax.jit(jax.grad(loss))(pfft.device_put(x, mesh))
    assert rel_err(g, jax.grad(ref)(x)) <= 1e-12


def test_padding_is_checked():
    with pytest.raises(ValueError, match="padding"):
        pfft.plan((8, 8, 8), np.complex64, padding=0.5)
    with pytest.raises(TypeError, match="padding"):
        pfft.plan((8, 8, 8), np.complex64, padding="3/2")
