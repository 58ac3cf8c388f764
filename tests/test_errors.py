"""Every bad input gets a ValueError/TypeError naming the argument, the value and what
is accepted; odd-but-legal inputs (NaN, Inf, empty batches, size-one axes) behave as
numpy's. Bad shardings and meshes at every entry point: tests/test_sharding_errors.py."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import PartitionSpec as P

import pfft
from conftest import rel_err

X = np.ones((4, 4, 4))


@pytest.mark.parametrize("fn", [pfft.fftn, pfft.ifftn, pfft.rfftn, pfft.irfftn])
@pytest.mark.parametrize("kwargs,error,words", [
    (dict(axes=(0, 1, 3)), ValueError, ["axis 3", "out of range"]),
    (dict(axes=()), ValueError, ["axes", "at least one"]),
    (dict(axes="ab"), TypeError, ["axes", "'ab'"]),
    (dict(s=(4, 4), axes=(0, 1, 2)), ValueError, ["s (4, 4)", "axes (0, 1, 2)"]),
    (dict(s=(4, 0, 4), axes=(0, 1, 2)), ValueError, ["Invalid number of FFT data points (0)",
                                                     "(4, 0, 4)"]),
    (dict(s=(4, -2, 4), axes=(0, 1, 2)), ValueError, ["Invalid number of FFT data points (-2)"]),
    (dict(s=(4.5, 4, 4), axes=(0, 1, 2)), TypeError, ["s must be a sequence of ints", "4.5"]),
    (dict(norm="unitary"), ValueError, ["norm", "'unitary'", "'ortho'"]),
    (dict(mesh="x"), TypeError, ["mesh", "str"]),
])
def test_bad_arguments_are_named(fn, kwargs, error, words):
    with pytest.raises(error) as info:
        fn(X + (0j if fn in (pfft.ifftn, pfft.irfftn) else 0), **kwargs)
    for word in words:
        assert word in str(info.value), (word, str(info.value))
    assert fn.__name__ in str(info.value)


def test_more_axes_or_s_than_the_array_has():
    with pytest.raises(ValueError, match="out of range"):
        pfft.fftn(np.ones((4, 4)), axes=(0, 1, 2))
    with pytest.raises(ValueError, match="s has 3 entries but the array has only 2 axes"), \
            pytest.warns(DeprecationWarning, match="`axes` should not be `None`"):
        pfft.fftn(np.ones((4, 4)), s=(4, 4, 4))
    with pytest.raises(ValueError, match="0-d"):
        pfft.fftn(np.float64(3.0))


@pytest.mark.parametrize("bad", [np.array([["a", "b"]]), np.empty((2, 2), object)])
def test_non_numeric_dtypes_are_rejected(bad):
    with pytest.raises(TypeError, match="dtype .* numeric"):
        pfft.fftn(bad)


# "default": JAX's default complex dtype (complex128 with x64 on, complex64 off)
@pytest.mark.parametrize("dtype,want", [(np.int16, "default"), (np.float16, np.complex64),
                                        (jnp.bfloat16, np.complex64), (np.bool_, "default"),
                                        (np.uint8, "default")])
def test_numeric_dtypes_are_promoted(dtype, want):
    """Integers and bools go to the default complex dtype, float16 and bfloat16 to
    complex64, as jax.numpy.fft does; the values are numpy's float64 transform to the
    precision of the result (small integers are exact in every input dtype)."""
    if want == "default":
        want = jax.dtypes.canonicalize_dtype(np.complex128)
    x = np.random.default_rng(7).integers(0, 6, (4, 4, 4)).astype(dtype)
    got = pfft.fftn(x, mesh=pfft.make_mesh((2, 2)))
    assert got.dtype == want
    want_values = np.fft.fftn(np.asarray(x, dtype=np.float64))
    tol = 1e-12 if got.dtype == np.complex128 else 1e-6
    assert rel_err(got, want_values) <= tol


def test_irfftn_needs_output_points():
    with pytest.raises(ValueError, match="irfftn: invalid number of output points 0"):
        pfft.irfftn(np.ones((4, 4, 1), np.complex128))
    with pytest.raises(ValueError, match="Invalid number of FFT data points"):
        pfft.fftn(np.ones((0, 4, 4)))          # numpy refuses zero points too (its words)


def test_a_plan_called_on_another_shape_or_dtype():
    mesh = pfft.make_mesh((2, 2))
    plan = pfft.plan((8, 8, 8), np.complex64, mesh)
    with pytest.raises(ValueError, match=r"shape \(8, 8, 8\) called on an array of shape "
                                         r"\(8, 8, 4\)"):
        plan.forward(jnp.zeros((8, 8, 4), jnp.complex64))
    with pytest.raises(TypeError, match="complex64 .* complex128"):
        plan.forward(np.zeros((8, 8, 8), np.complex128))      # would lose precision
    real = pfft.plan((8, 8, 8), np.float32, mesh, kind="r2c")
    with pytest.raises(TypeError, match="float32 .* complex64"):
        real.forward(np.zeros((8, 8, 8), np.complex64))
    with pytest.raises(ValueError, match=r"\(8, 8, 5\)"):
        real.backward(np.zeros((8, 8, 8), np.complex64))      # not the spectrum's shape


@pytest.mark.parametrize("kwargs,error,words", [
    (dict(shape=(4, -4, 4)), ValueError, ["shape", "positive", "(4, -4, 4)"]),
    (dict(shape="abc"), TypeError, ["shape", "'abc'"]),
    (dict(dtype="foo"), TypeError, ["dtype", "'foo'"]),
    (dict(kind="c2r"), ValueError, ["kind", "'c2r'"]),
    (dict(spectrum="fast"), ValueError, ["spectrum", "'fast'"]),
    (dict(kind="c2c", spectrum="padded"), ValueError, ["spectrum='padded'", "r2c"]),
    (dict(shape=(6, 8, 8), in_sharding=P(("x", "y"))), ValueError, ["in_sharding", "evenly"]),
    (dict(in_sharding=P("z", "y")), ValueError, ["in_sharding", "'z'", "does not have"]),
    (dict(in_sharding=P("x", "x")), ValueError, ["in_sharding", "'x' twice"]),
    (dict(in_sharding=P("x", None, None, "y")), ValueError, ["in_sharding", "4 entries"]),
    (dict(in_sharding="x"), TypeError, ["in_sharding", "PartitionSpec"]),
    (dict(norm=1), ValueError, ["norm"]),
    (dict(fuse_exchanges="yes"), ValueError, ["fuse_exchanges", "'auto'", "'yes'"]),
    (dict(fuse_exchanges=1), ValueError, ["fuse_exchanges", "got 1"]),
])
def test_plan_arguments_are_checked(kwargs, error, words):
    args = dict(shape=(8, 8, 8), dtype=np.float32, mesh=pfft.make_mesh((2, 2)))
    args.update(kwargs)
    shape, dtype, mesh = args.pop("shape"), args.pop("dtype"), args.pop("mesh")
    with pytest.raises(error) as info:
        pfft.plan(shape, dtype, mesh, **args)
    for word in words:
        assert word in str(info.value), (word, str(info.value))


def test_cache_size_must_be_positive():
    with pytest.raises(ValueError, match="maxsize"):
        pfft.set_plan_cache_size(0)


@pytest.mark.parametrize("fn", [pfft.fftn, pfft.rfftn])
def test_nan_and_inf_propagate_as_in_numpy(fn):
    mesh = pfft.make_mesh((2, 2))
    ref = getattr(np.fft, fn.__name__)
    for bad in (np.nan, np.inf, -np.inf):
        x = np.random.default_rng(0).standard_normal((8, 6, 4))
        x[1, 2, 3] = bad
        got, want = np.asarray(fn(x, mesh=mesh)), ref(x)
        assert np.array_equal(np.isnan(got), np.isnan(want))
        assert np.array_equal(np.isfinite(got), np.isfinite(want))


def test_empty_batches_and_size_one_axes_behave_as_numpy():
    mesh = pfft.make_mesh((2, 4))
    empty = np.zeros((0, 4, 4, 4))
    for fn in (pfft.fftn, pfft.ifftn, pfft.rfftn, pfft.irfftn):
        got = fn(empty, axes=(1, 2, 3), mesh=mesh)
        want = getattr(np.fft, fn.__name__)(empty, axes=(1, 2, 3))
        # readable (JAX's own sharded empty arrays cannot be read back) and numpy's
        assert np.asarray(got).shape == want.shape and got.dtype == want.dtype
        with pytest.raises(ValueError, match="Invalid number of FFT data points"):
            fn(empty, mesh=mesh)             # every axis by default: numpy refuses 0 points
    x = np.random.default_rng(1).standard_normal((1, 5, 1))
    assert np.allclose(np.asarray(pfft.fftn(x, mesh=mesh)), np.fft.fftn(x))
    assert np.allclose(np.asarray(pfft.rfftn(x, mesh=mesh)), np.fft.rfftn(x))
    assert np.allclose(np.asarray(pfft.irfftn(np.fft.rfftn(x), s=x.shape, axes=(0, 1, 2), mesh=mesh)), x)
