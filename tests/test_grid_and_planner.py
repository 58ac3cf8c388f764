"""Grids, layouts and the planner's stage chains (no transforms run here)."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import pfft
from pfft.layout import Layout, default_layout, layout_from_spec, names_of
from pfft.chain_search import build_chain
from pfft.stages import Exchange, Gather, LocalFFT, RealFFT, Scatter
from jax.sharding import PartitionSpec as P

from conftest import GRIDS, all_specs


@pytest.mark.parametrize("n, dims", [(1, (1, 1)), (2, (1, 2)), (4, (2, 2)), (6, (2, 3)),
                                     (7, (1, 7)), (8, (2, 4)), (12, (3, 4)), (16, (4, 4))])
def test_dims_create_is_balanced(n, dims):
    assert pfft.dims_create(n) == dims
    assert pfft.dims_create(n, 1) == (n,)


def test_make_mesh_shapes(devices):
    assert dict(pfft.make_mesh(8).shape) == {"x": 2, "y": 4}
    assert dict(pfft.make_mesh((4, 2)).shape) == {"x": 4, "y": 2}
    assert dict(pfft.make_mesh((8,)).shape) == {"x": 8}
    mesh = pfft.make_mesh((2, 2), devices[4:], axis_names=("a", "b"), axis_types="auto")
    assert list(mesh.devices.flat) == devices[4:]
    assert mesh.axis_names == ("a", "b")


@pytest.mark.parametrize("bad", [0, -2, (2, 2, 2), (0, 2), (16,)])
def test_make_mesh_rejects_bad_grids(bad):
    with pytest.raises(ValueError, match="make_mesh"):
        pfft.make_mesh(bad)


def _chain(shape, grid, axes=(0, 1, 2), spec=None):
    names = ("x", "y")[:len(grid)]
    grid = tuple((n, s) for n, s in zip(names, grid) if s > 1)
    lay = default_layout(shape, axes, grid) if spec is None else layout_from_spec(shape, spec, grid)
    return build_chain(lay, axes)


def test_pencil_chain_is_three_ffts_and_two_all_to_alls():
    chain = _chain((16, 16, 16), (2, 4))
    kinds = [type(s) for s in chain.stages]
    assert kinds == [LocalFFT, Exchange, LocalFFT, Exchange, LocalFFT]
    assert chain.in_layout.spec == P("x", "y", None)
    assert chain.out_layout.spec == P(None, "x", "y")


def test_slab_chain_has_one_all_to_all():
    chain = _chain((16, 16, 16), (8,))
    assert [type(s) for s in chain.stages] == [LocalFFT, Exchange, LocalFFT]
    assert chain.stages[0].axes == (1, 2)
    assert chain.out_layout.spec == P(None, "x", None)


def test_single_device_chain_is_one_local_fft():
    chain = _chain((5, 6, 7), (1, 1))
    assert chain.stages == (LocalFFT((0, 1, 2)),)


def test_input_in_another_pencil_starts_with_its_local_axis():
    chain = _chain((16, 16, 16), (2, 2), spec=P(None, "x", "y"))     # X-pencil
    assert chain.stages[0] == LocalFFT((0,))
    assert chain.exchanges == 2
    assert chain.out_layout.spec == P("x", "y", None)


def test_inverse_plan_from_forward_output_returns_to_the_input_layout():
    fwd = _chain((16, 24, 8), (2, 4))
    inv = build_chain(fwd.out_layout, (0, 1, 2))
    assert inv.out_layout == fwd.in_layout


def _check_chain(chain, axes, kind):
    """The structural promises of any planned chain: every axis transformed once, the
    halved axis first (r2c) or last (c2r), even ends, and a walk of the layouts that
    agrees stage by stage with what each stage says it does."""
    transformed = [a for s in chain.stages if isinstance(s, (LocalFFT, RealFFT)) for a in s.axes]
    assert sorted(transformed) == sorted(axes)
    ffts = [s for s in chain.stages if isinstance(s, (LocalFFT, RealFFT))]
    if kind == "r2c":       # the halved axis first, then complex axes
        assert isinstance(ffts[0], RealFFT) and ffts[0].to_complex and ffts[0].axis == axes[-1]
    if kind == "c2r":       # the halved axis last
        assert isinstance(ffts[-1], RealFFT) and not ffts[-1].to_complex
    assert chain.in_layout.is_even() and chain.out_layout.is_even()
    assert chain.reversed().reversed() == chain
    # the layouts walked by the chain are consistent: every fft sees a whole axis
    lay, walked = chain.in_layout, []
    for s in chain.stages:
        if isinstance(s, (LocalFFT, RealFFT)):
            assert all(lay.split[a] is None for a in s.axes)
            if isinstance(s, RealFFT):
                lay = lay.with_size(s.axis, s.half if s.to_complex else s.n)
        elif isinstance(s, Exchange):         # the moved mesh axes: gather's minor part
            moved, had = names_of(s.mesh_axis), names_of(lay.split[s.gather])
            assert had[len(had) - len(moved):] == moved and lay.parts(s.scatter) == s.scatter_had
            assert lay.parts(s.gather) == s.size * s.gather_keep
            lay = (lay.with_split(s.gather, had[:len(had) - len(moved)])
                   .with_split(s.scatter, names_of(lay.split[s.scatter]) + moved))
        elif isinstance(s, Scatter):          # a mesh axis the input was replicated over
            assert s.mesh_axis in lay.unused_mesh_axes and lay.split[s.axis] is None
            lay = lay.with_split(s.axis, s.mesh_axis)
        elif isinstance(s, Gather):
            lay = lay.with_split(s.axis, None)
        walked.append(lay)
    assert lay == chain.out_layout
    # Chain.layouts (what the layout figures draw) walks the same way, both directions
    assert chain.layouts() == tuple(walked)
    assert chain.reversed().layouts() == tuple(walked[-2::-1]) + (chain.in_layout,)


def _start_shape(shape, axes, kind):
    return shape if kind != "c2r" else tuple(
        n // 2 + 1 if a == axes[-1] else n for a, n in enumerate(shape))


@given(shape=st.tuples(*[st.integers(1, 40)] * 3), grid=st.sampled_from(GRIDS),
       axes=st.sampled_from([(0, 1, 2), (2, 1, 0), (1, 2), (0,), (0, 2)]),
       kind=st.sampled_from(["c2c", "r2c", "c2r"]))
def test_chains_transform_each_axis_once_and_end_even(shape, grid, axes, kind):
    names = ("x", "y")[:len(grid)]
    grid = tuple((n, s) for n, s in zip(names, grid) if s > 1)
    start = _start_shape(shape, axes, kind)
    chain = build_chain(default_layout(start, axes, grid), axes, kind=kind, n=shape[axes[-1]])
    _check_chain(chain, axes, kind)
    # from the default layout: one all-to-all per grid axis, plus at most one per
    # axis left uneven at the end
    assert chain.exchanges <= 2 * len(grid)
    if kind == "c2c" and all(n % 8 == 0 for n in shape):
        assert chain.exchanges <= len(grid)


def test_chains_from_any_layout_walk_consistently_with_uneven_partial_moves():
    # the case that made the walk check above drop its rule "partial moves are even":
    # from P('x', None, 'y') on 2x4, c2r over (1, 2, 0) evens up axis 2 (9 over 4) by
    # moving 'y' while 'x' stays
    grid = (("x", 2), ("y", 4))
    axes, kind = (1, 2, 0), "c2r"
    start = _start_shape((6, 6, 16), axes, kind)
    layout = layout_from_spec(start, P("x", None, "y"), grid)
    chain = build_chain(layout, axes, kind=kind, n=6)
    _check_chain(chain, axes, kind)


@given(shape=st.tuples(*[st.integers(1, 24)] * 3), grid=st.sampled_from(GRIDS),
       axes=st.sampled_from([(0, 1, 2), (2, 1, 0), (1, 2, 0), (1, 2), (0,), (0, 2), (2,)]),
       kind=st.sampled_from(["c2c", "r2c", "c2r"]), data=st.data())
def test_chains_from_any_even_input_layout_are_consistent(shape, grid, axes, kind, data):
    """Users bring their own layouts: every even PartitionSpec of the input (each mesh
    axis on at most one array axis, alone or in a group) plans a consistent chain."""
    names = ("x", "y")[:len(grid)]
    grid = tuple((n, s) for n, s in zip(names, grid) if s > 1)
    start = _start_shape(shape, axes, kind)
    specs = [sp for sp in all_specs(3, [n for n, _ in grid])
             if layout_from_spec(start, sp, grid) is not None]
    spec = data.draw(st.sampled_from(specs), label="in_spec")
    chain = build_chain(layout_from_spec(start, spec, grid), axes, kind=kind, n=shape[axes[-1]])
    _check_chain(chain, axes, kind)


def test_real_pencil_chain_never_splits_the_halved_axis():
    """rfftn on a 2x2 pencil in numpy's layout: two exchanges, the halved axis never
    split (the first moves 'y' next to 'x' on axis 0, the second moves both onto axis
    1); where the grid does not divide an axis by both, three, the last one making the
    halved axis whole again. The padded spectrum takes two either way."""
    grid = (("x", 2), ("y", 2))
    chain = build_chain(default_layout((16, 16, 16), (0, 1, 2), grid), (0, 1, 2), kind="r2c")
    assert chain.stages[0] == RealFFT((2,), 16, True)
    assert chain.exchanges == 2 and not any(isinstance(s, Gather) for s in chain.stages)
    assert chain.out_layout.spec == P(None, ("x", "y"), None)
    assert chain.out_layout.shape == (16, 16, 9)
    assert all(s.scatter != 2 for s in chain.stages if isinstance(s, Exchange))
    odd = build_chain(default_layout((6, 6, 16), (0, 1, 2), grid), (0, 1, 2), kind="r2c")
    assert odd.exchanges == 3 and odd.out_layout.spec == P("y", "x", None)
    padded = build_chain(default_layout((16, 16, 16), (0, 1, 2), grid), (0, 1, 2), kind="r2c",
                         even_output=False)
    assert padded.exchanges == 2 and padded.out_layout.spec == P(None, "x", "y")
    assert padded.out_layout.padded_shape == (16, 16, 10)
    slab = build_chain(default_layout((16, 16, 16), (0, 1, 2), (("x", 4),)), (0, 1, 2),
                       kind="r2c")
    assert slab.stages[0] == RealFFT((1, 2), 16, True) and slab.exchanges == 1
    assert slab.out_layout.spec == P(None, "x", None)


@pytest.mark.parametrize("grid, first, out", [
    ((2, 4), "x", P(("y", "x"), None, None)),     # 'x' (2) moves first: half the block
    ((4, 2), "y", P(None, ("x", "y"), None)),     # 'y' (2) moves first
    ((2, 2), "y", P(None, ("x", "y"), None))])    # a tie keeps 'y' first
def test_real_pencil_chain_merges_the_smaller_mesh_axis_first(grid, first, out):
    """rfftn in numpy's layout on a p x q pencil: the merge that keeps the halved axis
    whole moves the split over fewer devices, so the two exchanges send
    (1 - 1/min(p, q)) + (1 - 1/(p q)) of the block, not (1 - 1/q) + (1 - 1/(p q))."""
    names = dict(zip(("x", "y"), grid))
    lay = default_layout((32, 32, 32), (0, 1, 2), tuple(names.items()))
    chain = build_chain(lay, (0, 1, 2), kind="r2c")
    exchanges = [s for s in chain.stages if isinstance(s, Exchange)]
    assert [e.size for e in exchanges] == [names[first], grid[0] * grid[1]]
    assert exchanges[0].mesh_axis == first
    assert chain.out_layout.spec == out and chain.out_layout.is_even()
    back = chain.reversed()
    assert back.out_layout == lay and back.exchanges == 2


def test_layout_describes_itself():
    lay = Layout((8, 6, 5), ("x", "y", None), (("x", 2), ("y", 3)))
    assert lay.local_shape == (4, 2, 5)
    assert "pencil local in axis 2" in str(lay)
    assert layout_from_spec((8, 6, 5), P("x", ("y",)), lay.mesh_shape) == lay
    assert layout_from_spec((7, 6, 5), P("x", "y"), lay.mesh_shape) is None    # uneven


@pytest.mark.parametrize("kind", ["c2c", "r2c"])
def test_a_batch_axis_the_grid_does_not_divide_stays_whole(kind):
    """Uneven blocks (MPI) could split 3 field components 2/1 over ranks; a transformed
    axis takes the split instead (found by the Taylor-Green solver under mpirun)."""
    grid = (("x", 2), ("y", 2))
    layout = default_layout((3, 32, 32, 32), (1, 2, 3), grid)
    assert layout.split[0] is None
    chain = build_chain(layout, (1, 2, 3), kind=kind, even_output=False)
    assert [lay.split[0] for lay in chain.layouts()] == [None] * len(chain.stages)
    assert chain.exchanges == 2


