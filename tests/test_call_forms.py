"""The call forms numpy 2, ``jax.numpy.fft`` and ``scipy.fft`` accept, on pfft: numpy 2's
``s`` (-1, ``None`` with numpy's DeprecationWarning, ``s`` without ``axes``), repeated
axes, scipy's one-int ``s``/``axes`` and its keywords (``overwrite_x``, ``workers``,
``plan``), numpy's ``out``, the frequencies' ``device=``/``dtype=`` and their errors,
scipy's 1-D ``dct``/``idct``/``dst``/``idst`` (values, shardings, gradients) and the
dtype of every transform of every input dtype under both of JAX's dtype-promotion
modes. References: numpy and scipy in float64, and dense transform matrices built
from them."""
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.fft as sfft
from jax.sharding import NamedSharding, PartitionSpec as P

import pfft
from conftest import rel_err

pytestmark = pytest.mark.filterwarnings("ignore::pfft.mesh_plan.ReplicationWarning")

C2C_ND = ["fftn", "ifftn", "fft2", "ifft2"]
ND = ["fftn", "ifftn", "rfftn", "irfftn"]
PROMOTION_MODES = ["standard", "strict"]


def _mesh():
    return pfft.make_mesh((2, 4))


# -- numpy 2's s and axes -------------------------------------------------------------

@pytest.mark.parametrize("name", C2C_ND)
def test_s_minus_one_keeps_the_axis_length(name):
    x = np.arange(100.0).reshape(10, 10)
    got = getattr(pfft, name)(x, s=(-1, 5), axes=(0, 1))
    want = getattr(np.fft, name)(x, s=(-1, 5), axes=(0, 1))
    assert got.shape == want.shape == (10, 5)
    assert rel_err(got, want) < 1e-13


def test_s_minus_one_on_the_real_inverse_is_the_input_length_as_numpy_reads_it():
    c = np.fft.rfftn(np.random.default_rng(0).standard_normal((6, 10)))     # (6, 6)
    got, want = pfft.irfftn(c, s=(-1, -1), axes=(0, 1)), np.fft.irfftn(c, s=(-1, -1), axes=(0, 1))
    assert got.shape == want.shape == (6, 6)
    assert rel_err(got, want) < 1e-13


@pytest.mark.parametrize("name", ND + ["fft2", "ifft2"])
def test_none_in_s_warns_as_numpy_and_takes_the_default_length(name):
    x = np.random.default_rng(1).standard_normal((6, 5, 4))
    if name in ("irfftn",):
        x = np.fft.rfftn(x)
    axes = (0, 1) if name in ("fft2", "ifft2") else (0, 1, 2)
    s = (10, None) if len(axes) == 2 else (10, None, 10)
    with pytest.warns(DeprecationWarning, match="array containing `None` values to `s`") as rec:
        got = getattr(pfft, name)(x, s=s, axes=axes)
    assert rec[0].filename == __file__            # pointed at the caller, as numpy does
    with pytest.warns(DeprecationWarning):
        want = getattr(np.fft, name)(x, s=s, axes=axes)
    assert got.shape == want.shape
    assert rel_err(got, want) < 1e-13


@pytest.mark.parametrize("name", ND)
def test_s_without_axes_warns_as_numpy_and_takes_the_last_axes(name):
    x = np.arange(100.0).reshape(10, 10)
    with pytest.warns(DeprecationWarning, match="`axes` should not be `None` if `s`"):
        got = getattr(pfft, name)(x, s=(-1, 5))
    with pytest.warns(DeprecationWarning):
        want = getattr(np.fft, name)(x, s=(-1, 5))
    assert got.shape == want.shape
    assert rel_err(got, want) < 1e-13


@pytest.mark.parametrize("name", ["fft2", "ifft2"])
def test_two_d_forms_with_axes_none_warn_as_numpy(name):
    x = np.arange(100.0).reshape(10, 10)
    with pytest.warns(DeprecationWarning, match="`axes` should not be `None` if `s`"):
        got = getattr(pfft, name)(x, s=(-1, 5), axes=None)
    assert got.shape == (10, 5)


def test_no_warning_without_deprecated_forms():
    x = np.ones((4, 6))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pfft.fftn(x, s=(4, 3), axes=(0, 1))
        pfft.fft2(x, s=(-1, 5))
        pfft.dctn(x, s=(3, 3))              # scipy's rule: s without axes is not deprecated


@pytest.mark.parametrize("s", [(0, 5), (-2, 5)])
def test_lengths_below_one_fail_as_numpy(s):
    x = np.ones((4, 6))
    with pytest.raises(ValueError, match="Invalid number of FFT data points"):
        pfft.fftn(x, s=s, axes=(0, 1))
    with pytest.raises(ValueError):
        np.fft.fftn(x, s=s, axes=(0, 1))


REPEATS = [((0, 0, 1), (10, 20, 40)), ((1, 0, 1), (3, 7, 6)), ((2, 2), None), ((0, 2, 0), (5, 4, 9))]


@pytest.mark.parametrize("name", ND)
@pytest.mark.parametrize("axes, s", REPEATS)
def test_repeated_axes_transform_once_per_entry_as_numpy(name, axes, s):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((6, 5, 4))
    if name in ("fftn", "ifftn"):
        x = x + 1j * rng.standard_normal(x.shape)
    elif name == "irfftn":
        x = np.fft.rfftn(x)
    got = getattr(pfft, name)(x, s=s, axes=axes)
    want = getattr(np.fft, name)(x, s=s, axes=axes)
    assert got.shape == want.shape and got.dtype == want.dtype
    assert rel_err(got, want) < 1e-13


def test_repeated_axes_of_rfftn_as_the_report_gives():
    got = pfft.rfftn(np.ones((2, 3)), axes=(0, 0, 1), s=(10, 20, 40))
    assert got.shape == (10, 21)
    assert rel_err(got, np.fft.rfftn(np.ones((2, 3)), axes=(0, 0, 1), s=(10, 20, 40))) < 1e-13


def test_repeated_axes_on_a_mesh():
    mesh = _mesh()
    rng = np.random.default_rng(3)
    x = rng.standard_normal((8, 12, 6)) + 1j * rng.standard_normal((8, 12, 6))
    xs = pfft.device_put(x, mesh)
    for name in ("fftn", "ifftn"):
        got = getattr(pfft, name)(xs, axes=(2, 0, 2), s=(4, 8, 6))
        assert rel_err(got, getattr(np.fft, name)(x, axes=(2, 0, 2), s=(4, 8, 6))) < 1e-13
    r = x.real
    got = pfft.rfftn(pfft.device_put(r, mesh), axes=(1, 1, 2))
    assert rel_err(got, np.fft.rfftn(r, axes=(1, 1, 2))) < 1e-13


def test_repeated_axes_are_refused_where_scipy_refuses_them():
    with pytest.raises(ValueError, match="all axes must be unique"):
        pfft.dctn(np.ones((4, 4)), axes=(0, 0))


# -- scipy's forms and keywords -------------------------------------------------------

def test_scipy_one_int_s_and_axes():
    x = np.random.default_rng(4).standard_normal((6, 5))
    assert rel_err(pfft.fftn(x, s=8, axes=0), sfft.fftn(x, s=8, axes=0)) < 1e-13
    assert rel_err(pfft.dctn(x, s=4, axes=1), sfft.dctn(x, s=4, axes=1)) < 1e-13
    assert rel_err(pfft.rfftn(x, s=7, axes=-1), sfft.rfftn(x, s=7, axes=-1)) < 1e-13


@pytest.mark.parametrize("name", ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fftn",
                                  "ifftn", "rfftn", "irfftn", "fft2", "ifft2", "rfft2",
                                  "irfft2", "hfftn", "ihfftn", "hfft2", "ihfft2"])
def test_scipy_keywords_are_accepted_and_change_nothing(name):
    x = np.random.default_rng(5).standard_normal((6, 8))
    want = getattr(sfft, name)(x)
    got = getattr(pfft, name)(x, overwrite_x=True, workers=2)
    assert got.dtype == want.dtype and rel_err(got, want) < 1e-13
    assert rel_err(getattr(pfft, name)(x, workers=-1, plan=None), want) < 1e-13
    with pytest.raises(NotImplementedError, match="plan"):
        getattr(pfft, name)(x, plan=object())
    with pytest.raises(ValueError, match="workers"):
        getattr(pfft, name)(x, workers=0)
    with pytest.raises(TypeError, match="out="):
        getattr(pfft, name)(x, out=np.empty_like(want))
    assert rel_err(getattr(pfft, name)(x, out=None), want) < 1e-13


@pytest.mark.parametrize("name", ["hfftn", "ihfftn", "hfft2", "ihfft2"])
@pytest.mark.parametrize("norm", [None, "ortho", "forward"])
def test_scipy_hermitian_n_d_transforms(name, norm):
    rng = np.random.default_rng(6)
    x = rng.standard_normal((6, 5, 4))
    if name.startswith("h"):
        x = x + 1j * rng.standard_normal(x.shape)
    for kw in ({}, {"s": (6, 7), "axes": (0, 2)}):
        got, want = getattr(pfft, name)(x, norm=norm, **kw), getattr(sfft, name)(x, norm=norm, **kw)
        assert got.shape == want.shape and got.dtype == want.dtype
        assert rel_err(got, want) < 1e-13
    mesh = _mesh()
    got = getattr(pfft, name)(pfft.device_put(x, mesh), norm=norm)
    assert rel_err(got, getattr(sfft, name)(x, norm=norm)) < 1e-13


# -- frequencies ----------------------------------------------------------------------

@pytest.mark.parametrize("name", ["fftfreq", "rfftfreq"])
def test_frequencies_take_numpy_2s_device_and_jnps_dtype(name):
    for n, d in ((7, 0.3), (8, 1.0), (1, 2.0)):
        want = getattr(np.fft, name)(n, d)
        got = getattr(pfft, name)(n, d, device="cpu")
        np.testing.assert_array_equal(np.asarray(got), want)
        assert got.devices() == {jax.devices("cpu")[0]}
    dev = jax.devices()[3]
    assert getattr(pfft, name)(8, device=dev).devices() == {dev}
    mesh = jax.make_mesh((8,), ("x",), devices=jax.devices())
    sharded = getattr(pfft, name)(16 if name == "fftfreq" else 30, device=NamedSharding(mesh, P("x")))
    assert sharded.sharding.spec == P("x")
    assert getattr(pfft, name)(8, dtype=jnp.float32).dtype == jnp.float32
    traced = jax.jit(lambda d: getattr(pfft, name)(6, d))(0.5)
    np.testing.assert_allclose(np.asarray(traced), getattr(np.fft, name)(6, 0.5), rtol=1e-15)


@pytest.mark.parametrize("name", ["fftfreq", "rfftfreq"])
@pytest.mark.parametrize("n", [[4], (4,), 4.0, np.float64(4)])
def test_frequencies_of_a_non_integer_n_fail_as_numpy(name, n):
    with pytest.raises(ValueError, match="n should be an integer"):
        getattr(np.fft, name)(n)
    with pytest.raises(ValueError, match="n should be an integer"):
        getattr(pfft, name)(n)


# -- scipy's 1-D real-to-real transforms ----------------------------------------------

R2R_1D = ["dct", "idct", "dst", "idst"]


@pytest.mark.parametrize("name", R2R_1D)
@pytest.mark.parametrize("type_", [1, 2, 3, 4])
@pytest.mark.parametrize("norm", [None, "backward", "ortho", "forward"])
def test_one_d_r2r_matches_scipy(name, type_, norm):
    rng = np.random.default_rng(type_)
    x = rng.standard_normal((5, 9, 4))
    fn, ref = getattr(pfft, name), getattr(sfft, name)
    for kw in ({}, {"axis": 1}, {"axis": 0, "n": 8}, {"axis": -1, "n": 3},
               {"axis": 1, "orthogonalize": False}, {"axis": 1, "orthogonalize": True}):
        got, want = fn(x, type_, norm=norm, **kw), ref(x, type_, norm=norm, **kw)
        assert got.shape == want.shape and got.dtype == want.dtype, kw
        assert rel_err(got, want) < 1e-13, kw
    f32 = fn(x.astype(np.float32), type_, norm=norm, axis=1)
    assert f32.dtype == np.float32 and rel_err(f32, ref(x, type_, norm=norm, axis=1)) < 1e-6
    z = x + 1j * rng.standard_normal(x.shape)            # complex: parts transformed alike
    assert rel_err(fn(z, type_, norm=norm, axis=0), ref(z, type_, norm=norm, axis=0)) < 1e-13


@pytest.mark.parametrize("name", R2R_1D)
def test_one_d_r2r_positional_arguments_are_scipys(name):
    x = np.random.default_rng(7).standard_normal((6, 5))
    got = getattr(pfft, name)(x, 3, 7, 0, "ortho", False, None, False)
    want = getattr(sfft, name)(x, 3, 7, 0, "ortho", False, None, False)
    assert rel_err(got, want) < 1e-13


@pytest.mark.parametrize("name", R2R_1D)
def test_one_d_r2r_errors_as_scipy(name):
    x = np.ones((4, 5))
    for kw, error in (({"type": 5}, ValueError), ({"n": 0}, ValueError),
                      ({"axis": 2}, IndexError), ({"workers": 0}, ValueError),
                      ({"type": 1, "n": 1}, RuntimeError) if name.endswith("dct") else
                      ({"norm": "bad"}, ValueError)):
        with pytest.raises(error):
            getattr(sfft, name)(x, **kw)
        with pytest.raises(error):
            getattr(pfft, name)(x, **kw)


@pytest.mark.parametrize("name", R2R_1D)
@pytest.mark.parametrize("axis", [0, 1, 2])
def test_one_d_r2r_on_a_mesh_keeps_the_sharding(name, axis):
    mesh = _mesh()
    x = np.random.default_rng(axis).standard_normal((8, 12, 6))
    xs = pfft.device_put(x, mesh)
    for type_ in (1, 2, 3, 4):
        got = getattr(pfft, name)(xs, type_, axis=axis, norm="ortho")
        assert rel_err(got, getattr(sfft, name)(x, type_, axis=axis, norm="ortho")) < 1e-13
        assert got.sharding.spec == xs.sharding.spec
    padded = getattr(pfft, name)(xs, 2, n=10, axis=axis)
    assert rel_err(padded, getattr(sfft, name)(x, 2, n=10, axis=axis)) < 1e-13
    jitted = jax.jit(lambda a: getattr(pfft, name)(a, 2, axis=axis))(xs)
    assert rel_err(jitted, getattr(sfft, name)(x, 2, axis=axis)) < 1e-13


def _matrix(name, type_, n, m, norm, orthogonalize):
    """The dense matrix of scipy's 1-D transform of ``n`` points to ``m`` (``n=m``
    argument, crop or pad), column j its transform of the unit vector e_j."""
    return getattr(sfft, name)(np.eye(n), type_, n=m, axis=0, norm=norm,
                               orthogonalize=orthogonalize)


@pytest.mark.parametrize("name", R2R_1D)
@pytest.mark.parametrize("type_", [1, 2, 3, 4])
@pytest.mark.parametrize("norm, orthogonalize", [(None, None), ("ortho", None),
                                                 ("ortho", False), ("forward", None)])
def test_one_d_r2r_gradients_are_the_transposed_matrix(name, type_, norm, orthogonalize):
    rng = np.random.default_rng(type_)
    n, m = 7, 9
    x = rng.standard_normal((3, n))
    w = rng.standard_normal((3, m))
    a = _matrix(name, type_, n, m, norm, orthogonalize)          # y = a @ x along the axis
    loss = lambda v: jnp.sum(jnp.asarray(w) * getattr(pfft, name)(
        v, type_, n=m, axis=1, norm=norm, orthogonalize=orthogonalize))
    g = jax.grad(loss)(jnp.asarray(x))
    assert rel_err(g, w @ a) < 1e-13                            # d/dx sum(w . a x) = a^T w
    mesh = _mesh()
    xs = pfft.device_put(rng.standard_normal((8, 4, n)), mesh)
    ws = rng.standard_normal((8, 4, m))
    loss = lambda v: jnp.sum(jnp.asarray(ws) * getattr(pfft, name)(
        v, type_, n=m, axis=2, norm=norm, orthogonalize=orthogonalize))
    with jax.set_mesh(mesh):                      # the weights: an array on no mesh
        g = jax.jit(jax.grad(loss))(xs)
    assert rel_err(g, ws @ a) < 1e-13
    t = rng.standard_normal((3, n))                             # forward mode: a t
    _, tangent = jax.jvp(lambda v: getattr(pfft, name)(v, type_, n=m, axis=1, norm=norm,
                                                       orthogonalize=orthogonalize),
                         (jnp.asarray(x),), (jnp.asarray(t),))
    assert rel_err(tangent, t @ a.T) < 1e-13


# -- dtypes under every promotion mode ------------------------------------------------

DTYPES = [np.bool_, np.int8, np.int32, np.int64, np.uint16, np.float16, np.float32,
          np.float64, np.complex64, np.complex128]
COMPLEX_IN = ["fft", "ifft", "fftn", "ifftn", "fft2", "ifft2", "hfft", "irfft", "irfftn",
              "irfft2", "hfftn", "hfft2"]
REAL_IN = ["rfft", "ihfft", "rfftn", "rfft2", "ihfftn", "ihfft2"]
R2R_IN = ["dct", "idct", "dst", "idst", "dctn", "idctn", "dstn", "idstn"]


def _numpy_reference(name):
    return getattr(np.fft, name, None) or getattr(sfft, name)


@pytest.mark.parametrize("mode", PROMOTION_MODES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_every_transform_gives_numpys_dtype_under_every_promotion_mode(mode, dtype):
    x = (np.arange(24).reshape(4, 6) % 3).astype(dtype)
    names = COMPLEX_IN + R2R_IN + ([] if np.issubdtype(dtype, np.complexfloating) else REAL_IN)
    with jax.numpy_dtype_promotion(mode):
        for name in names:
            ref = getattr(sfft if name in R2R_IN or not hasattr(np.fft, name) else np.fft, name)
            want = ref(x)                                 # numpy's (scipy's) result dtype
            exact = ref(x.astype(np.complex128 if np.iscomplexobj(x) else np.float64))
            got = getattr(pfft, name)(x)
            assert got.dtype == want.dtype, (name, got.dtype, want.dtype)
            tol = {2: 1e-3, 4: 1e-6}.get(np.finfo(got.dtype).bits // 8, 1e-13)  # its precision
            assert rel_err(got, exact) < tol, name
        assert pfft.fftshift(x).dtype == x.dtype
        assert pfft.fftfreq(4).dtype == jnp.result_type(float)


@pytest.mark.parametrize("mode", PROMOTION_MODES)
def test_transforms_jit_grad_and_plans_under_every_promotion_mode(mode):
    mesh = _mesh()
    rng = np.random.default_rng(8)
    x = rng.standard_normal((8, 12, 6)).astype(np.float32)
    with jax.numpy_dtype_promotion(mode):
        xs = pfft.device_put(x, mesh)
        k = jax.jit(pfft.rfftn)(xs)
        assert k.dtype == np.complex64 and rel_err(k, np.fft.rfftn(x)) < 1e-6
        back = jax.jit(lambda a: pfft.irfftn(a, s=x.shape, axes=(0, 1, 2)))(k)
        assert back.dtype == np.float32 and rel_err(back, x) < 1e-6
        g = jax.jit(jax.grad(lambda a: jnp.sum(jnp.abs(pfft.fftn(a)) ** 2)))(xs)
        assert rel_err(g, 2 * x.size * x) < 1e-5                   # Parseval: |F x|^2 = N |x|^2
        plan = pfft.plan(x.shape, np.complex64, mesh)
        y = plan.forward(pfft.device_put(x, mesh))                   # float32 into a complex64 plan
        assert rel_err(y, np.fft.fftn(x)) < 1e-6
        with pytest.raises(TypeError, match="without loss"):
            plan.forward(pfft.device_put(x.astype(np.complex128), mesh))
        d = pfft.dctn(xs, norm="ortho")
        assert d.dtype == np.float32 and rel_err(d, sfft.dctn(x, norm="ortho")) < 1e-6


@pytest.mark.parametrize("name, kw", [("irfft", {}), ("hfft", {}), ("irfftn", {"axes": (1,)}),
                                      ("irfft2", {"axes": (1,)}), ("irfftn", {}),
                                      ("irfft2", {})])
def test_real_results_of_half_precision_input_have_numpys_dtype(name, kw):
    """numpy rounds the real result of float16 input to float16 where one axis is
    transformed, and gives float32 where complex FFTs of other axes come first."""
    x = np.random.default_rng(9).standard_normal((4, 6)).astype(np.float16)
    want = getattr(np.fft, name)(x, **kw)
    got = getattr(pfft, name)(x, **kw)
    assert got.dtype == want.dtype
    exact = getattr(np.fft, name)(x.astype(np.float64), **kw)
    assert rel_err(got, exact) < (1e-3 if got.dtype == np.float16 else 1e-6)
