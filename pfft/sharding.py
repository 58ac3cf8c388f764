"""Placing arrays on shardings, inside and outside ``jit``, on both kinds of mesh; and
checking the meshes and shardings callers give (``mesh=``, ``out_sharding=``,
``in_sharding=``) before JAX sees them, so that every entry point reports a bad one in
pfft's words (:func:`check_mesh`, :func:`check_sharding`, :func:`check_spec`).
"""
from __future__ import annotations

import math

import jax
import numpy as np
from jax.sharding import AbstractMesh, Mesh, NamedSharding, PartitionSpec

__all__ = ["is_tracer", "is_explicit", "place", "place_output", "spec_of", "mesh_of",
           "devices_of", "check_mesh", "check_sharding", "check_spec"]


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
    TypeError, ValueError
        A bad ``out_sharding`` (:func:`check_sharding`; ``where`` names the function).
    """
    if out_sharding is None:
        return y
    target = check_sharding(out_sharding, y.shape, mesh, where, "out_sharding")
    return y if target is None else place(y, target)


# -- the meshes and shardings callers give -------------------------------------------

def check_mesh(mesh, where: str, x=None) -> None:
    """A ``mesh=`` argument: ``None``, a :class:`jax.sharding.Mesh`, or (inside
    ``jit``) an :class:`~jax.sharding.AbstractMesh`; given with the array ``x``, a
    concrete mesh must hold the devices ``x`` is sharded over (where ``x`` is sharded
    over several: numpy input and one device's array are placed on ``mesh``). Meshes
    of any number of axes are accepted (pfft distributes over two; others shard batch
    axes). Inside ``jit`` a traced ``x``'s devices are not known: JAX checks them
    when it compiles.

    Raises
    ------
    TypeError
        Anything but a mesh or ``None``.
    ValueError
        ``x`` sharded over other devices than ``mesh``'s.
    """
    if mesh is not None and not isinstance(mesh, (Mesh, AbstractMesh)):
        raise TypeError(f"{where}: mesh must be a jax.sharding.Mesh (pfft.make_mesh) or None, "
                        f"got {_given(mesh)}")
    x_mesh = None if mesh is None or x is None or is_tracer(x) else mesh_of(x)
    if x_mesh is None or x_mesh.size == 1:
        return
    have, want = devices_of(x_mesh), devices_of(mesh)
    if have is not None and want is not None and have != want:
        raise ValueError(
            f"{where}: x is sharded over devices {sorted(d.id for d in have)} but mesh= holds "
            f"devices {sorted(d.id for d in want)}; move it first (pfft.device_put(x, mesh)) "
            f"or leave mesh= out to use x's own mesh")


def _mesh_text(mesh, *, devices: bool = False) -> str:
    """``mesh`` in messages: its axes and sizes, and (``devices``, where it is concrete)
    the ids of its devices in mesh order."""
    text = str(dict(mesh.shape))
    if devices and isinstance(mesh, Mesh):
        text += f" of devices {[d.id for d in mesh.devices.flat]}"
    return text


def check_sharding(sharding, shape, mesh, where: str, argument: str):
    """Check a caller's ``out_sharding``/``in_sharding`` for an array of ``shape`` on
    ``mesh`` (the transform's or plan's mesh, concrete or abstract; ``None``: one
    device), the same way inside and outside ``jit``.

    Returns
    -------
    NamedSharding or None
        Where to put the array: a ``NamedSharding`` as given, a ``PartitionSpec`` on
        ``mesh``; ``None`` for a ``PartitionSpec`` that splits nothing without a mesh.

    Raises
    ------
    TypeError
        Neither a ``NamedSharding`` nor a ``PartitionSpec``; a spec entry that is not a
        mesh axis name, a tuple of them or ``None``.
    ValueError
        A ``NamedSharding`` on a mesh other than ``mesh`` (other axes or sizes, or, both
        meshes concrete, other devices; named by their device ids where the shapes
        agree); a spec (:func:`check_spec`) with more entries than ``shape`` has
        dimensions, naming a mesh axis the mesh lacks or one twice, or splitting a
        dimension over devices that do not divide it (JAX splits arrays evenly); a
        ``PartitionSpec`` naming mesh axes without a mesh.
    """
    if isinstance(sharding, NamedSharding):
        own = sharding.mesh
        if mesh is None:
            if argument == "in_sharding" and own.size > 1:
                raise ValueError(f"{where}: in_sharding is on the mesh {_mesh_text(own)} but "
                                 f"mesh is None (one device); pass mesh=in_sharding.mesh")
        else:
            _check_same_mesh(own, mesh, where, argument)
        check_spec(sharding.spec, shape, dict(own.shape), where, argument)
        return sharding
    if not isinstance(sharding, PartitionSpec):
        raise _type_error(sharding, where, argument)
    check_spec(sharding, shape, {} if mesh is None else dict(mesh.shape), where, argument)
    return None if mesh is None else NamedSharding(mesh, sharding)


def check_spec(spec, shape, sizes: dict, where: str, argument: str, *,
               even: bool = True) -> PartitionSpec:
    """Check a :class:`PartitionSpec` for an array of ``shape`` over mesh axes
    ``sizes`` (``{name: size}``, every axis of the mesh; ``{}``: no mesh).

    Each entry is ``None``, a mesh axis name or a tuple of names; there are at most
    as many entries as dimensions; each mesh axis is one of the mesh's and splits at
    most one dimension; and (``even``: a JAX array, never split unevenly) the devices
    splitting a dimension divide its length. Messages name the mesh's axes but not
    their sizes where the sizes do not matter, so that a grid of MPI ranks and a
    mesh with its axis names report alike.

    Raises
    ------
    TypeError, ValueError
        As :func:`check_sharding`.
    """
    if not isinstance(spec, PartitionSpec):
        raise _type_error(spec, where, argument)
    shape = tuple(shape)
    if len(spec) > len(shape):
        raise ValueError(f"{where}: {argument} {spec} has {len(spec)} entries but the array "
                         f"has {len(shape)} dimensions (shape {shape}); give at most "
                         f"{len(shape)}, one per dimension")
    seen: dict[str, int] = {}
    for a, entry in enumerate(spec):
        names = _entry_names(entry, spec, where, argument)
        for m in names:
            if m not in sizes:
                raise ValueError(_unknown_axis(m, spec, sizes, where, argument))
            if m in seen:
                raise ValueError(f"{where}: {argument} {spec} names mesh axis {m!r} twice; a "
                                 f"mesh axis splits at most one dimension, once")
            seen[m] = a
        parts = math.prod(sizes[m] for m in names)
        if even and shape[a] % parts:
            raise ValueError(_uneven(a, names, spec, shape, sizes, where, argument))
    return spec


def _check_same_mesh(own, mesh, where: str, argument: str) -> None:
    """A ``NamedSharding``'s mesh ``own`` must be ``mesh``: the same axes and sizes,
    and where both are concrete the same devices."""
    whose = "the plan's mesh" if argument == "in_sharding" else "the transform's mesh"
    fix = (f"give a PartitionSpec (placed on {whose}) or a NamedSharding on {whose}")
    if tuple(own.shape.items()) != tuple(mesh.shape.items()):
        raise ValueError(f"{where}: {argument} is on the mesh {_mesh_text(own)}, not "
                         f"{whose} {_mesh_text(mesh)}; {fix}")
    have, want = devices_of(own), devices_of(mesh)
    if have is not None and want is not None and have != want:
        raise ValueError(f"{where}: {argument} is on the mesh "
                         f"{_mesh_text(own, devices=True)}, not {whose} "
                         f"{_mesh_text(mesh, devices=True)}; {fix}")


def _given(value) -> str:
    """``value`` in a message: its repr (cut short) and type."""
    text = " ".join(repr(value).split())
    if len(text) > 80:
        text = text[:77] + "..."
    return f"{text} ({type(value).__name__})"


def _type_error(value, where: str, argument: str) -> TypeError:
    return TypeError(f"{where}: {argument} must be a jax.sharding.NamedSharding or "
                     f"PartitionSpec (or None), got {_given(value)}")


def _entry_names(entry, spec, where: str, argument: str) -> tuple[str, ...]:
    """The mesh axis names of one spec entry (``None``, a name, a tuple of names)."""
    if entry is None:
        return ()
    names = (entry,) if isinstance(entry, str) else entry
    if not isinstance(names, tuple) or not all(isinstance(m, str) for m in names):
        raise TypeError(f"{where}: {argument} {spec} has the entry {_given(entry)}; each "
                        f"entry is None (a whole dimension), a mesh axis name or a tuple of "
                        f"names")
    return names


def _unknown_axis(name: str, spec, sizes: dict, where: str, argument: str) -> str:
    if not sizes:
        other = ", or give a NamedSharding" if argument == "out_sharding" else ""
        return (f"{where}: {argument} {spec} names mesh axis {name!r} but there is no mesh "
                f"(one device): a PartitionSpec needs a mesh; pass mesh={other}")
    return (f"{where}: {argument} {spec} names mesh axis {name!r}, which the mesh does not "
            f"have; its axes are {', '.join(repr(m) for m in sizes)}")


def _uneven(axis: int, names, spec, shape, sizes: dict, where: str, argument: str) -> str:
    """The message for ``spec`` splitting dimension ``axis`` of ``shape`` over mesh axes
    ``names`` whose devices do not divide it, with the mesh axes that would."""
    n, parts = shape[axis], math.prod(sizes[m] for m in names)
    used = {m for e in spec if e is not None for m in ((e,) if isinstance(e, str) else e)}
    fits = [f"{m!r} ({k})" for m, k in sizes.items()
            if k > 1 and n % k == 0 and (m in names or m not in used)]
    alternative = (f" or split it over {' or '.join(fits)}" if fits else
                   f" (no mesh axis of {dict(sizes)} divides {n})")
    return (f"{where}: {argument} {spec} splits dimension {axis} of the array (shape "
            f"{shape}) over {parts} devices ({', '.join(repr(m) for m in names)}), which do "
            f"not divide its length {n}; JAX splits arrays evenly only: leave dimension "
            f"{axis} whole (None){alternative}")


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
