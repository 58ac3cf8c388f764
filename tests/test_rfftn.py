"""rfftn/irfftn against numpy.fft in float64, on every grid of 1-8 devices, and the
padded-spectrum plan option."""
import jax
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from jax.sharding import PartitionSpec as P

import pfft
from conftest import (ENGINES, GRIDS, NORMS, TOL, engine_plan, numpy_axes,
                      planned_collectives, random_array, rel_err, transform_problems,
                      use_engine)
from transform_cases import REAL as REAL_CASES, TOL as TOL_CASES, check

REAL = {np.float32: np.complex64, np.float64: np.complex128}


@settings(max_examples=60)
@given(transform_problems(list(REAL), more_axes=lambda nd: [(nd - 3, nd - 1)]))
def test_rfftn_and_irfftn_match_numpy(p):
    rng = np.random.default_rng(p["seed"])
    x = rng.standard_normal(p["shape"]).astype(p["dtype"])
    mesh = pfft.make_mesh(p["grid"])
    axes = numpy_axes(p["axes"], p["s"], x.ndim)
    cdtype = REAL[p["dtype"]]
    xs = pfft.device_put(x, mesh, axes=axes)
    given = p["axes"] if p["s"] is None else axes     # s without axes: numpy 2 deprecates it
    k = pfft.rfftn(xs, s=p["s"], axes=given, norm=p["norm"])
    want = np.fft.rfftn(x.astype(np.float64), s=p["s"], axes=axes, norm=p["norm"])
    assert k.dtype == cdtype and k.shape == want.shape
    assert rel_err(k, want) <= TOL[cdtype]
    # back to the real array numpy gives (odd lengths need s)
    s_back = p["s"] or tuple(x.shape[a] for a in axes)
    back = pfft.irfftn(k, s=s_back, axes=axes, norm=p["norm"])
    want_back = np.fft.irfftn(want, s=s_back, axes=axes, norm=p["norm"])
    assert back.dtype == p["dtype"] and back.shape == want_back.shape
    assert rel_err(back, want_back) <= TOL[cdtype]


# 4-7x the largest error measured in the gradients below on either engine (float64:
# 3.1e-16)
ENGINE_TOL = {np.float64: 2e-15}


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("case", REAL_CASES, ids=lambda c: c.id)
def test_every_engine_gives_numpys_real_transforms(case, engine, monkeypatch, devices):
    """Each local FFT engine runs rfftn, irfftn and numpy's 1-D and 2-D real functions
    with numpy's values (:mod:`transform_cases`, the cases tests/test_gpu.py runs on a
    GPU): the inverses of random half spectra, not Hermitian (numpy drops the
    imaginary parts it cannot hold), even and odd lengths, s, axes, every norm."""
    use_engine(engine, monkeypatch, devices)
    mesh = pfft.make_mesh(case.grid)
    err = check(case, lambda x: pfft.device_put(x, mesh))
    assert err <= TOL_CASES[np.dtype(case.dtype)], (case.id, err)


@pytest.mark.parametrize("engine", ENGINES)
def test_every_engine_differentiates_rfftn_and_irfftn(engine):
    """Reverse mode through each engine's real transforms (the transposed chains,
    whose engines conjugate and weight the Hermitian bins), against the transposes
    in numpy: rfftn's is the real part of the forward FFT of the cotangent zero-padded
    to the real length; irfftn's is the inverse FFT of the cotangent, its first
    ``n//2 + 1`` bins each taken twice, except the bin 0 and (n even) the Nyquist."""
    rng = np.random.default_rng(14)
    for grid, shape in (((2, 2), (6, 8, 10)), ((4,), (8, 6, 9))):
        mesh = pfft.make_mesh(grid)
        plan = engine_plan(shape, np.float64, mesh, engine, kind="r2c")
        n, half = shape[-1], shape[-1] // 2 + 1
        x = jax.device_put(rng.standard_normal(shape), plan.in_sharding)
        ct = random_array(rng, shape[:-1] + (half,), np.complex128)
        ct_real = rng.standard_normal(shape)
        with jax.set_mesh(mesh):
            _, vjp = jax.vjp(plan.forward, x)
            (g,) = vjp(jax.device_put(ct, plan.out_sharding))
            _, vjp = jax.vjp(plan.backward, jax.device_put(ct, plan.out_sharding))
            (g_back,) = vjp(jax.device_put(ct_real, plan.in_sharding))
        padded = np.zeros(shape, complex)
        padded[..., :half] = ct
        assert rel_err(g, np.fft.fftn(padded).real) <= ENGINE_TOL[np.float64], grid
        weights = np.where((np.arange(half) == 0) | (2 * np.arange(half) == n), 1.0, 2.0)
        assert rel_err(g_back, weights * np.fft.ifftn(ct_real)[..., :half]) <= \
            ENGINE_TOL[np.float64], grid


@pytest.mark.parametrize("engine", ENGINES)
def test_nyquist_bins_are_alternating_sums(engine):
    """The Nyquist bin of an even length n against the direct sum of x[j] (-1)**j, not
    numpy.fft: every row's, from a plan over the last axis, and the corner bins of a
    3-D plan (alternating sums along each axis). The round trip of a spectrum of
    Nyquist bins z and bins 1 c: irfft keeps Re(z) and counts it once, bin 1 twice,
    (Re(z) (-1)**j + 2 Re(c exp(2 pi i j / n))) / n. The gradients' weights: rfft's
    transpose takes that cotangent to Re(z) (-1)**j + Re(c exp(-2 pi i j / n)) (each
    bin once), irfft's takes bin k of a cotangent t to
    w_k / n sum_j t[j] exp(2 pi i jk / n), w_k 1 at bin 0 and the Nyquist, else 2."""
    mesh = pfft.make_mesh((2, 2))
    shape, n, half = (4, 6, 10), 10, 6
    tol = 3e-15                   # 4x the largest error measured (the corners': 7.5e-16)
    rng = np.random.default_rng(15)
    x = rng.standard_normal(shape)
    alt = (-1.0) ** np.arange(n)
    rows = engine_plan(shape, np.float64, mesh, engine, kind="r2c", axes=(2,))
    k = np.asarray(rows.forward(jax.device_put(x, rows.in_sharding)))
    assert k.shape == (4, 6, half)
    assert rel_err(k[..., half - 1], np.einsum("abj,j->ab", x, alt)) <= tol
    cube = engine_plan(shape, np.float64, mesh, engine, kind="r2c")
    k = np.asarray(cube.forward(jax.device_put(x, cube.in_sharding)))
    s0 = np.stack([np.ones(4), (-1.0) ** np.arange(4)])      # bins 0 and 2 of axis 0
    s1 = np.stack([np.ones(6), (-1.0) ** np.arange(6)])      # bins 0 and 3 of axis 1
    corners = k[np.ix_([0, 2], [0, 3], [half - 1])][..., 0]
    assert rel_err(corners, np.einsum("pa,qb,c,abc->pq", s0, s1, alt, x)) <= tol
    # a spectrum of Nyquist bins and bins 1: there and back
    z, c = random_array(rng, (2, 4, 6), np.complex128)
    spectrum = np.zeros((4, 6, half), complex)
    spectrum[..., -1], spectrum[..., 1] = z, c
    wave = np.exp(2j * np.pi * np.arange(n) / n)               # bin 1: exp(2 pi i j / n)
    back = rows.backward(jax.device_put(spectrum, rows.out_sharding))
    assert rel_err(back, (z.real[..., None] * alt + 2 * (c[..., None] * wave).real) / n) <= tol
    kept = spectrum.copy()
    kept[..., -1] = z.real                                     # irfft dropped Im(z)
    assert rel_err(rows.forward(back), kept) <= tol
    # the gradients' weights
    t = rng.standard_normal(shape)
    with jax.set_mesh(mesh):
        _, vjp = jax.vjp(rows.forward, jax.device_put(x, rows.in_sharding))
        (g_forward,) = vjp(jax.device_put(spectrum, rows.out_sharding))
        _, vjp = jax.vjp(rows.backward, jax.device_put(spectrum, rows.out_sharding))
        (g_backward,) = vjp(jax.device_put(t, rows.in_sharding))
    want = z.real[..., None] * alt + (c[..., None] * wave.conj()).real
    assert rel_err(g_forward, want) <= tol
    bins = np.arange(half)
    weights = np.where((bins == 0) | (bins == half - 1), 1.0, 2.0)
    kernel = weights[:, None] * np.exp(2j * np.pi * np.outer(bins, np.arange(n)) / n) / n
    assert weights[-1] == 1 and np.allclose(kernel[-1], alt / n)
    assert rel_err(g_backward, np.einsum("kj,abj->abk", kernel, t)) <= tol


@settings(max_examples=25)
@given(shape=st.tuples(*[st.integers(1, 20)] * 3), grid=st.sampled_from(GRIDS),
       s=st.one_of(st.none(), st.tuples(*[st.integers(1, 24)] * 3)),
       norm=st.sampled_from(NORMS), seed=st.integers(0, 2**16))
def test_irfftn_of_any_spectrum_matches_numpy(shape, grid, s, norm, seed):
    """irfftn of an arbitrary (non-Hermitian) half spectrum, cropped or padded by s."""
    rng = np.random.default_rng(seed)
    k = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
    if s is None and shape[-1] == 1:
        s = shape[:2] + (1,)              # numpy cannot default to zero points
    want = np.fft.irfftn(k, s=s, axes=(0, 1, 2), norm=norm)
    got = pfft.irfftn(pfft.device_put(k, pfft.make_mesh(grid)), s=s, axes=(0, 1, 2), norm=norm)
    assert got.shape == want.shape
    assert rel_err(got, want) <= 1e-12


@pytest.mark.parametrize("grid", [(2, 2), (1, 4), (4,), (2, 4)])
@pytest.mark.parametrize("n", [16, 15])
def test_rfftn_round_trip_comes_back_in_the_input_sharding(grid, n):
    mesh = pfft.make_mesh(grid)
    x = np.random.default_rng(0).standard_normal((16, 8, n))
    xs = pfft.device_put(x, mesh)
    k = pfft.rfftn(xs)
    assert k.shape == (16, 8, n // 2 + 1)
    # numpy's layout is even: the halved axis is whole unless the grid divides n//2+1
    split = k.sharding.spec[2] if len(k.sharding.spec) > 2 else None
    parts = 1 if split is None else mesh.shape[split]
    assert (n // 2 + 1) % parts == 0
    assert all(sh.data.shape[2] == (n // 2 + 1) // parts for sh in k.addressable_shards)
    y = pfft.irfftn(k, s=x.shape, axes=(0, 1, 2))
    assert y.sharding.is_equivalent_to(xs.sharding, 3)
    assert rel_err(y, x) <= 1e-12


@pytest.mark.parametrize("axis_type", ["Explicit", "Auto"])
def test_round_trips_come_back_where_out_sharding_says_and_loop_as_a_carry(axis_type):
    """Several input pencils end in the same output pencil (``P('a', 'b', None)``, the
    default, and ``P(None, 'b', 'a')`` both end in ``P('b', None, 'a')`` here), so a
    spectrum cannot say where its input was: the inverse runs back the plan from the
    layout ``out_sharding`` asks for (else the default one), and a round trip with
    ``out_sharding=`` the input's keeps the input's sharding, as a ``fori_loop``
    carry must."""
    kind = getattr(jax.sharding.AxisType, axis_type)
    mesh = jax.make_mesh((2, 4), ("a", "b"), axis_types=(kind, kind))
    rng = np.random.default_rng(3)
    x = rng.standard_normal((8, 12, 10))
    for spec in (P(None, "b", "a"), P("a", "b", None), P("b", None, "a")):
        xs = jax.device_put(x, jax.sharding.NamedSharding(mesh, spec))
        y = pfft.irfftn(pfft.rfftn(xs), s=x.shape, axes=(0, 1, 2), out_sharding=xs.sharding)
        assert y.sharding.is_equivalent_to(xs.sharding, 3), (spec, y.sharding)
        assert rel_err(y, x) <= 1e-12
        z = pfft.ifftn(pfft.fftn(xs), out_sharding=spec)
        assert z.sharding.is_equivalent_to(xs.sharding, 3) and rel_err(z, x) <= 1e-12
    default = pfft.device_put(x, mesh)                 # without out_sharding: the default
    y = pfft.irfftn(pfft.rfftn(default), s=x.shape, axes=(0, 1, 2))
    assert y.sharding.is_equivalent_to(default.sharding, 3) and rel_err(y, x) <= 1e-12
    x4 = rng.standard_normal((4, 8, 6, 12))
    xs4 = jax.device_put(x4, jax.sharding.NamedSharding(mesh, P(None, "a", None, "b")))
    z4 = pfft.ifftn(pfft.fftn(xs4, axes=(1, 3)), axes=(1, 3), out_sharding=xs4.sharding)
    assert z4.sharding.is_equivalent_to(xs4.sharding, 4) and rel_err(z4, x4) <= 1e-12
    # a time step as users write it: spectral filter, the field as the loop's carry
    xs = jax.device_put(x, jax.sharding.NamedSharding(mesh, P(None, "b", "a")))
    step = lambda i, u: pfft.irfftn(pfft.rfftn(u, mesh=mesh) * 0.5, s=u.shape, axes=(0, 1, 2), mesh=mesh,
                                    out_sharding=P(None, "b", "a"))
    out = jax.jit(lambda u: jax.lax.fori_loop(0, 3, step, u))(xs)
    assert rel_err(out, x / 8) <= 1e-12
    if axis_type == "Explicit":
        assert out.sharding.is_equivalent_to(xs.sharding, 3)


@pytest.mark.parametrize("mesh_shape, names, shape, spec, axes", [
    ((2, 4), ("gx", "gy"), (8, 12, 6), P("gx", "gy"), None),
    ((4, 2), ("a", "b"), (2, 8, 6, 4, 3), P(None, "a", "b"), (1, 2, 3)),
    ((2, 2, 2), ("c", "z", "y"), (4, 6, 8, 4), P("c", "z", "y"), (-4, -2, -3)),
])
def test_round_trips_through_a_padded_s_come_back_where_out_sharding_says(mesh_shape, names,
                                                                         shape, spec, axes):
    """``ifftn(fftn(u, s=big), s=u.shape, out_sharding=...)`` (and the real pair): the
    plans see only the zero-padded array, so the inverse cropping back places its
    result where ``out_sharding`` says: in ``u``'s sharding, as a ``fori_loop`` carry
    on an Explicit mesh must keep its type."""
    mesh = jax.make_mesh(mesh_shape, names,
                         axis_types=(jax.sharding.AxisType.Explicit,) * len(names))
    u = np.random.default_rng(5).standard_normal(shape)
    ax = tuple(range(u.ndim)) if axes is None else axes
    big = tuple(u.shape[a] + 2 for a in ax)
    small = tuple(u.shape[a] for a in ax)
    xs = jax.device_put(u, jax.sharding.NamedSharding(mesh, spec))
    for fwd, inv, ref in ((pfft.fftn, pfft.ifftn, lambda v: np.fft.ifftn(
                              np.fft.fftn(v, s=big, axes=ax), s=small, axes=ax)),
                          (pfft.rfftn, pfft.irfftn, lambda v: np.fft.irfftn(
                              np.fft.rfftn(v, s=big, axes=ax), s=small, axes=ax))):
        y = inv(fwd(xs, s=big, axes=ax), s=small, axes=ax, out_sharding=spec)
        assert y.sharding.is_equivalent_to(xs.sharding, u.ndim), (fwd, y.sharding)
        assert rel_err(y, ref(u)) <= 1e-12
        step = lambda i, v, fwd=fwd, inv=inv: inv(fwd(v, s=big, axes=ax), s=small,
                                                  axes=ax, mesh=mesh, out_sharding=spec).real
        out = jax.jit(lambda v: jax.lax.fori_loop(0, 2, step, v))(xs)
        assert rel_err(out, ref(ref(u).real).real) <= 1e-12


def test_irfftn_takes_a_padded_spectrum_back_with_s_and_is_numpy_without():
    """A padded spectrum (any axis may be padded: the grid does not divide 9 by 8
    here) comes back at the real shape ``s`` gives; without ``s`` an array whose
    layout JAX shows gets numpy's lengths, whatever plans ran before: its shape and
    sharding cannot say whether it is padded (inside ``jit`` on an Auto mesh the
    record of the last forward call can, ``tests/test_inverse.py``)."""
    mesh = pfft.make_mesh((2, 4))
    rng = np.random.default_rng(4)
    r = rng.standard_normal((9, 8, 7))
    padded = pfft.plan(r.shape, np.float64, mesh, kind="r2c", spectrum="padded")
    k = padded.forward(r)
    assert k.shape != np.fft.rfftn(r).shape              # (16, 8, 4): axis 0 padded too
    assert rel_err(pfft.irfftn(k, s=r.shape, axes=(0, 1, 2)), r) <= 1e-12
    assert rel_err(padded.backward(k), r) <= 1e-12
    assert pfft.irfftn(k).shape == (16, 8, 6)            # numpy's lengths
    # a real (16, 16, 22) field's numpy spectrum has the shape and sharding of a
    # padded (16, 16, 16) plan's spectrum; without s numpy makes 22 points
    fast = pfft.plan((16, 16, 16), np.float64, mesh, kind="r2c", spectrum="padded")
    fast.forward(rng.standard_normal((16, 16, 16)))
    u = rng.standard_normal((16, 16, 22))
    ku = pfft.rfftn(pfft.device_put(u, mesh), out_sharding=fast.out_sharding)
    assert ku.shape == fast.out_shape and ku.sharding.is_equivalent_to(fast.out_sharding, 3)
    fast.forward(rng.standard_normal((16, 16, 16)))      # the last forward call: no matter
    back = pfft.irfftn(ku)
    assert back.shape == (16, 16, 22) and rel_err(back, u) <= 1e-12


def test_real_pencil_plan_runs_two_exchanges_and_a_slab_one():
    x = np.random.default_rng(1).standard_normal((16, 16, 16))
    pencil = pfft.plan(x.shape, np.float64, pfft.make_mesh((2, 2)), kind="r2c")
    slab = pfft.plan(x.shape, np.float64, pfft.make_mesh((4,)), kind="r2c")
    assert pencil.chain.exchanges == 2 and slab.chain.exchanges == 1
    for plan in (pencil, slab):
        hlo = jax.jit(plan.forward).lower(pfft.device_put(x, plan.mesh)).compile().as_text()
        ops = plan.collectives()
        assert hlo.count("all-to-all(") == ops["all-to-all"]
        assert hlo.count("collective-permute(") == ops["collective-permute"]
        assert ops == planned_collectives(plan)       # all-to-alls, or shifts of pieces
        assert "all-gather" not in hlo
        assert rel_err(plan.forward(x), np.fft.rfftn(x)) <= 1e-12


@pytest.mark.parametrize("grid", [(2, 2), (2, 4), (1, 4)])
def test_padded_spectrum_saves_an_all_to_all_and_irfftn_takes_it_back(grid):
    mesh = pfft.make_mesh(grid)
    x = np.random.default_rng(2).standard_normal((16, 8, 12)).astype(np.float32)
    plan = pfft.plan(x.shape, x.dtype, mesh, kind="r2c", spectrum="padded")
    numpy_plan = pfft.plan(x.shape, x.dtype, mesh, kind="r2c")
    assert plan.chain.exchanges == len(mesh.axis_names) - (1 if grid == (1, 4) else 0)
    assert plan.chain.exchanges <= numpy_plan.chain.exchanges
    k = plan.forward(x)
    assert k.shape == plan.out_shape and k.sharding.is_equivalent_to(plan.out_sharding, 3)
    want = np.fft.rfftn(x.astype(np.float64))
    got = np.asarray(k)
    assert rel_err(got[..., :7], want) <= 1e-6
    assert np.all(got[..., 7:] == 0)                    # the padding holds zeros
    assert rel_err(plan.backward(k), x) <= 1e-6
    assert rel_err(pfft.irfftn(k, s=x.shape, axes=(0, 1, 2)), x) <= 1e-6    # numpy would crop it too
    # wavenumbers that match the padded pencil
    kx, ky, kz = plan.wavenumbers()
    assert kz.shape == (1, 1, plan.out_shape[2])
    assert np.allclose(np.asarray(kz)[0, 0, :7], np.fft.rfftfreq(12))
    assert np.all(np.asarray(kz)[0, 0, 7:] == 0)
    assert np.allclose(np.asarray(kx)[:, 0, 0], np.fft.fftfreq(16))


def test_wavenumbers_and_k2_follow_numpy_and_the_output_sharding():
    mesh = pfft.make_mesh((2, 2))
    plan = pfft.plan((8, 12, 10), np.float64, mesh, kind="r2c")
    kx, ky, kz = plan.wavenumbers(d=0.5, angular=True)
    assert np.allclose(np.asarray(ky)[0, :, 0], 2 * np.pi * np.fft.fftfreq(12, 0.5))
    assert np.allclose(np.asarray(kz)[0, 0, :], 2 * np.pi * np.fft.rfftfreq(10, 0.5))
    k2 = plan.k2()
    fx, fy, fz = np.meshgrid(np.fft.fftfreq(8), np.fft.fftfreq(12), np.fft.rfftfreq(10),
                             indexing="ij")
    assert np.allclose(np.asarray(k2), fx**2 + fy**2 + fz**2)
    assert k2.sharding.is_equivalent_to(plan.out_sharding, 3)
    assert np.allclose(np.asarray(plan.kabs()), np.sqrt(fx**2 + fy**2 + fz**2))


def test_rfftn_rejects_complex_input_and_irfftn_needs_points():
    with pytest.raises(TypeError, match="real"):
        pfft.rfftn(np.ones((4, 4, 4), np.complex64))
    with pytest.raises(ValueError, match="points"):
        pfft.irfftn(np.ones((4, 4, 1), np.complex64))


def test_batch_axes_and_float32_promotion():
    mesh = pfft.make_mesh((2, 4))
    x = np.random.default_rng(3).standard_normal((3, 8, 8, 9)).astype(np.float32)
    k = pfft.rfftn(pfft.device_put(x, mesh, axes=(1, 2, 3)), axes=(1, 2, 3))
    assert k.dtype == np.complex64 and k.shape == (3, 8, 8, 5)
    assert rel_err(k, np.fft.rfftn(x.astype(np.float64), axes=(1, 2, 3))) <= 1e-6
    y = pfft.irfftn(k, s=(8, 8, 9), axes=(1, 2, 3))
    assert y.dtype == np.float32 and rel_err(y, x) <= 1e-6
    k16 = pfft.rfftn(np.arange(64, dtype=np.int32).reshape(4, 4, 4))
    assert k16.dtype == np.complex128


def test_plan_printout_names_the_real_stages():
    plan = pfft.plan((16, 16, 16), np.float32, pfft.make_mesh((2, 2)), kind="r2c")
    text = repr(plan)
    assert "rfftn" in text and "rfft axis 2 (local), axis 2: 16 -> 9 points" in text
    assert text.count("all_to_all") == 2
    assert plan.out_sharding.spec == P(None, ("x", "y"), None)
