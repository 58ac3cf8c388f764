"""Real-to-real transforms (DCT/DST types 1-4): the local transforms against scipy.fft for
every length 1..40, distributed ``pfft.dctn``/``dstn`` and their inverses against scipy
on slab and pencil grids, mixed plans (Fourier and r2r axes), the compiled collectives,
and a Poisson solve with Dirichlet walls against a dense numpy solve."""
import itertools
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.fft as sf
from hypothesis import given, settings, strategies as st
from jax.sharding import PartitionSpec as P

import pfft
from pfft.engines import r2r
from pfft.hlo import count_collectives
from pfft.mesh_plan import ReplicationWarning
from conftest import ENGINES, GRIDS, planned_collectives, rel_err, use_engine
from transform_cases import R2R as R2R_CASES, TOL as TOL_CASES, check

KINDS = r2r.R2R_KINDS
NORMS = ("backward", "ortho", "forward")
ORTHS = (None, True, False)
SCIPY = {("dct", False): sf.dct, ("dct", True): sf.idct, ("dst", False): sf.dst,
         ("dst", True): sf.idst}
SCIPY_N = {("dct", False): sf.dctn, ("dct", True): sf.idctn, ("dst", False): sf.dstn,
           ("dst", True): sf.idstn}
PFFT_N = {("dct", False): pfft.dctn, ("dct", True): pfft.idctn, ("dst", False): pfft.dstn,
          ("dst", True): pfft.idstn}
TOL = {np.float32: 1e-6, np.float64: 1e-12}


def _lengths(kind):
    return range(2 if kind == "dct1" else 1, 41)


# -- the local transforms ---------------------------------------------------------------

@pytest.mark.parametrize("kind", KINDS)
def test_every_norm_orthogonalize_and_inverse_matches_scipy_for_lengths_1_to_40(kind):
    """The maps scipy's ``norm``/``orthogonalize``/inverse make (numpy backend, float64,
    the same code path as the jnp one)."""
    rng = np.random.default_rng(1)
    family, t = kind[:3], int(kind[3])
    worst = 0.0
    for n in _lengths(kind):
        x = rng.standard_normal((2, n))
        for norm, orth, inverse in itertools.product(NORMS, ORTHS, (False, True)):
            op = r2r.scipy_op(kind, n, norm, orth, inverse=inverse)
            want = SCIPY[family, inverse](x, t, norm=norm, orthogonalize=orth)
            worst = max(worst, rel_err(r2r.apply_last(x, op, xp=np), want))
    assert worst < 1e-14, worst


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("kind", KINDS)
def test_jnp_transforms_match_scipy(kind, dtype):
    """jax.numpy on lengths that take each branch (1, 2, odd, even, prime, a power of
    two); every length 1..40 runs the same code through numpy above."""
    rng = np.random.default_rng(2)
    family, t = kind[:3], int(kind[3])
    worst = 0.0
    for n in (n for n in (1, 2, 5, 8, 13) if n in _lengths(kind)):
        x = rng.standard_normal((3, n)).astype(dtype)
        op = r2r.scipy_op(kind, n, "ortho")
        got = jax.jit(lambda a: r2r.apply_last(a, op))(x)
        assert got.dtype == dtype
        worst = max(worst, rel_err(got, SCIPY[family, False](x.astype(np.float64), t,
                                                             norm="ortho")))
    assert worst < TOL[dtype] / 2, worst


@pytest.mark.parametrize("kind", KINDS)
def test_transpose_and_inverse_of_each_map_are_dense_transposes_and_inverses(kind):
    for n, norm, orth in itertools.product((2, 3, 8, 9), NORMS, ORTHS):
        op = r2r.scipy_op(kind, n, norm, orth)
        m = op.matrix()
        assert np.abs(op.transposed().matrix() - m.T).max() < 1e-13 * np.abs(m).max()
        assert np.abs(op.inverse().matrix() @ m - np.eye(n)).max() < 1e-13
        assert op.transposed().transposed() == op


def test_dct1_of_one_point_raises_as_scipy_does():
    with pytest.raises(RuntimeError):
        sf.dct(np.ones(1), 1)
    with pytest.raises(RuntimeError):           # scipy's exception type
        pfft.dctn(np.ones((4, 1)), 1)
    with pytest.raises(ValueError, match="at least 2 points"):
        pfft.plan((4, 1), np.float64, kinds=("dct2", "dct1"))


# -- distributed dctn/dstn against scipy ------------------------------------------------

AXES = [None, (0, 2), (1,), (2, 0, 1), (-1,)]


@pytest.mark.parametrize("grid", [(1,), (4,), (2, 2), (2, 4)])
@pytest.mark.parametrize("family", ["dct", "dst"])
@pytest.mark.parametrize("t", [1, 2, 3, 4])
def test_distributed_transforms_and_round_trips_match_scipy(grid, family, t):
    """Every type on 1, 4 (slab), 2x2 and 2x4 (pencil) devices; the norm, orthogonalize
    and axes subsets cycle through all their values over the cases."""
    case = (t - 1) + 4 * (family == "dst") + 8 * [(1,), (4,), (2, 2), (2, 4)].index(grid)
    norm, orth = list(itertools.product(NORMS, ORTHS))[case % 9]
    axes = AXES[case % len(AXES)]
    mesh = pfft.make_mesh(grid)
    rng = np.random.default_rng(case)
    x = rng.standard_normal((8, 12, 6))
    xs = pfft.device_put(x, mesh, axes=axes)
    y = PFFT_N[family, False](xs, t, axes=axes, norm=norm, orthogonalize=orth)
    want = SCIPY_N[family, False](x, t, axes=axes, norm=norm, orthogonalize=orth)
    assert y.dtype == np.float64
    assert rel_err(y, want) < 1e-13
    back = PFFT_N[family, True](y, t, axes=axes, norm=norm, orthogonalize=orth)
    assert back.sharding == xs.sharding           # the forward plan run backwards
    assert rel_err(back, x) < 1e-13
    # the inverse from the input's own layout (not the forward's output layout)
    z = PFFT_N[family, True](xs, t, axes=axes, norm=norm, orthogonalize=orth)
    assert rel_err(z, SCIPY_N[family, True](x, t, axes=axes, norm=norm,
                                            orthogonalize=orth)) < 1e-13


@settings(max_examples=14)
@given(shape=st.lists(st.integers(1, 40), min_size=3, max_size=3),
       grid=st.sampled_from(GRIDS), kind=st.sampled_from(KINDS),
       dtype=st.sampled_from([np.float32, np.float64]), norm=st.sampled_from(NORMS),
       axes=st.sampled_from([None, (0, 1), (2,), (1, 2)]), seed=st.integers(0, 2**16))
def test_any_shape_on_any_grid_matches_scipy(shape, grid, kind, dtype, norm, axes, seed):
    """Odd, prime and uneven sizes (the grid need not divide them), float32 and
    float64, inside ``jit``."""
    family, t = kind[:3], int(kind[3])
    along = range(3) if axes is None else axes
    if t == 1 and family == "dct":
        shape = [max(n, 2) if a in along else n for a, n in enumerate(shape)]
    x = np.random.default_rng(seed).standard_normal(shape).astype(dtype)
    mesh = pfft.make_mesh(grid, jax.devices()[:int(np.prod(grid))])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ReplicationWarning)
        xs = pfft.device_put(x, mesh, axes=axes)
        fn = PFFT_N[family, False]
        y = jax.jit(lambda a: fn(a, t, axes=axes, norm=norm, mesh=mesh))(xs)
    assert y.dtype == dtype
    want = SCIPY_N[family, False](x.astype(np.float64), t, axes=axes, norm=norm)
    assert rel_err(y, want) < TOL[dtype]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("case", R2R_CASES, ids=lambda c: c.id)
def test_every_engine_gives_scipys_dctn_and_dstn(case, engine, monkeypatch, devices):
    """Each local FFT engine runs dctn, dstn and their inverses with scipy's values
    (:mod:`transform_cases`, the cases tests/test_gpu.py runs on a GPU): every type
    and norm, axes subsets, s, batch axes, float32 and float64."""
    use_engine(engine, monkeypatch, devices)
    mesh = pfft.make_mesh(case.grid)
    err = check(case, lambda x: pfft.device_put(x, mesh))
    assert err <= TOL_CASES[np.dtype(case.dtype)], (case.id, err)


def test_s_crops_and_pads_and_complex_and_integer_inputs_match_scipy():
    mesh = pfft.make_mesh((2, 2))
    rng = np.random.default_rng(3)
    x = rng.standard_normal((8, 6, 4))
    xs = pfft.device_put(x, mesh)
    assert rel_err(pfft.dctn(xs, 2, s=(5, -1), norm="ortho"),
                   sf.dctn(x, 2, s=(5, -1), norm="ortho")) < 1e-13
    assert rel_err(pfft.idstn(xs, 3, s=(10, 3), axes=(2, 0)),
                   sf.idstn(x, 3, s=(10, 3), axes=(2, 0))) < 1e-13
    z = x + 1j * rng.standard_normal(x.shape)
    y = pfft.dstn(pfft.device_put(z, mesh), 4)
    assert y.dtype == np.complex128
    assert rel_err(y, sf.dstn(z, 4)) < 1e-13
    k = np.arange(24).reshape(4, 6)
    assert pfft.dctn(k).dtype == np.float64
    assert rel_err(pfft.dctn(k), sf.dctn(k)) < 1e-13
    # scipy's single int for s and axes
    for family in ("dct", "dst"):
        for inverse in (False, True):
            fn, ref = PFFT_N[family, inverse], SCIPY_N[family, inverse]
            assert rel_err(fn(xs, axes=1), ref(x, axes=1)) < 1e-13
            assert rel_err(fn(xs, 3, s=5, axes=np.int64(-1)), ref(x, 3, s=5, axes=-1)) < 1e-13


def test_inverse_comes_back_in_the_input_sharding_out_sharding_names():
    """idctn(dctn(u), out_sharding=u's) in u's sharding, also where another input
    pencil ends in the same output pencil (the inverse runs back the plan from the
    layout out_sharding asks for); u in the default layout needs no out_sharding."""
    mesh = jax.make_mesh((2, 4), ("a", "b"), axis_types=(jax.sharding.AxisType.Explicit,) * 2)
    x = np.random.default_rng(5).standard_normal((8, 12, 10))
    for spec in (P(None, "b", "a"), P("a", "b", None)):
        xs = jax.device_put(x, jax.sharding.NamedSharding(mesh, spec))
        y = pfft.idstn(pfft.dstn(xs, 2), 2, out_sharding=spec)
        assert y.sharding.is_equivalent_to(xs.sharding, 3) and rel_err(y, x) < 1e-13
    default = pfft.device_put(x, mesh)
    y = pfft.idctn(pfft.dctn(default))
    assert y.sharding.is_equivalent_to(default.sharding, 3) and rel_err(y, x) < 1e-13
    # through a zero-padded s and back: the plans see only the padded array
    big = (10, 14, 12)
    for fwd, inv, sfwd, sinv in ((pfft.dctn, pfft.idctn, sf.dctn, sf.idctn),
                                 (pfft.dstn, pfft.idstn, sf.dstn, sf.idstn)):
        y = inv(fwd(xs, s=big), s=x.shape, out_sharding=xs.sharding)
        assert y.sharding.is_equivalent_to(xs.sharding, 3), (fwd, y.sharding)
        assert rel_err(y, sinv(sfwd(x, s=big), s=x.shape)) < 1e-13


@pytest.mark.parametrize("bad, error", [
    (dict(type=5), ValueError), (dict(type=2.0), TypeError), (dict(norm="none"), ValueError),
    (dict(axes=(3,)), ValueError), (dict(s=(0, 4)), ValueError), (dict(workers=0), ValueError),
    (dict(orthogonalize="yes"), TypeError), (dict(overwrite_x=None), TypeError)])
def test_bad_arguments_raise(bad, error):
    with pytest.raises(error):
        pfft.dctn(np.ones((4, 4)), **bad)


def test_scipy_extras_are_accepted():
    x = np.random.default_rng(4).standard_normal((6, 5))
    y = pfft.dctn(x, 2, None, None, "ortho", True, 2, orthogonalize=False)
    assert rel_err(y, sf.dctn(x, 2, norm="ortho", orthogonalize=False)) < 1e-13


# -- plans with kinds ---------------------------------------------------------------------

def _reference(x, kinds, norm):
    """scipy/numpy along each axis: r2r first, then rfft, then the complex FFTs."""
    y = x
    for a, k in enumerate(kinds):
        if k[:3] in ("dct", "dst"):
            y = SCIPY[k[:3], False](y, int(k[3]), axis=a, norm=norm)
    if "rfft" in kinds:
        y = np.fft.rfft(y, axis=kinds.index("rfft"), norm=norm)
    for a, k in enumerate(kinds):
        if k == "fft":
            y = np.fft.fft(y, axis=a, norm=norm)
    return y


@pytest.mark.parametrize("engine", ["xla", "native"])
@pytest.mark.parametrize("grid", [(4,), (2, 2), (2, 4)])
@pytest.mark.parametrize("kinds", [("fft", "fft", "dct2"), ("rfft", "fft", "dst1"),
                                   ("dct1", "rfft", "dct3"), ("dst2", "dct4", "fft")])
def test_mixed_plans_match_numpy_and_scipy(kinds, grid, engine):
    mesh = pfft.make_mesh(grid)
    shape = (8, 12, 6)
    x = np.random.default_rng(5).standard_normal(shape)
    norm = "ortho" if "dst1" in kinds else "backward"
    plan = pfft.plan(shape, np.float64, mesh, kinds=kinds, norm=norm, engine=engine)
    y = plan.forward(x)
    assert y.dtype == np.complex128
    assert rel_err(y, _reference(x, kinds, norm)) < 1e-13
    assert rel_err(plan.backward(y), x) < 1e-13
    assert plan.backward(y).dtype == (np.float64 if "rfft" in kinds else np.complex128)


def test_plan_kinds_print_cache_and_errors():
    mesh = pfft.make_mesh((2, 2))
    plan = pfft.plan((8, 8, 6), np.float64, mesh, kinds=("fft", "rfft", "dct2"))
    assert plan.kind == "r2c" and plan.kinds == ("fft", "rfft", "dct2")
    text = str(plan)
    assert "kinds=('fft', 'rfft', 'dct2')" in text and "dct2 axis 2 (local)" in text
    assert pfft.plan((8, 8, 6), "float64", mesh, kinds=["fft", "rfft", "dct2"]) is plan
    assert pfft.plan((8, 8, 6), np.float64, mesh, kinds=("fft", "rfft", "dst2")) is not plan
    r = pfft.plan((8, 8, 6), np.float64, mesh, kinds=("dct2",) * 3, norm="ortho")
    assert r.in_dtype == r.out_dtype == np.float64
    assert pfft.plan((8, 8, 6), np.float64, mesh, kinds=("dct2",) * 3, norm="ortho",
                     orthogonalize=False) is not r
    # every axis "fft": the plain complex plan
    assert pfft.plan((8, 8, 6), np.complex128, mesh, kinds=("fft",) * 3) is \
        pfft.plan((8, 8, 6), np.complex128, mesh)
    for bad, error in [(dict(kinds=("dct2",)), ValueError),
                       (dict(kinds=("dct5", "fft", "fft")), ValueError),
                       (dict(kinds=("rfft", "rfft", "fft")), ValueError),
                       (dict(kinds="dct2"), TypeError),
                       (dict(kinds=("fft", "fft", "dct2"), kind="r2c"), ValueError),
                       (dict(kinds=("fft", "fft", "dct2"), padding=1.5), ValueError),
                       (dict(kinds=("fft", "fft", "dct2"), tune="always"), ValueError),
                       (dict(kinds=("dct2",) * 3, orthogonalize=1), TypeError)]:
        with pytest.raises(error):
            pfft.plan((8, 8, 6), np.float64, mesh, **bad)
    with pytest.raises(TypeError):          # a real all-r2r plan takes real arrays
        r.forward(np.ones((8, 8, 6), np.complex128))


def test_wavenumbers_per_axis_kind():
    n = 6
    plan = pfft.plan((8, 10, n), np.float64, pfft.make_mesh((2, 2)),
                     kinds=("fft", "rfft", "dst1"))
    kx, ky, kz = plan.wavenumbers(d=0.5, angular=True)
    assert np.allclose(np.ravel(kx), 2 * np.pi * np.fft.fftfreq(8, 0.5))
    assert np.allclose(np.ravel(ky), 2 * np.pi * np.fft.rfftfreq(10, 0.5))
    assert np.allclose(np.ravel(kz), np.pi * np.arange(1, n + 1) / ((n + 1) * 0.5))
    plan = pfft.plan((n,), np.float64, kinds=("dct2",))
    assert np.allclose(np.ravel(plan.wavenumbers(d=2.0)[0]), np.arange(n) / (2 * n * 2.0))
    for kind in KINDS:                    # mode m is the kernel's: scipy's matrix rows
        m = np.asarray(pfft.r2rfreq(kind, 5, 1.0))
        assert m.shape == (5,) and np.all(np.diff(m) > 0)


# -- compiled collectives -------------------------------------------------------------------

@pytest.mark.parametrize("grid", [(4,), (2, 2), (2, 4)])
@pytest.mark.parametrize("kinds", [("dct2",) * 3, ("fft", "rfft", "dst1")])
def test_compiled_r2r_plans_run_only_their_collectives(grid, kinds):
    mesh = pfft.make_mesh(grid)
    plan = pfft.plan((16, 8, 12), np.float64, mesh, kinds=kinds)
    for reverse in (False, True):
        chain = plan.chain.reversed() if reverse else plan.chain
        arg = jax.ShapeDtypeStruct(chain.in_layout.padded_shape,
                                   plan.out_dtype if reverse else plan.in_dtype,
                                   sharding=chain.in_layout.sharding(mesh))
        fn = plan.backward if reverse else plan.forward
        ops = count_collectives(jax.jit(fn).lower(arg).compile().as_text())
        assert ops == planned_collectives(plan, reverse)
        assert ops["all-gather"] == 0 and ops["all-reduce"] == 0
        assert sum(ops.values()) >= len([s for s in grid if s > 1])


# -- a Poisson problem with walls ------------------------------------------------------------

def _second_difference(n, periodic: bool, d: float) -> np.ndarray:
    a = (np.diag(-2.0 * np.ones(n)) + np.diag(np.ones(n - 1), 1) + np.diag(np.ones(n - 1), -1))
    if periodic:
        a[0, -1] = a[-1, 0] = 1.0
    return a / d**2


@pytest.mark.parametrize("grid", [(2, 2), (4,)])
def test_poisson_with_dirichlet_walls_matches_a_dense_solve(grid):
    """``laplacian(u) = f`` with the 7-point operator on an ``nx x ny x nz`` grid,
    periodic in x and y and homogeneous Dirichlet in z (walls at ``z = 0`` and
    ``z = (nz + 1) d``, not stored). The plan (``rfft`` on y, ``fft`` on x, DST-I on
    z) diagonalises the operator: its eigenvalue for wavenumbers ``k`` is
    ``sum(2 cos(k d) - 2) / d^2``, from ``plan.wavenumbers(d, angular=True)``."""
    nx, ny, nz, d = 8, 6, 7, 0.3
    mesh = pfft.make_mesh(grid)
    f = np.random.default_rng(6).standard_normal((nx, ny, nz))
    plan = pfft.plan(f.shape, np.float64, mesh, kinds=("fft", "rfft", "dst1"))
    lam = sum((2 * jnp.cos(k * d) - 2) / d**2 for k in plan.wavenumbers(d, angular=True))
    u = plan.backward(plan.forward(f) / lam)
    lap = (np.kron(np.kron(_second_difference(nx, True, d), np.eye(ny)), np.eye(nz))
           + np.kron(np.kron(np.eye(nx), _second_difference(ny, True, d)), np.eye(nz))
           + np.kron(np.kron(np.eye(nx), np.eye(ny)), _second_difference(nz, False, d)))
    want = np.linalg.solve(lap, f.ravel()).reshape(f.shape)
    assert rel_err(u, want) < 1e-12
    assert u.sharding == plan.in_sharding


# -- DCT/DST-II or -III stages in a row: one multi-axis FFT ----------------------------

def _scipy_parts(fn, x, **kw):
    """scipy's ``fn`` of real and imaginary parts apart (its complex ``idct`` with
    ``orthogonalize=False`` disagrees with its own real and imaginary parts)."""
    if np.iscomplexobj(x):
        return fn(x.real, **kw) + 1j * fn(x.imag, **kw)
    return fn(x, **kw)


@pytest.mark.parametrize("shape", [(5, 6, 7), (8, 4), (2, 9, 16), (1, 3), (3, 1, 2)], ids=str)
@pytest.mark.parametrize("t", [2, 3])
def test_grouped_transforms_match_scipy(shape, t):
    """``apply_trailing``: every family per axis, norm, orthogonalize, inverse, real and
    complex input, numpy and jax.numpy, against scipy applied one axis at a time."""
    rng = np.random.default_rng(len(shape) * 10 + t)
    worst = 0.0
    for families in itertools.product(("dct", "dst"), repeat=len(shape)):
        for norm, orth, inverse in itertools.product(NORMS, (None, False), (False, True)):
            x = rng.standard_normal((2,) + shape)
            if inverse:
                x = x + 1j * rng.standard_normal(x.shape)
            ops = [r2r.scipy_op(f"{f}{t}", n, norm, orth, inverse=inverse)
                   for f, n in zip(families, shape)]
            want = x
            for j, f in enumerate(families):
                want = _scipy_parts(SCIPY[f, inverse], want, type=t, axis=1 + j, norm=norm,
                                    orthogonalize=orth)
            for xp in (np, jnp):
                got = np.asarray(r2r.apply_trailing(xp.asarray(x), ops, xp=xp))
                assert got.dtype == x.dtype
                worst = max(worst, rel_err(got, want))
    assert worst < 1e-14


def test_grouped_transforms_refuse_what_they_cannot_group():
    dct2, dct3 = r2r.scipy_op("dct2", 4), r2r.scipy_op("dct3", 4)
    assert r2r.groupable([dct2, r2r.scipy_op("dst2", 4)])
    for ops in ([dct2], [dct2, dct3], [r2r.scipy_op("dct1", 4)] * 2,
                [r2r.scipy_op("dst4", 4)] * 2, [dct2] * 4):
        assert not r2r.groupable(ops)
        with pytest.raises(ValueError, match="cannot run as one group"):
            r2r.apply_trailing(jnp.zeros((4,) * len(ops)), ops)
    with pytest.raises(ValueError, match="planned for"):
        r2r.apply_trailing(jnp.zeros((4, 5)), [dct2, dct2])


def _per_stage_without_r2r():
    """The GPU's per-stage engine (CPU kernels standing in for cuFFT), its DCTs and
    DSTs through ``lax.fft`` as on a GPU, keeping numpy's order."""
    from pfft.engines.per_stage import PerStageEngine
    return PerStageEngine(1, "cpu")


@pytest.mark.parametrize("engine", ["xla", "per-stage"])
@pytest.mark.parametrize("grid", [(1, 1), (4,), (2, 2)], ids=str)
def test_grouped_stages_in_plans_match_scipy(grid, engine, monkeypatch):
    """Plans whose local DCT/DST-II and -III stages run as groups (all three axes on one
    device; a slab's two local axes; a pencil's single ones are not grouped), on the
    xla engine and on the GPU's per-stage one: forward, inverse and the gradient
    (which runs the transposed stages: types II and III swap) against scipy and
    dense matrices in float64."""
    import sys
    if engine == "per-stage":
        if not __import__("pfft.engines.native", fromlist=["x"]).available("cpu"):
            pytest.skip("needs the CPU kernels (they stand in for cuFFT)")
        monkeypatch.setattr(sys.modules["pfft.mesh_plan"], "engine_for_plan",
                            lambda *a: _per_stage_without_r2r())
        pfft.clear_plan_cache()
    try:
        mesh = pfft.make_mesh(grid)
        shape = (8, 6, 5)
        rng = np.random.default_rng(3)
        for kinds, norm, orth in [(("dct2",) * 3, "backward", None),
                                  (("dst3", "dct3", "dst3"), "ortho", None),
                                  (("dct2", "dst2", "dct2"), "forward", False)]:
            plan = pfft.plan(shape, np.float64, mesh, kinds=kinds, norm=norm,
                             orthogonalize=orth, engine="xla" if engine == "xla" else None)
            x = rng.standard_normal(shape)
            want = x
            for j, k in enumerate(kinds):
                want = SCIPY[k[:3], False](want, int(k[3]), axis=j, norm=norm,
                                           orthogonalize=orth)
            xs = jax.device_put(x, plan.in_sharding)
            assert rel_err(plan.forward(xs), want) < 1e-13
            assert rel_err(plan.backward(plan.forward(xs)), x) < 1e-13
            mats = [SCIPY[k[:3], False](np.eye(n), int(k[3]), axis=0, norm=norm,
                                        orthogonalize=orth) for k, n in zip(kinds, shape)]
            w = rng.standard_normal(shape)
            _, vjp = jax.vjp(plan.forward, xs)
            (grad,) = vjp(jax.device_put(w, plan.out_sharding))
            assert rel_err(grad, np.einsum("ai,bj,ck,abc->ijk", *mats, w)) < 1e-13
    finally:
        pfft.clear_plan_cache()


def _fft_ranks(fn, shape, dtype, sharding) -> list[int]:
    """The number of axes of each FFT in ``jit(fn)``'s lowering for that input, sorted."""
    import re
    hlo = jax.jit(fn).lower(jax.ShapeDtypeStruct(shape, dtype, sharding=sharding)).as_text()
    ffts = re.findall(r"stablehlo\.fft .*?length = \[([0-9, ]+)\]", hlo)
    return sorted(len(f.split(",")) for f in ffts)


def test_a_group_is_one_fft_on_one_device():
    """A 3-axis DCT-II on a 1x1 mesh (xla engine) lowers to one 3-D FFT, and the inverse
    (three DCT-III stages) to one 3-D inverse real FFT; a slab's local pair of axes to
    one 2-D FFT and its last axis to a 1-D one."""
    shape = (8, 6, 4)
    for grid in [(1, 1), (4,)]:
        plan = pfft.plan(shape, np.float32, pfft.make_mesh(grid), kinds=("dct2",) * 3,
                         engine="xla")
        for fn in (plan.forward, plan.backward):
            ranks = _fft_ranks(fn, shape, np.float32, plan.in_sharding)
            assert ranks == ([3] if grid == (1, 1) else [1, 2]), ranks


@pytest.mark.parametrize("grid,spec", [((2, 2), P("y", "x", None)),
                                       ((2, 4), P(None, None, ("x", "y"))),
                                       ((2, 2), P(None, "x", "y"))], ids=str)
def test_grouped_stages_on_a_users_layout_match_scipy(grid, spec):
    """DCT/DST-II plans (xla engine) on inputs laid out as a user may lay them out (mesh
    axes in the other order, a tuple of mesh axes on one array axis, the first axis
    whole): scipy's values, and the round trip back in the input's sharding. With both
    mesh axes on the last array axis the first two axes are local together and run as
    one 2-D FFT; elsewhere one axis at a time."""
    mesh = jax.make_mesh(grid, ("x", "y"), axis_types=(jax.sharding.AxisType.Explicit,) * 2,
                         devices=jax.devices()[:int(np.prod(grid))])
    shape, kinds = (16, 12, 8), ("dct2", "dst2", "dct2")
    x = np.random.default_rng(13).standard_normal(shape)
    want = sf.dct(sf.dst(sf.dct(x, 2, axis=0), 2, axis=1), 2, axis=2)
    plan = pfft.plan(shape, np.float64, mesh, kinds=kinds, engine="xla", in_sharding=spec)
    y = jax.jit(plan.forward)(jax.device_put(x, plan.in_sharding))
    assert rel_err(y, want) < 1e-13
    back = jax.jit(plan.backward)(y)
    assert back.sharding.is_equivalent_to(plan.in_sharding, back.ndim)
    assert rel_err(back, x) < 1e-13
    grouped = spec == P(None, None, ("x", "y"))
    assert _fft_ranks(plan.forward, shape, np.float64, plan.in_sharding) == \
        ([1, 2] if grouped else [1, 1, 1])
