"""The toolkit: frequencies, halo exchange and its adjoint, spectral operators."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import NamedSharding, PartitionSpec as P

import pfft
from pfft import spectral

GRIDS = [(1,), (2, 2), (1, 4), (2, 4)]
HALO_GRIDS = GRIDS + [(8,), (4, 2)]


def _mesh(grid, kind="explicit"):
    return pfft.make_mesh(grid, axis_types=kind)


# -- frequencies ---------------------------------------------------------------------

@pytest.mark.parametrize("n", [1, 2, 7, 8, 33])
@pytest.mark.parametrize("d", [1.0, 0.25, 3])
def test_fftfreq_matches_numpy(n, d):
    np.testing.assert_allclose(np.asarray(pfft.fftfreq(n, d)), np.fft.fftfreq(n, d), rtol=1e-15)
    np.testing.assert_allclose(np.asarray(pfft.rfftfreq(n, d)), np.fft.rfftfreq(n, d),
                               rtol=1e-15)
    assert isinstance(pfft.fftfreq(n, d), jax.Array)


def test_fftfreq_dtype_and_errors():
    assert pfft.fftfreq(8, dtype=jnp.float32).dtype == jnp.float32
    assert pfft.rfftfreq(8).dtype == jnp.float64          # x64 is on in the tests
    with pytest.raises(ValueError, match=r"fftfreq: invalid number of data points \(0\)"):
        pfft.fftfreq(0)
    with pytest.raises(ValueError, match="rfftfreq: n should be an integer"):
        pfft.rfftfreq(2.5)                                # numpy's error (and jnp's for a list)


# -- halo exchange -------------------------------------------------------------------

def _blocks_ref(x, parts, halo, periodic):
    """numpy: cut each axis into ``parts`` blocks, extend each from the global array."""
    out = x
    for axis, (p, h) in enumerate(zip(parts, halo)):
        if h == 0:
            continue
        size = out.shape[axis]
        n = size // p
        pieces = []
        for b in range(p):
            idx = np.arange(b * n - h, (b + 1) * n + h)
            piece = np.take(out, idx % size, axis=axis)
            if not periodic:
                keep = ((idx >= 0) & (idx < size)).reshape(
                    [-1 if a == axis else 1 for a in range(out.ndim)])
                piece = piece * keep
            pieces.append(piece)
        out = np.concatenate(pieces, axis=axis)
    return out


def _parts(x):
    spec = x.sharding.spec
    sizes = dict(x.sharding.mesh.shape)
    parts = []
    for a in range(x.ndim):
        e = spec[a] if a < len(spec) else None
        names = () if e is None else (e if isinstance(e, tuple) else (e,))
        parts.append(int(np.prod([sizes[m] for m in names])))
    return parts


@pytest.mark.parametrize("grid", HALO_GRIDS, ids=str)
@pytest.mark.parametrize("periodic", [True, False])
def test_halo_exchange_matches_reference(grid, periodic):
    rng = np.random.default_rng(0)
    xh = rng.standard_normal((8, 12, 6))
    x = pfft.device_put(xh, _mesh(grid))
    parts = _parts(x)
    for halo in [(1, 1, 1), (1, 3, 0), (0, 2, 3)]:
        if any(h > s // p for h, s, p in zip(halo, xh.shape, parts)):
            continue
        y = pfft.halo_exchange(x, halo, periodic)
        want = _blocks_ref(xh, parts, halo, periodic)
        assert y.shape == tuple(s + 2 * h * p for s, h, p in zip(xh.shape, halo, parts))
        assert y.sharding.spec == x.sharding.spec
        np.testing.assert_array_equal(np.asarray(y), want)
        # every device's shard is its own block with halos
        for shard in y.addressable_shards:
            assert shard.data.shape == tuple(s // p + 2 * h
                                             for s, h, p in zip(xh.shape, halo, parts))


@pytest.mark.parametrize("grid", [(1,), (2, 4), (8,)], ids=str)
@pytest.mark.parametrize("periodic", [True, False])
def test_halo_reduce_is_the_exact_transpose(grid, periodic):
    rng = np.random.default_rng(1)
    halo = (1, 2, 1)
    # integer values: every sum is exact, so all routes must agree bit for bit
    xh = rng.integers(-50, 50, (8, 8, 6)).astype(np.float64)
    x = pfft.device_put(xh, _mesh(grid))
    exchange = lambda a: pfft.halo_exchange(a, halo, periodic)  # noqa: E731
    y = exchange(x)
    yh = rng.integers(-50, 50, y.shape).astype(np.float64)
    ybar = jax.device_put(yh, y.sharding)
    reduced = pfft.halo_reduce(ybar, halo, periodic)
    assert reduced.shape == x.shape and reduced.sharding.spec == x.sharding.spec
    # dot-product test <y, E x> = <E^T y, x>
    assert np.vdot(yh, np.asarray(y)) == np.vdot(np.asarray(reduced), xh)
    # autodiff's transpose and vjp of the exchange are halo_reduce (eager
    # linear_transpose of a jitted function on Explicit axes needs the mesh context)
    with jax.set_mesh(x.sharding.mesh):
        (lin_t,) = jax.linear_transpose(exchange, x)(ybar)
    np.testing.assert_array_equal(np.asarray(lin_t), np.asarray(reduced))
    _, vjp = jax.vjp(exchange, x)
    np.testing.assert_array_equal(np.asarray(vjp(ybar)[0]), np.asarray(reduced))
    # and the transpose of halo_reduce is the exchange
    _, vjp = jax.vjp(lambda b: pfft.halo_reduce(b, halo, periodic), ybar)
    np.testing.assert_array_equal(np.asarray(vjp(x)[0]), np.asarray(y))
    # reference: the adjoint of the numpy block map, as a sum over its columns
    want = np.zeros_like(xh)
    flat = _blocks_ref(np.arange(xh.size).reshape(xh.shape), _parts(x), halo, periodic)
    mask = _blocks_ref(np.ones_like(xh), _parts(x), halo, periodic)
    np.add.at(want.reshape(-1), flat.reshape(-1).astype(int), (yh * mask).reshape(-1))
    np.testing.assert_array_equal(np.asarray(reduced), want)


def test_halo_exchange_gradient_and_jvp():
    mesh = _mesh((2, 4))
    rng = np.random.default_rng(2)
    x = pfft.device_put(rng.standard_normal((8, 8, 4)), mesh)
    halo = (2, 1, 1)
    f = lambda a: jnp.sum(pfft.halo_exchange(a, halo) ** 3)  # noqa: E731
    g = jax.jit(jax.grad(f))(x)
    y = pfft.halo_exchange(x, halo)
    np.testing.assert_allclose(np.asarray(g), np.asarray(pfft.halo_reduce(3 * y ** 2, halo)),
                               rtol=1e-13)
    _, tangent = jax.jvp(lambda a: pfft.halo_exchange(a, halo), (x,), (2 * x,))
    np.testing.assert_allclose(np.asarray(tangent), 2 * np.asarray(y), rtol=1e-15)


@pytest.mark.parametrize("kind", ["explicit", "auto"])
def test_halo_exchange_inside_jit(kind):
    mesh = _mesh((2, 4), kind)
    rng = np.random.default_rng(3)
    xh = rng.standard_normal((8, 8, 4))
    x = pfft.device_put(xh, mesh)
    want = _blocks_ref(xh, [2, 4, 1], (1, 1, 2), False)
    out = pfft.halo_exchange(x, (1, 1, 2), periodic=False)          # outside jit
    np.testing.assert_array_equal(np.asarray(out), want)
    f = jax.jit(lambda a: pfft.halo_reduce(
        pfft.halo_exchange(a, (1, 1, 2), False, mesh=mesh), (1, 1, 2), False, mesh=mesh))
    both = f(x)
    np.testing.assert_allclose(
        np.asarray(both), np.asarray(pfft.halo_reduce(out, (1, 1, 2), periodic=False)),
        rtol=1e-15)
    g = jax.jit(lambda a: pfft.halo_exchange(a, (1, 1, 2), False, mesh=mesh))
    np.testing.assert_array_equal(np.asarray(g(x)), want)


def test_halo_exchange_other_inputs():
    rng = np.random.default_rng(4)
    xh = rng.standard_normal((8, 8, 6)).astype(np.float32)
    # numpy input on a mesh: placed in pfft's pencil P('x', 'y', None)
    y = pfft.halo_exchange(xh, 1, mesh=_mesh((2, 2)))
    np.testing.assert_array_equal(np.asarray(y), _blocks_ref(xh, [2, 2, 1], (1, 1, 1), True))
    assert y.dtype == np.float32
    # no mesh: one block, periodic wrap on every axis
    np.testing.assert_array_equal(np.asarray(pfft.halo_exchange(xh, (1, 0, 2))),
                                  np.pad(xh, [(1, 1), (0, 0), (2, 2)], mode="wrap"))
    # a spec given explicitly (the array is moved onto it); an axis split by two mesh axes
    mesh = _mesh((2, 4))
    y = pfft.halo_exchange(jax.device_put(xh, NamedSharding(mesh, P(None, ("x", "y")))),
                           (0, 1, 1), periodic=False)
    np.testing.assert_array_equal(np.asarray(y), _blocks_ref(xh, [1, 8, 1], (0, 1, 1), False))
    y = pfft.halo_exchange(xh, (1, 0, 1), mesh=mesh, spec=P("y", None, "x"))
    np.testing.assert_array_equal(np.asarray(y), _blocks_ref(xh, [4, 1, 2], (1, 0, 1), True))
    f = jax.jit(lambda a: pfft.halo_exchange(a, (1, 0, 1), spec=P("y", None, "x")))
    y = f(pfft.device_put(xh, mesh))                          # resharded inside jit
    np.testing.assert_array_equal(np.asarray(y), _blocks_ref(xh, [4, 1, 2], (1, 0, 1), True))
    assert y.sharding.spec == P("y", None, "x")


def test_halo_errors():
    x = pfft.device_put(np.zeros((8, 8, 8)), _mesh((2, 4)))      # blocks 4 x 2 x 8
    with pytest.raises(ValueError, match=r"halo_exchange: halo \(1, 1\) must have one entry"):
        pfft.halo_exchange(x, (1, 1))
    with pytest.raises(ValueError, match="halo_exchange: halo entries must be non-negative"):
        pfft.halo_exchange(x, (1, -1, 1))
    with pytest.raises(ValueError, match=r"halo\[1\]=3 exceeds the local block size 2"):
        pfft.halo_exchange(x, (1, 3, 1))
    with pytest.raises(ValueError, match=r"halo\[2\]=9 exceeds the local block size 8"):
        pfft.halo_exchange(x, (0, 0, 9))
    with pytest.raises(TypeError, match="halo_exchange: halo must be an int or a sequence"):
        pfft.halo_exchange(x, "1")
    with pytest.raises(ValueError, match=r"halo_reduce: halo\[1\]=1 does not fit axis 1"):
        pfft.halo_reduce(x, (0, 1, 0))
    with pytest.raises(ValueError, match="halo_reduce: halo .* must have one entry"):
        pfft.halo_reduce(x, (0, 1, 0, 1))
    with pytest.raises(ValueError, match="cannot be split evenly"):
        pfft.halo_exchange(np.zeros((6, 8, 8)), 1, mesh=_mesh((4, 2)), spec=P("x"))


# -- spectral operators --------------------------------------------------------------

def _k(shape, d):
    d = np.broadcast_to(d, (3,))
    return np.meshgrid(*[2 * np.pi * np.fft.fftfreq(n, h) for n, h in zip(shape, d)],
                       indexing="ij")


def _dense_laplacian(shape, d):
    """The periodic 7-point finite-difference Laplacian as a dense matrix."""
    size = int(np.prod(shape))
    eye = np.eye(size).reshape(shape + (size,))
    lap = np.zeros_like(eye)
    for axis, h in enumerate(np.broadcast_to(d, (3,))):
        lap += (np.roll(eye, 1, axis) + np.roll(eye, -1, axis) - 2 * eye) / h ** 2
    return lap.reshape(size, size)


@pytest.mark.parametrize("grid", GRIDS, ids=str)
def test_poisson_matches_numpy_and_dense_solve(grid):
    mesh = _mesh(grid)
    rng = np.random.default_rng(5)
    shape, d = (8, 8, 8), (0.5, 1.0, 0.25)
    rho_h = rng.standard_normal(shape)
    rho = pfft.device_put(rho_h, mesh)
    # continuous: numpy's FFT with 1/k^2
    kx, ky, kz = _k(shape, d)
    k2 = kx ** 2 + ky ** 2 + kz ** 2
    want = np.fft.ifftn(np.where(k2 > 0, np.fft.fftn(rho_h) / np.where(k2 > 0, k2, 1), 0)).real
    phi = spectral.poisson(rho, d=d)
    assert phi.sharding == rho.sharding and phi.dtype == rho.dtype
    np.testing.assert_allclose(np.asarray(phi), want, atol=1e-12 * np.abs(want).max())
    # discrete: the dense 7-point Laplacian solved for a mean-free source
    phi_d = np.asarray(spectral.poisson(rho, d=d, green="discrete"))
    source = (rho_h - rho_h.mean()).reshape(-1)
    want_d = np.linalg.lstsq(-_dense_laplacian(shape, d), source, rcond=None)[0]
    np.testing.assert_allclose(phi_d.reshape(-1), want_d - want_d.mean(), atol=1e-11)
    assert abs(phi_d.mean()) < 1e-13


@pytest.mark.parametrize("grid", GRIDS, ids=str)
def test_gradient_and_laplacian_match_numpy(grid):
    mesh = _mesh(grid)
    rng = np.random.default_rng(6)
    shape, d = (8, 6, 5), 0.5
    phi_h = rng.standard_normal(shape)
    phi = pfft.device_put(phi_h, mesh)
    ks = _k(shape, d)
    spectrum = np.fft.fftn(phi_h)
    grads = spectral.gradient(phi, d=d)
    for axis, g in enumerate(grads):
        k = ks[axis].copy()
        if shape[axis] % 2 == 0:
            k[np.isclose(k, -np.pi / d)] = 0                   # Nyquist of an even axis
        want = np.fft.ifftn(1j * k * spectrum).real
        np.testing.assert_allclose(np.asarray(g), want, atol=1e-12)
        np.testing.assert_allclose(np.asarray(spectral.gradient(phi, axis, d)), want, atol=1e-12)
        assert g.sharding == phi.sharding
    lap = spectral.laplacian(phi, d)
    want = np.fft.ifftn(-(ks[0] ** 2 + ks[1] ** 2 + ks[2] ** 2) * spectrum).real
    np.testing.assert_allclose(np.asarray(lap), want, atol=1e-11)
    # the discrete Laplacian is the 7-point stencil
    lap_d = spectral.laplacian(phi, d, kind="discrete")
    np.testing.assert_allclose(np.asarray(lap_d).reshape(-1),
                               _dense_laplacian(shape, d) @ phi_h.reshape(-1), atol=1e-11)
    # poisson inverts the Laplacian up to the mean
    for kind in ("continuous", "discrete"):
        back = spectral.poisson(-spectral.laplacian(phi, d, kind=kind), d=d, green=kind)
        np.testing.assert_allclose(np.asarray(back), phi_h - phi_h.mean(), atol=1e-11)


def test_gradient_of_a_smooth_field_is_exact():
    n, length = 16, 2 * np.pi
    x = np.arange(n) * length / n
    X, Y, Z = np.meshgrid(x, x, x, indexing="ij")
    phi = np.sin(X) * np.cos(2 * Y) + np.sin(3 * Z)
    gx, gy, gz = spectral.gradient(pfft.device_put(phi, _mesh((2, 4))), d=length / n)
    np.testing.assert_allclose(np.asarray(gx), np.cos(X) * np.cos(2 * Y), atol=1e-12)
    np.testing.assert_allclose(np.asarray(gy), -2 * np.sin(X) * np.sin(2 * Y), atol=1e-12)
    np.testing.assert_allclose(np.asarray(gz), 3 * np.cos(3 * Z), atol=1e-12)


def _power_ref(delta, edges, d):
    kx, ky, kz = _k(delta.shape, d)
    kabs = np.sqrt(kx ** 2 + ky ** 2 + kz ** 2).reshape(-1)
    power = (np.abs(np.fft.fftn(delta)) ** 2).reshape(-1) * np.prod(
        np.broadcast_to(d, (3,))) / delta.size
    keep = kabs > 0
    index = np.digitize(kabs[keep], edges) - 1
    index[kabs[keep] == edges[-1]] = len(edges) - 2
    counts = np.bincount(index, minlength=len(edges) - 1)[:len(edges) - 1]
    psum = np.bincount(index, power[keep], minlength=len(edges) - 1)[:len(edges) - 1]
    ksum = np.bincount(index, kabs[keep], minlength=len(edges) - 1)[:len(edges) - 1]
    with np.errstate(invalid="ignore"):
        return ksum / counts, psum / counts, counts


@pytest.mark.parametrize("grid", GRIDS, ids=str)
def test_power_spectrum_matches_numpy(grid):
    mesh = _mesh(grid)
    rng = np.random.default_rng(7)
    shape, d = (8, 12, 10), (1.0, 0.5, 1.0)
    delta = rng.standard_normal(shape)
    ps = spectral.power_spectrum(pfft.device_put(delta, mesh), bins=6, d=d)
    kmax = np.sqrt(np.pi ** 2 + (2 * np.pi) ** 2 + np.pi ** 2)     # the corner mode
    edges = np.linspace(0, kmax, 7)
    k, power, counts = _power_ref(delta, edges, d)
    kx, ky, kz = _k(shape, d)                 # no mode sits on an edge (rounding decides)
    kabs = np.sqrt(kx ** 2 + ky ** 2 + kz ** 2)
    assert np.abs(kabs[kabs > 0][:, None] - edges[1:-1]).min() > 1e-6
    np.testing.assert_array_equal(np.asarray(ps.counts), counts)
    assert counts.sum() == delta.size - 1
    np.testing.assert_allclose(np.asarray(ps.k), k, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(ps.power), power, rtol=1e-12)
    # explicit edges, with an empty bin
    edges = [0.5, 1.0, 1.01, 3.0]
    ps = spectral.power_spectrum(pfft.device_put(delta, mesh), bins=edges, d=d)
    k, power, counts = _power_ref(delta, np.asarray(edges), d)
    np.testing.assert_array_equal(np.asarray(ps.counts), counts)
    np.testing.assert_allclose(np.asarray(ps.power), power, rtol=1e-12)
    assert np.isnan(np.asarray(ps.power)[counts == 0]).all()


def test_gaussian_random_field_is_grid_independent_and_has_its_spectrum():
    shape, d = (16, 16, 16), 2.0
    pk = lambda k: 10.0 * k ** -2.0  # noqa: E731
    key = jax.random.key(42)
    slab = _mesh((1, 4))                  # (each threefry compile costs seconds on CPU)
    on_slab = np.asarray(jax.jit(
        lambda k: spectral.gaussian_random_field(k, shape, pk, slab, d))(key))
    mesh = _mesh((2, 4))
    field = spectral.gaussian_random_field(key, shape, pk, mesh, d)
    assert field.sharding.spec == P("x", "y", None) and field.dtype == np.float64
    np.testing.assert_allclose(on_slab, np.asarray(field), atol=1e-12)   # grid-independent
    assert abs(on_slab.mean()) < 1e-12
    other = spectral.gaussian_random_field(jax.random.key(43), shape, pk, mesh, d)
    assert np.abs(np.asarray(other) - on_slab).max() > 0.1
    f32 = spectral.gaussian_random_field(key, shape, pk, mesh, d, dtype=np.float32)
    assert f32.dtype == np.float32
    np.testing.assert_allclose(np.asarray(f32), on_slab, atol=1e-4)     # the same noise
    # the measured spectrum scatters around the input one (many modes per bin)
    ps = spectral.power_spectrum(field, bins=np.linspace(0.3, np.pi / d, 6), d=d)
    ratio = np.asarray(ps.power) / pk(np.asarray(ps.k))
    assert np.all(np.abs(ratio - 1) < 4 / np.sqrt(np.asarray(ps.counts) / 2) + 0.05), ratio


@pytest.mark.parametrize("kind", ["explicit", "auto"])
def test_spectral_inside_jit(kind):
    mesh = _mesh((2, 4), kind)
    rng = np.random.default_rng(8)
    rho_h = rng.standard_normal((8, 8, 8))
    rho = pfft.device_put(rho_h, mesh)
    want = np.asarray(spectral.poisson(rho_h, d=0.5))             # single device, numpy in

    @jax.jit
    def step(r):
        phi = spectral.poisson(r, d=0.5, mesh=mesh)
        return phi, spectral.gradient(phi, 0, 0.5, mesh=mesh), \
            spectral.power_spectrum(r, bins=4, mesh=mesh).power
    phi, g, power = step(rho)
    np.testing.assert_allclose(np.asarray(phi), want, atol=1e-12)
    np.testing.assert_allclose(np.asarray(g), np.asarray(spectral.gradient(want, 0, 0.5)),
                               atol=1e-12)
    np.testing.assert_allclose(np.asarray(power),
                               np.asarray(spectral.power_spectrum(rho_h, bins=4).power),
                               rtol=1e-12)


def test_spectral_gradients():
    from jax.test_util import check_grads
    mesh = _mesh((2, 2), "auto")              # check_grads' vdot needs Auto axes
    rng = np.random.default_rng(9)
    x = pfft.device_put(rng.standard_normal((8, 8, 4)), mesh)
    # (under jvp an Auto-mesh tracer does not show its mesh: pass it)
    for f in (lambda a: spectral.gradient(a, 2, 0.3, mesh=mesh),
              lambda a: spectral.power_spectrum(a, bins=3, mesh=mesh).power):
        check_grads(f, (x,), order=1, modes=("fwd", "rev"), atol=1e-6, rtol=1e-6)
    # the Poisson solve is self-adjoint: its gradient is itself
    w = pfft.device_put(rng.standard_normal((8, 8, 4)), mesh)
    g = jax.grad(lambda a: jnp.vdot(w, spectral.poisson(a, mesh=mesh)))(x)
    np.testing.assert_allclose(np.asarray(g), np.asarray(spectral.poisson(w)), atol=1e-12)


def test_spectral_float32_and_errors():
    x = pfft.device_put(np.random.default_rng(10).standard_normal((8, 8, 8)).astype(np.float32),
                        _mesh((2, 2)))
    phi = spectral.poisson(x)
    assert phi.dtype == np.float32 and phi.sharding == x.sharding
    with pytest.raises(ValueError, match="poisson: green must be one of"):
        spectral.poisson(x, green="exact")
    with pytest.raises(ValueError, match="laplacian: kind must be one of"):
        spectral.laplacian(x, kind="fd4")
    with pytest.raises(ValueError, match="poisson: d must be positive"):
        spectral.poisson(x, d=0)
    with pytest.raises(ValueError, match="gradient: d must be a number or one spacing per axis"):
        spectral.gradient(x, 0, (1.0, 2.0))
    with pytest.raises(ValueError, match="gradient: axis must be in"):
        spectral.gradient(x, 3)
    with pytest.raises(ValueError, match="power_spectrum: expected a 3-D field"):
        spectral.power_spectrum(np.zeros((8, 8)), bins=3)
    with pytest.raises(ValueError, match="power_spectrum: bins must be"):
        spectral.power_spectrum(x, bins=[1.0, 0.5])
    with pytest.raises(ValueError, match="gaussian_random_field: shape must be 3"):
        spectral.gaussian_random_field(jax.random.key(0), (8, 8), jnp.exp)
    with pytest.raises(TypeError, match="expected a float or complex field"):
        spectral.poisson(np.zeros((4, 4, 4), dtype=int))


def test_half_spectrum_path_matches_the_full_one(monkeypatch):
    """spectral.HALF_SPECTRUM=True (rfftn/irfftn, the default) gives the results of the
    complex path (HALF_SPECTRUM=False)."""
    mesh = _mesh((2, 4))
    x = pfft.device_put(np.random.default_rng(11).standard_normal((8, 12, 9)), mesh)

    def results():                    # (the field's shape is the GRF test's: compiled once)
        return [spectral.poisson(x, d=0.5), *spectral.gradient(x, None, 0.5),
                spectral.laplacian(x, 0.5, kind="discrete"),
                *spectral.power_spectrum(x, bins=5),
                spectral.gaussian_random_field(jax.random.key(0), (16, 16, 16), jnp.exp, mesh)]
    monkeypatch.setattr(spectral, "HALF_SPECTRUM", False)
    full = results()
    monkeypatch.setattr(spectral, "HALF_SPECTRUM", True)
    for want, got in zip(full, results()):
        assert got.shape == want.shape
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), atol=1e-12, rtol=1e-12)


def test_from_host_and_to_host_in_one_process():
    """pfft.from_host places a host array block by block on a sharding (the same values,
    that sharding); pfft.to_host brings sharded, replicated and numpy values back.
    Across processes both are run by tests/test_multiprocess.py (the applications)."""
    mesh = pfft.make_mesh((2, 4))
    a = np.arange(8 * 4 * 6, dtype=np.float32).reshape(8, 4, 6)
    sharding = NamedSharding(mesh, P("x", "y", None))
    x = pfft.from_host(a, sharding)
    assert x.sharding == sharding and np.array_equal(np.asarray(x), a)
    for v in (x, jax.device_put(a, NamedSharding(mesh, P())), a, jnp.float32(2.5)):
        got = pfft.to_host(v)
        assert isinstance(got, np.ndarray) and np.array_equal(got, np.asarray(v))
