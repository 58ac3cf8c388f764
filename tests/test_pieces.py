"""The fused FFT-and-pack kernel (``native.fft_pieces``) and the plans that use it.

The kernel is checked against numpy float64 on blocks cut into pieces the way an
exchange cuts them: along the transform axis or another, with padding (filled with
NaN, which must never reach the result), in send and receive order for every place
``me`` along the mesh axis, with batch axes, under jit and vmap. Plans that use it are
checked against plans that do not (``choice.FUSE_PIECES = False``) and numpy.
"""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import pfft
from conftest import TOL, random_array, rel_err
from pfft.engines import choice, native

pytestmark = pytest.mark.skipif(
    not native.available("cpu"),
    reason=f"native CPU engine not built: {native.unavailable_reason('cpu')}")


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
    return dict(shape=shape, f=f, cut_in=cut_in, cut_out=cut_out, p_in=p_in, p_out=p_out,
                sign_in=draw(st.sampled_from([-1, 0, 1])), sign_out=draw(st.sampled_from([-1, 0, 1])),
                me_in=draw(st.integers(0, p_in - 1)), me_out=draw(st.integers(0, p_out - 1)),
                inverse=draw(st.booleans()), scale=draw(st.sampled_from([1.0, 0.25])),
                dtype=draw(st.sampled_from([np.complex64, np.complex128])),
                seed=draw(st.integers(0, 2**16)))


@settings(max_examples=120, deadline=None)
@given(problems())
def test_pieces_kernel_matches_numpy(pb):
    shape, f, ndim = pb["shape"], pb["f"], len(pb["shape"])
    x = random_array(np.random.default_rng(pb["seed"]), shape, pb["dtype"])
    fft = np.fft.ifft if pb["inverse"] else np.fft.fft
    want = fft(x.astype(np.complex128), axis=f) * pb["scale"]
    if pb["inverse"]:
        want *= shape[f]                                 # the kernel is unnormalised
    ins = ([x] if pb["cut_in"] is None else
           _cut(x, pb["cut_in"], pb["p_in"], pb["sign_in"], pb["me_in"], np.nan))
    out_shape = list(shape)
    kw = {}
    if pb["cut_in"] is not None:
        kw.update(in_split=pb["cut_in"] - ndim, in_sign=pb["sign_in"], me_in=pb["me_in"])
    if pb["cut_out"] is not None:
        a = pb["cut_out"]
        out_shape[a] = -(-shape[a] // pb["p_out"])
        kw.update(out_split=a - ndim, out_count=pb["p_out"], out_sign=pb["sign_out"],
                  me_out=pb["me_out"])
    got = jax.jit(lambda *a: native.fft_pieces(
        a, f - ndim, shape[f], out_shape=tuple(out_shape), inverse=pb["inverse"],
        scale=pb["scale"], **kw))(*ins)
    wants = ([want] if pb["cut_out"] is None else
             _cut(want, pb["cut_out"], pb["p_out"], pb["sign_out"], pb["me_out"], 0))
    assert len(got) == len(wants)
    for g, w in zip(got, wants):
        assert g.shape == w.shape and g.dtype == pb["dtype"]
        assert np.all(np.isfinite(np.asarray(g)))       # padding never leaks in
        assert rel_err(g, w) <= TOL[pb["dtype"]] or np.abs(w).max() == 0


def test_pieces_kernel_pads_the_transform_axis_with_zeros_and_takes_batches():
    """Output pieces longer than ``n`` along the axis hold zeros there; leading batch
    axes (and vmap's) are transformed independently."""
    rng = np.random.default_rng(3)
    x = random_array(rng, (3, 5, 6), np.complex128)
    # axis 1 (n=5) cut into 2 output pieces of 3: the sixth point is padding
    got = native.fft_pieces([x], -2, 5, out_shape=(3, 3, 6), out_count=2, out_split=-2,
                            out_sign=0)
    want = np.concatenate([np.fft.fft(x, axis=1), np.zeros((3, 1, 6))], axis=1)
    assert rel_err(np.concatenate(got, axis=1), want) <= 1e-12
    batched = jax.vmap(lambda a: native.fft_pieces([a], -1, 6, out_shape=(5, 6))[0])(x)
    assert rel_err(batched, np.fft.fft(x, axis=-1)) <= 1e-12


def test_pieces_kernel_rejects_bad_arguments():
    x = jnp.zeros((4, 4), jnp.complex64)
    with pytest.raises(Exception, match="n exceeds"):
        native.fft_pieces([x], -1, 9, out_shape=(4, 4))
    with pytest.raises(Exception, match="differ in shape"):
        native.fft_pieces([x, jnp.zeros((4, 3), jnp.complex64)], -1, 4, in_split=-2,
                          out_shape=(8, 4))


@pytest.mark.parametrize("grid", [(2, 2), (2, 4), (8,), (1, 4), (4, 2)])
@pytest.mark.parametrize("shape", [(16, 12, 8), (7, 10, 9), (5, 3, 11)], ids=str)
def test_fused_plans_equal_unfused_plans_and_numpy(grid, shape, monkeypatch):
    """Even and uneven sizes, forward and backward, gradient: the fused path (pieces
    and shifts) agrees with the all-to-all path and with numpy."""
    mesh = pfft.make_mesh(grid)
    x = random_array(np.random.default_rng(sum(shape)), shape, np.complex128)
    xs = pfft.device_put(x, mesh)
    results = {}
    for fuse in (True, False):
        monkeypatch.setattr(choice, "FUSE_PIECES", fuse)
        pfft.clear_plan_cache()                  # the engine is bound when a plan is made
        plan = pfft.plan(shape, np.complex128, mesh, engine="native")
        k = jax.jit(plan.forward)(xs)
        back = jax.jit(plan.backward)(k)
        g = jax.jit(jax.grad(lambda a: jnp.sum(jnp.abs(plan.forward(a)) ** 2)))(xs)
        results[fuse] = (np.asarray(k), np.asarray(back), np.asarray(g))
        permutes = plan.collectives()["collective-permute"]
        assert permutes == 0 if not fuse else (permutes > 0 or shape != (16, 12, 8))
    k, back, g = results[True]
    assert rel_err(k, np.fft.fftn(x)) <= 1e-12
    assert rel_err(back, x) <= 1e-12
    g_ref = jax.grad(lambda a: jnp.sum(jnp.abs(jnp.fft.fftn(a)) ** 2))(jnp.asarray(x))
    assert rel_err(g, g_ref) <= 1e-12
    for a, b in zip(results[True], results[False]):
        assert rel_err(a, b) <= 1e-13
    pfft.clear_plan_cache()
