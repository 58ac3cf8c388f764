"""Distributed fftshift/ifftshift: numpy's values bit for bit, the input's
sharding, and only the planned collective permutes in the compiled HLO (never a
gather), on every grid, with odd block counts, inside jit, through autodiff."""
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from jax.sharding import NamedSharding, PartitionSpec as P

import pfft
from conftest import GRIDS
from pfft.hlo import count_collectives

SHIFTS = [(pfft.fftshift, np.fft.fftshift, False), (pfft.ifftshift, np.fft.ifftshift, True)]


def _mesh(grid, n_devices=None, kind="explicit"):
    devices = jax.devices()[:n_devices or math.prod(grid)]
    return pfft.make_mesh(grid, devices, axis_types=kind)


def _names(entry):
    return () if entry is None else (entry,) if isinstance(entry, str) else tuple(entry)


def planned_permutes(shape, spec, mesh, axes, inverse) -> int:
    """Collective permutes a roll by numpy's shifts needs, worked out independently of
    pfft: the block permutations of all split axes together (one permute, if any moves
    a block), and for each axis whose shift is not a whole number of blocks one permute
    per non-zero block step (tail ``q + 1`` on, head ``q`` on)."""
    axes = range(len(shape)) if axes is None else [axes] if isinstance(axes, int) else axes
    total = {}
    for a in axes:
        a %= len(shape)
        total[a] = total.get(a, 0) + (-(shape[a] // 2) if inverse else shape[a] // 2)
    sizes = dict(mesh.shape)
    whole_blocks, count = False, 0
    for a, k in total.items():
        p = math.prod(sizes[m] for m in _names(spec[a] if a < len(spec) else None))
        if p == 1:
            continue
        b = shape[a] // p
        q, r = divmod(k % shape[a], b)
        if r == 0:
            whole_blocks |= q % p != 0
        else:
            count += ((q + 1) % p != 0) + (q % p != 0)
    return count + whole_blocks


def _check(x, spec, mesh, axes, fn, ref, inverse):
    a = np.asarray(x)
    compiled = jax.jit(lambda v: fn(v, axes=axes)).lower(x).compile()
    y = compiled(x)
    assert y.shape == a.shape and y.dtype == a.dtype
    np.testing.assert_array_equal(np.asarray(y), ref(a, axes=axes))
    assert y.sharding.is_equivalent_to(x.sharding, a.ndim), (y.sharding, x.sharding)
    ops = count_collectives(compiled.as_text())
    want = planned_permutes(a.shape, spec, mesh, axes, inverse)
    assert ops["collective-permute"] == want, (spec, axes, ops, want)
    assert sum(ops.values()) == ops["collective-permute"], ops      # nothing else, no gather


def _specs(ndim, names):
    """A few layouts of an ndim-array over mesh axes ``names``: pencils, slabs, a
    group splitting one axis, the spectrum pencil."""
    if len(names) == 1:
        (m,) = names
        return [P(*([None] * i + [m])) for i in range(ndim)]
    x, y = names
    out = [P(x, y), P(None, x, y), P(y, None, x), P((x, y)), P(None, (y, x))]
    return [s for s in out if len(s) <= ndim]


@pytest.mark.parametrize("grid", GRIDS, ids=str)
def test_every_grid_matches_numpy_with_planned_permutes(grid):
    mesh = _mesh(grid)
    rng = np.random.default_rng(sum(grid))
    shape = (8, 16, 6)                                  # 6: a whole, odd-half axis too
    a = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
    for spec in _specs(3, mesh.axis_names):
        if any(shape[i] % math.prod(mesh.shape[m] for m in _names(e))
               for i, e in enumerate(spec)):
            continue
        x = jax.device_put(a, NamedSharding(mesh, spec))
        for fn, ref, inverse in SHIFTS:
            for axes in ((None, (1, 2), (-1, 0, 0)) if inverse else (None, 0)):
                _check(x, spec, mesh, axes, fn, ref, inverse)


@pytest.mark.parametrize("grid,n_devices,spec,shape", [
    ((3,), 3, P("x"), (9,)),                    # odd block count: heads and tails move
    ((3,), 3, P(None, "x"), (4, 15)),
    ((2, 3), 6, P("y", "x"), (9, 8)),
    ((2, 3), 6, P(("x", "y")), (30,)),
    ((2, 3), 6, P(("y", "x"), None), (18, 5)),
    ((2, 3), 6, P("x", "y", None), (2, 3, 7)),  # one point per block
], ids=str)
def test_odd_block_counts(grid, n_devices, spec, shape):
    mesh = _mesh(grid, n_devices)
    a = np.random.default_rng(3).standard_normal(shape).astype(np.float32)
    x = jax.device_put(a, NamedSharding(mesh, spec))
    for fn, ref, inverse in SHIFTS:
        for axes in (None, 0, -1, (0, 0)):
            _check(x, spec, mesh, axes, fn, ref, inverse)


@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_hypothesis_shapes_and_layouts(data):
    ndim = data.draw(st.integers(1, 3))
    grid = data.draw(st.sampled_from(GRIDS))
    mesh = _mesh(grid)
    names = [m for m in mesh.axis_names if mesh.shape[m] > 1]
    shape = []
    spec = [None] * ndim
    for m in names:                             # each mesh axis splits an axis it divides
        a = data.draw(st.integers(0, ndim - 1))
        spec[a] = _names(spec[a]) + (m,)
    for a in range(ndim):
        p = math.prod(mesh.shape[m] for m in _names(spec[a]))
        shape.append(p * data.draw(st.integers(1, max(1, 40 // p))))
    spec = P(*spec)
    axes = data.draw(st.sampled_from([None, 0, -1, tuple(range(ndim))[::-1]]))
    fn, ref, inverse = data.draw(st.sampled_from(SHIFTS))
    dtype = data.draw(st.sampled_from([np.complex64, np.float64, np.int32]))
    a = (np.random.default_rng(ndim).standard_normal(shape) * 100).astype(dtype)
    x = jax.device_put(a, NamedSharding(mesh, spec))
    _check(x, spec, mesh, axes, fn, ref, inverse)


def test_spectrum_pencil_round_trip_and_int_dtypes():
    mesh = _mesh((2, 4))
    a = np.random.default_rng(0).standard_normal((16, 8, 12))
    k = pfft.fftn(pfft.device_put(a, mesh))                 # spectrum pencil P(None,'x','y')
    centred = pfft.fftshift(k)
    np.testing.assert_array_equal(np.asarray(centred), np.fft.fftshift(np.asarray(k)))
    assert centred.sharding == k.sharding
    back = pfft.ifftshift(centred)
    np.testing.assert_array_equal(np.asarray(back), np.asarray(k))
    ints = np.arange(16 * 8).reshape(16, 8)
    y = pfft.fftshift(ints, mesh=mesh)                      # numpy input: placed on mesh
    assert y.dtype == ints.dtype
    np.testing.assert_array_equal(np.asarray(y), np.fft.fftshift(ints))
    np.testing.assert_array_equal(np.asarray(pfft.fftshift(ints)), np.fft.fftshift(ints))
    np.testing.assert_array_equal(np.asarray(pfft.fftshift(np.float64(2.0))), 2.0)


@pytest.mark.parametrize("kind", ["explicit", "auto"])
def test_inside_jit(kind):
    mesh = _mesh((2, 2), kind=kind)
    spec = P(None, "x", "y")
    a = np.random.default_rng(1).standard_normal((6, 8, 4))
    x = jax.device_put(a, NamedSharding(mesh, spec))

    @jax.jit
    def f(v):
        return pfft.ifftshift(pfft.fftshift(v, mesh=mesh, spec=spec) * 2, mesh=mesh, spec=spec)

    np.testing.assert_array_equal(np.asarray(f(x)), 2 * a)
    ops = count_collectives(f.lower(x).compile().as_text())
    assert ops["collective-permute"] == 2 and sum(ops.values()) == 2, ops
    y = pfft.fftshift(x, out_sharding=P())                  # replicated on request
    assert y.sharding.is_fully_replicated
    np.testing.assert_array_equal(np.asarray(y), np.fft.fftshift(a))


def test_gradients_vmap_and_transpose():
    mesh = _mesh((2, 4))
    rng = np.random.default_rng(2)
    a = rng.standard_normal((8, 12, 5))
    x = jax.device_put(a, NamedSharding(mesh, P("x", "y", None)))
    w_host = rng.standard_normal(a.shape)
    w = jax.device_put(w_host, x.sharding)
    g = jax.jit(jax.grad(lambda v, w: jnp.sum(pfft.fftshift(v) * w)))(x, w)
    np.testing.assert_array_equal(np.asarray(g), np.fft.ifftshift(w_host))   # VJP = ifftshift
    assert g.sharding == x.sharding
    t = rng.standard_normal(a.shape)
    _, tangent = jax.jit(lambda v, d: jax.jvp(pfft.fftshift, (v,), (d,)))(x, t)
    np.testing.assert_array_equal(np.asarray(tangent), np.fft.fftshift(t))
    with jax.set_mesh(mesh):                    # Explicit axes: JAX's rule outside jit
        (ct,) = jax.linear_transpose(lambda v: pfft.ifftshift(v, axes=(0, 2)), x)(x)
    np.testing.assert_array_equal(np.asarray(ct), np.fft.fftshift(a, axes=(0, 2)))
    batch = rng.standard_normal((3, 8, 12))
    xs = jax.device_put(batch, NamedSharding(mesh, P(None, "x", "y")))
    vmapped = jax.jit(jax.vmap(pfft.fftshift))
    np.testing.assert_array_equal(np.asarray(vmapped(xs)), np.fft.fftshift(batch, axes=(1, 2)))
    ops = count_collectives(vmapped.lower(xs).compile().as_text())
    assert ops["collective-permute"] == 1 and sum(ops.values()) == 1, ops
    # a loss through fftn and fftshift: gradient against jnp on one device
    def loss(fft, shift, v, w):
        return jnp.sum(jnp.abs(shift(fft(v))) ** 2 * w)
    kw = jax.device_put(w_host, pfft.plan(a.shape, np.complex128, mesh).out_sharding)
    got = jax.jit(jax.grad(lambda v, w: loss(pfft.fftn, pfft.fftshift, v, w)))(x, kw)
    want = jax.grad(lambda v: loss(jnp.fft.fftn, jnp.fft.fftshift, v, w_host))(a)
    assert np.linalg.norm(np.asarray(got) - want) <= 1e-12 * np.linalg.norm(want)


def test_errors_match_numpy():
    a = np.zeros((4, 6))
    x = pfft.device_put(a, _mesh((2,)))
    for fn, ref, _ in SHIFTS:
        for axes in (2, (0, -3)):                       # out of range: numpy's AxisError
            with pytest.raises(IndexError):
                ref(a, axes=axes)
            with pytest.raises(np.exceptions.AxisError, match="out of range"):
                fn(x, axes=axes)
        for axes in (1.0, "0", [0, 1.5]):
            with pytest.raises(TypeError):
                ref(a, axes=axes)
            with pytest.raises(TypeError, match="axes must be"):
                fn(x, axes=axes)
    with pytest.raises(TypeError, match="mesh must be"):
        pfft.fftshift(a, mesh="x")
    with pytest.raises(ValueError, match="cannot be split evenly"):
        pfft.fftshift(a, mesh=_mesh((4,)), spec=P(None, "x"))
    with pytest.raises(ValueError, match="does not have"):
        pfft.fftshift(a, mesh=_mesh((2,)), spec=P("z"))
