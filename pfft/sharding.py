"""Placing arrays on shardings, inside and outside ``jit``, on both kinds of mesh."""
from __future__ import annotations

import jax
import numpy as np
from jax.sharding import NamedSharding, PartitionSpec

__all__ = ["is_tracer", "is_explicit", "place", "spec_of", "mesh_of"]


def is_tracer(x) -> bool:
    return isinstance(x, jax.core.Tracer)


def is_explicit(mesh) -> bool:
    """Whether ``mesh`` has Explicit axes (shardings are part of array types)."""
    return any(t == jax.sharding.AxisType.Explicit for t in getattr(mesh, "axis_types", ()))


def mesh_of(x):
    """The mesh ``x`` is sharded on (concrete, or abstract inside ``jit``), or ``None``.

    Inside ``jit`` the mesh is known from an Explicit-axes sharding in ``x``'s type
    or from a ``jax.set_mesh`` context; otherwise pass ``mesh=``.
    """
    if is_tracer(x):
        mesh = getattr(jax.typeof(x).sharding, "mesh", None)
        if mesh is not None and not mesh.empty and is_explicit(mesh):
            return mesh
        ctx = jax.sharding.get_abstract_mesh()
        return None if ctx.empty else ctx
    sharding = getattr(x, "sharding", None)
    if isinstance(sharding, NamedSharding):
        return sharding.mesh
    return None


def spec_of(x) -> PartitionSpec | None:
    """The partition spec of ``x`` where it is known, else ``None``."""
    if is_tracer(x):
        sharding = jax.typeof(x).sharding
        mesh = getattr(sharding, "mesh", None)
        if mesh is not None and not mesh.empty and is_explicit(mesh):
            return sharding.spec
        return None
    sharding = getattr(x, "sharding", None)
    if isinstance(sharding, NamedSharding):
        return sharding.spec
    return None


def place(x, sharding: NamedSharding):
    """Put ``x`` on ``sharding``: ``device_put`` outside jit, a reshard inside."""
    if not is_tracer(x):
        if isinstance(x, jax.Array) and x.sharding == sharding:
            return x
        return jax.device_put(x if isinstance(x, jax.Array) else np.asarray(x), sharding)
    if is_explicit(sharding.mesh):
        return jax.sharding.reshard(x, sharding)
    return jax.lax.with_sharding_constraint(x, sharding)
