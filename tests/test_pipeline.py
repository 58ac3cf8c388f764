"""Pipelined exchanges (``pipeline=k``): each exchange's window of stages runs on k
pieces of the block, with the values of the uncut chain.

The windows are checked as stage lists (every exchange in one, no stage in it acting
along the cut axis but the exchange of a window cut within its chunks, split
transforms still the same map), and the plans end to end against numpy in float64:
forward and backward, c2c, r2c, real-to-real and dealiased plans, 2-D arrays, slab,
pencil and 3-axis grids, users' layouts, both engines, gradients against the
transposed DFT, vmap, the compiled program (k all-to-alls per exchange), and the
native engine's pieces read and written where they lie (its rows kernels' calls).
"""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.fft
from jax.sharding import PartitionSpec as P

import pfft
from conftest import random_array, rel_err
from pfft.layout import default_layout
from pfft.pipeline import acts_on, pipelined
from pfft.planner import build_chain
from pfft.stages import Exchange, LocalFFT, RealFFT

ENGINES = ["xla", "native"]


def _mesh(grid):
    """A mesh of ``grid`` (up to three axes x, y, z) on the first devices."""
    names = ("x", "y", "z")[:len(grid)]
    return jax.make_mesh(grid, names, axis_types=(jax.sharding.AxisType.Explicit,) * len(grid),
                         devices=jax.devices()[:int(np.prod(grid))])


def _native_or_skip(engine):
    if engine == "native" and not pfft.engines.native.available("cpu"):
        pytest.skip(f"native CPU engine: {pfft.engines.native.unavailable_reason('cpu')}")


def _blocks_held(compiled, block_bytes: float, donated: bool = False) -> float:
    """The memory a device needs for a compiled program (arguments, outputs and
    temporaries, from XLA's ``memory_analysis``; a donated argument aliased to an
    output counted once), in blocks of ``block_bytes``."""
    m = compiled.memory_analysis()
    used = m.argument_size_in_bytes + m.output_size_in_bytes + m.temp_size_in_bytes
    return (used - (m.alias_size_in_bytes if donated else 0)) / block_bytes


def _chains(grid, kind, shape=(16, 12, 10)):
    mesh_shape = tuple(zip(("x", "y", "z"), grid))
    chain = build_chain(default_layout(shape, (0, 1, 2), mesh_shape), (0, 1, 2), kind=kind,
                        n=None)
    return chain, chain.reversed()


@pytest.mark.parametrize("grid", [(4,), (2, 2), (2, 4), (2, 2, 2)])
@pytest.mark.parametrize("kind", ["c2c", "r2c"])
def test_windows_cover_every_exchange_and_leave_their_axis_alone(grid, kind):
    for chain in _chains(grid, kind):
        split, windows = pipelined(chain, 4)
        inside = {i for w in windows for i in range(w.start, w.stop)}
        exchanges = [i for i, st in enumerate(split.stages) if isinstance(st, Exchange)]
        assert exchanges and set(exchanges) <= inside, (split.stages, windows)
        for w in windows:
            assert 2 <= w.pieces <= 4
            inner = split.stages[w.start:w.stop]
            acting = [st for st in inner if w.axis in acts_on(st)]
            if w.chunks == 1:
                assert not acting, (acting, w)
                continue
            # cut within its chunks: only the window's one exchange moves the axis
            # (scatters it where it is chunked at the start), and every transform
            # acts on earlier axes only
            (ex,) = acting
            assert isinstance(ex, Exchange) and w.chunks == ex.size, (ex, w)
            assert (ex.scatter if w.chunked_at_start else ex.gather) == w.axis
            assert all(max(acts_on(st)) < w.axis for st in inner if st is not ex)
        # the split chain ends where the chain ends, through the same layouts
        assert split.out_layout == chain.out_layout
        assert split.layouts()[-1] == chain.layouts()[-1]


def test_a_slab_is_cut_within_its_exchanges_chunks_its_2d_transform_whole():
    forward, backward = _chains((4,), "r2c")
    # forward: the exchange scatters axis 1 (12 points: 4 chunks of 3); the pieces hold
    # points of each chunk, the 2-D rfft runs on the whole block before them
    split, (window,) = pipelined(forward, 4)
    assert split.stages == forward.stages
    assert split.stages[0] == RealFFT((1, 2), 10, True)
    assert (window.start, window.stop, window.axis, window.pieces) == (1, 3, 1, 3)
    assert (window.chunks, window.chunked_at_start) == (4, True)
    assert "within its 4 chunks" in str(window)
    # backward: the mirror image, axis 1 gathered at the window's end
    split, (window,) = pipelined(backward, 4)
    assert split.stages == backward.stages
    assert (window.start, window.stop, window.axis, window.chunks) == (0, 2, 1, 4)
    assert not window.chunked_at_start


def test_a_transform_before_an_exchange_joins_the_window_split():
    """Where the exchange's axes cannot be cut (10 points over 4 devices: uneven; the
    plan returns to the input's layout with a second exchange), a multi-axis transform
    at the window's edge is split: its part along the cut axis on the whole block, the
    rest piece by piece."""
    mesh_shape = (("x", 4),)
    forward = build_chain(default_layout((16, 10, 12), (0, 1, 2), mesh_shape), (0, 1, 2),
                          kind="r2c", n=None)
    assert forward.stages[0] == RealFFT((1, 2), 12, True)
    split, (window,) = pipelined(forward, 4)
    assert split.stages[0] == RealFFT((2,), 12, True)
    assert split.stages[1] == LocalFFT((1,))
    assert (window.start, window.stop, window.axis, window.chunks) == (1, 5, 2, 1)


def test_no_pipeline_and_too_few_points_leave_the_chain_as_it_is():
    forward, _ = _chains((2, 2), "c2c")
    assert pipelined(forward, 1) == (forward, ())
    # a block with one point along every free axis has nothing to cut
    chain = build_chain(default_layout((4, 4), (0, 1), (("x", 4),)), (0, 1), kind="c2c", n=None)
    split, windows = pipelined(chain, 4)
    assert windows == () and split.stages == chain.stages


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("grid", [(4,), (2, 2), (2, 4), (2, 2, 2)])
@pytest.mark.parametrize("kind", ["c2c", "r2c"])
def test_pipelined_plans_match_numpy(engine, grid, kind):
    _native_or_skip(engine)
    rng = np.random.default_rng(7)
    shape = (16, 12, 10)
    x = random_array(rng, shape, np.float64 if kind == "r2c" else np.complex128)
    mesh = _mesh(grid)
    plan = pfft.plan(shape, x.dtype, mesh, kind=kind, engine=engine, pipeline=3)
    y = jax.jit(plan.forward)(jax.device_put(x, plan.in_sharding))
    want = np.fft.rfftn(x) if kind == "r2c" else np.fft.fftn(x)
    assert rel_err(y, want) < 1e-14
    assert y.sharding.is_equivalent_to(plan.out_sharding, y.ndim)
    back = jax.jit(plan.backward)(y)
    assert rel_err(back, x) < 1e-14


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("kind", ["c2c", "r2c"])
def test_a_2d_slab_is_pipelined_within_its_exchanges_chunks(engine, kind):
    """A 2-D array over 4 devices: its exchange acts on both axes, so only a cut within
    the exchange's chunks leaves a window (the exchange and the FFT along axis 0, each
    piece 2 of the 6 or 4 points of each chunk of axis 1); numpy's values both ways,
    one all-to-all per piece."""
    _native_or_skip(engine)
    rng = np.random.default_rng(13)
    shape = (16, 30) if kind == "r2c" else (16, 24)     # 16 bins, 24 points: 4 chunks
    x = random_array(rng, shape, np.float64 if kind == "r2c" else np.complex128)
    plan = pfft.plan(shape, x.dtype, _mesh((4,)), kind=kind, engine=engine, pipeline=3)
    assert "stages 2-3 pipelined: 3 pieces along axis 1 within its 4 chunks" in str(plan)
    assert plan.collectives()["all-to-all"] == 3
    y = jax.jit(plan.forward)(jax.device_put(x, plan.in_sharding))
    assert rel_err(y, np.fft.rfftn(x) if kind == "r2c" else np.fft.fftn(x)) < 1e-14
    assert rel_err(jax.jit(plan.backward)(y), x) < 1e-14


@pytest.mark.parametrize("kind", ["c2c", "r2c"])
def test_a_slabs_pieces_are_read_and_written_where_they_lie(kind):
    """On an engine with rows transforms (the native one), a slab's window cut within
    its exchange's chunks has no cut or join of its own: forward, each piece is taken
    out of the 2-D FFT's block with its chunks first (the layout the all-to-all sends)
    and the FFT after the exchange writes its rows over that same block, which the
    pieces' bytes fill exactly; backward (its window reads the plan's argument, which
    is never written over), the FFT before the exchange reads each piece's rows from
    the whole block. The values are numpy's."""
    _native_or_skip("native")
    rng = np.random.default_rng(14)
    shape = (16, 12, 10)
    x = random_array(rng, shape, np.float64 if kind == "r2c" else np.complex128)
    plan = pfft.plan(shape, x.dtype, _mesh((4,)), kind=kind, engine="native", pipeline=3)
    xs = jax.device_put(x, plan.in_sharding)
    forward = jax.jit(plan.forward).trace(xs).lower().as_text()
    assert forward.count("@pfft_take_chunks(") == 3
    assert forward.count("@pfft_c2c_rows_into(") == 3
    assert "@pfft_c2c_rows(" not in forward
    y = jax.jit(plan.forward)(xs)
    assert rel_err(y, np.fft.rfftn(x) if kind == "r2c" else np.fft.fftn(x)) < 1e-14
    backward = jax.jit(plan.backward).trace(y).lower().as_text()
    assert backward.count("@pfft_c2c_rows(") == 3 and "@pfft_c2c_rows_into(" not in backward
    assert rel_err(jax.jit(plan.backward)(y), x) < 1e-14


def test_a_window_written_over_its_block_needs_less_memory():
    """A slab's forward window writing its pieces over the block it takes them from
    (each write waiting for the next piece's take, so XLA orders the two and copies
    nothing) needs less memory per device than the same plan joining its pieces into a
    new block (the executor's in-place path turned off), with the same values."""
    _native_or_skip("native")
    import pfft.executor as executor
    x = random_array(np.random.default_rng(16), (32, 32, 16), np.complex64)
    mesh = _mesh((4,))

    def blocks(plan):
        xs = jax.device_put(x, plan.in_sharding)
        compiled = jax.jit(plan.forward).lower(xs).compile()
        return _blocks_held(compiled, x.nbytes / 4), jax.jit(plan.forward)(xs)

    in_place, y = blocks(pfft.plan(x.shape, x.dtype, mesh, engine="native", pipeline=4))
    real = executor._in_place
    try:
        executor._in_place = lambda *args: None
        pfft.clear_plan_cache()
        joined, y_joined = blocks(pfft.plan(x.shape, x.dtype, mesh, engine="native",
                                            pipeline=4))
    finally:
        executor._in_place = real
        pfft.clear_plan_cache()
    assert in_place <= joined - 0.25, (in_place, joined)
    assert rel_err(y, np.fft.fftn(x.astype(np.complex128))) < 1e-6
    assert rel_err(y_joined, y) < 1e-6


def test_a_pencils_pieces_are_read_and_written_where_they_lie():
    """The native engine on a 2x2 pencil, 3 pieces: the first forward window, cut along
    the leading axis, reads each piece's rows for its FFT along axis 2 and writes them
    after its FFT along axis 1 (rows of the leading axis are one contiguous block) into
    a new block; the second, cut within its exchange's chunks, takes its pieces out of
    that block and writes them back over it after its FFT along axis 0. Backward (the
    argument kept), the first window takes its pieces (along axis 2) out of the argument
    and writes them after its FFT along axis 1 into a new block, which the second
    window (along axis 0) takes its pieces from and writes them back over after its FFT
    along axis 2. Forward 3 reads and 1 new block written, 2 writes into it, 3 takes and
    3 writes over it; backward 1 new block, 5 writes into blocks, 6 takes. The values
    are numpy's."""
    _native_or_skip("native")
    rng = np.random.default_rng(15)
    shape = (16, 12, 10)
    x = random_array(rng, shape, np.complex128)
    plan = pfft.plan(shape, x.dtype, _mesh((2, 2)), engine="native", pipeline=3)
    xs = jax.device_put(x, plan.in_sharding)
    forward = jax.jit(plan.forward).trace(xs).lower().as_text()
    assert (forward.count("@pfft_c2c_rows("), forward.count("@pfft_c2c_rows_into("),
            forward.count("@pfft_take_chunks(")) == (4, 5, 3)
    y = jax.jit(plan.forward)(xs)
    assert rel_err(y, np.fft.fftn(x)) < 1e-14
    backward = jax.jit(plan.backward).trace(y).lower().as_text()
    assert (backward.count("@pfft_c2c_rows("), backward.count("@pfft_c2c_rows_into("),
            backward.count("@pfft_take_chunks(")) == (1, 5, 6)
    assert rel_err(jax.jit(plan.backward)(y), x) < 1e-14


@pytest.mark.parametrize("engine", ENGINES)
def test_pipelined_r2r_dealiased_and_padded_spectrum_plans_match_numpy(engine):
    _native_or_skip(engine)
    rng = np.random.default_rng(8)
    mesh = pfft.make_mesh((2, 2))
    x = rng.standard_normal((12, 8, 10))
    plan = pfft.plan(x.shape, x.dtype, mesh, kinds=("dct2", "fft", "dst1"), norm="ortho",
                     engine=engine, pipeline=2)
    y = jax.jit(plan.forward)(jax.device_put(x, plan.in_sharding))
    want = scipy.fft.dst(np.fft.fft(scipy.fft.dct(x, 2, axis=0, norm="ortho"), axis=1,
                                    norm="ortho"), 1, axis=2, norm="ortho")
    assert rel_err(y, want) < 1e-14
    # dealiased: the lowest 8 frequencies of a 12-point grid along each axis
    z = rng.standard_normal((12, 12, 12))
    plan = pfft.plan((8, 8, 8), z.dtype, mesh, kind="r2c", padding=1.5, engine=engine,
                     pipeline=4)
    full = np.fft.rfftn(z) * (8 / 12) ** 3
    keep = np.r_[0:4, 8:12]
    want = full[np.ix_(keep, keep, np.arange(5))]
    y = jax.jit(plan.forward)(jax.device_put(z, plan.in_sharding))
    assert rel_err(y, want) < 1e-14
    # spectrum="padded": one exchange fewer, the padded spectrum's real part equal
    plan = pfft.plan((16, 12, 10), z.dtype, mesh, kind="r2c", spectrum="padded",
                     engine=engine, pipeline=2)
    x = rng.standard_normal((16, 12, 10))
    y = np.asarray(jax.jit(plan.forward)(jax.device_put(x, plan.in_sharding)))
    want = np.fft.rfftn(x)
    assert rel_err(y[tuple(slice(0, n) for n in want.shape)], want) < 1e-14
    back = jax.jit(plan.backward)(jax.device_put(y, plan.out_sharding))
    assert rel_err(back, x) < 1e-14


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("grid", [(4,), (2, 4)])
def test_pipelined_gradients_are_the_transposed_dft(engine, grid):
    """fftn is symmetric (F^T = F): the cotangent of y = fftn(x) pulled back is
    fftn(ct); rfftn's is the transposed real DFT, checked against the dense matrix."""
    _native_or_skip(engine)
    rng = np.random.default_rng(9)
    mesh = pfft.make_mesh(grid)
    shape = (8, 8, 6)
    x = random_array(rng, shape, np.complex128)
    ct = random_array(rng, shape, np.complex128)
    plan = pfft.plan(shape, x.dtype, mesh, engine=engine, pipeline=2)
    xs = jax.device_put(x, plan.in_sharding)
    pull = jax.jit(lambda a, c: jax.vjp(plan.forward, a)[1](c)[0])
    got = pull(xs, jax.device_put(ct, plan.out_sharding))
    assert rel_err(got, np.fft.fftn(ct)) < 1e-14
    # a real plan: d/dx of sum(re(w * rfftn(x))) is re of the transposed real DFT of w
    xr = rng.standard_normal(shape)
    rplan = pfft.plan(shape, xr.dtype, mesh, kind="r2c", engine=engine, pipeline=2)
    w = random_array(rng, rplan.out_shape, np.complex128)
    ws = jax.device_put(w, rplan.out_sharding)
    grad = jax.jit(jax.grad(lambda a: jnp.sum(jnp.real(rplan.forward(a) * ws))))(
        jax.device_put(xr, rplan.in_sharding))
    basis = np.eye(xr.size).reshape((xr.size,) + shape)
    dense = np.fft.rfftn(basis, axes=(1, 2, 3)).reshape(xr.size, -1)
    want = np.real(dense @ w.reshape(-1)).reshape(shape)
    assert rel_err(grad, want) < 1e-13


def test_pipelined_plan_under_vmap_matches_numpy():
    rng = np.random.default_rng(10)
    mesh = pfft.make_mesh((2, 2))
    plan = pfft.plan((8, 8, 6), np.complex128, mesh, engine="xla", pipeline=2)
    xs = random_array(rng, (3, 8, 8, 6), np.complex128)
    y = jax.vmap(plan.forward)(jnp.stack([jax.device_put(x, plan.in_sharding) for x in xs]))
    assert rel_err(y, np.fft.fftn(xs, axes=(1, 2, 3))) < 1e-14


@pytest.mark.parametrize("grid,exchanges", [((4,), 1), ((2, 4), 2)])
def test_each_exchange_runs_as_one_collective_a_piece(grid, exchanges):
    mesh = pfft.make_mesh(grid)
    plain = pfft.plan((16, 16, 16), np.complex64, mesh, engine="xla")
    piped = pfft.plan((16, 16, 16), np.complex64, mesh, engine="xla", pipeline=4)
    assert plain.collectives()["all-to-all"] == exchanges
    assert piped.collectives()["all-to-all"] == 4 * exchanges
    assert piped.collectives(reverse=True)["all-to-all"] == 4 * exchanges
    text = str(piped)
    assert "pipeline 4" in text and text.count("pipelined: 4 pieces along axis") == exchanges


def test_pipeline_is_part_of_the_plan_and_checked():
    mesh = pfft.make_mesh((2, 2))
    assert pfft.plan((8, 8, 8), np.complex64, mesh, pipeline=2) is not \
        pfft.plan((8, 8, 8), np.complex64, mesh)
    for bad in (0, -1, 1.5, True, "2"):
        with pytest.raises(ValueError, match="pipeline must be an integer"):
            pfft.plan((8, 8, 8), np.complex64, mesh, pipeline=bad)


def test_overwrite_x_is_part_of_the_plan_and_checked():
    mesh = pfft.make_mesh((2, 2))
    plan = pfft.plan((8, 8, 8), np.complex64, mesh, overwrite_x=True)
    assert plan is not pfft.plan((8, 8, 8), np.complex64, mesh)
    assert "overwrite_x" in str(plan).splitlines()[0]
    for bad in (1, "yes", None):
        with pytest.raises(TypeError, match="overwrite_x must be a bool"):
            pfft.plan((8, 8, 8), np.complex64, mesh, overwrite_x=bad)


@pytest.mark.parametrize("engine", ENGINES)
def test_a_plan_that_may_overwrite_its_input_leaves_the_callers_array_alone(engine):
    """overwrite_x lets the transform work in its input's buffer; an input the caller
    still holds (not donated) is copied by XLA first: the array keeps its values and
    the results are numpy's, forward and back, pipelined or not."""
    if engine == "native":
        _native_or_skip(engine)
    x = random_array(np.random.default_rng(17), (16, 12, 8), np.complex128)
    for pipeline in (1, 3):
        plan = pfft.plan(x.shape, x.dtype, _mesh((4,)), engine=engine, pipeline=pipeline,
                         overwrite_x=True)
        xs = jax.device_put(x, plan.in_sharding)
        y = jax.jit(plan.forward)(xs)
        assert rel_err(xs, x) == 0.0
        assert rel_err(y, np.fft.fftn(x)) < 1e-14
        assert rel_err(jax.jit(plan.backward)(y), x) < 1e-14
        assert rel_err(jax.jit(lambda a: plan.backward(plan.forward(a) * 2))(xs), 2 * x) < 1e-14


def test_a_donated_slab_in_pieces_works_in_one_block_and_a_half():
    """A native slab plan with overwrite_x and pipeline 8, its input donated: the 2-D
    FFT runs in the input's buffer and the window writes its pieces over it, so a
    device needs its one block and the pieces in flight (about half a block here:
    the pieces sent and received), where the plan without overwrite_x needs a second
    block; the values are numpy's either way."""
    _native_or_skip("native")
    x = random_array(np.random.default_rng(18), (64, 64, 16), np.complex64)
    block = x.nbytes / 4

    def donated(overwrite_x):
        plan = pfft.plan(x.shape, x.dtype, _mesh((4,)), engine="native", pipeline=8,
                         overwrite_x=overwrite_x)
        f = jax.jit(plan.forward, donate_argnums=0)
        xs = jax.device_put(x, plan.in_sharding)
        assert rel_err(f(xs), np.fft.fftn(x.astype(np.complex128))) < 1e-6
        return _blocks_held(f.lower(xs).compile(), block, donated=True)

    overwriting, reading = donated(True), donated(False)
    assert overwriting <= 1.55, overwriting
    assert reading >= overwriting + 0.75, (reading, overwriting)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("grid,spec", [((2, 2), P(None, "x", "y")), ((2, 2), P("y", "x", None)),
                                       ((2, 4), P(("y", "x"), None, None)),
                                       ((2, 4), P(None, None, ("x", "y")))], ids=str)
def test_pipelined_plans_on_a_users_layout_match_numpy(engine, grid, spec):
    """Inputs laid out as a user may lay them out (another axis whole, mesh axes in the
    other order, a tuple of mesh axes on one array axis): the same values as numpy."""
    _native_or_skip(engine)
    rng = np.random.default_rng(12)
    x = random_array(rng, (16, 12, 8), np.complex128)
    mesh = _mesh(grid)
    for kind, data in (("c2c", x), ("r2c", x.real)):
        plan = pfft.plan(data.shape, data.dtype, mesh, kind=kind, engine=engine, pipeline=2,
                         in_sharding=spec)
        assert "pipelined" in str(plan)
        y = jax.jit(plan.forward)(jax.device_put(data, plan.in_sharding))
        want = np.fft.rfftn(data) if kind == "r2c" else np.fft.fftn(data)
        assert rel_err(y, want) < 1e-14
        back = jax.jit(plan.backward)(y)
        assert back.sharding.is_equivalent_to(plan.in_sharding, back.ndim)
        assert rel_err(back, data) < 1e-14


def test_a_pencil_in_pieces_works_in_two_blocks_kept_and_one_and_a_half_donated():
    """A native 2x4 pencil plan with pipeline 8: its first window joins its pieces
    into one new block (reading the next piece only once the piece before the last is
    written, so few pieces are held at a time) and its second window writes its pieces
    back over that block, so a device keeps its input, one block and the pieces in
    flight (about half a block here). With overwrite_x and the input donated the first
    window writes each piece over the planes it read, and the whole transform works
    in the input's buffer. Without the writes over a block (turned off) the plan
    keeps about 0.7 of a block more; the values are numpy's throughout."""
    _native_or_skip("native")
    import pfft.executor as executor
    x = random_array(np.random.default_rng(19), (64, 32, 16), np.complex64)
    block = x.nbytes / 8
    want = np.fft.fftn(x.astype(np.complex128))

    def blocks(overwrite_x, donate):
        plan = pfft.plan(x.shape, x.dtype, _mesh((2, 4)), engine="native", pipeline=8,
                         overwrite_x=overwrite_x)
        f = jax.jit(plan.forward, donate_argnums=0 if donate else ())
        xs = jax.device_put(x, plan.in_sharding)
        assert rel_err(f(xs), want) < 1e-6
        return _blocks_held(f.lower(xs).compile(), block, donated=donate)

    kept, donated = blocks(False, False), blocks(True, True)
    real = executor._may_write_over
    try:
        executor._may_write_over = lambda *args: False
        pfft.clear_plan_cache()
        kept_joined = blocks(False, False)
    finally:
        executor._may_write_over = real
        pfft.clear_plan_cache()
    assert kept <= 2.55, kept
    assert donated <= 1.55, donated
    assert kept_joined >= kept + 0.6, (kept_joined, kept)


def test_inverse_windows_write_their_pieces_over_the_blocks_they_read():
    """Backward, 64^3 in 8 pieces. A native 2x4 pencil's first window (cut along the
    innermost axis) writes each piece after its FFT along axis 1 on the bytes it read,
    as does its second (planes of the leading axis). A slab's window (an FFT along
    axis 0, then the exchange) puts each received piece back on the bytes it was read
    from (put_chunks), and its 2-D FFT runs in place on the block seen in its new
    shape. So the argument kept, a device holds it, one block and the pieces in flight
    (a slab's window puts into a new block then, made by its first put); with overwrite_x and the argument
    donated, the whole transform works in the argument's buffer. With the writes over
    blocks turned off, a block more; the values are numpy's throughout."""
    _native_or_skip("native")
    import pfft.executor as executor
    x = random_array(np.random.default_rng(23), (64, 64, 64), np.complex64)
    block = x.nbytes / 8

    def blocks(grid, overwrite_x, donate):
        plan = pfft.plan(x.shape, x.dtype, _mesh(grid), engine="native", pipeline=8,
                         overwrite_x=overwrite_x)
        y = jax.jit(plan.forward)(jax.device_put(x, plan.in_sharding))
        f = jax.jit(plan.backward, donate_argnums=0 if donate else ())
        compiled = f.lower(y).compile()
        text = compiled.as_text()
        puts = (text.count("custom_call_target=\"pfft_put_chunks\""),
                text.count("custom_call_target=\"pfft_put_chunks_new\""))
        assert rel_err(f(y), x) < 1e-6
        return _blocks_held(compiled, block, donated=donate), puts

    held = {(grid, donate): blocks(grid, donate, donate)
            for grid in ((2, 4), (8,)) for donate in (False, True)}
    real = executor._may_write_over
    try:
        executor._may_write_over = lambda *args: False
        pfft.clear_plan_cache()
        off = {grid: blocks(grid, True, True)[0] for grid in ((2, 4), (8,))}
    finally:
        executor._may_write_over = real
        pfft.clear_plan_cache()
    for grid in ((2, 4), (8,)):
        kept, donated = held[grid, False][0], held[grid, True][0]
        assert kept <= 2.55 and donated <= 1.55, (grid, kept, donated)
        assert off[grid] >= donated + 0.9, (grid, off[grid], donated)
    # the slab's pieces over the block, or (the argument kept) into a new one that the
    # first put makes, no zeros written first
    assert held[(8,), True][1] == (8, 0) and held[(8,), False][1] == (7, 1)
    assert held[(2, 4), True][1] == (0, 0)


def test_per_stage_engine_windows_copy_their_pieces_where_they_go(monkeypatch):
    """The per-stage engine (``auto`` on GPUs; the CPU kernels stand in for cuFFT)
    transforms a pencil's middle axis with XLA's FFT, which writes no rows into a
    block: a 2x4 pencil in 8 pieces copies each transformed piece where it goes
    (``put_chunks``) instead of concatenating the pieces. With overwrite_x and the
    argument donated, each goes back over the bytes it was read from: forward and
    backward work in the argument's buffer, as on the native engine (1.5 blocks, it
    and the pieces in flight; a piece more on jax 0.12). With the argument kept, the
    first window's pieces go into a new block that the first put makes (no zeros
    written first): the argument, one block and the pieces (2.5). With the writes over
    blocks turned off, every window puts into a new block: at least 0.75 more than
    over them. The values are numpy's."""
    _native_or_skip("native")
    import sys

    import pfft.executor as executor
    from pfft.engines import choice, native
    monkeypatch.setattr(sys.modules["pfft.plan"], "engine_for_plan",
                        lambda *a: choice.PerStageEngine(native, 1, "cpu", False))
    x = random_array(np.random.default_rng(29), (64, 64, 64), np.complex64)
    block = x.nbytes / 8
    want = np.fft.fftn(x.astype(np.complex128))

    def held(donate):
        """(blocks, (puts over a block, puts making a new one)) of forward, backward."""
        pfft.clear_plan_cache()
        plan = pfft.plan(x.shape, x.dtype, _mesh((2, 4)), pipeline=8, overwrite_x=donate)
        assert isinstance(plan.engine, choice.PerStageEngine)
        # the first FFT reads its pieces' rows where they lie (the kernel, in one launch)
        assert plan.fft_engines() == ["native", "xla", "native"]
        xs = jax.device_put(x, plan.in_sharding)
        ys = jax.jit(plan.forward)(xs)
        out = []
        for run, arg, expect in ((plan.forward, xs, want), (plan.backward, ys, x)):
            f = jax.jit(run, donate_argnums=0 if donate else ())
            compiled = f.lower(arg).compile()
            text = compiled.as_text()
            puts = (text.count("custom_call_target=\"pfft_put_chunks\""),
                    text.count("custom_call_target=\"pfft_put_chunks_new\""))
            assert rel_err(f(arg), expect) < 1e-6
            out.append((_blocks_held(compiled, block, donated=donate), puts))
        return out

    donated, kept = held(True), held(False)
    real = executor._may_write_over
    try:
        executor._may_write_over = lambda *args: False
        off = held(True)
    finally:
        executor._may_write_over = real
        pfft.clear_plan_cache()
    for direction in (0, 1):
        # at most a piece more than the native engine's 1.5 (XLA's FFT of a piece along
        # its middle axis may hold a transposed copy of it: jax 0.12 forward)
        assert donated[direction][0] <= 1.5 + 1 / 8 + 0.01, donated
        assert kept[direction][0] <= 2.5 + 1 / 8 + 0.01, kept
        assert off[direction][0] >= donated[direction][0] + 0.75, (off, donated)
    # the pieces of the window that ends with the FFT along the middle axis, in either
    # direction (the others end with a transform that writes its rows): over the
    # block, or the first making a new one
    assert [puts for _, puts in donated] == [(8, 0), (8, 0)]
    assert [puts for _, puts in off] == [(7, 1), (7, 1)]
    assert kept[0][1] == (7, 1)         # the forward's first window: the argument kept
