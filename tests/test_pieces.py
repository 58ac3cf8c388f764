"""The fused FFT-and-pack kernel (``native.fft_pieces``) and the plans that use it.

The kernel is checked against numpy float64 (its DCTs and DSTs against scipy) on
blocks cut into pieces the way an exchange cuts them: along the transform axis or
another, with padding (filled with NaN, which must never reach the result), in send and
receive order for every place ``me`` along the mesh axis, with batch axes, under jit
and vmap. Plans that use it are checked against plans that do not
(``fuse_exchanges=False``), numpy and scipy, and their compiled HLO holds the
collectives their stages call for (tests/hlo.py) and, for DCT/DST plans, one kernel
pass per stage.
"""
import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import pfft
from conftest import TOL, pieces_moves, planned_collectives, random_array, rel_err
from pfft.hlo import COLLECTIVES, count_collectives
from kernel_build import cpu_kernels_expected, missing_kernels_reason
from pfft import pieces
from pfft.engines import native, native_pieces
from pfft.interfaces import PiecesCut, PiecesPass
from pfft.stages import Exchange

# the pieces path's choices, as pfft makes them (tests switch each off to compare)
SWAPS, PAIRS_ENABLED = pieces.swaps, pieces.pairs_enabled
IN_PLACE_ENABLED = pieces.in_place_enabled

# skipped only where the kernels cannot be built (no C++ compiler, or
# PFFT_ALLOW_NO_KERNELS=1); elsewhere a missing library fails these tests
pytestmark = pytest.mark.skipif(
    not native.available("cpu") and not cpu_kernels_expected(),
    reason=missing_kernels_reason())


def _cut(block, axis, count, sign, me, fill):
    """``block`` padded with ``fill`` along ``axis`` to ``count`` equal chunks, piece k
    holding chunk ``(me + sign*k) % count``."""
    chunk = -(-block.shape[axis] // count)
    pad = [(0, 0)] * block.ndim
    pad[axis] = (0, chunk * count - block.shape[axis])
    padded = np.pad(block, pad, constant_values=fill)
    chunks = np.split(padded, count, axis=axis)
    return [chunks[(me + sign * k) % count if sign else k] for k in range(count)]


@st.composite
def problems(draw):
    ndim = draw(st.integers(1, 4))
    shape = tuple(draw(st.lists(st.integers(1, 9), min_size=ndim, max_size=ndim)))
    f = draw(st.integers(0, ndim - 1))
    cut_in = draw(st.sampled_from([None] + list(range(ndim))))
    cut_out = draw(st.sampled_from([None] + [a for a in range(ndim) if a != cut_in]))
    p_in = draw(st.integers(2, 4)) if cut_in is not None else 1
    p_out = draw(st.integers(2, 4)) if cut_out is not None else 1
    kind = draw(st.sampled_from(["c2c", "r2c", "c2r", "copy"]))
    return dict(shape=shape, f=f, cut_in=cut_in, cut_out=cut_out, p_in=p_in, p_out=p_out,
                kind=kind, weighted=kind in ("r2c", "c2r") and draw(st.booleans()),
                sign_in=draw(st.sampled_from([-1, 0, 1])), sign_out=draw(st.sampled_from([-1, 0, 1])),
                me_in=draw(st.integers(0, p_in - 1)), me_out=draw(st.integers(0, p_out - 1)),
                inverse=draw(st.booleans()), scale=draw(st.sampled_from([1.0, 0.25])),
                dtype=draw(st.sampled_from([np.complex64, np.complex128])),
                seed=draw(st.integers(0, 2**16)))


def _reference(pb, x, w):
    """What the kernel must compute, in float64 numpy (unnormalised transforms)."""
    f, n, wide = pb["f"], pb["shape"][pb["f"]], x.astype(np.complex128)
    wshape = [1] * x.ndim
    if w is not None:
        wshape[f] = w.size
        w = w.reshape(wshape)
    if pb["kind"] == "copy":
        return wide * pb["scale"]
    if pb["kind"] == "c2c":
        out = np.fft.ifft(wide, axis=f) * n if pb["inverse"] else np.fft.fft(wide, axis=f)
        return out * pb["scale"]
    if pb["kind"] == "r2c":                 # the + sign is the conjugate for real input
        out = np.fft.rfft(x.astype(np.float64), axis=f)
        out = np.conj(out) if pb["inverse"] else out
        return out * pb["scale"] * (1 if w is None else w)
    bins = wide * (1 if w is None else w)   # c2r: numpy's irfft is the + sign
    bins = bins if pb["inverse"] else np.conj(bins)
    return np.fft.irfft(bins, n=pb["n"], axis=f) * pb["n"] * pb["scale"]


@settings(max_examples=150, deadline=None)
@given(problems())
def test_pieces_kernel_matches_numpy(pb):
    """Every kind (c2c, r2c, c2r, copy), cut along the transform axis or another, in
    every piece order, padding (NaN) never read, output padding written as zeros."""
    _check_problem(pb)


def _batched_lines(shape, f, cut_out, kind, dtype, *, scale, seed) -> dict:
    """A problem transforming axis ``f`` (cut in 3 on input, in 2 along ``cut_out`` on
    output unless it is None) of a block whose lines the kernel batches."""
    return dict(shape=shape, f=f, cut_in=f, cut_out=cut_out, p_in=3,
                p_out=1 if cut_out is None else 2, kind=kind,
                weighted=kind in ("r2c", "c2r"), sign_in=-1, sign_out=1, me_in=1,
                me_out=0 if cut_out is None else 1, inverse=kind == "c2r", scale=scale,
                dtype=dtype, seed=seed)


# 75 neighbouring lines: every lane group of the kernel runs (several vectors at once,
# one, half of one, single lines) and the output cut along them leaves padding lines
@pytest.mark.parametrize("kind", ["c2c", "r2c", "c2r", "copy"])
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
@pytest.mark.parametrize("cut_out", [None, 1, 2])
def test_pieces_kernel_runs_many_neighbouring_lines_at_once(kind, dtype, cut_out):
    """A strided transform axis cut into pieces, 75 neighbouring lines per batch: the
    kernel's groups of whole cache lines, read and written as vectors, match numpy."""
    _check_problem(_batched_lines((10, 3, 75), 0, cut_out, kind, dtype, scale=0.25, seed=7))


# The innermost other axis holds one line (as in a pair call's sub-block): the kernel
# batches lines along the next axis out, here 75 lines that are not neighbours in
# memory (every lane group runs), also where the output is cut along that axis
@pytest.mark.parametrize("kind", ["c2c", "r2c", "c2r", "copy"])
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
@pytest.mark.parametrize("shape, cut_out", [((75, 10, 1), None), ((75, 10, 1), 0),
                                            ((75, 1, 10, 1), 0)])
def test_pieces_kernel_batches_lines_past_a_length_one_axis(kind, dtype, shape, cut_out):
    """Lines along axis -2 of a block whose last axis holds one point: batches run
    along axis 0 (lines 10 elements apart) and match numpy."""
    _check_problem(_batched_lines(shape, len(shape) - 2, cut_out, kind, dtype, scale=0.5,
                                  seed=11))


# Lines contiguous in memory (along the last axis) with both sides cut along them into
# runs of 10-20 points: the kernel takes a piece's run of every line of a group at a
# time, as in the first pass of a pencil `fftn` (output cut along z) and the last of
# its inverse (input cut along z); 75 lines, so every lane group runs
@pytest.mark.parametrize("kind", ["c2c", "r2c", "c2r", "copy"])
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
@pytest.mark.parametrize("sign_in, sign_out", [(0, 0), (-1, 1)])
def test_pieces_kernel_moves_long_runs_of_lines_cut_along_them(kind, dtype, sign_in,
                                                               sign_out):
    """Contiguous lines cut along the transform axis on both sides, long runs in each
    piece (two or four pieces, with padding): the values match numpy."""
    _check_problem(dict(shape=(75, 40), f=1, cut_in=1, cut_out=1,
                        p_in=2 if kind == "c2r" else 4, p_out=2, kind=kind,
                        weighted=kind in ("r2c", "c2r"), sign_in=sign_in, sign_out=sign_out,
                        me_in=1, me_out=1, inverse=kind == "c2r", scale=0.5, dtype=dtype,
                        seed=13))


def _check_problem(pb):
    """Runs one problem of `problems()` and checks it against `_reference`."""
    shape, f, ndim, kind = list(pb["shape"]), pb["f"], len(pb["shape"]), pb["kind"]
    rng = np.random.default_rng(pb["seed"])
    real = np.float32 if pb["dtype"] == np.complex64 else np.float64
    n = shape[f]
    pb["n"] = n
    if kind == "c2r":                       # n real points out of n//2 + 1 bins in
        shape[f] = n // 2 + 1
    x = random_array(rng, tuple(shape), pb["dtype"])
    if kind == "r2c" or (kind == "copy" and pb["seed"] % 2):   # copies move real data too
        x = x.real.astype(real)
    w = rng.uniform(0.5, 2.0, n // 2 + 1) if pb["weighted"] else None
    want = _reference(pb, x, w)
    ins, out_shape, cuts = _cut_sides(pb, x, want.shape)
    step = PiecesPass(kind, f - ndim, n, pb["inverse"], pb["scale"], w)
    got = jax.jit(lambda *a: native_pieces.fft_pieces(a, step, out_shape, **cuts))(*ins)
    out_dtype = real if kind == "c2r" else x.dtype if kind == "copy" else pb["dtype"]
    _check_pieces(got, want, pb, out_dtype)


def _cut_sides(pb, x, want_shape):
    """The kernel's input pieces of ``x`` (padding NaN), its output piece shape and the
    keywords of both cuts, for problem ``pb`` (``cut_in``/``cut_out`` None: one array)."""
    ndim = x.ndim
    ins = ([x] if pb["cut_in"] is None else
           _cut(x, pb["cut_in"], pb["p_in"], pb["sign_in"], pb["me_in"], np.nan))
    out_shape = list(want_shape)
    cuts = dict(cut_in=PiecesCut(), cut_out=PiecesCut())
    if pb["cut_in"] is not None:
        cuts["cut_in"] = PiecesCut(pb["cut_in"] - ndim, pb["sign_in"], pb["me_in"])
    if pb["cut_out"] is not None:
        a = pb["cut_out"]
        out_shape[a] = -(-want_shape[a] // pb["p_out"])
        cuts["cut_out"] = PiecesCut(a - ndim, pb["sign_out"], pb["me_out"], pb["p_out"])
    return ins, tuple(out_shape), cuts


def _check_pieces(got, want, pb, out_dtype):
    """The kernel's output pieces ``got`` against ``want`` cut as ``pb`` cuts the
    output: shapes and dtype, input padding never read, output padding written as
    exact zeros, and the values within ``TOL``."""
    wants = ([want] if pb["cut_out"] is None else
             _cut(want, pb["cut_out"], pb["p_out"], pb["sign_out"], pb["me_out"], np.nan))
    assert len(got) == len(wants)
    values, wanted = [], []
    for g, wnt in zip(got, wants):
        g = np.asarray(g)
        assert g.shape == wnt.shape and g.dtype == out_dtype
        assert np.all(np.isfinite(g))                   # input padding (NaN) never read
        pad = np.isnan(wnt)
        assert np.all(g[pad] == 0)                      # output padding written as zeros
        values.append(g[~pad])
        wanted.append(wnt[~pad])
    assert rel_err(np.concatenate(values), np.concatenate(wanted)) <= TOL[pb["dtype"]]


@st.composite
def pair_problems(draw):
    ndim = draw(st.integers(2, 4))
    shape = tuple(draw(st.lists(st.integers(1, 9), min_size=ndim, max_size=ndim)))
    f1, f2 = draw(st.permutations(range(ndim)))[:2]
    cut_in = draw(st.sampled_from([None] + list(range(ndim))))
    cut_out = draw(st.sampled_from([None] + [a for a in range(ndim) if a != cut_in]))
    p_in = draw(st.integers(2, 4)) if cut_in is not None else 1
    p_out = draw(st.integers(2, 4)) if cut_out is not None else 1
    kinds = draw(st.sampled_from([("c2c", "c2c"), ("r2c", "c2c"), ("c2c", "c2r")]))
    return dict(shape=shape, f1=f1, f2=f2, cut_in=cut_in, cut_out=cut_out, p_in=p_in,
                p_out=p_out, kinds=kinds, weighted=kinds != ("c2c", "c2c") and draw(st.booleans()),
                sign_in=draw(st.sampled_from([-1, 0, 1])), sign_out=draw(st.sampled_from([-1, 0, 1])),
                me_in=draw(st.integers(0, p_in - 1)), me_out=draw(st.integers(0, p_out - 1)),
                inverse=draw(st.booleans()),
                scales=(draw(st.sampled_from([1.0, 0.25])), draw(st.sampled_from([1.0, 3.0]))),
                dtype=draw(st.sampled_from([np.complex64, np.complex128])),
                seed=draw(st.integers(0, 2**16)))


def _check_pair(pb):
    """Runs one problem of `pair_problems()` against two numpy passes in float64."""
    shape, ndim, (k1, k2) = list(pb["shape"]), len(pb["shape"]), pb["kinds"]
    f1, f2 = pb["f1"], pb["f2"]
    rng = np.random.default_rng(pb["seed"])
    real = np.float32 if pb["dtype"] == np.complex64 else np.float64
    n1, n2 = shape[f1], shape[f2]
    if k2 == "c2r":                          # n2 real points out of n2//2 + 1 bins in
        shape[f2] = n2 // 2 + 1
    x = random_array(rng, tuple(shape), pb["dtype"])
    if k1 == "r2c":
        x = x.real.astype(real)
    w = rng.uniform(0.5, 2.0, (n1 if k1 == "r2c" else n2) // 2 + 1) if pb["weighted"] else None
    w1, w2 = (w, None) if k1 == "r2c" else (None, w)
    common = dict(inverse=pb["inverse"])
    mid = _reference(dict(common, f=f1, shape=x.shape, kind=k1, scale=pb["scales"][0], n=n1),
                     x, w1)
    want = _reference(dict(common, f=f2, shape=mid.shape, kind=k2, scale=pb["scales"][1],
                           n=n2), mid, w2)
    ins, out_shape, cuts = _cut_sides(pb, x, want.shape)
    first = PiecesPass(k1, f1 - ndim, n1, pb["inverse"], pb["scales"][0], w1)
    second = PiecesPass(k2, f2 - ndim, n2, pb["inverse"], pb["scales"][1], w2)
    got = jax.jit(lambda *a: native_pieces.fft_pieces_pair(a, first, second, out_shape,
                                                           **cuts))(*ins)
    _check_pieces(got, want, pb, real if k2 == "c2r" else pb["dtype"])


@settings(max_examples=150, deadline=None)
@given(pair_problems())
def test_pieces_pair_kernel_matches_two_numpy_passes(pb):
    """Two passes in one call (c2c then c2c, r2c then c2c, c2c then c2r), each with its
    own scale and the real pass's bin weights, on blocks cut along any axis on either
    side, in every piece order: two numpy passes' result, padding never read and
    written as zeros; both the sub-block path and the whole-pass path run."""
    _check_pair(pb)


# the shapes of slab plans' pairs: many sub-blocks (each thread takes several through
# both passes), 75 neighbouring lines (every lane group of both passes), a cut output
@pytest.mark.parametrize("kinds", [("c2c", "c2c"), ("r2c", "c2c"), ("c2c", "c2r")])
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_pieces_pair_kernel_takes_sub_blocks_through_both_passes(kinds, dtype):
    forward = kinds[1] != "c2r"
    _check_pair(dict(shape=(12, 10, 75) if forward else (12, 75, 10), f1=2 if forward else 1,
                     f2=1 if forward else 2, cut_in=None if forward else 1,
                     cut_out=1 if forward else None, p_in=1 if forward else 3,
                     p_out=2 if forward else 1, kinds=kinds, weighted=kinds != ("c2c", "c2c"),
                     sign_in=-1, sign_out=1, me_in=0 if forward else 2, me_out=1,
                     inverse=not forward, scales=(0.5, 3.0), dtype=dtype, seed=11))


def test_pieces_pair_kernel_rejects_bad_arguments():
    x = jnp.zeros((4, 4, 4), jnp.complex64)
    pair = native_pieces.fft_pieces_pair
    with pytest.raises(ValueError, match="kinds"):
        pair([x], PiecesPass("c2r", -1, 4), PiecesPass("c2c", -2, 4), (4, 4, 4))
    with pytest.raises(Exception, match="axes must differ"):
        pair([x], PiecesPass("c2c", -1, 4), PiecesPass("c2c", -1, 4), (4, 4, 4))
    with pytest.raises(Exception, match="n exceeds"):
        pair([x], PiecesPass("c2c", -1, 4), PiecesPass("c2c", -2, 9), (4, 4, 4))
    with pytest.raises(Exception, match="element types"):
        pair([x], PiecesPass("r2c", -1, 4), PiecesPass("c2c", -2, 4), (4, 4, 3))
    with pytest.raises(Exception, match="weights"):
        pair([x.real], PiecesPass("r2c", -1, 4, weights=[1.0]), PiecesPass("c2c", -2, 4),
             (4, 4, 3))


def test_pieces_kernel_pads_the_transform_axis_with_zeros_and_takes_batches():
    """Output pieces longer than ``n`` along the axis hold zeros there; leading batch
    axes (and vmap's) are transformed independently."""
    rng = np.random.default_rng(3)
    x = random_array(rng, (3, 5, 6), np.complex128)
    # axis 1 (n=5) cut into 2 output pieces of 3: the sixth point is padding
    got = native_pieces.fft_pieces([x], PiecesPass("c2c", -2, 5), (3, 3, 6),
                                   cut_out=PiecesCut(-2, 0, count=2))
    want = np.concatenate([np.fft.fft(x, axis=1), np.zeros((3, 1, 6))], axis=1)
    assert rel_err(np.concatenate(got, axis=1), want) <= 1e-12
    assert np.all(np.asarray(got[1])[:, 2, :] == 0)      # the padding point: exact zeros
    batched = jax.vmap(lambda a: native_pieces.fft_pieces([a], PiecesPass("c2c", -1, 6),
                                                          (5, 6))[0])(x)
    assert rel_err(batched, np.fft.fft(x, axis=-1)) <= 1e-12


def test_pieces_kernel_rejects_bad_arguments():
    x = jnp.zeros((4, 4), jnp.complex64)
    pieces_call = native_pieces.fft_pieces
    with pytest.raises(Exception, match="n exceeds"):
        pieces_call([x], PiecesPass("c2c", -1, 9), (4, 4))
    with pytest.raises(Exception, match="differ in shape"):
        pieces_call([x, jnp.zeros((4, 3), jnp.complex64)], PiecesPass("c2c", -1, 4), (8, 4),
                    cut_in=PiecesCut(-2))
    with pytest.raises(Exception, match="element types"):
        pieces_call([x], PiecesPass("r2c", -1, 4), (4, 3))
    with pytest.raises(Exception, match="weights"):
        pieces_call([x.real], PiecesPass("r2c", -1, 4, weights=[1.0, 2.0]), (4, 3))
    with pytest.raises(ValueError, match="kind"):
        pieces_call([x], PiecesPass("dct", -1, 4), (4, 4))


@pytest.mark.parametrize("count, sign_in, sign_out", [(1, 0, 0), (2, -1, 1), (3, -1, 1),
                                                     (3, 0, 0), (4, 1, -1), (4, -1, 0)])
@pytest.mark.parametrize("me_in, me_out", [(0, 0), (1, 2)])
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_pieces_kernel_runs_in_place_along_its_cut_axis(count, sign_in, sign_out, me_in,
                                                        me_out, dtype):
    """A c2c pass cut along its own axis into as many pieces on both sides (in every
    piece order, the two sides' orders and places differing) writes output piece k over
    input piece k: the donated buffers come back as the output, and the values are
    numpy's, padding (NaN in, zeros out) included. 75 neighbouring lines run every lane
    group."""
    me_in, me_out = me_in % count, me_out % count
    shape, f = (10, 3, 75), 0
    pb = dict(shape=shape, f=f, cut_in=f if count > 1 else None,
              cut_out=f if count > 1 else None, p_in=count, p_out=count, kind="c2c",
              weighted=False, sign_in=sign_in, sign_out=sign_out, me_in=me_in, me_out=me_out,
              inverse=bool(me_out % 2), scale=0.5, dtype=dtype, seed=count)
    x = random_array(np.random.default_rng(count), shape, dtype)
    want = _reference(dict(pb, n=shape[f]), x, None)
    ins, out_shape, cuts = _cut_sides(pb, x, want.shape)
    assert all(a.shape == out_shape for a in ins)
    step = PiecesPass("c2c", f - 3, shape[f], pb["inverse"], pb["scale"])
    assert native_pieces.writes_in_place(step, [a.shape for a in ins], out_shape,
                                         cuts["cut_in"], cuts["cut_out"])
    ins = [jnp.asarray(a) for a in ins]
    where = [a.unsafe_buffer_pointer() for a in ins]
    run = jax.jit(lambda *a: native_pieces.fft_pieces(a, step, out_shape, inplace=True, **cuts),
                  donate_argnums=tuple(range(len(ins))))
    assert "output_to_operand_aliasing" in run.lower(*ins).compile().as_text()
    got = run(*ins)
    assert [g.unsafe_buffer_pointer() for g in got] == where      # the same buffers
    _check_pieces(got, want, pb, dtype)


def test_pieces_kernel_refuses_in_place_where_groups_would_overwrite_others():
    """``inplace`` only for c2c along the axis both sides are cut along (same count and
    shape), in Python; the kernel itself refuses an output aliased to an input cut
    along another axis (a group would write what another has yet to read)."""
    x = jnp.zeros((4, 6), jnp.complex128)
    pieces_call = native_pieces.fft_pieces
    with pytest.raises(ValueError, match="inplace"):            # cut along the other axis
        pieces_call([x[:2], x[2:]], PiecesPass("c2c", -1, 6), (2, 6), cut_in=PiecesCut(-2),
                    cut_out=PiecesCut(-2, count=2), inplace=True)
    with pytest.raises(ValueError, match="inplace"):            # not a c2c pass
        pieces_call([x.real], PiecesPass("copy", -1, 6), (4, 6), inplace=True)
    with pytest.raises(ValueError, match="inplace"):            # counts differ
        pieces_call([x[:2], x[2:]], PiecesPass("c2c", -2, 4), (1, 6), cut_in=PiecesCut(-2),
                    cut_out=PiecesCut(-2, count=4), inplace=True)
    result = jax.typeof(x[:2])
    call = jax.ffi.ffi_call("pfft_pieces", [result, result], input_output_aliases={1: 0, 2: 1})
    with pytest.raises(Exception, match="overlaps the input"):
        jax.jit(lambda a, b: call(jnp.zeros(2, jnp.int32), a, b, weights=np.zeros(0),
                                  kind="c2c", type=np.int64(0), sine=False, axis=np.int64(-1),
                                  n=np.int64(6), in_split=np.int64(-2), in_sign=np.int64(0),
                                  out_split=np.int64(-2), out_sign=np.int64(0), forward=True,
                                  scale=np.float64(1.0), nthreads=np.int64(1)))(
            x[:2] + 1, x[2:] + 1)[0].block_until_ready()


def _aliased_kernel_calls(text: str) -> int:
    """How many pfft_pieces calls of a compiled HLO write over an input."""
    return sum(1 for line in text.splitlines()
               if 'custom_call_target="pfft_pieces"' in line
               and "output_to_operand_aliasing" in line)


@pytest.mark.parametrize("grid, plan_kw, in_place", [
    ((2, 2), {}, 1), ((2, 2), dict(kind="r2c", spectrum="padded"), 1),
    ((2, 2), dict(kind="r2c"), 0), ((2, 4), {}, 0), ((4,), {}, 0)])
def test_plans_run_a_middle_pass_in_place_where_both_exchanges_match(grid, plan_kw, in_place,
                                                                       monkeypatch, fresh_plans):
    """A pencil whose two exchanges go over as many devices (2x2) runs its middle pass
    over the pieces the first exchange delivered (an aliased kernel call), forward and
    backward; elsewhere no call is aliased. The values are numpy's and the same bits
    as with no pass in place (:func:`pfft.pieces.in_place_enabled` turned off)."""
    mesh = pfft.make_mesh(grid)
    shape = (16, 12, 8)              # 5 bins along the halved axis: numpy's layout keeps it whole
    rng = np.random.default_rng(5)
    real = "kind" in plan_kw
    x = rng.standard_normal(shape) if real else random_array(rng, shape, np.complex128)
    results = {}
    for off in ("", "1"):
        monkeypatch.setattr(pieces, "in_place_enabled",
                            (lambda engine: False) if off else IN_PLACE_ENABLED)
        pfft.clear_plan_cache()
        plan = pfft.plan(shape, np.complex128, mesh, engine="native", **plan_kw)
        xs = jax.device_put(x, plan.in_sharding)
        forward, backward = jax.jit(plan.forward), jax.jit(plan.backward)
        k = forward(xs)
        for fn, arg in ((forward, xs), (backward, k)):
            text = fn.lower(arg).compile().as_text()
            assert _aliased_kernel_calls(text) == (0 if off else in_place)
        results[off] = (np.asarray(k), np.asarray(backward(k)))
    k, back = results[""]
    want = np.fft.rfftn(x) if real else np.fft.fftn(x)
    assert rel_err(k[tuple(slice(0, n) for n in want.shape)], want) <= 1e-12
    assert rel_err(back, x) <= 1e-12
    for a, b in zip(results[""], results["1"]):
        np.testing.assert_array_equal(a, b)


# how a plan's exchanges run: pieces swapped (the default), pieces shifted (as where
# the transport has no swaps), or XLA's all-to-all (fuse_exchanges=False)
MODES = {"swap": (True, True), "shifts": (False, True), "all-to-all": (True, False)}


def _without_swaps(monkeypatch, swapping: bool = False) -> None:
    """Plans made after this move pieces by shifts, as over a transport without swaps
    (``swapping``: by swaps again, the default)."""
    monkeypatch.setattr(pieces, "swaps", SWAPS if swapping else (lambda transport: False))


@pytest.fixture
def fresh_plans():
    """Plans made while a test switches swaps off leave the plan cache with it (a plan
    keeps the exchanges' form it was made with)."""
    pfft.clear_plan_cache()
    yield
    pfft.clear_plan_cache()


def _plan_in_mode(mode, monkeypatch, *args, **kw):
    """``pfft.plan(*args, **kw)`` made in ``mode`` (a fresh plan: a plan keeps the
    exchanges' form it was made with)."""
    swapping, fuse = MODES[mode]
    _without_swaps(monkeypatch, swapping)
    pfft.clear_plan_cache()
    return pfft.plan(*args, engine="native", fuse_exchanges=fuse, **kw)


def _swaps_in(text: str) -> int:
    """How many of pfft's swaps (tuple all-to-alls of pieces) a compiled HLO holds."""
    return len(re.findall(r"%pfft_swap[\w.]* = .* all-to-all\(", text))


def _expected_collectives(plan, mode, reverse: bool = False) -> dict[str, int]:
    """The collectives a plan's chain must compile to.

    An exchange over ``p`` devices is one swap of pieces (an all-to-all) in mode
    "swap" (one collective permute over 2 devices), ``p - 1`` collective permutes in
    mode "shifts", one all-to-all in mode "all-to-all"; a gather is one all-gather.
    """
    want = planned_collectives(plan, reverse)
    if mode == "all-to-all":
        assert want["collective-permute"] == 0
    elif mode == "shifts":
        assert want["all-to-all"] == 0
    return want


def _compiled(fn, x, mode, plan, reverse: bool = False):
    """``jax.jit(fn)`` compiled for ``x``, after checking that its HLO holds the
    collectives ``plan``'s stages call for in ``mode``: in mode "swap" (these small
    blocks) every exchange over more than 2 devices a swap, none elsewhere."""
    compiled = jax.jit(fn).lower(x).compile()
    text = compiled.as_text()
    assert count_collectives(text) == _expected_collectives(plan, mode, reverse)
    over_more = sum(isinstance(st, Exchange) and st.size > 2 for st in plan.chain.stages)
    assert _swaps_in(text) == (over_more if mode == "swap" else 0)
    return compiled, count_collectives(text)


def test_count_collectives_reads_sync_and_async_ops():
    text = """
HloModule m
ENTRY %main (p: c64[4,4]) -> (c64[4,4], c64[4,4]) {
  %p = c64[4,4]{1,0} parameter(0)
  %all-to-all = (c64[2,4]{1,0}, c64[2,4]{1,0}) all-to-all(%p, %p), channel_id=1
  %cp = c64[4,4]{1,0} collective-permute(%p), source_target_pairs={{0,1},{1,0}}
  %cps = (c64[4,4]{1,0}, c64[4,4]{1,0}) collective-permute-start(%p), channel_id=2
  %cpd = c64[4,4]{1,0} collective-permute-done(%cps)
  %ags = (c64[4,4]{1,0}, c64[8,4]{1,0}) all-gather-start(%p), dimensions={0}
  %agd = c64[8,4]{1,0} all-gather-done(%ags)
  %f = c64[4,4]{1,0} fusion(%cp), kind=kLoop, calls=%fused_all-to-all
  ROOT %t = (c64[4,4]{1,0}, c64[4,4]{1,0}) tuple(%cpd, %f)
}
"""
    got = count_collectives(text)
    assert got == {**dict.fromkeys(COLLECTIVES, 0), "all-to-all": 1,
                   "collective-permute": 2, "all-gather": 1}


@pytest.mark.parametrize("grid", [(2, 2), (2, 4), (8,), (1, 4), (4, 2)])
@pytest.mark.parametrize("shape", [(16, 12, 8), (7, 10, 9), (5, 3, 11)], ids=str)
def test_fused_plans_equal_unfused_plans_and_numpy(grid, shape, monkeypatch, fresh_plans):
    """Even and uneven sizes, forward and backward, gradient: the fused path (pieces
    swapped, and pieces shifted) agrees with the all-to-all path and with numpy, and
    each compiles to the collectives its stages call for (read from the compiled
    HLO)."""
    mesh = pfft.make_mesh(grid)
    x = random_array(np.random.default_rng(sum(shape)), shape, np.complex128)
    xs = pfft.device_put(x, mesh)
    results = {}
    for mode in MODES:
        plan = _plan_in_mode(mode, monkeypatch, shape, np.complex128, mesh)
        forward, ops = _compiled(plan.forward, xs, mode, plan)
        if shape == (16, 12, 8):                 # every grid here divides it: it is split
            assert sum(ops.values()) >= len([s for s in grid if s > 1])
        k = forward(xs)
        backward, _ = _compiled(plan.backward, k, mode, plan, reverse=True)
        back = backward(k)
        g = jax.jit(jax.grad(lambda a: jnp.sum(jnp.abs(plan.forward(a)) ** 2)))(xs)
        results[mode] = (np.asarray(k), np.asarray(back), np.asarray(g))
    k, back, g = results["swap"]
    assert rel_err(k, np.fft.fftn(x)) <= 1e-12
    assert rel_err(back, x) <= 1e-12
    g_ref = jax.grad(lambda a: jnp.sum(jnp.abs(jnp.fft.fftn(a)) ** 2))(jnp.asarray(x))
    assert rel_err(g, g_ref) <= 1e-12
    for a, b in zip(results["swap"], results["shifts"]):      # the same data moved
        np.testing.assert_array_equal(a, b)
    for a, b in zip(results["swap"], results["all-to-all"]):
        assert rel_err(a, b) <= 1e-13


@pytest.mark.parametrize("grid", [(2, 2), (2, 4), (4,), (1, 4)])
@pytest.mark.parametrize("shape", [(16, 12, 10), (7, 10, 9), (6, 5, 4)], ids=str)
@pytest.mark.parametrize("spectrum", ["numpy", "padded"])
def test_fused_real_plans_equal_unfused_plans_and_numpy(grid, shape, spectrum, monkeypatch,
                                                    fresh_plans):
    """rfftn/irfftn plans and the gradient of a real loss (the weighted, transposed real
    stages): pieces swapped and pieces shifted agree with the all-to-all path and with
    numpy, and compile to the collectives their stages call for."""
    mesh = pfft.make_mesh(grid)
    x = np.random.default_rng(sum(shape)).standard_normal(shape)
    xs = pfft.device_put(x, mesh)
    results = {}
    for mode in MODES:
        plan = _plan_in_mode(mode, monkeypatch, shape, np.float64, mesh, kind="r2c",
                             spectrum=spectrum)
        forward, _ = _compiled(plan.forward, xs, mode, plan)
        k = forward(xs)
        backward, _ = _compiled(plan.backward, k, mode, plan, reverse=True)
        back = backward(k)
        wt = jnp.asarray(np.random.default_rng(1).standard_normal(plan.out_shape))
        g = jax.jit(jax.grad(lambda a: jnp.sum(jnp.abs(plan.forward(a)) ** 2 * wt)))(xs)
        results[mode] = (np.asarray(k), np.asarray(back), np.asarray(g))
    k, back, g = results["swap"]
    want = np.fft.rfftn(x)                  # a padded spectrum holds zeros past it
    assert rel_err(k, np.pad(want, [(0, a - b) for a, b in zip(k.shape, want.shape)])) <= 1e-12
    assert rel_err(back, x) <= 1e-12
    for a, b in zip(results["swap"], results["shifts"]):      # the same data moved
        np.testing.assert_array_equal(a, b)
    for a, b in zip(results["swap"], results["all-to-all"]):
        assert rel_err(a, b) <= 1e-13


# slab plans whose blocks hold enough sub-blocks along axis 0 for the kernel's pairs
@pytest.mark.parametrize("grid, shape", [((4,), (32, 12, 10)), ((1, 4), (32, 8, 9)),
                                         ((8,), (64, 16, 6))], ids=str)
@pytest.mark.parametrize("kind", ["r2c", "c2c"])
def test_slab_plans_run_their_two_local_axes_as_one_pair_call(grid, shape, kind, monkeypatch):
    """A slab's two local axes (the halved axis and the one the exchange cuts, and on
    the way back the received axis and the halved one) run as one ``pfft_pieces_pair``
    call each way: the same values as two calls (pairs turned off:
    :func:`pfft.pieces.pairs_enabled`), as the all-to-all path and as numpy, gradient
    included."""
    mesh = pfft.make_mesh(grid)
    rng = np.random.default_rng(5)
    dtype = np.float64 if kind == "r2c" else np.complex128
    x = rng.standard_normal(shape) if kind == "r2c" else random_array(rng, shape, dtype)
    xs = pfft.device_put(x, mesh)
    results, wt = {}, None
    for mode in ("pairs", "two calls", "all-to-all"):
        monkeypatch.setattr(pieces, "pairs_enabled",
                            (lambda engine: False) if mode == "two calls" else PAIRS_ENABLED)
        pfft.clear_plan_cache()
        plan = pfft.plan(shape, dtype, mesh, kind=kind, engine="native",
                         fuse_exchanges=mode != "all-to-all")
        forward = jax.jit(plan.forward)
        k = forward(xs)
        backward = jax.jit(plan.backward)
        pairs = [_compiled_text(f, a).count('custom_call_target="pfft_pieces_pair"')
                 for f, a in ((forward, xs), (backward, k))]
        assert pairs == ([1, 1] if mode == "pairs" else [0, 0])
        wt = jnp.asarray(rng.standard_normal(plan.out_shape)) if wt is None else wt
        g = jax.jit(jax.grad(lambda a: jnp.sum(jnp.abs(plan.forward(a)) ** 2 * wt)))(xs)
        results[mode] = (np.asarray(k), np.asarray(backward(k)), np.asarray(g))
    k, back, g = results["pairs"]
    assert rel_err(k, np.fft.rfftn(x) if kind == "r2c" else np.fft.fftn(x)) <= 1e-12
    assert rel_err(back, x) <= 1e-12
    for other in ("two calls", "all-to-all"):
        for a, b in zip(results["pairs"], results[other]):
            assert rel_err(a, b) <= 1e-13


@pytest.mark.parametrize("axis_type", ["explicit", "auto"])
def test_pairs_run_on_a_users_mesh_with_a_split_batch_axis(axis_type, monkeypatch,
                                                          fresh_plans):
    """Pairs where users put them: their own mesh and axis names, a batch axis split
    over one mesh axis and a slab over the other, ``rfftn``/``irfftn`` over the other
    three axes, ``vmap`` over the batch and a gradient. On an Explicit mesh the
    functions see the sharding; on an Auto one the plan is given it. Every variant
    compiles to pair calls and matches numpy in float64, with the threads of a 16-core
    host (``$PFFT_NUM_THREADS``): a plan made under ``jit`` (on an abstract mesh) shares
    them among the mesh's 4 devices, as outside it, so each block still holds enough
    sub-blocks for its threads."""
    from jax.sharding import AxisType, NamedSharding, PartitionSpec as P

    monkeypatch.setenv("PFFT_NUM_THREADS", "16")

    kind = AxisType.Explicit if axis_type == "explicit" else AxisType.Auto
    mesh = jax.make_mesh((2, 2), ("batch", "rows"), axis_types=(kind, kind))
    rng = np.random.default_rng(3)
    x = rng.standard_normal((4, 16, 12, 10))
    xs = jax.device_put(x, NamedSharding(mesh, P("batch", "rows", None, None)))
    want = np.fft.rfftn(x, axes=(1, 2, 3))
    if axis_type == "explicit":
        forward = jax.jit(lambda a: pfft.rfftn(a, axes=(1, 2, 3)))
        # out_sharding: the forward plan from x's layout runs backwards
        backward = jax.jit(lambda k: pfft.irfftn(k, s=x.shape[1:], axes=(1, 2, 3),
                                                 out_sharding=xs.sharding))
        batched = jax.jit(jax.vmap(pfft.rfftn))
        assert rel_err(batched(xs), want) <= 1e-12
        assert _compiled_text(batched, xs).count('custom_call_target="pfft_pieces_pair"') == 1
    else:
        plan = pfft.plan(x.shape, x.dtype, mesh, axes=(1, 2, 3), kind="r2c",
                         in_sharding=xs.sharding)
        forward, backward = jax.jit(plan.forward), jax.jit(plan.backward)
    k = forward(xs)
    assert rel_err(k, want) <= 1e-12
    assert rel_err(backward(k), x) <= 1e-12
    wt = jnp.asarray(rng.standard_normal(want.shape))
    grad = jax.jit(jax.grad(lambda a: jnp.sum(jnp.abs(forward(a)) ** 2 * wt)))
    # the loss is quadratic, so a central difference is exact up to rounding
    g = np.asarray(grad(xs))
    d = rng.standard_normal(x.shape)
    loss = lambda a: np.sum(np.abs(np.fft.rfftn(a, axes=(1, 2, 3))) ** 2 * np.asarray(wt))
    fd = (loss(x + 1e-3 * d) - loss(x - 1e-3 * d)) / 2e-3
    assert abs(fd - np.sum(g * d)) <= 1e-11 * abs(fd)
    for fn, arg in ((forward, xs), (backward, k), (grad, xs)):
        assert _compiled_text(fn, arg).count('custom_call_target="pfft_pieces_pair"') >= 1
    with jax.set_mesh(mesh):                # planned on the abstract mesh, as under jit
        traced = pfft.plan(x.shape, x.dtype, jax.sharding.get_abstract_mesh(), axes=(1, 2, 3),
                           kind="r2c", in_sharding=P("batch", "rows", None, None))
    assert traced.engine.nthreads == 16 // 4


def _compiled_text(fn, x) -> str:
    return fn.lower(x).compile().as_text()


@pytest.mark.parametrize("grid", [(2,), (4,), (8,), (2, 4)])
@pytest.mark.parametrize("swapping", [True, False], ids=["swaps", "no swaps"])
def test_auto_fusion_moves_pieces_by_swap_or_where_shifts_pay(grid, swapping, monkeypatch,
                                                              fresh_plans):
    """``fuse_exchanges="auto"`` (the default): where the transport swaps, every
    exchange moves pieces: one swap where the device's block holds at most
    ``(p - 2) * SWAP_BYTES`` bytes, else ``p - 1`` collective permutes (one over 2
    devices). Without swaps
    (a transport or a JAX without them) an exchange over 2 devices is one
    collective permute of pieces; over ``p > 2`` devices it is ``p - 1`` permutes when
    the device's block holds at least ``(p - 2) * SHIFT_BYTES`` bytes, else one
    all-to-all (a small block cannot pay for the extra collectives). Read from the
    compiled HLO on both sides of the threshold, and in the plan's description."""
    _without_swaps(monkeypatch, swapping)
    pfft.clear_plan_cache()
    mesh = pfft.make_mesh(grid)
    devices = int(np.prod(grid))
    seen = {}
    for shape in [(16, 16, 16), (128, 128, 192)]:          # 4 KiB-64 KiB; 3-24 MiB a device
        plan = pfft.plan(shape, np.complex64, mesh)
        block = int(np.prod(shape)) * 8 // devices
        x = jax.ShapeDtypeStruct(shape, np.complex64, sharding=plan.in_sharding)
        text = jax.jit(plan.forward).lower(x).compile().as_text()
        want = dict.fromkeys(COLLECTIVES, 0)
        described = swapped = 0
        for stage in plan.chain.stages:
            if not isinstance(stage, Exchange):
                continue
            if swapping and block <= (stage.size - 2) * pieces.SWAP_BYTES:
                want["all-to-all"] += 1
                swapped += 1
            elif swapping or stage.size <= 2 or block >= (stage.size - 2) * pieces.SHIFT_BYTES:
                want["collective-permute"] += stage.size - 1
                described += 1
            else:
                want["all-to-all"] += 1
        assert count_collectives(text) == want
        assert _swaps_in(text) == swapped
        assert repr(plan).count("as 1 swap of pieces") == swapped
        assert repr(plan).count("collective permute(s) of pieces") == described
        seen[shape] = (swapped, described)
    if swapping and grid == (2, 4):     # over 8 devices: a swap; over 2: a shift
        assert seen[(128, 128, 192)] == (1, 1) and seen[(16, 16, 16)] == (1, 1)
    if swapping and grid == (4,):       # 6 MiB blocks: over the 3 MiB of 4 devices
        assert seen[(128, 128, 192)] == (0, 1) and seen[(16, 16, 16)] == (1, 0)


# -- DCT and DST passes (kind "r2r") --------------------------------------------------------

R2R_TOL = {np.float32: 1e-6, np.complex64: 1e-6, np.float64: 1e-12, np.complex128: 1e-12}


def _scipy_r2r(x, op_args, axis):
    """scipy's ``dct``/``dst`` (``inverse``: ``idct``/``idst``) in float64; complex ``x``
    as its real and imaginary parts (scipy 1.17 weights complex input's end points
    otherwise when ``orthogonalize`` is set)."""
    import scipy.fft as sf
    if np.iscomplexobj(x):
        return _scipy_r2r(x.real, op_args, axis) + 1j * _scipy_r2r(x.imag, op_args, axis)
    kind, norm, orth, inverse = op_args
    fn = {("dct", False): sf.dct, ("dct", True): sf.idct, ("dst", False): sf.dst,
          ("dst", True): sf.idst}[kind[:3], inverse]
    return fn(x.astype(np.float64), int(kind[3]), axis=axis, norm=norm, orthogonalize=orth)


# cut configurations: (shape, transform axis, cut in, cut out); lines contiguous in the
# input (line-major scratch) or strided (point-major), cut along the axis or another
R2R_KINDS = ["dct1", "dct2", "dct3", "dct4", "dst1", "dst2", "dst3", "dst4"]
R2R_CUTS = [((5, 7, 6), 2, 2, 0), ((9, 4, 3), 0, 0, 1), ((3, 6, 70), 2, 1, 2),
            ((2, 5, 4), 1, None, 1), ((6, 5), 0, 1, None)]


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128, np.complex64])
@pytest.mark.parametrize("kind", R2R_KINDS)
def test_pieces_kernel_r2r_matches_scipy(kind, dtype):
    """kind "r2r": every type and family, every norm, orthogonalize and inverse (their
    scale and end-point weights inside the kernel, times an extra ``scale``), real and
    complex pieces, cut in and out with NaN padding never read and zeros written."""
    case = R2R_KINDS.index(kind)
    _check_r2r(kind, dtype, *R2R_CUTS[case % len(R2R_CUTS)], seed=case)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("kind", R2R_KINDS)
def test_pieces_kernel_r2r_runs_many_neighbouring_lines_at_once(kind, dtype):
    """Real r2r along a strided axis with 75 neighbouring lines (every lane group, read
    and written as vectors), the output cut along those lines (padding lines)."""
    _check_r2r(kind, dtype, (10, 3, 75), 0, 0, 2, seed=R2R_KINDS.index(kind))


def _check_r2r(kind, dtype, shape, f, cut_in, cut_out, seed):
    """Every norm, orthogonalize and inverse of one r2r kind on one cut, against scipy."""
    from pfft.engines.r2r import scipy_op
    ndim, n = len(shape), shape[f]
    x = random_array(np.random.default_rng(seed), shape, dtype)
    variants = [(kind, norm, orth, inverse) for norm in ("backward", "ortho", "forward")
                for orth in (None, True, False) for inverse in (False, True)]
    p_in, p_out, me_in, me_out = 3, 2, 2, 1
    ins = [x] if cut_in is None else _cut(x, cut_in, p_in, -1, me_in, np.nan)
    cuts = {}
    out_shape = list(shape)
    if cut_in is not None:
        cuts["cut_in"] = PiecesCut(cut_in - ndim, -1, me_in)
    if cut_out is not None:
        out_shape[cut_out] = -(-shape[cut_out] // p_out)
        cuts["cut_out"] = PiecesCut(cut_out - ndim, 1, me_out, p_out)

    def run(*pieces_in):
        return [native_pieces.fft_pieces(
                    pieces_in, PiecesPass("r2r", f - ndim, n, scale=0.5,
                                          op=scipy_op(v[0], n, v[1], v[2], inverse=v[3])),
                    tuple(out_shape), **cuts)
                for v in variants]

    for v, got in zip(variants, jax.jit(run)(*ins)):
        want = 0.5 * _scipy_r2r(x, v, f)
        wants = [want] if cut_out is None else _cut(want, cut_out, p_out, 1, me_out, np.nan)
        values, wanted = [], []
        for g, wnt in zip(got, wants):
            g = np.asarray(g)
            assert g.shape == wnt.shape and g.dtype == dtype
            assert np.all(np.isfinite(g))                   # input padding never read
            pad = np.isnan(wnt)
            assert np.all(g[pad] == 0)                      # output padding zeros
            values.append(g[~pad])
            wanted.append(wnt[~pad])
        err = rel_err(np.concatenate(values), np.concatenate(wanted))
        assert err <= R2R_TOL[dtype], (v, err)


def test_pieces_kernel_r2r_rejects_bad_arguments():
    from pfft.engines.r2r import R2R, scipy_op
    x = jnp.zeros((4, 4))
    pieces_call = native_pieces.fft_pieces
    with pytest.raises(ValueError, match="op"):
        pieces_call([x], PiecesPass("r2r", -1, 4), (4, 4))
    with pytest.raises(ValueError, match="op"):
        pieces_call([x], PiecesPass("copy", -1, 4, op=scipy_op("dct2", 4)), (4, 4))
    with pytest.raises(ValueError, match="planned for 5"):
        pieces_call([x], PiecesPass("r2r", -1, 4, op=scipy_op("dct2", 5)), (4, 4))
    with pytest.raises(ValueError, match="weights"):
        pieces_call([x], PiecesPass("r2r", -1, 4, weights=[1.0] * 4, op=scipy_op("dct2", 4)),
                    (4, 4))
    with pytest.raises(Exception, match="type must be"):
        pieces_call([x], PiecesPass("r2r", -1, 4, op=R2R("dct", 5, 4)), (4, 4))
    with pytest.raises(Exception, match="at least 2 points"):
        pieces_call([x[:, :1]], PiecesPass("r2r", -1, 1, op=R2R("dct", 1, 1)), (4, 1))


def _r2r_reference(x, kinds, norm, orth, inverse=False):
    """scipy along every axis of ``x`` (numpy's ``fft`` on "fft" axes)."""
    for a, k in enumerate(kinds):
        if k == "fft":
            fn = np.fft.ifft if inverse else np.fft.fft
            x = fn(x, axis=a, norm=norm)
        else:
            x = _scipy_r2r(x, (k, norm, orth, inverse), a)
    return x


def _kernel_calls(text: str) -> dict[str, int]:
    """How many custom calls to each pfft kernel a compiled HLO text makes."""
    return {t: text.count(f'custom_call_target="{t}"') for t in ("pfft_pieces", "pfft_r2r")}


def _expected_kernel_calls(plan, reverse: bool) -> tuple[dict[str, int], int]:
    """The kernel calls of a DCT/DST plan, and how many of its stages are fused.

    A DCT/DST stage next to an exchange of pieces is one pass of the pieces kernel
    that reads or writes them, any other one ``pfft_r2r`` call; a copy pass of the
    pieces kernel packs or unpacks only where no DCT/DST stands next to an exchange
    (the end of the chain, two exchanges in a row)."""
    from pfft.stages import LocalR2R
    stages = (plan.chain.reversed() if reverse else plan.chain).stages
    sends = pieces_moves(plan, reverse)     # how each exchange moves pieces, or None

    def moves(i: int):
        return sends[i] if 0 <= i < len(stages) else None
    want, fused_stages = {"pfft_pieces": 0, "pfft_r2r": 0}, 0
    for i, stage in enumerate(stages):
        before = stages[i - 1] if i > 0 else None
        after = stages[i + 1] if i + 1 < len(stages) else None
        if isinstance(stage, LocalR2R):
            fused = bool(moves(i - 1) or moves(i + 1))
            want["pfft_pieces" if fused else "pfft_r2r"] += 1
            fused_stages += fused
        elif moves(i):
            want["pfft_pieces"] += not isinstance(before, LocalR2R)       # a pack
            want["pfft_pieces"] += not isinstance(after, LocalR2R) and not moves(i + 1)
    return want, fused_stages


# per grid: a shape its input pencil divides whose later cuts are uneven, and three
# plans covering the eight kinds; the (norm, orthogonalize) pairs cycle over the nine
R2R_GRIDS = {(4,): (8, 10, 9), (2, 2): (6, 10, 9), (2, 4): (8, 12, 6)}
R2R_PLANS = [("dct1", "dct2", "dct3"), ("dct4", "dst1", "dst2"), ("dst3", "dst4", "dct2")]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("grid", list(R2R_GRIDS))
def test_fused_r2r_plans_match_scipy_and_compile_to_pieces(grid, dtype):
    """Every type and family on slab and pencil grids with uneven cuts, forward and
    backward (the inverse flag: ``op^-T``), every norm and orthogonalize over the cases:
    against scipy; the compiled HLO holds the planned collective permutes, no
    all-to-all or all-gather, and one kernel pass per DCT/DST stage (those next to an
    exchange are pieces passes: no pack or unpack copies)."""
    shape = R2R_GRIDS[grid]
    mesh = pfft.make_mesh(grid)
    pairs = [(n, o) for n in ("backward", "ortho", "forward") for o in (None, True, False)]
    for i, kinds in enumerate(R2R_PLANS):
        norm, orth = pairs[3 * list(R2R_GRIDS).index(grid) + i]
        plan = pfft.plan(shape, dtype, mesh, kinds=kinds, norm=norm, orthogonalize=orth,
                         fuse_exchanges=True)
        x = np.random.default_rng(i).standard_normal(shape).astype(dtype)
        xs = jax.device_put(x, plan.in_sharding)
        forward = jax.jit(plan.forward).lower(xs).compile()
        text = forward.as_text()
        assert count_collectives(text) == _expected_collectives(plan, True)
        want, fused = _expected_kernel_calls(plan, False)
        assert _kernel_calls(text) == want and fused >= 2
        y = forward(xs)
        assert y.dtype == dtype
        assert rel_err(y, _r2r_reference(x, kinds, norm, orth)) <= R2R_TOL[dtype]
        backward = jax.jit(plan.backward).lower(y).compile()
        text = backward.as_text()
        assert count_collectives(text) == _expected_collectives(plan, True, reverse=True)
        want, fused = _expected_kernel_calls(plan, True)
        assert _kernel_calls(text) == want and fused >= 2
        assert rel_err(backward(y), x) <= R2R_TOL[dtype]
        back = backward(jax.device_put(x, plan.out_sharding))
        assert rel_err(back, _r2r_reference(x, kinds, norm, orth, inverse=True)) \
            <= R2R_TOL[dtype]


@pytest.mark.parametrize("grid", [(4,), (2, 2)])
def test_fused_r2r_plans_on_complex_data_match_numpy_and_scipy(grid):
    """A mixed plan carries complex data through its DCT/DST axes: pieces passes
    transform the real and imaginary parts (next to an exchange or not); forward and
    backward against numpy/scipy."""
    shape = (8, 6, 10)
    kinds = ("fft", "dct2", "dst3")
    mesh = pfft.make_mesh(grid)
    plan = pfft.plan(shape, np.complex128, mesh, kinds=kinds, norm="ortho",
                     fuse_exchanges=True)
    x = random_array(np.random.default_rng(5), shape, np.complex128)
    xs = jax.device_put(x, plan.in_sharding)
    y = jax.jit(plan.forward)(xs)
    _, fused = _expected_kernel_calls(plan, False)
    got = _kernel_calls(jax.jit(plan.forward).lower(xs).compile().as_text())
    # complex DCT/DST stages are all pieces passes (native.r2r runs complex data so too)
    assert got["pfft_r2r"] == 0 and fused >= 1
    assert rel_err(y, _r2r_reference(x, kinds, "ortho", None)) <= 1e-12
    assert rel_err(jax.jit(plan.backward)(y), x) <= 1e-12


@pytest.mark.parametrize("grid", [(4,), (2, 2)])
def test_fused_r2r_gradients_match_dense_matrices(grid):
    """``jax.grad`` through DCT/DST plans on the pieces path (the transposed chain, its
    stages' ``R2R.transposed`` maps) against the dense matrices' transposes, forward and
    backward plans."""
    from pfft.engines.r2r import scipy_op
    shape = (8, 6, 5)
    mesh = pfft.make_mesh(grid)
    rng = np.random.default_rng(7)
    x, wt = rng.standard_normal(shape), rng.standard_normal(shape)
    for kinds, norm, orth in [(("dct2", "dst1", "dct3"), "ortho", None),
                              (("dst2", "dct1", "dst4"), "backward", True)]:
        plan = pfft.plan(shape, np.float64, mesh, kinds=kinds, norm=norm, orthogonalize=orth,
                         fuse_exchanges=True)
        mats = [scipy_op(k, n, norm, orth).matrix() for k, n in zip(kinds, shape)]
        xs = jax.device_put(x, plan.in_sharding)
        g = jax.jit(jax.grad(lambda a: jnp.sum(plan.forward(a) * wt)))(xs)
        assert rel_err(g, np.einsum("ia,jb,kc,ijk->abc", *mats, wt)) <= 1e-12
        inv = [np.linalg.inv(m) for m in mats]
        ys = jax.device_put(x, plan.out_sharding)
        g = jax.jit(jax.grad(lambda a: jnp.sum(plan.backward(a) * wt)))(ys)
        assert rel_err(g, np.einsum("ia,jb,kc,ijk->abc", *inv, wt)) <= 1e-12
