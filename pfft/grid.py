"""Device grids: building meshes, and reading the part of a mesh pfft distributes over.

A *grid* is the arrangement of the devices (``2x4``, or over MPI a
:class:`pfft.mpi.ProcessGrid`); the *mesh shape* pfft reads from a
:class:`jax.sharding.Mesh` (:func:`mesh_shape_of`) is its ``(name, size)`` pairs of the
axes of size greater than one. Those that split transformed axes form the FFT grid
(one for a slab, two for a pencil decomposition); any others shard batch axes. Axes
of size one are ignored, so a ``1x4`` mesh is a slab over four devices and a ``1x1``
mesh is a single device.
"""
from __future__ import annotations

import math
from typing import Sequence

import jax
import numpy as np
from jax.sharding import Mesh

__all__ = ["dims_create", "make_mesh", "mesh_shape_of"]

DEFAULT_AXIS_NAMES = {1: ("x",), 2: ("x", "y")}


def dims_create(n: int, ndims: int = 2) -> tuple[int, ...]:
    """Split ``n`` devices into ``ndims`` grid sizes, as square as possible.

    Like ``MPI_Dims_create`` but in non-decreasing order, so the last (fastest
    varying) mesh axis is the larger one.

    Examples
    --------
    >>> dims_create(8)
    (2, 4)
    >>> dims_create(12)
    (3, 4)
    >>> dims_create(7)
    (1, 7)
    """
    if not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"dims_create: n must be a positive integer, got {n!r}")
    if ndims not in (1, 2):
        raise ValueError(f"dims_create: ndims must be 1 or 2, got {ndims!r}")
    if ndims == 1:
        return (int(n),)
    best = max(d for d in range(1, math.isqrt(n) + 1) if n % d == 0)
    return (best, n // best)


def make_mesh(
    n_or_shape: int | Sequence[int],
    devices: Sequence[jax.Device] | None = None,
    *,
    axis_names: Sequence[str] | None = None,
    axis_types: str = "explicit",
) -> Mesh:
    """Make a 1-D (slab) or 2-D (pencil) device mesh.

    Parameters
    ----------
    n_or_shape
        A device count (``8`` gives a balanced 2-D grid, ``2x4``) or an explicit grid
        shape: ``(2, 4)`` for a pencil grid, ``(8,)`` for a slab.
    devices
        Devices to use, in mesh order; default ``jax.devices()[:n]``.
    axis_names
        Mesh axis names; default ``("x", "y")`` or ``("x",)``.
    axis_types
        ``"explicit"`` (jax's default since 0.9: shardings are part of array types)
        or ``"auto"``. pfft works on both.

    Examples
    --------
    >>> mesh = make_mesh(4)            # doctest: +SKIP
    >>> dict(mesh.shape)               # doctest: +SKIP
    {'x': 2, 'y': 2}
    """
    if isinstance(n_or_shape, (int, np.integer)):
        if n_or_shape < 1:
            raise ValueError(f"make_mesh: the device count must be positive, got {n_or_shape!r}")
        shape = dims_create(int(n_or_shape), 2)
    else:
        shape = tuple(int(s) for s in n_or_shape)
        if len(shape) not in (1, 2) or any(s < 1 for s in shape):
            raise ValueError(
                f"make_mesh: n_or_shape must be a device count or a grid shape of 1 or 2 "
                f"positive sizes, got {n_or_shape!r}")
    n = math.prod(shape)
    if devices is None:
        available = jax.devices()
        if n > len(available):
            raise ValueError(
                f"make_mesh: a {'x'.join(map(str, shape))} grid needs {n} devices, but only "
                f"{len(available)} are available ({available[0].platform}). On CPU, set "
                f"XLA_FLAGS=--xla_force_host_platform_device_count={n} before importing jax.")
        devices = available[:n]
    devices = list(devices)
    if len(devices) != n:
        raise ValueError(
            f"make_mesh: grid {shape} needs {n} devices, got {len(devices)} in `devices`")
    names = tuple(axis_names) if axis_names is not None else DEFAULT_AXIS_NAMES[len(shape)]
    if len(names) != len(shape):
        raise ValueError(f"make_mesh: axis_names {names!r} do not match grid shape {shape}")
    kinds = {"explicit": jax.sharding.AxisType.Explicit, "auto": jax.sharding.AxisType.Auto}
    if axis_types not in kinds:
        raise ValueError(f"make_mesh: axis_types must be 'explicit' or 'auto', got {axis_types!r}")
    return Mesh(np.asarray(devices, dtype=object).reshape(shape), names,
                axis_types=(kinds[axis_types],) * len(shape))


def mesh_shape_of(mesh: Mesh | None) -> tuple[tuple[str, int], ...]:
    """The mesh shape pfft distributes over: ``(name, size)`` of the mesh axes of sizes
    above one (``()`` without a mesh).

    The mesh axes that split transformed axes form the FFT grid (one for a slab, two
    for a pencil, or several grouped on one array axis); any others shard batch axes,
    which plans leave where they are.
    """
    if mesh is None:
        return ()
    taken = vmapped_mesh_axes()
    return tuple((name, int(size)) for name, size in mesh.shape.items()
                 if size > 1 and name not in taken)


def vmapped_mesh_axes() -> frozenset[str]:
    """Mesh axes that an enclosing ``vmap`` shards its batch over (``spmd_axis_name``,
    or an Explicit mesh axis the batch is sharded on): the per-member arrays pfft sees
    cannot use them."""
    try:
        from jax._src import core
        env = core.get_axis_env()
        return frozenset(env.spmd_axis_names) | frozenset(env.explicit_mesh_axis_names)
    except (ImportError, AttributeError):  # pragma: no cover - other jax versions
        return frozenset()
