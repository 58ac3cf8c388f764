"""Layouts: how a global array is distributed over a device grid.

A :class:`Layout` is a value: the logical global shape and, for every array axis,
the mesh axis that splits it (or ``None`` when the axis is whole on every device).
Inside a plan an axis may be split unevenly (its last blocks padded); at the
boundaries of a plan every split axis divides evenly, because JAX cannot hold an
unevenly sharded array.
"""
from __future__ import annotations

from dataclasses import dataclass

from jax.sharding import Mesh, NamedSharding, PartitionSpec

__all__ = ["Layout", "default_layout", "layout_from_spec"]


@dataclass(frozen=True)
class Layout:
    """One distribution of a global array over a grid.

    Attributes
    ----------
    shape
        Logical global shape (numpy's shape; never padded).
    split
        Per array axis, the name of the mesh axis splitting it, or ``None``.
    grid
        The grid's ``(mesh axis name, size)`` pairs (sizes above one).

    Examples
    --------
    >>> lay = Layout((8, 6, 5), ("x", "y", None), (("x", 2), ("y", 3)))
    >>> lay.local_shape, lay.name
    ((4, 2, 5), 'pencil local in axis 2')
    """

    shape: tuple[int, ...]
    split: tuple[str | None, ...]
    grid: tuple[tuple[str, int], ...]

    def __post_init__(self):
        assert len(self.shape) == len(self.split), (self.shape, self.split)
        used = [m for m in self.split if m is not None]
        assert len(used) == len(set(used)), f"mesh axis used twice in {self.split}"
        assert set(used) <= {m for m, _ in self.grid}, (self.split, self.grid)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def grid_size(self, mesh_axis: str) -> int:
        return dict(self.grid)[mesh_axis]

    def parts(self, axis: int) -> int:
        """How many devices split ``axis`` (1 when it is whole)."""
        m = self.split[axis]
        return 1 if m is None else self.grid_size(m)

    def local_size(self, axis: int) -> int:
        """Size of one device's block along ``axis`` (padded if uneven)."""
        return -(-self.shape[axis] // self.parts(axis))

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

    def axis_split_by(self, mesh_axis: str) -> int | None:
        """The array axis that ``mesh_axis`` splits, or ``None``."""
        return self.split.index(mesh_axis) if mesh_axis in self.split else None

    @property
    def local_axes(self) -> tuple[int, ...]:
        return tuple(a for a, m in enumerate(self.split) if m is None)

    def with_split(self, axis: int, mesh_axis: str | None) -> "Layout":
        split = list(self.split)
        split[axis] = mesh_axis
        return Layout(self.shape, tuple(split), self.grid)

    def with_size(self, axis: int, n: int) -> "Layout":
        shape = list(self.shape)
        shape[axis] = n
        return Layout(tuple(shape), self.split, self.grid)

    def with_leading_axis(self, n: int) -> "Layout":
        """The layout of a batch of ``n`` such arrays stacked in front (not split)."""
        return Layout((n,) + self.shape, (None,) + self.split, self.grid)

    @property
    def spec(self) -> PartitionSpec:
        return PartitionSpec(*self.split)

    def sharding(self, mesh: Mesh) -> NamedSharding:
        return NamedSharding(mesh, self.spec)

    @property
    def name(self) -> str:
        """``'pencil local in axis k'``, ``'slab local in axes (j, k)'``, ..."""
        if not any(self.split):
            return "replicated" if self.grid else "single block"
        local = self.local_axes
        kind = "pencil" if sum(m is not None for m in self.split) == 2 else "slab"
        where = f"axis {local[0]}" if len(local) == 1 else f"axes {local}"
        return f"{kind} local in {where}"

    def __str__(self) -> str:
        return f"{self.spec} {self.name}, block {self.local_shape}"


def default_layout(shape, axes, grid) -> Layout:
    """The input layout pfft chooses for a transform over ``axes``.

    The last transformed axis stays whole (its FFT runs first, contiguously); the
    grid's first mesh axis splits the first transformed axis, its second the next
    (a *pencil*; with one mesh axis, a *slab*). A mesh axis goes to the next
    candidate it divides; batch axes come after the transformed ones; if no axis
    divides, the data is replicated over that mesh axis (each device then repeats
    the work of the others along it).
    """
    shape = tuple(shape)
    axes = tuple(axes)
    batch = [a for a in range(len(shape)) if a not in axes]
    candidates = list(axes[:-1]) + batch
    split: list[str | None] = [None] * len(shape)
    for mesh_axis, size in grid:
        for a in candidates:
            if split[a] is None and shape[a] % size == 0:
                split[a] = mesh_axis
                break
    return Layout(shape, tuple(split), tuple(grid))


def layout_from_spec(shape, spec: PartitionSpec, grid) -> Layout | None:
    """The layout a :class:`PartitionSpec` describes, or ``None`` if pfft cannot use it.

    pfft uses a spec directly when each array axis is split by at most one of the
    grid's mesh axes and evenly; otherwise the input is resharded to the default.
    """
    names = {m for m, _ in grid}
    split: list[str | None] = []
    for a in range(len(shape)):
        entry = spec[a] if a < len(spec) else None
        if isinstance(entry, (tuple, list)):
            entry = [e for e in entry if e in names]
            if len(entry) > 1:
                return None
            entry = entry[0] if entry else None
        elif entry is not None and entry not in names:
            entry = None          # a mesh axis of size one
        split.append(entry)
    try:
        lay = Layout(tuple(shape), tuple(split), tuple(grid))
    except AssertionError:
        return None
    return lay if lay.is_even() else None
