"""Layouts: how a global array is distributed over a device grid.

A :class:`Layout` is a value: the logical global shape and, for every array axis,
the mesh axes that split it (``None`` when the axis is whole on every device, one
mesh axis name, or a tuple of names, major first, when an axis is split over several
mesh axes at once, as ``PartitionSpec(('x', 'y'))`` does). Inside a plan an axis may
be split unevenly; at the boundaries of a plan every split axis divides evenly on
the XLA transport, because JAX cannot hold an unevenly sharded array.

Uneven blocks follow one of two rules (:func:`block_bounds`): *ceil-sized* (JAX's
own: ``ceil(n/p)`` points per device, the remainder last, 9 over 4 is 3, 3, 3, 0),
used inside XLA plans where no user sees them, or *balanced* (mpi4py-fft's and
FFTW-MPI's: the first ``n % p`` devices hold one point more, 9 over 4 is 3, 2, 2, 2),
used by MPI plans, whose ranks hand in and take back their blocks as they are.
Either way a device's buffer holds ``ceil(n/p)`` points along the axis, its own
points first and zeros after.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass, replace
from typing import Union

from jax.sharding import Mesh, NamedSharding, PartitionSpec

__all__ = ["Layout", "Split", "block_bounds", "default_layout", "layout_from_spec", "names_of",
           "split_entry"]

#: what splits one array axis: nothing, one mesh axis, or several (major first)
Split = Union[None, str, tuple[str, ...]]


def names_of(entry: Split) -> tuple[str, ...]:
    """The mesh axis names in a split entry, major first (``()`` for ``None``)."""
    if entry is None:
        return ()
    return (entry,) if isinstance(entry, str) else tuple(entry)


def block_bounds(n: int, parts: int, index: int, balanced: bool) -> tuple[int, int]:
    """Where block ``index`` of an axis of ``n`` points cut in ``parts`` starts and stops.

    ``balanced``: the first ``n % parts`` blocks hold one point more (9 over 4: 3, 2,
    2, 2), as mpi4py-fft and FFTW-MPI cut; else ceil-sized blocks, the remainder last
    (9 over 4: 3, 3, 3, 0), as JAX cuts.

    Examples
    --------
    >>> [block_bounds(9, 4, j, True) for j in range(4)]
    [(0, 3), (3, 5), (5, 7), (7, 9)]
    >>> [block_bounds(9, 4, j, False) for j in range(4)]
    [(0, 3), (3, 6), (6, 9), (9, 9)]
    """
    if balanced:
        q, r = divmod(n, parts)
        start = index * q + min(index, r)
        return start, start + q + (index < r)
    chunk = -(-n // parts)
    return min(index * chunk, n), min((index + 1) * chunk, n)


def split_entry(names) -> Split:
    """The canonical split entry for mesh axis ``names``: ``None``, a name or a tuple."""
    names = tuple(names)
    if not names:
        return None
    return names[0] if len(names) == 1 else names


@dataclass(frozen=True)
class Layout:
    """One distribution of a global array over a grid.

    Attributes
    ----------
    shape
        Logical global shape (numpy's shape; never padded).
    split
        Per array axis, what splits it: ``None``, a mesh axis name, or a tuple of
        names (major first) for an axis split over several mesh axes.
    mesh_shape
        The ``(mesh axis name, size)`` pairs of the mesh axes it may split (sizes
        above one: :func:`pfft.grid.mesh_shape_of`).
    balanced
        How uneven axes are cut (:func:`block_bounds`): balanced blocks (MPI plans)
        or ceil-sized ones (XLA plans). Even axes are cut the same either way.

    Examples
    --------
    >>> lay = Layout((8, 6, 5), ("x", "y", None), (("x", 2), ("y", 3)))
    >>> lay.local_shape, lay.name
    ((4, 2, 5), 'pencil local in axis 2')
    >>> Layout((12, 5), (("x", "y"), None), (("x", 2), ("y", 3))).local_shape
    (2, 5)
    """

    shape: tuple[int, ...]
    split: tuple[Split, ...]
    mesh_shape: tuple[tuple[str, int], ...]
    balanced: bool = False

    def __post_init__(self):
        if len(self.shape) != len(self.split):
            raise ValueError(f"layout: shape {self.shape} and split {self.split} have "
                             f"different lengths")
        used = [m for entry in self.split for m in names_of(entry)]
        if len(used) != len(set(used)):
            raise ValueError(f"layout: a mesh axis splits two array axes in {self.split}")
        unknown = set(used) - {m for m, _ in self.mesh_shape}
        if unknown:
            raise ValueError(f"layout: {sorted(unknown)} are not axes of the mesh "
                             f"{dict(self.mesh_shape)}")

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def mesh_size(self, mesh_axes: Split) -> int:
        """Devices along a mesh axis (or the product over a tuple of them)."""
        sizes = dict(self.mesh_shape)
        return math.prod(sizes[m] for m in names_of(mesh_axes))

    def parts(self, axis: int) -> int:
        """How many devices split ``axis`` (1 when it is whole)."""
        return self.mesh_size(self.split[axis])

    def local_size(self, axis: int) -> int:
        """Size of one device's block along ``axis`` (padded if uneven)."""
        return -(-self.shape[axis] // self.parts(axis))

    def block_bounds(self, axis: int, index: int) -> tuple[int, int]:
        """Global start and stop of block ``index`` (along the mesh axes splitting
        ``axis``, numbered major first) of ``axis``."""
        return block_bounds(self.shape[axis], self.parts(axis), index, self.balanced)

    @property
    def local_shape(self) -> tuple[int, ...]:
        return tuple(self.local_size(a) for a in range(self.ndim))

    @property
    def padded_shape(self) -> tuple[int, ...]:
        """Global shape of the array the blocks make up (``shape`` when even)."""
        return tuple(self.local_size(a) * self.parts(a) for a in range(self.ndim))

    def is_even(self, axis: int | None = None) -> bool:
        """Whether ``axis`` (or every axis) is split without padding."""
        axes = range(self.ndim) if axis is None else (axis,)
        return all(self.shape[a] % self.parts(a) == 0 for a in axes)

    @property
    def used_mesh_axes(self) -> frozenset[str]:
        """The mesh axes splitting some array axis."""
        return frozenset(m for entry in self.split for m in names_of(entry))

    @property
    def unused_mesh_axes(self) -> tuple[str, ...]:
        """Grid axes splitting no array axis (the data is replicated over them)."""
        return tuple(m for m, _ in self.mesh_shape if m not in self.used_mesh_axes)

    @property
    def local_axes(self) -> tuple[int, ...]:
        return tuple(a for a, m in enumerate(self.split) if m is None)

    def with_split(self, axis: int, mesh_axes: Split) -> "Layout":
        split = list(self.split)
        split[axis] = split_entry(names_of(mesh_axes))
        return replace(self, split=tuple(split))

    def with_size(self, axis: int, n: int) -> "Layout":
        shape = list(self.shape)
        shape[axis] = n
        return replace(self, shape=tuple(shape))

    def with_leading_axis(self, n: int) -> "Layout":
        """The layout of a batch of ``n`` such arrays stacked in front (not split)."""
        return replace(self, shape=(n,) + self.shape, split=(None,) + self.split)

    @property
    def spec(self) -> PartitionSpec:
        return PartitionSpec(*self.split)

    def sharding(self, mesh: Mesh) -> NamedSharding:
        return NamedSharding(mesh, self.spec)

    @property
    def name(self) -> str:
        """``'pencil local in axis k'``, ``'slab local in axes (j, k)'``, ..."""
        if not any(self.split):
            return "replicated" if self.mesh_shape else "single block"
        local = self.local_axes
        kind = "pencil" if sum(m is not None for m in self.split) >= 2 else "slab"
        if not local:
            return f"{kind} with no local axis"
        where = f"axis {local[0]}" if len(local) == 1 else f"axes {local}"
        return f"{kind} local in {where}"

    def __str__(self) -> str:
        return f"{self.spec} {self.name}, block {self.local_shape}"


def default_layout(shape, axes, mesh_shape) -> Layout:
    """The input layout pfft chooses for a transform over ``axes`` (where
    :func:`pfft.device_put` puts arrays, and where plans start by default).

    It splits the array over every mesh axis of ``mesh_shape`` (``(name, size)``
    pairs) wherever some even layout does: one where each mesh axis splits an array
    axis, alone or with others (``PartitionSpec(('x', 'y'))``), and every split axis's
    length is a multiple of its devices. Among those it takes, in this order:

    1. the *pencil* (with one mesh axis, the *slab*) of the first fit: the first mesh
       axis splits the first transformed axis, the second the next, each mesh axis
       going to the next candidate it divides (the transformed axes but the last,
       then the batch axes), else joining an axis already split that it divides
       with the others there, else the last transformed axis;
    2. else one that keeps the last transformed axis whole (its FFT runs first,
       contiguously), then one with the fewest axes split over several mesh axes,
       then one whose mesh axes, in order, split the earliest candidates.

    Where no even layout uses every mesh axis, the one over the most devices (the
    first fit's where it is one of them); the array is then replicated over the mesh
    axes left idle, whose devices repeat each other's work. The search (only where the
    first fit leaves a mesh axis idle) walks at most ``(ndim + 1) ** len(mesh_shape)``
    assignments, once per shape, axes and mesh (a bounded cache).

    Examples
    --------
    >>> default_layout((16, 20, 24), (0, 1, 2), (("x", 2), ("y", 4))).split
    ('x', 'y', None)
    >>> default_layout((16, 20, 24), (0, 1, 2), (("x", 4), ("y", 16))).split
    ('y', 'x', None)
    >>> default_layout((5, 7, 4), (0, 1, 2), (("x", 4), ("y", 2))).split
    (None, None, 'x')
    """
    shape, axes = tuple(shape), tuple(axes)
    mesh_shape = tuple((m, s) for m, s in mesh_shape)
    first = _first_fit(shape, axes, mesh_shape)
    if not first.unused_mesh_axes:
        return first
    split = _widest(shape, axes, mesh_shape)
    if math.prod(first.mesh_size(m) for m in first.used_mesh_axes) >= math.prod(
            dict(mesh_shape)[m] for names in split for m in names):
        return first
    return Layout(shape, tuple(split_entry(names) for names in split), mesh_shape)


@functools.lru_cache(maxsize=256)
def _widest(shape, axes, mesh_shape) -> tuple[tuple[str, ...], ...]:
    """Rules 2 and 3 of :func:`default_layout`: per array axis, the mesh axes of the
    preferred even layout over the most devices (cached, bounded: the search runs
    once per shape, axes and mesh)."""
    sizes = dict(mesh_shape)
    last = axes[-1]
    order = list(axes[:-1]) + [a for a in range(len(shape)) if a not in axes] + [last]
    rank = {a: i for i, a in enumerate(order)}

    def cost(assigned) -> tuple:
        split = _grouped(assigned, mesh_shape, len(shape))
        return (-math.prod(sizes[m] for names in split for m in names), bool(split[last]),
                sum(max(len(names) - 1, 0) for names in split),
                tuple(len(order) if a is None else rank[a] for a in assigned))

    return tuple(_grouped(min(_even_assignments(shape, mesh_shape), key=cost), mesh_shape,
                          len(shape)))


def _grouped(assigned, mesh_shape, ndim: int) -> list[tuple[str, ...]]:
    """Per array axis, the mesh axes (in mesh order) that ``assigned`` (per mesh
    axis: the array axis it splits, or ``None``) gives it."""
    split: list[tuple[str, ...]] = [()] * ndim
    for (m, _), a in zip(mesh_shape, assigned):
        if a is not None:
            split[a] = split[a] + (m,)
    return split


def _even_assignments(shape, mesh_shape):
    """Every even assignment of the mesh axes: per mesh axis the array axis it splits
    or ``None`` (idle), each split axis's length a multiple of its devices (a
    depth-first walk that drops a branch as soon as an axis stops dividing)."""
    parts = [1] * len(shape)

    def walk(i: int, assigned: tuple):
        if i == len(mesh_shape):
            yield assigned
            return
        size = mesh_shape[i][1]
        for a in range(len(shape)):
            if shape[a] % (parts[a] * size) == 0:
                parts[a] *= size
                yield from walk(i + 1, assigned + (a,))
                parts[a] //= size
        yield from walk(i + 1, assigned + (None,))

    return walk(0, ())


def _first_fit(shape, axes, mesh_shape) -> Layout:
    """The first fit (rule 1 of :func:`default_layout`): each mesh axis in turn to
    the first candidate it divides, or to an axis already split, or to the last
    transformed axis; idle where none takes it."""
    batch = [a for a in range(len(shape)) if a not in axes]
    candidates = list(axes[:-1]) + batch
    # a transform over a single axis (or of a 1-point last axis) can still be split
    # on the transformed axes: the plan exchanges them
    split: list[tuple[str, ...]] = [()] * len(shape)
    sizes = dict(mesh_shape)
    last = axes[-1]

    def divides(a: int, size: int) -> bool:   # axis a's mesh axes and one more divide it
        return shape[a] % (math.prod(sizes[m] for m in split[a]) * size) == 0

    for mesh_axis, size in mesh_shape:
        # in order of preference: a whole candidate; a candidate (or the last axis)
        # already split, the mesh axis joining its group; the last transformed axis
        # itself, which the plan exchanges away before its FFT (worth it only where
        # another transformed axis has more than one point to take its place)
        choices = ([a for a in candidates if not split[a]]
                   + [a for a in candidates + [last] if split[a]]
                   + ([last] if not split[last] and any(shape[a] > 1 for a in axes[:-1])
                      else []))
        pick = next((a for a in choices if divides(a, size)), None)
        if pick is not None:
            split[pick] = split[pick] + (mesh_axis,)
    return Layout(shape, tuple(split_entry(s) for s in split), mesh_shape)


def layout_from_spec(shape, spec: PartitionSpec, mesh_shape, axis_names=None, *,
                     even: bool = True) -> Layout | None:
    """The layout a :class:`PartitionSpec` describes, or ``None`` if it is uneven
    (and ``even``: an array that JAX holds is never split unevenly).

    Each array axis may be split by any of the mesh axes, alone or together
    (``('x', 'y')``); mesh axes of size one are dropped.

    Parameters
    ----------
    shape
        Global shape.
    spec
        The partition spec.
    mesh_shape
        The ``(name, size)`` pairs of the mesh axes a layout may split (sizes above
        one: :func:`pfft.grid.mesh_shape_of`).
    axis_names
        Every axis name of the mesh (sizes one included); default those of
        ``mesh_shape``.

    Raises
    ------
    ValueError
        If the spec names an axis the mesh does not have, uses a mesh axis twice, or
        has more entries than ``shape`` has axes (as :class:`NamedSharding` does).
    """
    names = {m for m, _ in mesh_shape}
    known = set(axis_names) if axis_names is not None else names
    if len(spec) > len(shape):
        raise ValueError(f"sharding {spec} has {len(spec)} entries but the array has "
                         f"only {len(shape)} axes")
    split: list[Split] = []
    seen: list[str] = []
    for a in range(len(shape)):
        entry = names_of(spec[a] if a < len(spec) else None)
        unknown = [m for m in entry if m not in known]
        if unknown:
            raise ValueError(f"sharding {spec} names mesh axes {unknown} that the mesh "
                             f"(axes {sorted(known)}) does not have")
        seen += entry
        split.append(split_entry(m for m in entry if m in names))
    if len(seen) != len(set(seen)):
        raise ValueError(f"sharding {spec} uses a mesh axis more than once")
    lay = Layout(tuple(shape), tuple(split), tuple(mesh_shape))
    return lay if lay.is_even() or not even else None
