"""grad, vjp, jvp and vmap of every kind of transform, under ``jit``, on Explicit and
Auto meshes of every shape pfft distributes over: one device (1x1), a slab, a pencil
and three mesh axes. The reference is the same function of ``jax.numpy.fft`` (or
``jax.scipy.fft``) on one device: same values, same cotangents. On Explicit meshes
the cotangent also comes back in the input's sharding, its type checked by JAX against
the primal's (sharding and the mesh axes it varies over) on the way.
"""
import functools

import jax
import jax.numpy as jnp
import jax.scipy.fft as jsp_fft
import numpy as np
import pytest
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P

import pfft
from conftest import rel_err
from test_autodiff import _input, _loss

SHAPE = (4, 6, 8)
UNEVEN = (6, 5, 4)      # on 2x2 the plans end in an all-gather: no even layout is left

MESHES = {"1x1": ((1, 1), ("x", "y")), "slab": ((4,), ("x",)),
          "pencil": ((2, 2), ("x", "y")), "3 axes": ((2, 2, 2), ("a", "b", "c"))}

# name: (pfft function, one-device reference, input: complex, real or half spectrum)
TRANSFORMS = {
    "fftn": (pfft.fftn, jnp.fft.fftn, "complex"),
    "ifftn": (pfft.ifftn, jnp.fft.ifftn, "complex"),
    "rfftn": (pfft.rfftn, jnp.fft.rfftn, "real"),
    "irfftn": (pfft.irfftn, jnp.fft.irfftn, "half"),
    "dctn": (functools.partial(pfft.dctn, norm="ortho"),
             functools.partial(jsp_fft.dctn, norm="ortho"), "real"),
    "idctn": (pfft.idctn, jsp_fft.idctn, "real"),
}


def _mesh(name, kind):
    shape, names = MESHES[name]
    t = AxisType.Explicit if kind == "explicit" else AxisType.Auto
    return jax.make_mesh(shape, names, axis_types=(t,) * len(shape),
                         devices=jax.devices()[:int(np.prod(shape))])


def _derivatives(f):
    """Everything at once, so that each case compiles once: grad of a non-linear loss,
    a VJP with a given cotangent, a JVP with a given tangent, vmap over a batch."""
    def run(x, ct, t, batch):
        _, vjp = jax.vjp(f, x)
        return (jax.grad(_loss(f))(x), vjp(ct)[0],
                jax.jvp(f, (x,), (t,))[1], jax.vmap(f)(batch))
    return run


CASES = ([(name, mesh, SHAPE) for name in TRANSFORMS for mesh in MESHES]
         + [(name, "pencil", UNEVEN) for name in ("fftn", "rfftn", "irfftn")])


@pytest.mark.filterwarnings("ignore::pfft.mesh_plan.ReplicationWarning")     # the uneven plans
@pytest.mark.parametrize("kind", ["explicit", "auto"])
@pytest.mark.parametrize("name, mesh_name, shape", CASES, ids=str)
def test_derivatives_and_vmap_match_one_device(name, mesh_name, shape, kind):
    ours, ref, draw = TRANSFORMS[name]
    if draw == "half":
        ours, ref = (functools.partial(f, s=shape, axes=tuple(range(len(shape))))
                     for f in (ours, ref))
    mesh = _mesh(mesh_name, kind)
    rng = np.random.default_rng(sum(map(ord, name + mesh_name)))
    x, t = (_input(rng, draw, shape, np.float64) for _ in range(2))
    batch = np.stack([_input(rng, draw, shape, np.float64) for _ in range(2)])
    y = ref(x)
    ct = _input(rng, "complex" if jnp.iscomplexobj(y) else "real", y.shape, np.float64)
    xs = pfft.device_put(x, mesh)
    spec = xs.sharding.spec
    args = (xs, ct, jax.device_put(t, xs.sharding),
            jax.device_put(batch, NamedSharding(mesh, P(None, *spec))))
    got = jax.jit(_derivatives(lambda a: ours(a, mesh=mesh)))(*args)
    want = _derivatives(ref)(x, ct, t, batch)
    for what, g, w in zip(("grad", "vjp", "jvp", "vmap"), got, want):
        assert g.shape == w.shape and g.dtype == w.dtype, (what, g.dtype, w.dtype)
        assert rel_err(g, w) <= 1e-12, what
    if kind == "explicit":
        for g in got[:2]:                  # cotangents come back where the input was
            assert g.sharding.is_equivalent_to(xs.sharding, xs.ndim), (g.sharding, spec)
