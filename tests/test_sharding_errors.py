"""A bad ``out_sharding``, ``in_sharding`` or ``mesh`` gets pfft's own error at every
entry point, inside ``jit`` and outside: the function, the argument, the value given
and what would work (the mesh's axes, the mesh axes that divide a dimension, the
devices of both meshes where their shapes agree), never JAX's raw text.

Run on the 8 simulated devices (tests/conftest.py): the arrays live on devices 0-3 (a
2x2 mesh), the "other" mesh of the same shape on devices 4-7.
"""
import inspect

import jax
import numpy as np
import pytest
import scipy.fft as sf
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

import pfft

SHAPE = (4, 6, 5)
#: fragments of JAX's own messages for bad shardings, none of which pfft's may hold
JAX_TEXT = ("Resource axis", "not found in mesh", "duplicate entries", "DuplicateSpec",
            "implies that array axis", "evenly divide", "Length of sharding.spec",
            "has no attribute", "aval", "AbstractMesh(", "Received incompatible devices")
#: the public transforms that take out_sharding, at least (more may be added)
CORE = {"fftn", "ifftn", "rfftn", "irfftn", "fft", "ifft", "rfft", "irfft", "hfft", "ihfft",
        "fft2", "ifft2", "rfft2", "irfft2", "dctn", "idctn", "dstn", "idstn", "fftshift",
        "ifftshift"}
#: those that take real input (the others get complex input)
REAL_INPUT = ("rfft", "ihfft", "dct", "idct", "dst", "idst", "fftshift", "ifftshift")


def _with_out_sharding() -> list[str]:
    """Every public function of pfft with an ``out_sharding`` parameter."""
    return sorted(name for name in pfft.__all__
                  if inspect.isfunction(getattr(pfft, name)) and "out_sharding" in
                  inspect.signature(getattr(pfft, name)).parameters)


TRANSFORMS = _with_out_sharding()


def test_every_transform_is_covered():
    """The parametrization below sees every transform documented to take
    out_sharding (a renamed one would drop out of it unnoticed otherwise)."""
    assert CORE <= set(TRANSFORMS), sorted(CORE - set(TRANSFORMS))


def _mesh(devices=range(4), shape=(2, 2), names=("x", "y"), explicit=True):
    kind = jax.sharding.AxisType.Explicit if explicit else jax.sharding.AxisType.Auto
    devs = np.array([jax.devices()[i] for i in devices]).reshape(shape)
    return Mesh(devs, names, axis_types=(kind,) * len(names))


def _input(name: str) -> np.ndarray:
    x = np.random.default_rng(3).standard_normal(SHAPE)
    return x if name.startswith(REAL_INPUT) else x + 1j * x[::-1]


def _out_shape(name: str) -> tuple[int, ...]:
    """The result's shape by scipy.fft (numpy's shapes), not by pfft."""
    return getattr(sf, name)(_input(name)).shape


def _uneven(shape) -> P:
    """A spec splitting the first dimension of ``shape`` that 4 does not divide over
    both mesh axes (4 devices)."""
    d = next(a for a, n in enumerate(shape) if n % 4)
    return P(*([None] * d), ("x", "y"))


def _assert_pfft_words(err, where: str, argument: str, words) -> None:
    text = str(err)
    assert text.startswith(f"{where}: "), text
    assert argument in text, (argument, text)
    for word in words:
        assert word in text, (word, text)
    for raw in JAX_TEXT:
        assert raw not in text, (raw, text)


# (form, bad value or a function of the result's shape, error, words it must hold)
FORMS = [
    ("unknown axis", P("z"), ValueError, ["P('z',)", "'z'", "its axes are 'x', 'y'"]),
    ("axis twice", P("x", "x"), ValueError, ["P('x', 'x')", "'x' twice"]),
    ("axis twice in one entry", P(("y", "y")), ValueError, ["P(('y', 'y'),)", "'y' twice"]),
    ("too many entries", P(None, None, None, "x"), ValueError,
     ["P(None, None, None, 'x')", "4 entries", "3 dimensions", "at most 3"]),
    ("not a sharding", "x", TypeError, ["'x' (str)", "NamedSharding", "PartitionSpec"]),
    ("a list", [None, "x"], TypeError, ["[None, 'x'] (list)", "PartitionSpec"]),
    ("a dict", {"x": 2}, TypeError, ["{'x': 2} (dict)", "PartitionSpec"]),
    ("bad entry", P(1), TypeError, ["P(1,)", "entry 1 (int)", "mesh axis name"]),
    ("uneven", "uneven", ValueError, ["over 4 devices ('x', 'y')", "whole (None)",
                                      "split it over 'x' (2) or 'y' (2)"]),
    ("other mesh shape", "mesh4", ValueError, ["{'x': 4}", "{'x': 2, 'y': 2}"]),
    ("other devices", "other", ValueError, ["{'x': 2, 'y': 2} of devices [4, 5, 6, 7]",
                                            "{'x': 2, 'y': 2} of devices [0, 1, 2, 3]"]),
]
FORM_IDS = [f[0] for f in FORMS]


def _bad_value(value, name: str):
    if value == "uneven":
        return _uneven(_out_shape(name))
    if value == "mesh4":
        return NamedSharding(_mesh(shape=(4,), names=("x",)), P())
    if value == "other":
        return NamedSharding(_mesh(devices=range(4, 8)), P())
    return value


@pytest.mark.parametrize("form", FORMS, ids=FORM_IDS)
@pytest.mark.parametrize("name", TRANSFORMS)
def test_a_bad_out_sharding_is_reported_in_pfft_words(name, form):
    _, value, error, words = form
    bad = _bad_value(value, name)
    words = list(words)
    if value == "uneven":
        d = len(bad) - 1
        words += [f"dimension {d}", f"length {_out_shape(name)[d]}", repr(bad)]
    x = pfft.device_put(_input(name), _mesh())
    with pytest.raises(error) as info:
        getattr(pfft, name)(x, out_sharding=bad)
    _assert_pfft_words(info.value, name, "out_sharding", words)


# inside jit: the mesh is abstract; every form but another mesh's devices (unknown
# there on an Explicit mesh) is caught the same way
JIT_FORMS = [f for f in FORMS if f[1] != "other"]


@pytest.mark.parametrize("form", JIT_FORMS, ids=[f[0] for f in JIT_FORMS])
@pytest.mark.parametrize("name", TRANSFORMS)
def test_a_bad_out_sharding_inside_jit(name, form):
    _, value, error, words = form
    bad = _bad_value(value, name)
    x = pfft.device_put(_input(name), _mesh())
    fn = getattr(pfft, name)
    with pytest.raises(error) as info:
        jax.jit(lambda a: fn(a, out_sharding=bad))(x)
    _assert_pfft_words(info.value, name, "out_sharding", words)


@pytest.mark.parametrize("name", ["fftn", "irfftn", "idctn", "fftshift"])
def test_another_meshs_devices_inside_jit_on_an_auto_mesh(name):
    """On an Auto mesh passed as mesh= the transform's devices are known inside jit:
    an out_sharding on the same shape of mesh over other devices names both."""
    mesh = _mesh(explicit=False)
    other = NamedSharding(_mesh(devices=range(4, 8), explicit=False), P("x"))
    x = pfft.device_put(_input(name), mesh)
    fn = getattr(pfft, name)
    with pytest.raises(ValueError) as info:
        jax.jit(lambda a: fn(a, mesh=mesh, out_sharding=other))(x)
    _assert_pfft_words(info.value, name, "out_sharding",
                       ["of devices [4, 5, 6, 7]", "of devices [0, 1, 2, 3]"])


@pytest.mark.parametrize("name", ["fftn", "rfftn", "fft", "dctn", "fftshift"])
def test_a_partition_spec_without_a_mesh(name):
    """numpy input and no mesh=: a spec naming a mesh axis has no mesh to be on (a spec
    that splits nothing leaves the one-device result as it is)."""
    x = _input(name)
    with pytest.raises(ValueError) as info:
        getattr(pfft, name)(x, out_sharding=P("x"))
    _assert_pfft_words(info.value, name, "out_sharding",
                       ["P('x',)", "no mesh", "pass mesh="])
    got = getattr(pfft, name)(x, out_sharding=P())
    want = getattr(sf, name)(x)
    assert got.shape == want.shape
    assert np.allclose(np.asarray(got), want, rtol=1e-12, atol=1e-12)


def test_a_good_out_sharding_is_honoured():
    """The checks refuse nothing JAX can hold: an even split over one or both mesh
    axes, a mesh axis of size one, a NamedSharding on the transform's own mesh; the
    values are numpy's."""
    mesh = _mesh(devices=range(8), shape=(2, 4))
    x = np.random.default_rng(4).standard_normal((8, 6, 5))     # rfftn: (8, 6, 3)
    cases = [P(None, "x"), P("y", ("x",)), P(("x", "y")), P(None, None, None)]
    for spec in cases:
        y = pfft.rfftn(pfft.device_put(x, mesh), out_sharding=spec)
        assert y.sharding.is_equivalent_to(NamedSharding(mesh, spec), y.ndim), y.sharding
        assert np.allclose(np.asarray(y), np.fft.rfftn(x), rtol=1e-12, atol=1e-12)
    one = _mesh(devices=range(4), shape=(4, 1), names=("x", "u"))
    y = pfft.fftn(pfft.device_put(x, one), out_sharding=NamedSharding(one, P("x", "u")))
    assert y.sharding.is_equivalent_to(NamedSharding(one, P("x", "u")), y.ndim), y.sharding
    assert np.allclose(np.asarray(y), np.fft.fftn(x), rtol=1e-12, atol=1e-12)


# -- in_sharding of pfft.plan ---------------------------------------------------------

PLAN_FORMS = [
    ("unknown axis", P("z"), ValueError, ["P('z',)", "its axes are 'x', 'y'"]),
    ("axis twice", P("x", "x"), ValueError, ["P('x', 'x')", "'x' twice"]),
    ("too many entries", P(None, None, None, "x"), ValueError, ["4 entries", "3 dimensions"]),
    ("not a sharding", "x", TypeError, ["'x' (str)", "NamedSharding", "PartitionSpec"]),
    ("bad entry", P(None, 2.5), TypeError, ["P(None, 2.5)", "entry 2.5 (float)"]),
    ("uneven", P(None, ("x", "y")), ValueError,
     ["P(None, ('x', 'y'))", "dimension 1", "length 6", "split it over 'x' (2) or 'y' (2)"]),
    ("other mesh shape", "mesh4", ValueError, ["{'x': 4}", "the plan's mesh {'x': 2, 'y': 2}"]),
    ("other devices", "other", ValueError, ["{'x': 2, 'y': 2} of devices [4, 5, 6, 7]",
                                            "plan's mesh {'x': 2, 'y': 2} of devices "
                                            "[0, 1, 2, 3]"]),
]


@pytest.mark.parametrize("form", PLAN_FORMS, ids=[f[0] for f in PLAN_FORMS])
def test_a_bad_in_sharding_of_a_plan(form):
    _, value, error, words = form
    bad = _bad_value(value, "fftn")
    if value == "other":
        bad = NamedSharding(_mesh(devices=range(4, 8)), P("x"))
    with pytest.raises(error) as info:
        pfft.plan(SHAPE, np.complex128, _mesh(), in_sharding=bad)
    _assert_pfft_words(info.value, "plan", "in_sharding", words)


def test_an_in_sharding_without_a_mesh():
    sharding = NamedSharding(_mesh(), P("x"))
    with pytest.raises(ValueError) as info:
        pfft.plan(SHAPE, np.complex128, None, in_sharding=sharding)
    _assert_pfft_words(info.value, "plan", "in_sharding",
                       ["{'x': 2, 'y': 2}", "mesh is None", "mesh=in_sharding.mesh"])
    with pytest.raises(ValueError) as info:
        pfft.plan(SHAPE, np.complex128, None, in_sharding=P(None, "x"))
    _assert_pfft_words(info.value, "plan", "in_sharding", ["P(None, 'x')", "no mesh"])
    plan = pfft.plan(SHAPE, np.complex128, None, in_sharding=P())    # splits nothing
    x = _input("fftn")
    assert np.allclose(np.asarray(plan.forward(x)), np.fft.fftn(x), rtol=1e-12, atol=1e-12)


def test_an_in_sharding_on_the_plans_mesh_is_taken():
    """A NamedSharding on the plan's own mesh, or a spec naming a size-one axis, is the
    input layout (numpy's values from there)."""
    mesh = _mesh()
    plan = pfft.plan(SHAPE, np.complex128, mesh, in_sharding=NamedSharding(mesh, P("x", "y")))
    assert plan.in_sharding.spec == P("x", "y", None)
    x = _input("fftn")
    y = plan.forward(jax.device_put(x, plan.in_sharding))
    assert np.allclose(np.asarray(y), np.fft.fftn(x), rtol=1e-12, atol=1e-12)


# -- mesh= ----------------------------------------------------------------------------

@pytest.mark.parametrize("bad", ["x", np.array(jax.devices()[:4]), 4],
                         ids=["str", "device array", "int"])
@pytest.mark.parametrize("name", TRANSFORMS + ["device_put", "plan", "halo_exchange",
                                               "halo_reduce"])
def test_a_mesh_that_is_not_a_mesh(name, bad):
    given = f"({type(bad).__name__})"
    with pytest.raises(TypeError) as info:
        if name == "plan":
            pfft.plan(SHAPE, np.complex128, bad)
        elif name == "device_put":
            pfft.device_put(_input(name), bad)
        elif name.startswith("halo"):
            getattr(pfft, name)(_input(name), 1, mesh=bad)
        else:
            getattr(pfft, name)(_input(name), mesh=bad)
    _assert_pfft_words(info.value, name, "mesh", [given, "jax.sharding.Mesh", "None"])


@pytest.mark.parametrize("name", TRANSFORMS)
def test_a_mesh_whose_devices_do_not_hold_the_array(name):
    x = pfft.device_put(_input(name), _mesh())
    with pytest.raises(ValueError) as info:
        getattr(pfft, name)(x, mesh=_mesh(devices=range(4, 8)))
    _assert_pfft_words(info.value, name, "mesh",
                       ["devices [0, 1, 2, 3]", "devices [4, 5, 6, 7]", "device_put"])


def test_a_mesh_of_three_axes_is_taken():
    """A mesh of more than two axes of size above one is accepted (its extra axes
    shard batch axes): numpy's values."""
    mesh = _mesh(devices=range(8), shape=(2, 2, 2), names=("a", "b", "c"))
    x = np.random.default_rng(5).standard_normal((4, 4, 6, 5))
    y = pfft.fftn(x, axes=(1, 2, 3), mesh=mesh, out_sharding=P("c", "a", "b"))
    assert y.sharding == NamedSharding(mesh, P("c", "a", "b"))
    assert np.allclose(np.asarray(y), np.fft.fftn(x, axes=(1, 2, 3)), rtol=1e-12, atol=1e-12)
