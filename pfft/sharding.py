"""Placing arrays on shardings, inside and outside ``jit``, on both kinds of mesh."""
from __future__ import annotations

import jax
import numpy as np
from jax.sharding import NamedSharding, PartitionSpec

__all__ = ["is_tracer", "is_explicit", "place", "place_output", "spec_of", "mesh_of",
           "devices_of"]


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
    """Put ``x`` on ``sharding``: ``device_put`` outside jit, a reshard inside.

    Inside ``jit``, where XLA's partitioner could abort on the reshard (see
    :func:`_may_abort_resharding`), ``x`` first goes to one mesh axis of the target
    alone and then to the target: an all-gather over the target's other mesh axes and
    a local slice, which XLA partitions from any layout.
    """
    if not is_tracer(x):
        if isinstance(x, jax.Array) and x.sharding == sharding:
            return x
        return jax.device_put(x if isinstance(x, jax.Array) else np.asarray(x), sharding)
    if _may_abort_resharding(spec_of(x), sharding.spec, sharding.mesh):
        x = _constrain(x, NamedSharding(sharding.mesh, _one_axis_of(sharding.spec,
                                                                   sharding.mesh)))
    return _constrain(x, sharding)


def devices_of(mesh) -> frozenset | None:
    """The devices of a concrete ``mesh``; ``None`` for an abstract one (inside ``jit``)."""
    return None if isinstance(mesh, jax.sharding.AbstractMesh) else frozenset(mesh.devices.flat)


def place_output(y, out_sharding, mesh, where: str):
    """A public function's result ``y`` placed on its ``out_sharding=`` argument (a
    ``NamedSharding``, or a ``PartitionSpec`` on ``mesh``); ``y`` as it is for ``None``.

    Raises
    ------
    ValueError
        A ``PartitionSpec`` without a mesh, or a sharding on another mesh shape or on
        other devices than ``mesh``'s (``where`` names the function).
    """
    if out_sharding is None:
        return y
    if not isinstance(out_sharding, NamedSharding):
        if mesh is None:
            raise ValueError(f"{where}: out_sharding as a PartitionSpec needs a mesh")
        out_sharding = NamedSharding(mesh, out_sharding)
    if mesh is not None and (out_sharding.mesh.shape != mesh.shape or (
            devices_of(out_sharding.mesh) not in (None, devices_of(mesh)) and
            devices_of(mesh) is not None)):
        raise ValueError(f"{where}: out_sharding is on a mesh {dict(out_sharding.mesh.shape)} "
                         f"other than the transform's {dict(mesh.shape)} (or on other "
                         f"devices); give a sharding on the same mesh")
    return place(y, out_sharding)


def _constrain(x, sharding: NamedSharding):
    if is_explicit(sharding.mesh):
        return jax.sharding.reshard(x, sharding)
    return jax.lax.with_sharding_constraint(x, sharding)


def _entries(spec: PartitionSpec, mesh) -> list[tuple[str, ...]]:
    """Per array axis, the mesh axes of size above one splitting it (major first)."""
    sizes = dict(mesh.shape)
    out = []
    for e in spec:
        names = () if e is None else (e,) if isinstance(e, str) else tuple(e)
        out.append(tuple(m for m in names if sizes.get(m, 1) > 1))
    return out


def _may_abort_resharding(source: PartitionSpec | None, target: PartitionSpec, mesh) -> bool:
    """Whether XLA's partitioner may abort the process resharding ``source`` (``None``:
    unknown, as for an Auto mesh's array inside ``jit``) to ``target``.

    Since jax 0.12 XLA's SPMD partitioner moves a mesh axis between array axes by
    splitting the array axis's tile count at the size of the part that stays, and
    with shardings named by mesh axes that split must fall on a mesh axis boundary:
    resharding ``P(('y', 'x'), None)`` to ``P('x', 'y', None)`` on a 2x3 mesh asks for
    a part of size 2 from ``('y', 'x')``, 3x2, and fails a check (``hlo_sharding_util``:
    "Could not slice dimension"), aborting the process. That needs two mesh axes of
    which neither size divides the other, a target over two or more mesh axes, and a
    group of mesh axes on one array axis in the source or the target. Resharding to
    one mesh axis alone, and from there to a layout that adds mesh axes, never asks
    for such a split.
    """
    sizes = [n for n in dict(mesh.shape).values() if n > 1]
    if not any(a % b and b % a for a in sizes for b in sizes):
        return False
    target_entries = _entries(target, mesh)
    if sum(len(e) for e in target_entries) < 2:
        return False
    if source is None:
        return True
    source_entries = _entries(source, mesh)
    rank = max(len(source_entries), len(target_entries))
    if _padded(source_entries, rank) == _padded(target_entries, rank):
        return False
    return any(len(e) > 1 for e in source_entries + target_entries)


def _padded(entries: list, rank: int) -> list:
    return entries + [()] * (rank - len(entries))


def _one_axis_of(spec: PartitionSpec, mesh) -> PartitionSpec:
    """``spec`` with only the major mesh axis of its first split array axis: ``spec``
    cuts that layout's blocks further, with no communication."""
    entries = _entries(spec, mesh)
    axis = next(a for a, e in enumerate(entries) if e)
    return PartitionSpec(*([None] * axis + [entries[axis][0]]))
