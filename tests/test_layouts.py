"""Any layout a user brings: numpy's values, every mesh axis kept busy, no all-gather.

The small spaces are enumerated (every ``PartitionSpec`` of a 3-D input over a 1-D
and a 2-D mesh, every transform); hypothesis samples the large one (2x4 meshes, 4-D
arrays, ``axes`` subsets in any order, ``s``, uneven sizes). Each case compiles the
call under ``jit`` and reads the compiled HLO.
"""
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P

import pfft
from pfft.layout import names_of
from pfft.hlo import count_collectives
from pfft.mesh_plan import ReplicationWarning
from conftest import NORMS, all_specs, rel_err

KINDS = ("fftn", "ifftn", "rfftn", "irfftn")


def test_the_spec_enumeration_is_complete():
    # 2 mesh axes over 3 array axes: 4 * 4 placements, 3 of them on one axis in 2 orders
    specs = list(all_specs(3, ("x", "y")))
    assert len(specs) == 19 and len(set(specs)) == 19
    assert len(list(all_specs(4, ("x", "y")))) == 29
    assert len(list(all_specs(3, ("x",)))) == 4


def _fits(shape, spec, mesh) -> bool:
    """Whether JAX can hold ``shape`` with ``spec`` on ``mesh`` (a Mesh, or a dict of
    axis sizes): even splits only."""
    sizes = dict(mesh) if isinstance(mesh, dict) else dict(mesh.shape)
    for n, entry in zip(shape, spec):
        names = () if entry is None else (entry,) if isinstance(entry, str) else entry
        if n % int(np.prod([sizes[m] for m in names])):
            return False
    return True


def _problem(kind, shape, axes, s, rng, norm="backward"):
    """Input array and numpy's result (float64) for ``kind`` over ``axes``/``s``."""
    nd = len(shape)
    np_axes = tuple(range(nd)) if axes is None else tuple(a % nd for a in axes)
    if kind in ("fftn", "ifftn"):
        x = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
        return x, getattr(np.fft, kind)(x, s=s, axes=np_axes, norm=norm)
    if kind == "rfftn":
        x = rng.standard_normal(shape)
        return x, np.fft.rfftn(x, s=s, axes=np_axes, norm=norm)
    # irfftn: a spectrum whose halved axis has shape[last] points
    x = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
    return x, np.fft.irfftn(x, s=s, axes=np_axes, norm=norm)


def _used(spec) -> set:
    out = set()
    for e in spec:
        out |= set() if e is None else {e} if isinstance(e, str) else set(e)
    return out


def _spreads(shape, mesh) -> bool:
    """Whether some even layout of ``shape`` uses every mesh axis of size above one."""
    names = [m for m, n in mesh.shape.items() if n > 1]
    return any(_fits(shape, spec, mesh) and _used(spec) == set(names)
               for spec in all_specs(len(shape), names))


def _resize_gathers(shape, spec, axes, resized, mesh) -> bool:
    """The documented limit of ``s``: an axis that ``s`` crops or pads while it is split
    is made whole first; its mesh axes move to a whole axis that keeps its length where
    one divides evenly, else that part of the mesh is gathered."""
    nd = len(shape)
    axes = tuple(range(nd)) if axes is None else tuple(a % nd for a in axes)
    sizes = dict(mesh.shape)
    entries = [_used(P(spec[a] if a < len(spec) else None)) for a in range(nd)]
    changed = [a for a in axes if resized[a] != shape[a]]
    for a in changed:
        if not entries[a] or all(sizes[m] == 1 for m in entries[a]):
            continue
        p = int(np.prod([sizes[m] for m in entries[a]]))
        if not any(b not in changed and not entries[b] and shape[b] % p == 0
                   for b in range(nd)):
            return True
    return False


def check_layout(mesh, spec, kind, shape, axes=None, s=None, norm="backward", seed=0):
    """Run ``kind`` on an input of ``shape`` placed with ``spec`` under jit: numpy's
    values and, where the arrays involved can be spread over every device at all, no
    all-gather in the compiled HLO and no mesh axis of the input idle in the output."""
    x, want = _problem(kind, shape, axes, s, np.random.default_rng(seed), norm)
    xs = jax.device_put(x, NamedSharding(mesh, spec))
    if s is not None and axes is None:               # numpy 2 deprecates s without axes
        axes = tuple(range(len(shape) - len(s), len(shape)))
    fn = jax.jit(lambda a: getattr(pfft, kind)(a, s=s, axes=axes, norm=norm))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ReplicationWarning)
        compiled = fn.lower(xs).compile()
    counts = count_collectives(compiled.as_text())
    # with s, the resized input (numpy's spectrum shape for irfftn) must spread too
    resized = list(want.shape)
    if kind == "irfftn":
        last = (len(shape) - 1) if axes is None else axes[-1] % len(shape)
        resized[last] = want.shape[last] // 2 + 1
    spreads = (_spreads(want.shape, mesh) and _spreads(tuple(resized), mesh)
               and not _resize_gathers(shape, spec, axes, tuple(resized), mesh))
    if spreads:
        assert counts["all-gather"] == 0, (spec, kind, shape, axes, s, counts)
    y = compiled(xs)
    assert y.shape == want.shape and y.dtype == (np.float64 if kind == "irfftn" else np.complex128)
    assert rel_err(y, want) <= 1e-12, (spec, kind, shape, axes, s)
    out_spec = y.sharding.spec
    if spreads:
        assert _used(spec) <= _used(out_spec), (spec, out_spec, kind, shape, axes, s)


@pytest.mark.parametrize("grid", [(2, 2), (4,)])
@pytest.mark.parametrize("kind", KINDS)
def test_every_spec_of_a_3d_input(grid, kind):
    """Exhaustive: every PartitionSpec of a 3-D input on a 2x2 and a 1-D mesh."""
    mesh = pfft.make_mesh(grid)
    shape = (8, 12, 8) if kind == "irfftn" else (8, 12, 14)
    ran = 0
    for spec in all_specs(3, mesh.axis_names):
        if _fits(shape, spec, mesh):
            check_layout(mesh, spec, kind, shape)
            ran += 1
    assert ran >= (13 if len(grid) == 2 else 3)


@pytest.mark.parametrize("axes", [(0, 2), (-1, -2), (1,), (2, 0, 1)])
@pytest.mark.parametrize("kind", ["fftn", "rfftn", "irfftn"])
def test_every_spec_with_axes_subsets(axes, kind):
    """Exhaustive over the specs of a 2x2 mesh for a few ``axes`` (any order)."""
    mesh = pfft.make_mesh((2, 2))
    shape = (8, 12, 8)
    for spec in all_specs(3, mesh.axis_names):
        if _fits(shape, spec, mesh):
            check_layout(mesh, spec, kind, shape, axes=axes)


@st.composite
def layout_problems(draw):
    grid = draw(st.sampled_from([(2, 4), (4, 2), (2, 2), (8,), (4,)]))
    ndim = draw(st.integers(3, 4))
    shape = tuple(draw(st.lists(st.sampled_from([1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 16]),
                                min_size=ndim, max_size=ndim)))
    kind = draw(st.sampled_from(KINDS))
    axes = draw(st.one_of(st.none(), st.permutations(range(ndim)).flatmap(
        lambda p: st.integers(1, ndim).map(lambda k: tuple(p[:k])))))
    n_axes = ndim if axes is None else len(axes)
    s = None
    if draw(st.booleans()):
        s = tuple(draw(st.integers(2, 12)) for _ in range(n_axes))
    names = ("x", "y")[:len(grid)]
    if kind == "irfftn" and s is None:           # numpy refuses 2 * (1 - 1) = 0 points
        last = (ndim - 1) if axes is None else axes[-1] % ndim
        shape = shape[:last] + (max(shape[last], 2),) + shape[last + 1:]
    fitting = [sp for sp in all_specs(ndim, names) if _fits(shape, sp, dict(zip(names, grid)))]
    spec = draw(st.sampled_from(fitting))         # P() always fits
    return dict(grid=grid, shape=shape, kind=kind, axes=axes, s=s, spec=spec,
                norm=draw(st.sampled_from(NORMS)), seed=draw(st.integers(0, 99)))


@settings(max_examples=60)
@given(layout_problems())
def test_any_layout_with_axes_s_and_uneven_sizes(p):
    mesh = pfft.make_mesh(p["grid"])
    check_layout(mesh, p["spec"], p["kind"], p["shape"], axes=p["axes"], s=p["s"],
                 norm=p["norm"], seed=p["seed"])


# -- layouts that once gave wrong results, one regression test each ------------------

def test_irfftn_of_rfftn_over_trailing_axes_of_a_pencil():
    mesh = pfft.make_mesh((2, 2))
    u = np.random.default_rng(0).standard_normal((14, 14, 14))
    for axes in ((-2, -1), (1, 2)):
        f = pfft.rfftn(pfft.device_put(u, mesh), axes=axes)
        assert f.shape == (14, 14, 8)
        for s in (None, [14, 14]):
            y = pfft.irfftn(f, s=s, axes=axes)
            assert y.shape == u.shape and y.dtype == np.float64
            assert rel_err(y, u) <= 1e-12
    u4 = np.random.default_rng(1).standard_normal((4, 6, 8, 10))
    for axes in ((-2,), (-1, -2), (-1, 0), (0, -1)):
        f = pfft.rfftn(pfft.device_put(u4, mesh), axes=axes)
        y = pfft.irfftn(f, s=[u4.shape[a] for a in axes], axes=axes)
        assert y.shape == u4.shape and rel_err(y, u4) <= 1e-12


def test_default_axes_are_all_axes_as_in_numpy():
    mesh = pfft.make_mesh((2, 2))
    x = np.random.default_rng(2).standard_normal((4, 6, 8, 10))
    assert rel_err(pfft.fftn(x, mesh=mesh), np.fft.fftn(x)) <= 1e-12
    assert rel_err(pfft.rfftn(x, mesh=mesh), np.fft.rfftn(x)) <= 1e-12
    k = np.fft.fftn(x)
    assert rel_err(pfft.ifftn(k, mesh=mesh), np.fft.ifftn(k)) <= 1e-12
    h = np.fft.rfftn(x)
    assert rel_err(pfft.irfftn(h, mesh=mesh), np.fft.irfftn(h)) <= 1e-12
    assert rel_err(pfft.fftn(x[0, 0], mesh=mesh), np.fft.fftn(x[0, 0])) <= 1e-12   # 2-D
    assert pfft.device_put(x, mesh).sharding.spec != P()


def test_irfftn_of_a_padded_spectrum_with_s_returns_the_real_length():
    """A padded spectrum's shape and sharding are also those of other plans' spectra
    (length 13 here): ``s`` says which real length it holds, and without ``s`` the
    result is numpy's, whatever forward calls ran before."""
    mesh = pfft.make_mesh((2, 2))
    u = np.random.default_rng(3).standard_normal((12, 12, 12))
    plan = pfft.plan(u.shape, u.dtype, mesh, kind="r2c", spectrum="padded")
    k = plan.forward(u)
    assert k.shape[2] > 12 // 2 + 1                      # padded to a multiple of 2
    y = pfft.irfftn(k, s=u.shape, axes=(0, 1, 2))
    assert y.shape == u.shape and rel_err(y, u) <= 1e-12
    other = pfft.plan((12, 12, 13), u.dtype, mesh, kind="r2c", spectrum="padded")
    assert other.out_shape == k.shape and other.out_sharding.is_equivalent_to(k.sharding, 3)
    w = np.random.default_rng(4).standard_normal((12, 12, 13))
    assert rel_err(pfft.irfftn(other.forward(w), s=w.shape, axes=(0, 1, 2)), w) <= 1e-12
    assert rel_err(pfft.irfftn(k, s=u.shape, axes=(0, 1, 2)), u) <= 1e-12
    assert pfft.irfftn(k).shape == (12, 12, 2 * (k.shape[2] - 1))      # numpy's


# -- no gathers, no idle devices ---------------------------------------------------------

@pytest.mark.parametrize("grid, spec", [((4,), P(None, None, "x")), ((2, 2), P(None, "x", "y"))])
def test_a_split_halved_axis_is_exchanged_not_gathered(grid, spec):
    mesh = pfft.make_mesh(grid)
    plan = pfft.plan((16, 16, 16), np.float64, mesh, kind="r2c", in_sharding=spec)
    assert "all_gather" not in repr(plan)
    for reverse in (False, True):
        counts = plan.collectives(reverse=reverse)
        assert counts["all-gather"] == 0 and counts["all-reduce"] == 0
    assert plan.chain.out_layout.used_mesh_axes == {"x", "y"} & set(mesh.axis_names)
    u = np.random.default_rng(4).standard_normal((16, 16, 16))
    k = plan.forward(jax.device_put(u, NamedSharding(mesh, spec)))
    assert rel_err(k, np.fft.rfftn(u)) <= 1e-12
    assert rel_err(plan.backward(k), u) <= 1e-12


@pytest.mark.parametrize("shape", [(1, 64, 64), (64, 64), (4, 8, 8)])
def test_small_axes_split_over_both_mesh_axes(shape):
    """Every device does its own share: an axis splits over ('x', 'y') where that is
    what it takes; the output uses all 8 devices."""
    mesh = pfft.make_mesh((2, 4))
    with warnings.catch_warnings():
        warnings.simplefilter("error", ReplicationWarning)
        x = pfft.device_put(np.random.default_rng(5).standard_normal(shape), mesh)
        k = pfft.fftn(x)
    assert _used(x.sharding.spec) == {"x", "y"} and _used(k.sharding.spec) == {"x", "y"}
    assert all(sh.data.size == k.size // 8 for sh in k.addressable_shards)
    assert rel_err(k, np.fft.fftn(np.asarray(x))) <= 1e-12
    assert rel_err(pfft.ifftn(k), np.asarray(x)) <= 1e-12


def test_nothing_to_split_warns_once_per_plan():
    mesh = pfft.make_mesh((2, 2))
    pfft.clear_plan_cache()
    with pytest.warns(ReplicationWarning, match="repeats work"):
        k = pfft.fftn(np.ones((3, 3, 3)), mesh=mesh)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ReplicationWarning)
        pfft.fftn(np.ones((3, 3, 3)), mesh=mesh)          # the cached plan: no warning
    assert rel_err(k, np.fft.fftn(np.ones((3, 3, 3)))) <= 1e-12


def test_a_replicated_input_is_split_locally_not_left_replicated():
    mesh = pfft.make_mesh((2, 4))
    x = jax.device_put(np.random.default_rng(6).standard_normal((8, 8, 8)),
                       NamedSharding(mesh, P()))
    fn = jax.jit(pfft.fftn)
    counts = count_collectives(fn.lower(x).compile().as_text())
    assert counts["all-gather"] == 0
    k = fn(x)
    assert _used(k.sharding.spec) == {"x", "y"}
    assert rel_err(k, np.fft.fftn(np.asarray(x))) <= 1e-12


# -- meshes and shardings users make ------------------------------------------------------

@pytest.mark.parametrize("axis_type", [AxisType.Explicit, AxisType.Auto])
def test_a_batch_sharded_over_a_third_mesh_axis_stays_put(axis_type):
    mesh = jax.make_mesh((2, 2, 2), ("c", "z", "y"), axis_types=(axis_type,) * 3)
    u = np.random.default_rng(7).standard_normal((2, 8, 8, 8))
    spec = P("c", "z", "y", None)
    x = jax.device_put(u, NamedSharding(mesh, spec))
    plan = pfft.plan(u.shape, u.dtype, mesh, axes=(1, 2, 3), kind="r2c", in_sharding=spec)
    moved = [names_of(st.mesh_axis) for st in plan.chain.stages if hasattr(st, "mesh_axis")]
    assert moved and all("c" not in names for names in moved)
    assert plan.chain.out_layout.split[0] == "c"
    k = jax.jit(plan.forward)(x)
    assert rel_err(k, np.fft.rfftn(u, axes=(1, 2, 3))) <= 1e-12
    assert rel_err(jax.jit(plan.backward)(k), u) <= 1e-12
    f = pfft.rfftn(x, axes=(1, 2, 3), mesh=mesh)
    assert rel_err(f, np.fft.rfftn(u, axes=(1, 2, 3))) <= 1e-12
    # vmap over the batch with the mesh axis named: the same plan per member
    g = jax.jit(jax.vmap(lambda b: pfft.rfftn(b, mesh=mesh), spmd_axis_name="c"))(x)
    assert rel_err(g, np.fft.rfftn(u, axes=(1, 2, 3))) <= 1e-12


def test_vmap_of_device_put_over_a_sharded_batch():
    mesh = pfft.make_mesh((2, 4))
    u = np.random.default_rng(8).standard_normal((2, 8, 8, 8))
    batch = jax.device_put(u, NamedSharding(mesh, P("x")))
    put = jax.vmap(lambda b: pfft.device_put(b, mesh, axes=(0, 1, 2)))
    y = jax.jit(put)(batch)
    assert np.array_equal(np.asarray(y), u)
    k = jax.vmap(lambda b: pfft.fftn(b, mesh=mesh))(y)
    assert rel_err(k, np.fft.fftn(u, axes=(1, 2, 3))) <= 1e-12


def _collective_count(fn, x):
    counts = count_collectives(jax.jit(fn).lower(x).compile().as_text())
    return counts


def test_round_trips_on_an_auto_mesh_compile_to_the_planned_exchanges_only():
    """Under jit pfft cannot see an Auto-mesh tracer's layout: the inverse expects the
    forward's output pencil, so a round trip runs the two plans' exchanges only."""
    mesh = pfft.make_mesh((2, 2), axis_types="auto")
    u = np.random.default_rng(9).standard_normal((16, 16, 16))
    x = pfft.device_put(u, mesh)
    c = pfft.plan(u.shape, np.complex128, mesh)
    r = pfft.plan(u.shape, u.dtype, mesh, kind="r2c")
    for fn, plan in ((lambda a: pfft.ifftn(pfft.fftn(a, mesh=mesh), mesh=mesh), c),
                     (lambda a: pfft.irfftn(pfft.rfftn(a, mesh=mesh), s=u.shape, axes=(0, 1, 2), mesh=mesh), r)):
        got = _collective_count(fn, x)
        want = {op: plan.collectives()[op] + plan.collectives(reverse=True)[op]
                for op in ("all-to-all", "collective-permute", "all-gather")}
        assert {op: got[op] for op in want} == want
        assert want["all-to-all"] + want["collective-permute"] > 0
        assert rel_err(jax.jit(fn)(x), u) <= 1e-12


def test_a_particle_mesh_force_step_on_an_auto_mesh_adds_no_exchanges():
    """rfftn of a density, then three irfftn (the force components), as JaxPM writes it."""
    mesh = pfft.make_mesh((2, 2), axis_types="auto")
    n = 16
    rho = np.random.default_rng(10).standard_normal((n, n, n))
    plan = pfft.plan(rho.shape, rho.dtype, mesh, kind="r2c")
    ks = plan.wavenumbers(angular=True)

    def forces(r):
        rk = pfft.rfftn(r, mesh=mesh)
        k2 = sum(k * k for k in ks)
        pot = jnp.where(k2 > 0, -rk / jnp.where(k2 > 0, k2, 1.0), 0)
        return [pfft.irfftn(-1j * k * pot, s=rho.shape, axes=(0, 1, 2), mesh=mesh) for k in ks]

    x = pfft.device_put(rho, mesh)
    got = _collective_count(forces, x)
    fwd, bwd = plan.collectives(), plan.collectives(reverse=True)
    for op in ("all-to-all", "collective-permute"):
        assert got[op] == fwd[op] + 3 * bwd[op], (op, got)
    assert got["all-gather"] == 0
    # values: against numpy
    rk = np.fft.rfftn(rho)
    kx = [np.asarray(k) for k in ks]
    k2 = sum(k * k for k in kx)
    pot = np.where(k2 > 0, -rk / np.where(k2 > 0, k2, 1.0), 0)
    for f, k in zip(jax.jit(forces)(x), kx):
        assert rel_err(f, np.fft.irfftn(-1j * k * pot, s=rho.shape, axes=(0, 1, 2))) <= 1e-12


def test_a_jitted_step_on_the_users_auto_mesh_finds_the_mesh_without_mesh_argument():
    """A mesh the user made (Auto axes, own names), no `mesh=` and no `jax.set_mesh`:
    the jitted argument's type carries the abstract mesh, so pfft distributes (the
    planned exchanges, no gather) and the round trip keeps the input's sharding."""
    mesh = jax.make_mesh((2, 4), ("gx", "gy"), axis_types=(AxisType.Auto,) * 2)
    u = np.random.default_rng(11).standard_normal((16, 16, 8))
    x = jax.device_put(u, NamedSharding(mesh, P("gx", "gy")))

    def step(a):
        return pfft.irfftn(pfft.rfftn(a) * 2.0)

    y = jax.jit(step)(x)
    assert rel_err(y, 2.0 * u) <= 1e-12
    assert y.sharding.is_equivalent_to(x.sharding, 3)
    plan = pfft.plan(u.shape, u.dtype, mesh, kind="r2c")
    got = _collective_count(step, x)
    assert got["all-gather"] == 0 and got["all-reduce"] == 0, got
    for op in ("all-to-all", "collective-permute"):
        assert got[op] == plan.collectives()[op] + plan.collectives(reverse=True)[op], got
    k = jax.jit(pfft.fftn)(x)
    assert rel_err(k, np.fft.fftn(u)) <= 1e-12 and not k.sharding.is_fully_replicated


@pytest.mark.parametrize("axis_type", [AxisType.Explicit, AxisType.Auto])
def test_inside_a_users_shard_map_the_transform_is_local(axis_type):
    """In a shard_map over every mesh axis a block is one device's: pfft transforms it
    locally, as jnp.fft does; a shard_map leaving a mesh axis free is refused."""
    mesh = jax.make_mesh((2, 4), ("a", "b"), axis_types=(axis_type,) * 2)
    u = np.random.default_rng(12).standard_normal((4, 8, 8, 6))
    x = jax.device_put(u, NamedSharding(mesh, P("a", "b")))
    local = jax.jit(jax.shard_map(lambda b: pfft.fftn(b, axes=(1, 2, 3)), mesh=mesh,
                                  in_specs=P("a", "b"), out_specs=P("a", "b")))
    want = np.concatenate([np.concatenate([np.fft.fftn(blk, axes=(1, 2, 3))
                                           for blk in np.split(row, 4, axis=1)], axis=1)
                           for row in np.split(u, 2, axis=0)], axis=0)
    assert rel_err(local(x), want) <= 1e-12
    partial = jax.jit(jax.shard_map(lambda b: pfft.fftn(b, axes=(1, 2, 3)), mesh=mesh,
                                    in_specs=P("a"), out_specs=P("a"), axis_names={"a"}))
    with pytest.raises(ValueError, match="leaves \\['b'\\] free"):
        partial(x)
