"""numpy's 1-D and 2-D functions on sharded arrays: fft, ifft, rfft, irfft,
hfft, ihfft, fft2, ifft2, rfft2, irfft2 against numpy in float64, their shardings
(a 1-D transform comes back in the input's sharding where it fits), the collectives
they compile to, numpy's errors, and gradients."""
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from jax.sharding import NamedSharding, PartitionSpec as P

import pfft
from conftest import (ENGINES, GRIDS, NORMS, engine_plan, planned_collectives, random_array,
                      rel_err)
from pfft.hlo import count_collectives
from pfft.mesh_plan import ReplicationWarning

ONE_D = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"]
TWO_D = ["fft2", "ifft2", "rfft2", "irfft2"]
REAL_IN = {"rfft", "ihfft", "rfft2"}
TOL = {np.float64: 1e-12, np.float32: 1e-6}

# plans that cannot use every device (sizes the grid does not divide) warn; that is
# tested in test_layouts.py
pytestmark = pytest.mark.filterwarnings("ignore::pfft.mesh_plan.ReplicationWarning")


def _input(rng, name, shape, real_dtype):
    a = rng.standard_normal(shape)
    if name not in REAL_IN:
        a = a + 1j * rng.standard_normal(shape)
    return a.astype(np.result_type(real_dtype, a.dtype))


def _fits(shape, spec, mesh) -> bool:
    return all(n % math.prod(mesh.shape[m] for m in _names(spec[a] if a < len(spec) else None))
               == 0 for a, n in enumerate(shape))


def _names(entry):
    return () if entry is None else (entry,) if isinstance(entry, str) else tuple(entry)


def _pencil(mesh, ndim=3):
    names = [m for m in mesh.axis_names]
    return P(*names, *([None] * (ndim - len(names))))


# a 3-D array on each kind of grid: slab and pencil, 1 to 8 devices
LAYOUTS = [((1,), (6, 5, 4)), ((2,), (8, 6, 5)), ((8,), (8, 16, 5)), ((2, 2), (8, 6, 5)),
           ((2, 4), (8, 8, 6)), ((1, 4), (3, 8, 5))]


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("name", ONE_D)
def test_one_d_matches_numpy_on_every_layout(name, norm):
    rng = np.random.default_rng(len(name))
    fn, ref = getattr(pfft, name), getattr(np.fft, name)
    full = norm == "backward"        # norms only scale: every layout for one of them
    for grid, shape in LAYOUTS if full else LAYOUTS[3:5]:
        mesh = pfft.make_mesh(grid)
        spec = _pencil(mesh)
        a = _input(rng, name, shape, np.float64)
        x = jax.device_put(a, NamedSharding(mesh, spec))
        for axis in (0, 1, -1):
            for n in (None, 7) if full else (None,):
                y = fn(x, n=n, axis=axis, norm=norm)
                want = ref(a, n=n, axis=axis, norm=norm)
                assert y.shape == want.shape and y.dtype == want.dtype, (grid, axis, n)
                assert rel_err(y, want) <= 1e-12, (grid, axis, n)
                if _fits(want.shape, spec, mesh):          # numpy layout: x's sharding back
                    assert y.sharding.is_equivalent_to(x.sharding, a.ndim), (grid, axis, n)


# plans over one or two axes (kind, axes, norm, grid, shape, dtype), the input split over
# the leading axes as the 1-D and 2-D functions see it: along a split axis of a pencil
# and of a slab, along a whole one, two axes with a length (7) the grid cannot split
# evenly; real ones halving an odd axis, a leading axis, a split axis
AXES_PLANS = [("c2c", (0,), "backward", (2, 4), (8, 8, 6), np.complex128),
              ("c2c", (0,), "ortho", (8,), (16, 6, 5), np.complex64),
              ("c2c", (2,), "forward", (2, 2), (4, 6, 10), np.complex128),
              ("c2c", (0, 2), "backward", (2, 2), (6, 10, 7), np.complex64),
              ("r2c", (1,), "ortho", (4,), (8, 9, 6), np.float64),
              ("r2c", (2, 0), "forward", (8,), (16, 8, 10), np.float32),
              ("r2c", (1, 0), "backward", (2, 4), (8, 16, 7), np.float64)]
# about 5x the largest error measured here on either engine (float32: 1.1e-7, float64:
# 2.1e-16), in these plans and the functions below
AXES_TOL = {np.dtype(np.float32): 5e-7, np.dtype(np.float64): 1e-15}


@pytest.mark.parametrize("engine", ENGINES)
def test_every_engine_gives_numpy_over_one_and_two_axes(engine):
    """Each local FFT engine runs plans over one or two axes (the 1-D and 2-D
    functions' paths) with numpy's values: the forward numpy's fftn/rfftn over those
    axes, the backward numpy's ifftn/irfftn of a spectrum of its own."""
    rng = np.random.default_rng(16)
    for kind, axes, norm, grid, shape, dtype in AXES_PLANS:
        mesh = pfft.make_mesh(grid)
        spec = _pencil(mesh)
        plan = engine_plan(shape, dtype, mesh, engine, kind=kind, axes=axes, norm=norm,
                           in_sharding=spec)
        real = kind == "r2c"
        case = (kind, axes, grid)
        x = random_array(rng, shape, dtype)
        k = plan.forward(jax.device_put(x, NamedSharding(mesh, spec)))
        wide = x.astype(np.float64 if real else np.complex128)
        want = (np.fft.rfftn if real else np.fft.fftn)(wide, axes=axes, norm=norm)
        assert k.shape == want.shape, case
        tol = AXES_TOL[np.finfo(dtype).dtype]
        assert rel_err(k, want) <= tol, case
        spectrum = random_array(rng, want.shape, k.dtype)
        back = plan.backward(jax.device_put(spectrum, plan.out_sharding))
        wide = spectrum.astype(np.complex128)
        want = (np.fft.irfftn(wide, s=[shape[a] for a in axes], axes=axes, norm=norm) if real
                else np.fft.ifftn(wide, axes=axes, norm=norm))
        assert back.dtype == dtype and back.shape == shape, case
        assert rel_err(back, want) <= tol, case


# numpy's functions on a (2, 2) pencil of (8, 6, 10): (name, complex input, keywords)
FUNCTION_CALLS = [("fft", True, dict(axis=0)), ("ifft", True, dict(axis=1, n=7, norm="ortho")),
                  ("rfft", False, dict(axis=0, norm="forward")), ("irfft", True, dict(n=9)),
                  ("hfft", True, dict(axis=0)), ("ihfft", False, dict(axis=1, norm="ortho")),
                  ("rfft2", False, dict(axes=(0, 2))),
                  ("irfft2", True, dict(s=(5, 8), axes=(1, 0), norm="forward"))]


@pytest.mark.parametrize("engine", ENGINES)
def test_every_engine_runs_numpys_functions(engine, monkeypatch):
    """The 1-D and 2-D functions plan with ``$PFFT_ENGINE``'s engine: numpy's values
    from each, along split and whole axes, in float64."""
    mesh = pfft.make_mesh((2, 2))
    shape, spec = (8, 6, 10), P("x", "y", None)
    # the engine "engine" runs (native skips where it cannot be built), and the one a
    # plan that names none gets from $PFFT_ENGINE, as the functions' plans do
    runs = engine_plan(shape, np.complex128, mesh, engine, axes=(0,), in_sharding=spec)
    monkeypatch.setenv("PFFT_ENGINE", engine)
    plan = pfft.plan(shape, np.complex128, mesh, axes=(0,), in_sharding=spec)
    assert plan.engine.name == runs.engine.name
    rng = np.random.default_rng(17)
    for name, complex_in, kw in FUNCTION_CALLS:
        a = random_array(rng, shape, np.complex128 if complex_in else np.float64)
        y = getattr(pfft, name)(jax.device_put(a, NamedSharding(mesh, spec)), **kw)
        want = getattr(np.fft, name)(a, **kw)
        assert y.shape == want.shape and y.dtype == want.dtype, name
        assert rel_err(y, want) <= AXES_TOL[np.dtype(np.float64)], name


@pytest.mark.parametrize("name", ONE_D)
def test_one_d_compiles_to_an_exchange_a_local_fft_and_an_exchange_back(name):
    """Along a split axis: the plan's exchange(s), then (where the plan ends elsewhere
    and the result fits x's sharding) one all-to-all back; along a whole axis nothing.
    Never an all-gather."""
    fn = getattr(pfft, name)
    for grid, shape in [((2, 2), (8, 8, 6)), ((2, 4), (8, 8, 6)), ((4,), (8, 8, 6))]:
        mesh = pfft.make_mesh(grid)
        spec = _pencil(mesh)
        a = _input(np.random.default_rng(0), name, shape, np.float64)
        x = jax.device_put(a, NamedSharding(mesh, spec))
        for axis in range(3):
            f = jax.jit(lambda v: fn(v, axis=axis))
            y = f(x)
            ops = count_collectives(f.lower(x).compile().as_text())
            assert ops["all-gather"] == 0, (grid, axis, ops)
            if spec[axis] is None:
                assert sum(ops.values()) == 0, (grid, axis, ops)
                continue
            kind = "c2c" if name in ("fft", "ifft") else "r2c"
            plan_shape = shape if name not in ("irfft", "hfft") else y.shape
            plan = pfft.plan(plan_shape, np.complex128, mesh, axes=(axis,), kind=kind,
                             in_sharding=spec if name not in ("irfft", "hfft") else None)
            back = _fits(y.shape, spec, mesh) and not plan.out_sharding.is_equivalent_to(
                NamedSharding(mesh, spec), 3)
            moved = sum(ops[k] for k in ("all-to-all", "collective-permute"))
            if name in ("irfft", "hfft"):
                # a spectrum split along the halved axis: exchange, c2r, exchange back
                assert 1 <= moved <= 2 + back and not ops["all-reduce"], (grid, axis, ops)
            else:
                want = planned_collectives(plan)
                assert moved == want["all-to-all"] + want["collective-permute"] + back, \
                    (grid, axis, ops, want, back)


@settings(max_examples=20, deadline=None)
@given(data=st.data())
def test_hypothesis_shapes_grids_and_functions(data):
    name = data.draw(st.sampled_from(ONE_D + TWO_D))
    grid = data.draw(st.sampled_from(GRIDS))
    mesh = pfft.make_mesh(grid)
    shape = tuple(data.draw(st.lists(st.integers(1, 40), min_size=2, max_size=3)))
    dtype = data.draw(st.sampled_from([np.float64, np.float32]))
    norm = data.draw(st.sampled_from(NORMS + [None]))
    a = _input(np.random.default_rng(data.draw(st.integers(0, 99))), name, shape, dtype)
    x = pfft.device_put(a, mesh)                  # uneven sizes stay whole or move
    if name in ONE_D:
        axis = data.draw(st.integers(-len(shape), len(shape) - 1))
        n = data.draw(st.sampled_from([None, data.draw(st.integers(1, 24))]))
        if name in ("irfft", "hfft") and n is None and shape[axis] == 1:
            n = 1
        kw = dict(n=n, axis=axis, norm=norm)
    else:
        axes = data.draw(st.sampled_from([(-2, -1), (0, 1), (-1, 0)]))
        s = data.draw(st.sampled_from([None, tuple(data.draw(st.integers(1, 24))
                                                   for _ in axes)]))
        if name == "irfft2" and s is None and shape[axes[-1]] == 1:
            s = (shape[axes[0]], 1)
        kw = dict(s=s, axes=axes, norm=norm)
    y = getattr(pfft, name)(x, **kw)
    want = getattr(np.fft, name)(a.astype(np.result_type(a.dtype, np.float64)), **kw)
    assert y.shape == want.shape
    assert rel_err(y, want) <= TOL[dtype], (name, kw)


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("name", TWO_D)
def test_two_d_matches_numpy(name, norm):
    rng = np.random.default_rng(5)
    fn, ref = getattr(pfft, name), getattr(np.fft, name)
    layouts = [((1,), (5, 6, 4)), ((4,), (8, 8, 6)), ((2, 2), (4, 6, 10)), ((2, 4), (8, 8, 7))]
    for grid, shape in layouts if norm == "backward" else layouts[3:]:
        mesh = pfft.make_mesh(grid)
        a = _input(rng, name, shape, np.float64)
        x = jax.device_put(a, NamedSharding(mesh, _pencil(mesh)))
        for kw in (dict(), dict(axes=(0, 2)), dict(s=(5, 8), axes=(1, 0))):
            y = fn(x, norm=norm, **kw)
            want = ref(a, norm=norm, **kw)
            assert y.shape == want.shape and y.dtype == want.dtype, (grid, kw)
            assert rel_err(y, want) <= 1e-12, (grid, kw)
            assert rel_err(y, getattr(pfft, name[:-1] + "n")(x, norm=norm, **(
                {"axes": (-2, -1)} | kw))) == 0.0           # fftn over the same axes


def test_float32_numpy_input_and_out_sharding():
    mesh = pfft.make_mesh((2, 2))
    rng = np.random.default_rng(7)
    a = rng.standard_normal((8, 6, 10)).astype(np.float32)
    for name in ONE_D:
        arr = a if name in REAL_IN else (a + 1j * a[::-1]).astype(np.complex64)
        y = getattr(pfft, name)(arr, axis=0, mesh=mesh, out_sharding=P())
        want = getattr(np.fft, name)(arr.astype(np.result_type(arr.dtype, np.float64)), axis=0)
        assert y.dtype == (np.float32 if name in ("irfft", "hfft") else np.complex64)
        assert rel_err(y, want) <= 1e-6 and y.sharding.is_fully_replicated, name
        want = getattr(np.fft, name)(arr.astype(np.result_type(arr.dtype, np.float64)), axis=1)
        assert rel_err(getattr(pfft, name)(arr, axis=1), want) <= 1e-6, name
    assert pfft.fft(np.ones(4, bool)).dtype == np.fft.fft(np.ones(4, bool)).dtype


@pytest.mark.parametrize("kind", ["explicit", "auto"])
def test_inside_jit(kind):
    mesh = pfft.make_mesh((2, 4), axis_types=kind)
    spec = P("x", "y", None)
    a = np.random.default_rng(8).standard_normal((8, 8, 6))
    x = jax.device_put(a, NamedSharding(mesh, spec))

    @jax.jit
    def f(v):
        k = pfft.rfft(v, axis=1, mesh=mesh)
        return pfft.irfft(k * 2, n=8, axis=1, mesh=mesh), pfft.hfft(pfft.ihfft(
            v, axis=0, mesh=mesh), n=8, axis=0, mesh=mesh)

    y, z = f(x)
    assert rel_err(y, 2 * a) <= 1e-12 and rel_err(z, a) <= 1e-12
    assert "all-gather" not in f.lower(x).compile().as_text()


def test_gradients_against_dense_dft_and_jnp():
    mesh = pfft.make_mesh((2, 2))
    rng = np.random.default_rng(9)
    a = rng.standard_normal((8, 4, 6)) + 1j * rng.standard_normal((8, 4, 6))
    x = jax.device_put(a, NamedSharding(mesh, P("x", "y", None)))
    ct = rng.standard_normal(a.shape) + 1j * rng.standard_normal(a.shape)
    dft = np.exp(-2j * np.pi * np.outer(np.arange(8), np.arange(8)) / 8)     # along axis 0
    with jax.set_mesh(mesh):
        y, vjp = jax.vjp(lambda v: pfft.fft(v, axis=0, norm="ortho"), x)
        (g,) = vjp(jax.device_put(ct, y.sharding))
    want = np.einsum("ki,k...->i...", dft / np.sqrt(8), ct)                   # F^T ct
    assert rel_err(g, want) <= 1e-12 and g.sharding.is_equivalent_to(x.sharding, 3)
    t = rng.standard_normal(a.shape) + 0j
    _, tangent = jax.jit(lambda v, d: jax.jvp(lambda u: pfft.ifft(u, axis=0), (v,), (d,)))(x, t)
    assert rel_err(tangent, np.einsum("ik,k...->i...", dft.conj() / 8, t)) <= 1e-12
    r = rng.standard_normal((8, 4, 6))
    xr = jax.device_put(r, NamedSharding(mesh, P("x", "y", None)))
    for name, arg, axis in [("rfft", xr, 0), ("ihfft", xr, 1), ("hfft", x, 0)]:
        def loss(lib, v, name=name, axis=axis):
            return jnp.sum(jnp.abs(getattr(lib, name)(v, axis=axis, norm="ortho")) ** 3)
        got = jax.jit(jax.grad(lambda v: loss(pfft, v)))(arg)
        want = jax.grad(lambda v: loss(jnp.fft, v))(np.asarray(arg))
        assert rel_err(got, want) <= 1e-12, name
        assert got.sharding.is_equivalent_to(arg.sharding, 3), name
    batch = rng.standard_normal((3, 8, 6)) + 0j
    out = jax.jit(jax.vmap(lambda v: pfft.fft(v, axis=0, mesh=mesh)))(
        jax.device_put(batch, NamedSharding(mesh, P(None, "x", "y"))))
    assert rel_err(out, np.fft.fft(batch, axis=1)) <= 1e-12


def _raises_like_numpy(call_np, call_pfft, error):
    """numpy raises ``error`` (or a subclass) and so does pfft."""
    with pytest.raises(error):
        call_np()
    with pytest.raises(error):
        call_pfft()


def test_errors_match_numpy():
    a = np.ones((4, 6))
    mesh = pfft.make_mesh((2,))
    x = pfft.device_put(a + 0j, mesh)
    for name in ONE_D:
        fn, ref = getattr(pfft, name), getattr(np.fft, name)
        arr = a if name in REAL_IN else a + 0j
        _raises_like_numpy(lambda: ref(arr, axis=2), lambda: fn(x if name not in REAL_IN
                                                                 else a, axis=2), IndexError)
        with pytest.raises(ValueError, match="out of range"):       # and jnp's ValueError
            fn(arr, axis=-3)
        _raises_like_numpy(lambda: ref(arr, n=0), lambda: fn(arr, n=0), ValueError)
        _raises_like_numpy(lambda: ref(arr, n=2.5), lambda: fn(arr, n=2.5), TypeError)
        _raises_like_numpy(lambda: ref(arr, axis=1.0), lambda: fn(arr, axis=1.0), TypeError)
        _raises_like_numpy(lambda: ref(arr, norm="x"), lambda: fn(arr, norm="x"), ValueError)
    for name in ("rfft", "ihfft"):
        _raises_like_numpy(lambda: getattr(np.fft, name)(a + 1j),
                           lambda: getattr(pfft, name)(a + 1j), TypeError)
    for name in ("irfft", "hfft"):                       # default n = 2 (m - 1) = 0
        _raises_like_numpy(lambda: getattr(np.fft, name)(np.ones((4, 1))),
                           lambda: getattr(pfft, name)(np.ones((4, 1))), ValueError)
    for name in TWO_D:
        fn, ref = getattr(pfft, name), getattr(np.fft, name)
        _raises_like_numpy(lambda: ref(np.ones(4)), lambda: fn(np.ones(4)), IndexError)
        _raises_like_numpy(lambda: ref(a, s=(1, 2, 3)), lambda: fn(a, s=(1, 2, 3)), ValueError)
    with pytest.raises(ValueError, match="0-d"):
        pfft.fft(np.float64(1.0))
    with pytest.raises(TypeError, match="mesh must be"):
        pfft.fft(a, mesh="x")


# -- a 1-D FFT along an axis that stays split (pfft.split_fft, the six-step algorithm) --

# (grid, mesh axis names, spec of the split axis, its length): slab, both orders of a
# pencil's two axes, one axis of a pencil, lengths with p**2 | n, square or not
SPLIT_ONLY = [((4,), ("x",), "x", 64), ((8,), ("x",), "x", 128),
              ((2, 4), ("a", "b"), ("a", "b"), 256), ((2, 4), ("a", "b"), ("b", "a"), 64 * 3),
              ((2, 2), ("a", "b"), "b", 36), ((2, 2), ("a", "b"), ("a", "b"), 48)]


def test_split_fft_factors():
    from pfft.split_fft import factors
    for n in range(1, 600):
        for p in (2, 3, 4, 8):
            f = factors(n, p)
            if n % (p * p):
                assert f is None
                continue
            n1, n2 = f
            assert n1 * n2 == n and n1 % p == 0 and n2 % p == 0 and n1 <= n2
            # as square as can be: no factor pair of multiples of p lies closer
            assert not any(n % (m * p) == 0 and (n // (m * p)) % p == 0 and
                           n1 < m * p <= math.isqrt(n) for m in range(1, n // p + 1))
    assert factors(64, 1) is None


@pytest.mark.parametrize("case,kind", [
    (c, k) for c in SPLIT_ONLY for k in ("explicit", "auto")
    if k == "explicit" or c in SPLIT_ONLY[1:3]],   # Auto: a slab and a pencil, whole grid
    ids=lambda v: v if isinstance(v, str) else f"{v[0]}-{v[2]}-{v[3]}")
def test_fft_of_an_axis_no_other_axis_can_take_stays_split(case, kind):
    """fft/ifft (and fftn over the one axis) of an axis whose split no other axis can
    take: numpy's values, three all-to-alls and no all-gather, the input's sharding
    back; inside jit on both kinds of mesh. On an Auto mesh (mesh= given) pfft cannot
    see the sharding and assumes the axis split over the whole grid."""
    grid, names, entry, n = case
    whole = tuple(names) if len(names) > 1 else names[0]
    mesh = jax.make_mesh(grid, names, axis_types=(jax.sharding.AxisType.Explicit if kind ==
                                                   "explicit" else jax.sharding.AxisType.Auto,)
                         * len(grid))
    rng = np.random.default_rng(n)
    a = rng.standard_normal(n) + 1j * rng.standard_normal(n)
    x = jax.device_put(a, NamedSharding(mesh, P(entry)))
    # every norm in both directions on the slab; one of each elsewhere (norms only scale)
    calls = ([(f, m) for f in ("fft", "ifft") for m in NORMS] if grid == (4,) else
             [("fft", "backward"), ("ifft", "ortho")]) + [("fftn", "forward")]
    for name, norm in calls:
        f = jax.jit(lambda v: getattr(pfft, name)(v, norm=norm, mesh=mesh)).lower(x).compile()
        y = f(x)
        assert rel_err(y, getattr(np.fft, name)(a, norm=norm)) <= 1e-12, (name, norm)
        ops = count_collectives(f.as_text())
        assert ops["all-to-all"] == 3 and ops["all-gather"] == 0, (name, ops)
        want = x.sharding if kind == "explicit" else NamedSharding(mesh, P(whole))
        assert y.sharding.is_equivalent_to(want, 1), name


def test_split_axis_fft_in_float32_with_batch_axes_and_outside_jit():
    mesh = pfft.make_mesh((2, 4))
    rng = np.random.default_rng(3)
    a = (rng.standard_normal((2, 64)) + 1j * rng.standard_normal((2, 64))).astype(np.complex64)
    x = jax.device_put(a, NamedSharding(mesh, P("x", "y")))      # axis 0 can take no more
    assert pfft.split_fft.split_spec(x, 1, mesh) == P("x", "y")
    y = pfft.fft(x, axis=1)
    assert y.dtype == np.complex64 and rel_err(y, np.fft.fft(a.astype(np.complex128))) <= 1e-6
    assert y.sharding.is_equivalent_to(x.sharding, 2)
    r = rng.standard_normal(64)        # real input: a complex result, as numpy's
    xr = jax.device_put(r, NamedSharding(mesh, P(("x", "y"))))
    assert rel_err(pfft.ifft(xr), np.fft.ifft(r)) <= 1e-12


def test_split_axis_fft_gradients_jvp_vmap():
    """grad, jvp, vmap and check_grads through the split-axis FFT, against jnp.fft."""
    from jax.test_util import check_grads
    mesh = pfft.make_mesh((4,))
    rng = np.random.default_rng(4)
    a = rng.standard_normal(64) + 1j * rng.standard_normal(64)
    x = jax.device_put(a, NamedSharding(mesh, P("x")))
    w = rng.standard_normal(64)

    def loss(lib, v):
        return jnp.sum(jnp.abs(lib.fft(v, norm="ortho")) ** 3 * w)
    g = jax.jit(jax.grad(lambda v: loss(pfft, v)))(x)
    assert rel_err(g, jax.grad(lambda v: loss(jnp.fft, v))(a)) <= 1e-12
    assert g.sharding.is_equivalent_to(x.sharding, 1)
    t = rng.standard_normal(64) + 0j
    _, tangent = jax.jit(lambda v, d: jax.jvp(pfft.ifft, (v,), (d,)))(
        x, jax.device_put(t, x.sharding))
    assert rel_err(tangent, np.fft.ifft(t)) <= 1e-12
    batch = rng.standard_normal((3, 64)) + 0j
    xb = jax.device_put(batch, NamedSharding(mesh, P(None, "x")))
    f = jax.jit(jax.vmap(pfft.fft))
    assert rel_err(f(xb), np.fft.fft(batch)) <= 1e-12
    assert count_collectives(f.lower(xb).compile().as_text())["all-gather"] == 0
    with jax.set_mesh(mesh):
        check_grads(jax.jit(lambda v: pfft.fft(v)), (x,), order=2, modes=("fwd", "rev"))


def test_lengths_the_six_step_cannot_split_keep_the_plan_route():
    """p**2 not dividing n: the plan's route (it warns that it repeats work), right."""
    mesh = pfft.make_mesh((4,))
    a = np.random.default_rng(5).standard_normal(36) + 0j
    x = jax.device_put(a, NamedSharding(mesh, P("x")))
    with pytest.warns(ReplicationWarning):
        pfft.clear_plan_cache()
        y = pfft.fft(x)
    assert rel_err(y, np.fft.fft(a)) <= 1e-12
