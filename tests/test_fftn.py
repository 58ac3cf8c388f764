"""fftn/ifftn against numpy.fft in float64, on every 1-D and 2-D grid of 1-8 devices."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from jax.sharding import NamedSharding, PartitionSpec as P

import pfft
from pfft.engines import native
from pfft.hlo import count_collectives
from conftest import (ENGINES, TOL, numpy_axes, planned_collectives, random_array,
                      rel_err, transform_problems, use_engine)
from transform_cases import C2C, CASES, TOL as TOL_CASES, check

DTYPES = [np.complex64, np.complex128]


@settings(max_examples=70)
@given(transform_problems(DTYPES))
def test_fftn_and_ifftn_match_numpy(p):
    rng = np.random.default_rng(p["seed"])
    x = random_array(rng, p["shape"], p["dtype"])
    mesh = pfft.make_mesh(p["grid"])
    axes = numpy_axes(p["axes"], p["s"], x.ndim)
    xs = pfft.device_put(x, mesh, axes=axes)
    given = p["axes"] if p["s"] is None else axes     # s without axes: numpy 2 deprecates it
    k = pfft.fftn(xs, s=p["s"], axes=given, norm=p["norm"])
    want = np.fft.fftn(x.astype(np.complex128), s=p["s"], axes=axes, norm=p["norm"])
    assert k.dtype == p["dtype"]
    assert rel_err(k, want) <= TOL[p["dtype"]]
    back = pfft.ifftn(k, s=p["s"], axes=given, norm=p["norm"])
    want_back = np.fft.ifftn(want, s=p["s"], axes=axes, norm=p["norm"])
    assert rel_err(back, want_back) <= TOL[p["dtype"]]


@pytest.mark.parametrize("grid", [(2, 4), (8,), (2, 2)])
@pytest.mark.parametrize("dtype", DTYPES)
def test_round_trip_returns_to_the_input_sharding(grid, dtype):
    mesh = pfft.make_mesh(grid)
    x = random_array(np.random.default_rng(0), (16, 24, 8), dtype)
    xs = pfft.device_put(x, mesh)
    k = pfft.fftn(xs)
    y = pfft.ifftn(k)
    assert y.sharding.is_equivalent_to(xs.sharding, 3)
    assert rel_err(y, x) <= TOL[dtype]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("case", C2C, ids=lambda c: c.id)
def test_every_engine_gives_numpys_complex_transforms(case, engine, monkeypatch, devices):
    """Each local FFT engine runs fftn, ifftn, fft, ifft, fft2 and ifft2 with numpy's
    values (:mod:`transform_cases`, the cases tests/test_gpu.py runs on a GPU): each
    inverse of an input of its own (not a forward's output: no defect of both
    directions cancels), on slab and pencil grids."""
    use_engine(engine, monkeypatch, devices)
    mesh = pfft.make_mesh(case.grid)
    err = check(case, lambda x: pfft.device_put(x, mesh))
    assert err <= TOL_CASES[np.dtype(case.dtype)], (case.id, err)


@pytest.mark.parametrize("engine", ["native", "xla"])     # "auto" is "native" on CPUs
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_every_engine_gives_numpys_transforms_on_one_device(case, engine, monkeypatch, devices):
    """Every case of :mod:`transform_cases` (complex, real and r2r) on a one-device
    mesh, as tests/test_gpu.py runs them on one GPU: a plan of local transforms alone,
    each engine given the axes in the order the call names them."""
    use_engine(engine, monkeypatch, devices)
    mesh = pfft.make_mesh((1, 1), devices[:1])
    err = check(case, lambda x: pfft.device_put(x, mesh))
    assert err <= TOL_CASES[np.dtype(case.dtype)], (case.id, err)


def test_readme_example_on_a_2x4_grid():
    mesh = pfft.make_mesh(8)
    x = pfft.device_put(np.random.default_rng(1).random((128, 96, 64)) + 0j, mesh)
    k = pfft.fftn(x)
    assert k.shape == (128, 96, 64)
    assert rel_err(k, np.fft.fftn(np.asarray(x))) <= 1e-12
    plan = pfft.plan(x.shape, x.dtype, mesh)
    assert plan is pfft.plan(x.shape, x.dtype, mesh)
    assert k.sharding.is_equivalent_to(plan.out_sharding, 3)
    assert x.sharding.is_equivalent_to(plan.in_sharding, 3)
    k2 = jax.jit(plan.forward)(x)
    assert rel_err(k2, k) <= 1e-14
    assert rel_err(plan.backward(k2), x) <= 1e-12
    text = repr(plan)
    assert text.count("all_to_all") == 2 and "fft axis 2" in text


@pytest.mark.parametrize("kind", ["numpy", "single device", "replicated", "x-pencil",
                                  "list"])
def test_inputs_of_every_kind(kind):
    mesh = pfft.make_mesh((2, 2))
    x = random_array(np.random.default_rng(2), (8, 12, 10), np.complex128)
    if kind == "single device":
        arg = jax.device_put(x, jax.devices()[3])
    elif kind == "replicated":
        arg = jax.device_put(x, NamedSharding(mesh, P()))
    elif kind == "x-pencil":
        arg = jax.device_put(x, NamedSharding(mesh, P(None, "x", "y")))
    elif kind == "list":
        arg = x.tolist()
    else:
        arg = x
    k = pfft.fftn(arg, mesh=mesh)
    assert rel_err(k, np.fft.fftn(x)) <= 1e-12
    if kind == "x-pencil":           # already whole along axis 0: starts there
        plan = pfft.plan(x.shape, x.dtype, mesh, in_sharding=P(None, "x", "y"))
        assert str(plan.chain.stages[0]) == "fft axis 0 (local)"
        assert k.sharding.spec == P("x", "y", None)


def test_mesh_is_taken_from_the_input_sharding():
    mesh = pfft.make_mesh((4, 2), axis_names=("rows", "cols"))
    x = pfft.device_put(random_array(np.random.default_rng(3), (8, 8, 6), np.complex64), mesh)
    k = pfft.fftn(x)
    assert k.sharding.mesh == mesh and set(k.sharding.spec) - {None} == {"rows", "cols"}


def test_single_device_without_mesh_is_a_plain_fft():
    x = random_array(np.random.default_rng(4), (5, 6, 7), np.complex128)
    k = pfft.fftn(jax.device_put(x, jax.devices()[2]))
    assert rel_err(k, np.fft.fftn(x)) <= 1e-12
    assert k.devices() == {jax.devices()[2]}


@pytest.mark.parametrize("axis_types", ["explicit", "auto"])
def test_inside_jit_on_both_kinds_of_mesh(axis_types):
    mesh = pfft.make_mesh((2, 4), axis_types=axis_types)
    x = random_array(np.random.default_rng(5), (16, 8, 12), np.complex128)
    xs = pfft.device_put(x, mesh)

    @jax.jit
    def f(a):
        return pfft.ifftn(pfft.fftn(a, mesh=mesh) * 2.0, mesh=mesh)

    assert rel_err(f(xs), 2 * x) <= 1e-12
    g = jax.jit(lambda a: pfft.fftn(a, mesh=mesh))(xs)
    assert rel_err(g, np.fft.fftn(x)) <= 1e-12


def test_out_sharding_is_honoured():
    mesh = pfft.make_mesh((2, 4))
    x = random_array(np.random.default_rng(6), (8, 8, 8), np.complex64)
    want = NamedSharding(mesh, P("y", None, "x"))
    k = pfft.fftn(pfft.device_put(x, mesh), out_sharding=want)
    assert k.sharding.is_equivalent_to(want, 3)
    assert rel_err(k, np.fft.fftn(x.astype(np.complex128))) <= 1e-6
    k2 = pfft.fftn(x, mesh=mesh, out_sharding=P())
    assert k2.sharding.is_fully_replicated


@pytest.mark.parametrize("dtype, want", [(np.float32, np.complex64), (np.float64, np.complex128),
                                         (np.int32, np.complex128), (np.bool_, np.complex128),
                                         (np.float16, np.complex64)])
def test_real_input_is_promoted_as_numpy_does(dtype, want):
    x = (np.random.default_rng(7).standard_normal((6, 4, 5)) * 10).astype(dtype)
    k = pfft.fftn(x, mesh=pfft.make_mesh((2,)))
    assert k.dtype == want
    assert rel_err(k, np.fft.fftn(x.astype(np.float64))) <= TOL[want]


def test_plan_cache_and_no_retrace_in_a_loop():
    pfft.clear_plan_cache()                      # trace counts start from a fresh plan
    mesh = pfft.make_mesh((2, 2))
    x = pfft.device_put(random_array(np.random.default_rng(8), (8, 8, 8), np.complex64), mesh)
    x = pfft.ifftn(pfft.fftn(x))                 # first step plans and traces
    fwd = pfft.plan(x.shape, x.dtype, mesh)      # ifftn of fftn's output: its backward
    before = pfft.plan_cache_info()
    assert before["size"] == 1
    assert fwd.trace_count == 2                  # forward and backward, once each
    for _ in range(5):
        x = pfft.ifftn(pfft.fftn(x))
    assert pfft.plan_cache_info()["misses"] == before["misses"]   # no new plans
    assert fwd.trace_count == 2                                   # and no retrace
    step = jax.jit(lambda a: fwd.backward(fwd.forward(a)))
    for _ in range(3):
        x = step(x)
    assert fwd.trace_count == 2     # the jitted step reuses both traces


def test_plan_is_cached_by_its_arguments():
    mesh = pfft.make_mesh((2, 2))
    a = pfft.plan((8, 8, 8), np.complex64, mesh)
    assert pfft.plan((8, 8, 8), "complex64", mesh) is a
    assert pfft.plan((8, 8, 8), np.complex64, mesh, norm="ortho") is not a
    assert pfft.plan((8, 8, 8), np.complex128, mesh) is not a
    assert pfft.plan((8, 8, 8), np.complex64, mesh, in_sharding=P(None, "x", "y")) is not a


def _collectives(fn, x):
    return count_collectives(jax.jit(fn).lower(x).compile().as_text())


@pytest.mark.parametrize("grid, exchanges", [((2, 4), 2), ((2, 2), 2), ((8,), 1), ((1, 4), 1)])
def test_compiled_xla_engine_plan_has_the_planned_all_to_alls_and_no_all_gather(grid, exchanges):
    mesh = pfft.make_mesh(grid)
    x = pfft.device_put(np.zeros((32, 16, 24), np.complex64), mesh)
    plan = pfft.plan(x.shape, x.dtype, mesh, engine="xla")
    for fn, arg in ((plan.forward, x), (plan.backward, pfft.fftn(x))):
        ops = _collectives(fn, arg)
        assert ops == {**dict.fromkeys(ops, 0), "all-to-all": exchanges}


@pytest.mark.parametrize("grid", [(2, 4), (2, 2), (8,), (1, 4)])
def test_compiled_default_plan_runs_only_its_collectives(grid):
    """Whatever the engine (on CPU with the kernels built, these small blocks: an
    exchange over 2 devices as one collective permute of pieces, over more as one
    all-to-all, a swap of pieces or, where JAX cannot swap, XLA's; without the kernels
    one all-to-all each), the compiled plan holds one
    exchange per grid axis and no gather or reduce, and ``plan.collectives()`` reports
    what the compiled HLO holds."""
    mesh = pfft.make_mesh(grid)
    x = pfft.device_put(np.zeros((32, 16, 24), np.complex64), mesh)
    plan = pfft.plan(x.shape, x.dtype, mesh)
    sizes = [s for s in grid if s > 1]
    fused = native.available("cpu")
    want = {"all-to-all": sum(1 for s in sizes if s > 2 or not fused),
            "collective-permute": sum(1 for s in sizes if s == 2 and fused)}
    for reverse, fn, arg in ((False, plan.forward, x), (True, plan.backward, pfft.fftn(x))):
        ops = _collectives(fn, arg)
        assert ops == {**dict.fromkeys(ops, 0), **want}
        assert ops == planned_collectives(plan, reverse)
        assert plan.collectives(reverse=reverse) == ops


def test_uneven_sizes_are_padded_inside_and_never_shown():
    """(6, 12, 7) on a 2x4 grid: 7 divides neither grid axis, 6 only one. What the user
    gets has numpy's shape, stays distributed, leaves 7 whole, and every shard holds
    exactly its even share of the global array, with numpy's values (no padding)."""
    import math

    mesh = pfft.make_mesh((2, 4))
    x = random_array(np.random.default_rng(9), (6, 12, 7), np.complex128)
    want = np.fft.fftn(x)
    k = pfft.fftn(pfft.device_put(x, mesh))
    back = pfft.ifftn(k)
    for arr, ref in ((k, want), (back, x)):
        assert arr.shape == (6, 12, 7)
        spec = tuple(arr.sharding.spec) + (None,) * (arr.ndim - len(arr.sharding.spec))
        assert spec[2] is None                              # 7 cannot be split evenly
        assert any(m is not None for m in spec)             # still distributed
        parts = [math.prod(mesh.shape[m] for m in ((s,) if isinstance(s, str) else s or ()))
                 for s in spec]
        share = tuple(n // p for n, p in zip(arr.shape, parts))
        assert all(n % p == 0 for n, p in zip(arr.shape, parts))
        for shard in arr.addressable_shards:
            assert shard.data.shape == share
            assert rel_err(shard.data, ref[shard.index]) <= 1e-12
        assert rel_err(arr, ref) <= 1e-12


def test_plan_rejects_an_array_of_another_shape():
    mesh = pfft.make_mesh((2, 2))
    plan = pfft.plan((8, 8, 8), np.complex64, mesh)
    with pytest.raises(ValueError, match="shape"):
        plan.forward(jnp.zeros((8, 8, 4), jnp.complex64))
