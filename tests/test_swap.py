"""``pfft.transports.swap``: XLA's tuple all-to-all, against JAX's own ``lax.all_to_all``.

Every mesh of 2, 4 and 8 devices up to three axes and every mesh axis (each name, and
each ordered tuple of names) is enumerated: what device ``j`` along the axis receives
in slot ``i`` must be what device ``i`` sent in slot ``j``, with the devices numbered as
``lax.axis_index`` numbers them, exactly as ``lax.all_to_all`` of the stacked arrays
delivers it. Then ``vmap``, ``jvp`` and ``grad`` against the same reference, the
compiled HLO (one all-to-all, no copies around it), and the errors.
"""
import itertools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

from pfft.hlo import count_collectives
from pfft.transports import swap as swap_module

pytestmark = pytest.mark.skipif(not swap_module.AVAILABLE,
                                reason="this JAX has no MHLO dialect: pieces shift instead")
swap = swap_module.swap

MESHES = [(2,), (4,), (8,), (2, 2), (2, 4), (4, 2), (1, 4), (2, 2, 2), (2, 1, 4)]
NAMES = ("a", "b", "c")


def _axes_of(names):
    """Every mesh axis argument over ``names``: each name, each ordered tuple of two
    or more distinct names."""
    out = list(names)
    for r in range(2, len(names) + 1):
        out += [tuple(t) for t in itertools.permutations(names, r)]
    return out


def _cases():
    for shape in MESHES:
        names = NAMES[:len(shape)]
        for axis in _axes_of(names):
            yield shape, axis


def _run(shape, axis, body, *args):
    """``body`` in a shard_map over a ``shape`` mesh; every argument's leading axis is
    split over all mesh axes (one row per device)."""
    names = NAMES[:len(shape)]
    mesh = Mesh(np.asarray(jax.devices()[:int(np.prod(shape))]).reshape(shape), names)
    spec = P(names)
    fn = jax.jit(jax.shard_map(body, mesh=mesh, in_specs=spec, out_specs=spec))
    args = [jax.device_put(a, NamedSharding(mesh, spec)) for a in args]
    return fn, args


def _size(shape, axis):
    names = NAMES[:len(shape)]
    picked = (axis,) if isinstance(axis, str) else axis
    return int(np.prod([shape[names.index(m)] for m in picked]))


@pytest.mark.parametrize("shape, axis", list(_cases()), ids=str)
def test_swap_delivers_what_all_to_all_delivers(shape, axis):
    """Each device sends ``p`` arrays tagged (its flat place, its place along ``axis``,
    the slot). On the device at place ``j``, result ``i`` is what the device at place
    ``i`` in the same group sent in slot ``j``; and the results equal
    ``lax.all_to_all`` of the stacked arrays."""
    p = _size(shape, axis)
    devices = int(np.prod(shape))

    def body(x):
        me = lax.axis_index(axis)
        flat = lax.axis_index(NAMES[:len(shape)])
        sent = jnp.stack([jnp.stack([flat, me, jnp.int32(k)]) for k in range(p)])
        got = jnp.stack(swap([sent[k] for k in range(p)], axis))
        ref = lax.all_to_all(sent, axis, 0, 0, tiled=False)
        return jnp.stack([got, ref])[None], jnp.stack([flat, me])[None]

    names = NAMES[:len(shape)]
    mesh = Mesh(np.asarray(jax.devices()[:devices]).reshape(shape), names)
    spec = P(names)
    fn = jax.jit(jax.shard_map(body, mesh=mesh, in_specs=spec, out_specs=(spec, spec)))
    out, who = fn(jax.device_put(np.zeros((devices, 1)), NamedSharding(mesh, spec)))
    out, who = np.asarray(out), np.asarray(who)     # (devices, 2, p, 3), (devices, 2)
    got, ref = out[:, 0], out[:, 1]
    np.testing.assert_array_equal(got, ref)
    np.testing.assert_array_equal(who[:, 0], np.arange(devices))
    for d in range(devices):
        senders = got[d, :, 0]
        assert sorted(set(senders.tolist())) == sorted(senders.tolist())   # p distinct
        for i in range(p):
            sender, sender_place, slot = got[d, i]
            assert sender_place == i and who[sender, 1] == i
            assert slot == who[d, 1]
        assert got[d, who[d, 1], 0] == d                # its own slot stays here


@pytest.mark.parametrize("shape, axis",
                         [((8,), "a"), ((2, 4), ("b", "a")), ((2, 2, 2), ("c", "a"))], ids=str)
def test_swap_under_vmap_jvp_and_grad(shape, axis):
    """Batched arrays swap batch by batch (a batch axis anywhere, one array unbatched);
    the tangent of a swap is the swap of the tangent; the gradient of ``<w, swap(x)>``
    is ``all_to_all`` of ``w`` (a swap is its own transpose), in float64."""
    p = _size(shape, axis)
    devices = int(np.prod(shape))
    rng = np.random.default_rng(3)
    x = rng.standard_normal((devices, p, 3, 5))
    w = rng.standard_normal((devices, p, 3, 5))

    def body(xb, wb):
        xs, ws = xb[0], wb[0]                      # (p, 3, 5) on each device
        stacked = lambda *a: jnp.stack(swap(list(a), axis))        # noqa: E731
        slots = lambda v: [v[k] for k in range(p)]                 # noqa: E731
        plain = stacked(*slots(xs))
        batched = jax.vmap(stacked, in_axes=1, out_axes=2)(*slots(xs))   # batch: the 5-axis
        first = [xs[k][0] for k in range(1, p)]    # unbatched arrays beside a batched one
        mixed = jax.vmap(lambda a: stacked(a, *first))(xs[0])            # (3, p, 5)
        ref_mixed = jnp.stack([lax.all_to_all(jnp.stack([xs[0][b]] + first), axis, 0, 0,
                                              tiled=False) for b in range(3)])
        _, tangent = jax.jvp(stacked, slots(xs), slots(ws))
        grad = jax.grad(lambda v: jnp.sum(stacked(*slots(v)) * ws))(xs)
        ref_plain = lax.all_to_all(xs, axis, 0, 0, tiled=False)
        ref_ws = lax.all_to_all(ws, axis, 0, 0, tiled=False)
        return (jnp.stack([plain, batched, ref_plain, tangent, ref_ws, grad])[None],
                jnp.stack([mixed, ref_mixed])[None])

    names = NAMES[:len(shape)]
    mesh = Mesh(np.asarray(jax.devices()[:devices]).reshape(shape), names)
    spec = P(names)
    fn = jax.jit(jax.shard_map(body, mesh=mesh, in_specs=(spec, spec),
                               out_specs=(spec, spec)))
    put = [jax.device_put(a, NamedSharding(mesh, spec)) for a in (x, w)]
    out, mixed = (np.asarray(a) for a in fn(*put))
    plain, batched, ref_plain, tangent, ref_ws, grad = np.moveaxis(out, 1, 0)
    assert not np.array_equal(ref_plain, x)        # the swap moved something
    np.testing.assert_array_equal(plain, ref_plain)
    np.testing.assert_array_equal(batched, ref_plain)
    np.testing.assert_array_equal(tangent, ref_ws)
    np.testing.assert_array_equal(grad, ref_ws)    # its own transpose
    np.testing.assert_array_equal(mixed[:, 0], mixed[:, 1])


def test_swap_is_one_all_to_all_without_copies():
    """The compiled HLO holds one all-to-all whose operands are the arrays passed in
    (no slicing copy before it, no concatenation after), and nothing else that moves
    data."""
    shape, axis = (2, 4), ("a", "b")

    def body(*xs):
        return tuple(swap(list(xs), axis))

    names = NAMES[:2]
    mesh = Mesh(np.asarray(jax.devices()[:8]).reshape(shape), names)
    spec = P(names)
    fn = jax.jit(jax.shard_map(body, mesh=mesh, in_specs=(spec,) * 8, out_specs=(spec,) * 8))
    args = [jax.ShapeDtypeStruct((8, 16), np.complex64, sharding=NamedSharding(mesh, spec))
            for _ in range(8)]
    text = fn.lower(*args).compile().as_text()
    ops = count_collectives(text)
    assert ops["all-to-all"] == 1 and sum(ops.values()) == 1
    entry = text[text.index("ENTRY"):]
    assert "fusion" not in entry and "copy(" not in entry and "slice" not in entry


def test_replica_groups_and_errors():
    """Groups list the devices of each place along the other axes, in axis_index order;
    wrong arrays and axes raise."""
    assert swap_module.replica_groups(("x", "y"), (2, 4), "x") == [[0, 4], [1, 5], [2, 6],
                                                                    [3, 7]]
    assert swap_module.replica_groups(("x", "y"), (2, 4), ("y", "x")) == [
        [0, 4, 1, 5, 2, 6, 3, 7]]
    assert swap_module.replica_groups(("x", "y"), (2, 4), ("x", "y")) == [list(range(8))]
    with pytest.raises(ValueError, match="distinct axes"):
        swap_module.replica_groups(("x", "y"), (2, 4), ("x", "x"))
    with pytest.raises(ValueError, match="distinct axes"):
        swap_module.replica_groups(("x", "y"), (2, 4), "z")
    with pytest.raises(ValueError, match="inside jax.shard_map"):
        jax.jit(lambda a: swap([a, a], "x")[0]).lower(np.zeros(3)).compile()
    mesh = Mesh(np.asarray(jax.devices()[:4]), ("a",))
    spec = P("a")
    x = jax.ShapeDtypeStruct((4, 3), np.float32, sharding=NamedSharding(mesh, spec))
    for arrays, err, match in [
            (lambda a: [a] * 3, ValueError, "4 devices"),
            (lambda a: [a, a, a, a[:, :2]], TypeError, "one shape and dtype"),
            (lambda a: [a, a, a, a.astype(jnp.float16)], TypeError, "one shape and dtype")]:
        fn = jax.jit(jax.shard_map(lambda a, f=arrays: jnp.stack(swap(f(a), "a"))[:1, :, :2]
                                   .reshape(1, -1)[:, :2],
                                   mesh=mesh, in_specs=spec, out_specs=spec))
        with pytest.raises(err, match=match):
            fn.lower(x).compile()
