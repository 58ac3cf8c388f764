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

    Inside ``jit`` the mesh is known from ``x``'s type (Explicit axes), a
    ``jax.set_mesh`` context, or else the Auto-axes mesh in ``x``'s type (the mesh the
    jitted function's argument was sharded on). Inside a ``shard_map`` over every mesh
    axis ``x`` is one device's block: no mesh (a local transform, as ``jnp.fft``
    gives).

    Raises
    ------
    ValueError
        Inside a ``shard_map`` that leaves some mesh axes free: pfft cannot
        distribute over a part of the mesh.
    """
    if is_tracer(x):
        mesh = getattr(jax.typeof(x).sharding, "mesh", None)
        if mesh is not None and not mesh.empty and is_explicit(mesh):
            return _outside_shard_map(mesh)
        ctx = jax.sharding.get_abstract_mesh()
        if not ctx.empty:
            mesh = ctx
        if mesh is None or mesh.empty:
            return None
        return _outside_shard_map(mesh)
    sharding = getattr(x, "sharding", None)
    if isinstance(sharding, NamedSharding):
        return sharding.mesh
    return None


def _outside_shard_map(mesh):
    """``mesh``, or ``None`` where a ``shard_map`` made all its axes manual."""
    types = dict(zip(mesh.axis_names, getattr(mesh, "axis_types", ())))
    big = [m for m, n in mesh.shape.items() if n > 1]
    manual = [m for m in big if types.get(m) == jax.sharding.AxisType.Manual]
    if not manual:
        return mesh
    if len(manual) == len(big):
        return None
    free = [m for m in big if m not in manual]
    raise ValueError(f"pfft: called inside a shard_map over mesh axes {manual} that leaves "
                     f"{free} free; transform the block locally (a shard_map over every mesh "
                     f"axis) or call pfft outside the shard_map")


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
