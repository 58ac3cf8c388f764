"""How a sharded array is cut into blocks: the mesh and the mesh axes splitting each axis.

Shared by the halo exchange, the spectral operators, ``fftshift`` and the FFT of an
axis that stays split (:mod:`pfft.split_fft`), which run per-block code inside
``jax.shard_map`` and need each axis's split, part count and block index.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import jax
import numpy as np
from jax.sharding import NamedSharding, PartitionSpec

from .grid import mesh_shape_of
from .layout import default_layout
from .sharding import check_mesh, is_tracer, mesh_of, place, spec_of

__all__ = ["Blocks", "blocks_of"]


@dataclass(frozen=True)
class Blocks:
    """The block structure of a global array on a mesh.

    Attributes
    ----------
    mesh
        The (concrete or abstract) mesh, or ``None`` for one unsharded block.
    spec
        The :class:`PartitionSpec` the per-block code runs under.
    split
        Per array axis, the mesh axes (of size above one) splitting it, major first.
    parts
        Per array axis, how many blocks it is cut into.
    """

    mesh: object
    spec: PartitionSpec
    split: tuple[tuple[str, ...], ...]
    parts: tuple[int, ...]

    @property
    def distributed(self) -> bool:
        return self.mesh is not None and any(p > 1 for p in self.parts)

    def block_index(self, axis: int):
        """Inside ``shard_map``: this device's block number along ``axis`` (0 if whole)."""
        names = self.split[axis]
        if not names:
            return 0
        return jax.lax.axis_index(names if len(names) > 1 else names[0])

    def shard_map(self, fn, *, check_vma: bool = True):
        """``fn`` on blocks, same spec in and out (``fn`` itself without a mesh). On a
        mesh of one device too: there the block is the whole array, but a local one,
        which ``fn`` may roll or slice along any axis (on the global array an Explicit
        mesh's sharding, even over axes of size one, is part of its type)."""
        if self.mesh is None:
            return fn
        return jax.shard_map(fn, mesh=self.mesh, in_specs=self.spec, out_specs=self.spec,
                             check_vma=check_vma)


def _entries(spec: PartitionSpec, ndim: int, where: str) -> list[tuple[str, ...]]:
    if len(spec) > ndim:
        raise ValueError(f"{where}: spec {spec} has more entries than the array's {ndim} axes")
    out = []
    for a in range(ndim):
        e = spec[a] if a < len(spec) else None
        if e is None:
            out.append(())
        elif isinstance(e, (tuple, list)):
            out.append(tuple(e))
        else:
            out.append((e,))
    return out


def blocks_of(x, mesh=None, spec=None, *, where: str):
    """``x`` (placed where needed) and its :class:`Blocks`.

    The mesh is ``mesh`` or ``x``'s own; the spec is ``spec``, else ``x``'s own, else
    (numpy input, or an Auto mesh inside ``jit``) the pencil :func:`pfft.device_put`
    chooses for the last three axes.
    """
    if not (isinstance(x, (jax.Array, np.ndarray)) or is_tracer(x)):
        x = np.asarray(x)
    check_mesh(mesh, where, x)
    if mesh is None:
        mesh = mesh_of(x)
    if mesh is None:
        return x, Blocks(None, PartitionSpec(), ((),) * x.ndim, (1,) * x.ndim)
    if spec is not None and not isinstance(spec, PartitionSpec):
        raise TypeError(f"{where}: spec must be a PartitionSpec, got {type(spec).__name__}")
    own = spec_of(x)
    if spec is None:
        spec = own
    if spec is None:
        axes = tuple(range(max(0, x.ndim - 3), x.ndim))
        spec = default_layout(x.shape, axes, mesh_shape_of(mesh)).spec if axes else PartitionSpec()
    sizes = dict(mesh.shape)
    split, parts = [], []
    for a, names in enumerate(_entries(spec, x.ndim, where)):
        unknown = [m for m in names if m not in sizes]
        if unknown:
            raise ValueError(f"{where}: spec {spec} names mesh axes {unknown} that the mesh "
                             f"{dict(sizes)} does not have")
        names = tuple(m for m in names if sizes[m] > 1)
        p = math.prod(sizes[m] for m in names)
        if x.shape[a] % p:
            raise ValueError(f"{where}: axis {a} of size {x.shape[a]} cannot be split evenly "
                             f"over {p} devices ({'x'.join(names)}) by spec {spec}")
        split.append(names)
        parts.append(p)
    entries = _entries(spec, x.ndim, where)
    if own is None or _entries(own, x.ndim, where) != entries:
        # move x onto the spec (an Auto-axes tracer of unknown sharding too: shard_map
        # would reshard it, by a route XLA may abort on)
        if is_tracer(x) or isinstance(mesh, jax.sharding.Mesh):
            x = place(x, NamedSharding(mesh, spec))
    return x, Blocks(mesh, spec, tuple(split), tuple(parts))
