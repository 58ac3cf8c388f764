"""A real (r2c) stage's factor in both directions, and a plan's wavenumbers, against
numpy in float64 on every engine.

An engine's own real transforms scale by their direction, not by the sign a plan
runs them with: XLA's complex-to-real transform divides by the real length whether
it runs an inverse or the transposed forward transform of a gradient, pfft's kernels
divide by nothing. A plan divides its ``norm`` factor by what the engine applies
(:func:`pfft.program.natural_scale`), so a real stage's factor taken for the wrong
direction can show only in the transposed programs a gradient runs, and only on the
engine whose factor depends on the direction. These tests therefore run every
program of an r2c plan (forward, backward and the transposes of both) with each
``norm``, on one device, a slab and a pencil, for an even and an odd halved axis
(for even ``n`` the Nyquist bin is stored once), on every engine, against references
that share nothing with pfft: numpy's ``rfftn``/``irfftn``, the dense matrices of
both maps built from numpy applied to a basis, the analytic gradient of
``sum(|rfftn(u)|**2)``, and central finite differences of a functional of
numpy's ``irfftn``. The power spectrum's gradient alone would not do: it runs the
forward program and its transpose, so a factor ``n`` too large in one and ``n`` too
small in the other cancel there; the functional's linear term shows either.

``plan.wavenumbers()`` is checked on every axis (the halved axis of an r2c plan holds
``rfftfreq``: a positive Nyquist frequency for even ``n``) against numpy's
``fftfreq``/``rfftfreq``, whole and block by block where the output is sharded.
"""
import functools
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import pfft
from conftest import ENGINES, NORMS, engine_plan, rel_err, use_engine

#: an even and an odd halved axis; the other axes shared out on the slab and pencil
SHAPES = {"even n": (4, 6, 6), "odd n": (4, 6, 7)}
GRIDS = {"one device": None, "slab": (4,), "pencil": (2, 2)}
AXES = (0, 1, 2)
#: float64 values and transposed maps are exact to rounding (measured: below 6e-16)
TOL = 1e-14
#: central differences of a quadratic functional are exact but for rounding, about
#: eps * |f| / h (measured: below 5e-13)
FD_STEP = 1e-2
FD_TOL = 1e-11


def _cases() -> list:
    """(engine, grid, norm, parity): every engine on every grid with every norm, the
    parity alternating so that each engine meets both on every grid and with every
    norm (the full product would double the compiles, and the file's time)."""
    return [pytest.param(engine, grid, norm, parity, id=f"{engine}-{grid}-{norm}-{parity}")
            for engine in ENGINES
            for g, grid in enumerate(GRIDS)
            for m, norm in enumerate(NORMS)
            for parity in [list(SHAPES)[(g + m) % 2]]]


def _mesh(grid):
    return None if grid is None else pfft.make_mesh(grid)


def _half(shape) -> tuple[int, ...]:
    """The shape of ``rfftn``'s output: the last axis ``n//2 + 1`` bins."""
    return shape[:-1] + (shape[-1] // 2 + 1,)


def _put(x, sharding):
    """``x`` placed as a plan takes it (on the default device for a one-device plan)."""
    return jnp.asarray(x) if sharding is None else jax.device_put(x, sharding)


def _complex(rng, shape) -> np.ndarray:
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


@functools.lru_cache(maxsize=None)
def _dense(shape, norm):
    """numpy's ``rfftn`` as a complex matrix ``K`` (bins by points), and its
    ``irfftn`` as the real matrices ``Ar``, ``Ai`` of the real and imaginary parts
    of its input (``irfftn(z) = Ar Re z + Ai Im z``: it is only real-linear), each
    column the transform of one basis vector."""
    n, m = math.prod(shape), math.prod(_half(shape))
    batch = (1, 2, 3)
    k = np.fft.rfftn(np.eye(n).reshape((n,) + shape), axes=batch, norm=norm)
    basis = np.eye(m).reshape((m,) + _half(shape))
    ar = np.fft.irfftn(basis, s=shape, axes=batch, norm=norm)
    ai = np.fft.irfftn(1j * basis, s=shape, axes=batch, norm=norm)
    return k.reshape(n, m).T, ar.reshape(m, n).T, ai.reshape(m, n).T


def _power_gradient(u: np.ndarray, norm: str) -> np.ndarray:
    """The gradient of ``sum(|rfftn(u, norm=norm)|**2)`` over the stored bins:
    ``2 Re(K^H K u)``, ``K^H`` the conjugate DFT over the stored bins only (the others
    zero), that is ``c N ifftn`` of the zero-filled spectrum with ``c`` the forward
    factor of ``norm``."""
    n = u.size
    c = {"backward": 1.0, "ortho": 1 / math.sqrt(n), "forward": 1 / n}[norm]
    full = np.zeros(u.shape, complex)
    full[..., :u.shape[-1] // 2 + 1] = np.fft.rfftn(u, norm=norm)
    return 2 * c * n * np.fft.ifftn(full).real


def _fd_gradient(f, z: np.ndarray) -> np.ndarray:
    """JAX's gradient of a real ``f`` of complex ``z`` (``df/dRe z - i df/dIm z``) by
    central differences in float64, every component at once (``f`` maps a leading
    batch axis)."""
    step = FD_STEP * np.eye(z.size).reshape((z.size,) + z.shape)
    d_re = (f(z + step) - f(z - step)) / (2 * FD_STEP)
    d_im = (f(z + 1j * step) - f(z - 1j * step)) / (2 * FD_STEP)
    return (d_re - 1j * d_im).reshape(z.shape)


@pytest.mark.parametrize("engine,grid,norm,parity", _cases())
def test_r2c_plan_programs_are_numpys_maps(engine, grid, norm, parity):
    """Forward and backward values against numpy; their transposes (``jax.vjp``) and
    the forward tangent map (``jax.jvp``) against the dense matrices."""
    shape = SHAPES[parity]
    plan = engine_plan(shape, np.float64, _mesh(GRIDS[grid]), engine, kind="r2c", norm=norm)
    k, ar, ai = _dense(shape, norm)
    rng = np.random.default_rng(list(SHAPES).index(parity))
    x, t = rng.standard_normal(shape), rng.standard_normal(shape)
    forward = jax.jit(plan.forward)
    y, vjp = jax.vjp(forward, _put(x, plan.in_sharding))
    assert rel_err(y, np.fft.rfftn(x, norm=norm)) <= TOL
    ct = _complex(rng, _half(shape))
    assert rel_err(vjp(ct)[0], (k.T @ ct.ravel()).real.reshape(shape)) <= TOL
    if GRIDS[grid] is None:             # the same program again: checked where it compiles fast
        _, tangent = jax.jvp(forward, (_put(x, None),), (_put(t, None),))
        assert rel_err(tangent, (k @ t.ravel()).reshape(_half(shape))) <= TOL

    z = _complex(rng, _half(shape))     # not Hermitian: DC's and Nyquist's imaginary parts count
    xb, vjp = jax.vjp(jax.jit(plan.backward), _put(z, plan.out_sharding))
    assert rel_err(xb, np.fft.irfftn(z, s=shape, axes=AXES, norm=norm)) <= TOL
    ct = rng.standard_normal(shape)
    assert rel_err(vjp(ct)[0], ((ar.T - 1j * ai.T) @ ct.ravel()).reshape(_half(shape))) <= TOL


@pytest.mark.parametrize("engine,grid,norm,parity", _cases())
def test_gradients_of_real_functionals(engine, grid, norm, parity, monkeypatch, devices):
    """``jax.grad`` through ``pfft.rfftn`` and ``pfft.irfftn`` (the engine a user picks
    with ``$PFFT_ENGINE``): ``sum(|rfftn(u)|**2)`` against its analytic gradient, a
    quadratic functional of ``irfftn(z)`` against central differences of numpy's."""
    use_engine(engine, monkeypatch, devices)
    shape, mesh = SHAPES[parity], _mesh(GRIDS[grid])
    rng = np.random.default_rng(10 + list(SHAPES).index(parity))
    u = rng.standard_normal(shape)

    def power(a):
        return jnp.sum(jnp.abs(pfft.rfftn(a, norm=norm, mesh=mesh)) ** 2)

    got = jax.jit(jax.grad(power))(pfft.device_put(u, mesh))
    assert rel_err(got, _power_gradient(u, norm)) <= TOL

    z, g = _complex(rng, _half(shape)), rng.standard_normal(shape)

    def functional(b):
        y = pfft.irfftn(b, s=shape, axes=AXES, norm=norm, mesh=mesh)
        return jnp.sum(g * y + y * y / 2)

    def numpy_functional(b):            # b: a batch of spectra along axis 0
        y = np.fft.irfftn(b, s=shape, axes=(1, 2, 3), norm=norm)
        return np.sum(g * y + y * y / 2, axis=(1, 2, 3))

    got = jax.jit(jax.grad(functional))(pfft.device_put(z, mesh))
    assert rel_err(got, _fd_gradient(numpy_functional, z)) <= FD_TOL


# -- wavenumbers ------------------------------------------------------------------------
#: (kind, axes, spectrum, shape with even axes, with odd ones (the halved one, and
#: for c2c the two a mesh leaves whole), the grids whose plan ends with the halved axis
#: split: there its blocks are checked one by one). ``spectrum="padded"`` pads the 5
#: bins of n = 8 and 9 to 6 on the pencil
WAVE_CASES = {
    "c2c": ("c2c", None, "numpy", (4, 6, 6), (5, 8, 7), ()),
    "r2c": ("r2c", None, "numpy", (4, 6, 6), (4, 6, 7), ("slab", "pencil")),
    "r2c halved axis 1": ("r2c", (0, 2, 1), "numpy", (4, 6, 6), (4, 7, 6), ("slab", "pencil")),
    "r2c padded": ("r2c", None, "padded", (4, 6, 8), (4, 6, 9), ("pencil",)),
}
#: a spacing per axis, in the order of ``axes``, none the same
SPACING = (0.5, 2.0, 0.25)


def _want(plan, shape, axes, kind, angular: bool) -> dict[int, np.ndarray]:
    """numpy's frequencies of each axis of ``plan``'s output (``rfftfreq`` on the
    halved axis ``axes[-1]`` of an r2c plan), zero-padded to the output's length."""
    out = {}
    for i, a in enumerate(axes):
        freq = (np.fft.rfftfreq if kind == "r2c" and a == axes[-1] else np.fft.fftfreq)(
            shape[a], SPACING[i])
        values = np.zeros(plan.out_shape[a])
        values[:freq.size] = 2 * np.pi * freq if angular else freq
        out[a] = values
    return out


def _block(index: slice, n: int) -> tuple[int, int]:
    start, stop, _ = index.indices(n)
    return start, stop


@pytest.mark.parametrize("angular", [False, True], ids=["cycles", "angular"])
@pytest.mark.parametrize("grid", GRIDS)
@pytest.mark.parametrize("parity", ["even n", "odd n"])
@pytest.mark.parametrize("case", WAVE_CASES)
def test_wavenumbers_are_numpys_frequencies(case, parity, grid, angular):
    """Every axis, the halved one too, against ``fftfreq``/``rfftfreq`` (times 2 pi
    where angular) with a spacing per axis; on a mesh each device's block is the
    block of frequencies of the output block it holds."""
    kind, axes, spectrum, even, odd, split = WAVE_CASES[case]
    shape = even if parity == "even n" else odd
    axes = axes or AXES
    plan = pfft.plan(shape, np.float64, _mesh(GRIDS[grid]), kind=kind, axes=axes,
                     spectrum=spectrum)
    want = _want(plan, shape, axes, kind, angular)
    ks = plan.wavenumbers(d=SPACING, angular=angular)
    assert len(ks) == 3
    for a, k in enumerate(ks):
        assert k.shape == tuple(plan.out_shape[a] if b == a else 1 for b in range(3))
        np.testing.assert_allclose(np.asarray(k).ravel(), want[a], rtol=1e-15, atol=0)
    if GRIDS[grid] is None:
        return
    out_blocks = plan.out_sharding.devices_indices_map(plan.out_shape)
    halved_blocks = set()
    for a, k in enumerate(ks):
        n = plan.out_shape[a]
        for shard in k.addressable_shards:
            block = _block(shard.index[a], n)
            assert block == _block(out_blocks[shard.device][a], n), (a, shard.device)
            np.testing.assert_allclose(np.asarray(shard.data).ravel(),
                                       want[a][slice(*block)], rtol=1e-15, atol=0)
            if kind == "r2c" and a == axes[-1]:
                halved_blocks.add(block)
    if grid in split:
        assert len(halved_blocks) > 1, plan.out_sharding
