"""The XLA transport: ``jax.lax`` collectives inside ``shard_map``.

XLA lowers them to NCCL on GPUs, to in-process copies between the devices of one
CPU process, and to gloo (or MPI) between processes.
"""
from __future__ import annotations

import math

import jax
import numpy as np
from jax import lax

from ..interfaces import TransportCapabilities
from . import swap as _swap

__all__ = ["all_to_all", "all_gather", "axis_index", "shift", "permute", "swap",
           "capabilities"]

# all_to_all cuts any axis and stacks the received blocks along any axis; shift moves a
# whole array along a mesh axis; swap (where JAX has the MHLO dialect) trades p whole
# arrays among the p devices of a mesh axis in one collective
capabilities = TransportCapabilities(splits=True, shifts=True, swaps=_swap.AVAILABLE)
swap = _swap.swap


def all_to_all(x: jax.Array, mesh_axis: str, *, split: int | None = None,
               merge: int | None = None) -> jax.Array:
    """Exchange blocks over ``mesh_axis``.

    Without ``split``: the leading axis of ``x`` has the mesh axis's size, ``x[j]`` goes
    to device ``j`` and ``out[j]`` comes from device ``j``. With ``split=a, merge=b``:
    axis ``a`` is cut into equal chunks, chunk ``j`` goes to device ``j``, and the
    received blocks are stacked along axis ``b`` in device order.
    """
    if split is None:
        return lax.all_to_all(x, mesh_axis, 0, 0, tiled=False)
    return lax.all_to_all(x, mesh_axis, split, merge, tiled=True)


def shift(x: jax.Array, mesh_axis, k: int) -> jax.Array:
    """Send ``x`` ``k`` places on along ``mesh_axis`` (cyclically); receive from ``k`` back."""
    p = math.prod(lax.axis_size(m) for m in _names(mesh_axis))
    return permute(x, mesh_axis, [(i, (i + k) % p) for i in range(p)])


def permute(x: jax.Array, mesh_axis, pairs) -> jax.Array:
    """``lax.ppermute`` along ``mesh_axis`` (a name or a tuple of names) with the
    devices numbered as ``axis_index`` numbers them: the tuple's first name major.

    ``ppermute`` numbers the devices of a tuple in the mesh's axis order (and newer JAX
    accepts the names only in that order), so it is given the names in the mesh's
    order and the pairs translated to that numbering.
    """
    names = _names(mesh_axis)
    if len(names) == 1:
        return lax.ppermute(x, names[0], list(pairs))
    sizes = dict(zip(names, (lax.axis_size(m) for m in names)))
    mesh_order = [m for m in jax.sharding.get_abstract_mesh().axis_names if m in names]
    if len(mesh_order) != len(names):       # no mesh in context: the tuple's own order
        mesh_order = list(names)

    def device(i: int) -> int:
        coords = dict(zip(names, np.unravel_index(i, [sizes[m] for m in names])))
        return int(np.ravel_multi_index([coords[m] for m in mesh_order],
                                         [sizes[m] for m in mesh_order]))
    return lax.ppermute(x, tuple(mesh_order), [(device(i), device(j)) for i, j in pairs])


def _names(mesh_axis) -> tuple[str, ...]:
    return (mesh_axis,) if isinstance(mesh_axis, str) else tuple(mesh_axis)


def all_gather(x: jax.Array, mesh_axis: str, axis: int) -> jax.Array:
    """Concatenate the blocks of ``mesh_axis`` along array axis ``axis``, typed as
    equal on every device of the mesh axis (so ``shard_map`` can check that a
    gathered output is replicated, and its transpose is typed to match)."""
    return lax.all_gather(x, mesh_axis, axis=axis, tiled=True, to="invarying")


def axis_index(mesh_axis: str) -> jax.Array:
    """This device's position along ``mesh_axis``."""
    return lax.axis_index(mesh_axis)
