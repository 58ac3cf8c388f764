"""Which plan an inverse transform runs (pfft/inverse.py).

Where JAX shows the input's layout (concrete arrays, Explicit meshes) the inverse's
plan and its result's sharding follow from the arguments alone: the same in a fresh
process, after other transforms, and in another thread. Where JAX hides it (an Auto
mesh inside ``jit``) the record of the last forward call fills in what the shape
cannot say: a padded spectrum's real shape.
"""
import threading

import jax
import numpy as np
import pytest
import scipy.fft
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

import pfft
from conftest import rel_err


def _in_a_thread(fn):
    out = {}
    thread = threading.Thread(target=lambda: out.setdefault("y", fn()))
    thread.start()
    thread.join()
    return out["y"]


def _same(a, b):
    assert a.shape == b.shape and a.sharding.is_equivalent_to(b.sharding, a.ndim), \
        (a.sharding, b.sharding)
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


@pytest.mark.parametrize("axis_type", [AxisType.Explicit, AxisType.Auto])
def test_an_inverse_of_a_visible_layout_does_not_depend_on_what_ran_before(axis_type):
    """``irfftn``, ``ifftn`` and ``idctn`` of a spectrum in ``P('b', None, 'a')`` give
    the same values and sharding in a fresh cache, after the forward call of an input
    in ``P(None, 'b', 'a')`` that ends in that spectrum layout (``P('a', 'b', None)``,
    the default input layout, ends there too), and in another thread."""
    mesh = jax.make_mesh((2, 4), ("a", "b"), axis_types=(axis_type,) * 2)
    rng = np.random.default_rng(21)
    x = rng.standard_normal((8, 12, 10))
    other = jax.device_put(x, NamedSharding(mesh, P(None, "b", "a")))
    for forward, inverse, kw in ((pfft.rfftn, pfft.irfftn, dict(s=x.shape, axes=(0, 1, 2))),
                                 (pfft.fftn, pfft.ifftn, {}),
                                 (pfft.dctn, pfft.idctn, {})):
        spectrum = forward(pfft.device_put(x, mesh))
        pfft.clear_plan_cache()
        fresh = inverse(spectrum, **kw)
        forward(other)                           # a forward call ending in that layout
        after = inverse(spectrum, **kw)
        threaded = _in_a_thread(lambda: inverse(spectrum, **kw))
        _same(after, fresh)
        _same(threaded, fresh)
        assert rel_err(fresh, x) <= 1e-12
        # the default plan run backwards: the default input layout
        assert fresh.sharding.is_equivalent_to(pfft.device_put(x, mesh).sharding, 3)


def test_out_sharding_picks_the_forward_plan_run_backwards():
    """With ``out_sharding`` the input's, the inverse runs that input's forward plan
    backwards: as many collectives as the forward, none to reshard afterwards."""
    mesh = pfft.make_mesh((2, 4))
    x = np.random.default_rng(22).standard_normal((8, 12, 10))
    spec = P(None, "y", "x")
    xs = jax.device_put(x, NamedSharding(mesh, spec))
    plan = pfft.plan(x.shape, x.dtype, mesh, kind="r2c", in_sharding=spec)
    k = pfft.rfftn(xs)
    assert k.sharding.is_equivalent_to(plan.out_sharding, 3)
    back = jax.jit(lambda k: pfft.irfftn(k, s=x.shape, axes=(0, 1, 2), out_sharding=spec))
    text = back.lower(k).compile().as_text()
    planned = plan.collectives(reverse=True)
    assert text.count("all-to-all(") == planned["all-to-all"]
    assert text.count("all-gather(") == 0
    y = back(k)
    assert y.sharding.is_equivalent_to(xs.sharding, 3) and rel_err(y, x) <= 1e-12


def test_under_jit_on_an_auto_mesh_the_record_gives_a_padded_spectrum_its_real_shape():
    """Inside ``jit`` on an Auto mesh the spectrum's layout is hidden: ``irfftn``
    without ``s`` takes it to be what the last forward call of its shape made, here a
    padded spectrum of a ``(9, 8, 7)`` field, and gives that shape back."""
    mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Auto,) * 2)
    r = np.random.default_rng(23).standard_normal((9, 8, 7))
    padded = pfft.plan(r.shape, np.float64, mesh, kind="r2c", spectrum="padded")
    k = padded.forward(r)
    back = jax.jit(lambda k: pfft.irfftn(k, mesh=mesh))(k)
    assert back.shape == r.shape and rel_err(back, r) <= 1e-12
    pfft.clear_plan_cache()                      # no record: numpy's lengths
    assert jax.jit(lambda k: pfft.irfftn(k, mesh=mesh))(k).shape == (16, 8, 6)


def test_an_inverse_from_another_layout_runs_from_there():
    """A spectrum that no default plan leaves where it is gets a plan from its own
    layout (scipy's inverse DCT as the transposed type's forward one): numpy's and
    scipy's values, no all-gather."""
    mesh = pfft.make_mesh((2, 4))
    rng = np.random.default_rng(24)
    k = rng.standard_normal((8, 12, 10)) + 1j * rng.standard_normal((8, 12, 10))
    ks = jax.device_put(k, NamedSharding(mesh, P("y", "x", None)))
    assert rel_err(pfft.ifftn(ks), np.fft.ifftn(k)) <= 1e-12
    c = rng.standard_normal((8, 12, 10))
    cs = jax.device_put(c, NamedSharding(mesh, P("y", "x", None)))
    assert rel_err(pfft.idctn(cs, norm="ortho"), scipy.fft.idctn(c, norm="ortho")) <= 1e-12
