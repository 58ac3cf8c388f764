"""The planner's search: no all-gather where a chain of exchanges exists.

The greedy walk gets stuck on some uneven layouts (``irfftn`` of a ``(12, 10, 8)``
spectrum in ``P('y', None, None)`` on 2x4 all-gathered it); :func:`pfft.chain_search._search`
then finds a gather-free chain. Planner-level sweeps (no compile) decide independently
whether one must exist: the output has an even layout over every mesh axis. The
compiled tests enumerate every ``PartitionSpec`` of the spectrum and read the HLO.
"""
import itertools

import numpy as np
import pytest
from jax.sharding import PartitionSpec as P

import pfft
import pfft.chain_search as planner
from pfft.engines.r2r import R2R
from pfft.layout import Layout, layout_from_spec, names_of
from pfft.chain_search import build_chain
from pfft.stages import Exchange, Gather, LocalFFT, LocalR2R, RealFFT, Resize, Scatter
from conftest import all_specs
from test_layouts import _fits, _used, check_layout

GRIDS = {"2x4": (("x", 2), ("y", 4)), "2x2": (("x", 2), ("y", 2)), "4": (("x", 4),),
         "2x2x2": (("a", 2), ("b", 2), ("c", 2))}


def spreads(shape, grid) -> bool:
    """Whether some even layout of ``shape`` uses every mesh axis of ``grid``."""
    names = [m for m, _ in grid]
    return any(_fits(shape, spec, dict(grid)) and _used(spec) == set(names)
               for spec in all_specs(len(shape), names))


def check_chain(chain) -> None:
    """Every stage is one the executors run: transforms of whole axes, exchanges of a
    split's minor part (partial moves between even axes), slices of idle mesh axes."""
    lay = chain.in_layout
    for st in chain.stages:
        if isinstance(st, (LocalFFT, RealFFT, LocalR2R)):
            assert all(lay.split[a] is None for a in st.axes)
        elif isinstance(st, Resize):
            assert lay.split[st.axis] is None
        elif isinstance(st, Exchange):
            moved, had = names_of(st.mesh_axis), names_of(lay.split[st.gather])
            assert had[len(had) - len(moved):] == moved
            assert lay.parts(st.gather) == st.size * st.gather_keep
            assert lay.parts(st.scatter) == st.scatter_had
            if st.gather_keep > 1:
                assert lay.is_even(st.gather)
            if st.scatter_had > 1:
                assert lay.shape[st.scatter] % (st.scatter_had * st.size) == 0
        elif isinstance(st, Scatter):
            assert set(names_of(st.mesh_axis)) <= set(lay.unused_mesh_axes)
            assert lay.split[st.axis] is None
        lay = planner.after(lay, st)
    assert lay == chain.out_layout


def _cases(grid, real, axes, kind, r2r=(), dealiased=None):
    """Every even input layout of a transform, with the output's shape."""
    last = [a for a in axes if a not in dict(r2r)][-1]
    start, out = list(real), list(real)
    if kind == "c2r":
        start[last] = real[last] // 2 + 1
    for a, n in (dealiased or {}).items():
        out[a] = n
    if kind == "r2c":
        out[last] = out[last] // 2 + 1
    for spec in all_specs(len(real), [m for m, _ in grid]):
        lay = layout_from_spec(tuple(start), spec, grid)
        if lay is not None:
            yield lay, tuple(out)


def sweep(grid, real, axes, kind, **kw) -> int:
    """Plan every input layout; where the output can spread over every mesh axis no
    chain may all-gather. Returns how many plans were checked."""
    count = 0
    for lay, out_shape in _cases(grid, real, axes, kind, **kw):
        last = [a for a in axes if a not in dict(kw.get("r2r", ()))][-1]
        chain = build_chain(lay, axes, kind=kind, n=real[last], **kw)
        check_chain(chain)
        check_chain(chain.reversed())
        assert chain.out_layout.shape == out_shape and chain.out_layout.is_even()
        if spreads(out_shape, grid):
            assert not any(isinstance(st, Gather) for st in chain.stages), (lay, chain)
            assert lay.used_mesh_axes <= chain.out_layout.used_mesh_axes, (lay, chain)
        count += 1
    return count


# -- planner level: no compile ------------------------------------------------------------

@pytest.mark.parametrize("spec, real, axes", [
    (P("y", None, None), (12, 10, 14), (0, 1, 2)),
    (P(None, "x", "y"), (12, 10, 14), (0, 1, 2)),
    (P("x", "y", None), (14, 12, 10), (1, 2, 0)),
])
def test_irfftn_layouts_where_the_walk_gathers_plan_exchanges_only(spec, real, axes):
    """``irfftn`` from these spectrum layouts on 2x4 once all-gathered (the greedy walk
    gets stuck); the search finds a chain of at most four exchanges."""
    grid = GRIDS["2x4"]
    start = tuple(n // 2 + 1 if a == axes[-1] else n for a, n in enumerate(real))
    lay = layout_from_spec(start, spec, grid)
    chain = build_chain(lay, axes, kind="c2r", n=real[axes[-1]])
    check_chain(chain)
    assert not any(isinstance(st, Gather) for st in chain.stages)
    assert chain.out_layout.is_even() and not chain.out_layout.unused_mesh_axes
    assert chain.out_layout.shape == real
    assert chain.exchanges <= 4
    # the greedy walk alone gathers here: the search is what removes it
    walk = planner._greedy(lay, planner._Rules(axes, "c2r", real[axes[-1]], {}, {}, lay), True)
    assert any(isinstance(st, Gather) for st in walk.stages)


def test_the_walk_is_kept_unless_the_search_needs_fewer_exchanges():
    """Where the walk does not gather its chain stands, except where the input uses
    every mesh axis and the search needs fewer exchanges; never where a mesh axis
    idles in the input (fewer exchanges there would come from repeated work)."""
    grid = GRIDS["2x4"]
    replaced = set()
    for real, kind in itertools.product([(16, 16, 16), (8, 12, 16)], ["c2c", "r2c"]):
        for lay, _ in _cases(grid, real, (0, 1, 2), kind):
            rules = planner._Rules((0, 1, 2), kind, None, {}, {}, lay)
            walk = planner._greedy(lay, rules, True)
            if any(isinstance(st, Gather) for st in walk.stages):
                continue
            chain = build_chain(lay, (0, 1, 2), kind=kind)
            if chain != walk:
                assert not lay.unused_mesh_axes, lay
                assert chain.exchanges < walk.exchanges, (lay, chain, walk)
                replaced.add((kind, lay.split))
    # only real transforms whose halved axis is split gain; a pencil split on it and
    # on axis 0 or 1 always does (3 -> 2)
    assert all(kind == "r2c" and split[2] is not None for kind, split in replaced)
    assert replaced >= {("r2c", split) for split in [(None, "x", "y"), (None, "y", "x"),
                                                      ("x", None, "y"), ("y", None, "x")]}


def test_a_split_halved_axis_moves_onto_the_other_split_axis():
    """rfftn with the last axis split on 2x4 (``P(None, 'x', 'y')``): 'y' moves onto
    axis 1 (a slab over both mesh axes), the pair runs there, one more exchange: two
    in all, where the walk took three."""
    lay = Layout((16, 16, 16), (None, "x", "y"), GRIDS["2x4"])
    chain = build_chain(lay, (0, 1, 2), kind="r2c")
    check_chain(chain)
    check_chain(chain.reversed())
    exchanges = [st for st in chain.stages if isinstance(st, Exchange)]
    assert [(st.mesh_axis, st.gather, st.scatter) for st in exchanges] == [
        ("y", 2, 1), (("x", "y"), 1, 0)]
    assert chain.out_layout.split == (("x", "y"), None, None)


def test_nothing_found_keeps_the_gather():
    """(3, 5, 7) on 2x2: no axis divides, so the output is whole; the chain says so."""
    lay = Layout((3, 5, 7), ("x", "y", None), GRIDS["2x2"])
    chain = build_chain(lay, (0, 1, 2))
    assert not chain.out_layout.used_mesh_axes
    assert planner._search(lay, planner._Rules((0, 1, 2), "c2c", None, {}, {}, lay),
                           True) is None


@pytest.mark.parametrize("grid", list(GRIDS))
def test_every_input_layout_plans_without_gather_where_one_can(grid):
    grid = GRIDS[grid]
    shapes = [(12, 10, 14), (8, 12, 10), (6, 5, 22), (10, 6, 9)]
    if len(grid) == 3:
        shapes = shapes[:2]
    count = 0
    for real, axes, kind in itertools.product(shapes, [(0, 1, 2), (1, 2, 0), (0, 2), (1,)],
                                              ["c2c", "r2c", "c2r"]):
        count += sweep(grid, real, axes, kind)
    assert count > 50


# how many input layouts each sweep below plans (every even one, counted on the planner
# as it is): DCT and DST plans, each kind (c2c, r2c, c2r) in turn, then two dealiased
# plans, each kind (c2c, r2c) in turn
SWEPT = {"2x4": {"dct": [7, 7, 12], "dst": [7, 7, 3], "dealiased": [7, 7],
                 "dealiased 2": [12, 12]},
         "2x2x2": {"dct": [52, 52, 76], "dst": [52, 52, 13], "dealiased": [52, 52],
                   "dealiased 2": [76, 76]}}


@pytest.mark.parametrize("grid", ["2x4", "2x2x2"])
def test_r2r_and_dealiased_plans_too(grid):
    least = SWEPT[grid]
    grid = GRIDS[grid]
    real = (12, 10, 14)
    counts = {"dct": [], "dst": [], "dealiased": [], "dealiased 2": []}
    for kind in ("c2c", "r2c", "c2r"):
        counts["dct"].append(sweep(grid, real, (0, 1, 2), kind, r2r=((1, R2R("dct", 2, 10)),)))
        counts["dst"].append(sweep(grid, real, (1, 2, 0), kind, r2r=((2, R2R("dst", 1, 14)),)))
    for kind in ("c2c", "r2c"):
        counts["dealiased"].append(sweep(grid, real, (0, 1, 2), kind, dealiased={0: 8, 2: 10}))
        counts["dealiased 2"].append(sweep(grid, (8, 12, 10), (1, 2, 0), kind,
                                           dealiased={1: 8, 0: 6}))
    for name, want in least.items():        # no sweep may check fewer plans than it did
        assert len(counts[name]) == len(want), name
        assert all(got >= lower > 0 for got, lower in zip(counts[name], want)), \
            (name, counts[name], want)


def test_padded_outputs_only_avoid_gathers():
    """``even_output=False`` (a padded spectrum, MPI): done is enough, and the
    search still takes a gather away where exchanges can."""
    grid = GRIDS["2x4"]
    for lay, _ in _cases(grid, (12, 10, 14), (0, 1, 2), "c2r"):
        chain = build_chain(lay, (0, 1, 2), kind="c2r", n=14, even_output=False)
        check_chain(chain)
        assert not any(isinstance(st, Gather) for st in chain.stages)


# -- compiled: every spectrum layout, numpy's values, no all-gather in the HLO ---------

@pytest.fixture
def fresh_plans():
    pfft.clear_plan_cache()        # no plan recorded by other tests' forward calls
    yield
    pfft.clear_plan_cache()


@pytest.mark.parametrize("grid, spectrum, axes", [
    ((2, 4), (12, 10, 8), None),           # real (12, 10, 14)
    ((2, 4), (8, 12, 10), (1, 2, 0)),      # real (14, 12, 10)
    ((2, 2), (6, 5, 12), None),            # real (6, 5, 22)
    ((2, 2), (12, 5, 6), (1, 2, 0)),       # real (22, 5, 6)
])
def test_irfftn_of_every_spectrum_layout_has_no_all_gather(grid, spectrum, axes, fresh_plans):
    mesh = pfft.make_mesh(grid)
    nd = len(spectrum)
    last = nd - 1 if axes is None else axes[-1]
    real = tuple(2 * (n - 1) if a == last else n for a, n in enumerate(spectrum))
    assert spreads(real, tuple(dict(mesh.shape).items()))     # an even output exists
    ran = 0
    for spec in all_specs(nd, mesh.axis_names):
        if _fits(spectrum, spec, mesh):
            check_layout(mesh, spec, "irfftn", spectrum, axes=axes)
            ran += 1
    assert ran >= 9


@pytest.mark.parametrize("engine", ["xla", "auto"])
@pytest.mark.parametrize("kinds, padding", [(("fft", "dct2", "rfft"), 1.0), (None, 1.0),
                                            (None, 1.5)])
def test_mixed_and_dealiased_plans_the_walk_gathered_run_right(kinds, padding, engine,
                                                               fresh_plans):
    """Forward and backward of plans whose greedy walk all-gathered (input split over
    ('y', 'x') along the halved axis only): exchanges only, numpy's/scipy's values."""
    import jax
    import scipy.fft as sf
    from jax.sharding import NamedSharding
    from conftest import rel_err
    from test_dealias import _numpy_backward, _numpy_forward

    mesh = pfft.make_mesh((2, 4))
    n = (4, 6, 16)
    spec = P(None, None, ("y", "x"))
    plan = pfft.plan(n, np.float64, mesh, kind="r2c", kinds=kinds, padding=padding,
                     in_sharding=spec, engine=engine)
    m = tuple(plan.chain.in_layout.shape)
    for reverse in (False, True):
        assert plan.collectives(reverse=reverse)["all-gather"] == 0
    assert not plan.chain.out_layout.unused_mesh_axes
    u = np.random.default_rng(9).standard_normal(m)
    k = plan.forward(jax.device_put(u, NamedSharding(mesh, spec)))
    if kinds is not None:
        want = np.fft.fft(np.fft.rfft(sf.dct(u, type=2, axis=1), axis=2), axis=0)
    else:
        want = _numpy_forward(u, n, real=True)
    assert rel_err(k, want) <= 1e-12
    back = plan.backward(k)
    if padding == 1.0:
        assert rel_err(back, u) <= 1e-12
    else:
        assert rel_err(back, _numpy_backward(np.asarray(k), n, m, real=True)) <= 1e-12
