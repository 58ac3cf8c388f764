"""Data movements between layouts: :class:`Exchange` (all-to-all), :class:`Gather`
(all-gather) and :class:`Scatter` (local slice), with their steps (:class:`AllToAll`,
:class:`AllGather`, :class:`Slice`)."""
from __future__ import annotations

from dataclasses import dataclass, replace

from .. import executor
from ..layout import Layout, Split, names_of
from .base import At, Movement, OnOneAxis, Walk, factor_text, order_for

__all__ = ["Exchange", "Gather", "Scatter", "AllToAll", "AllGather", "Slice"]


def _names(mesh_axis: Split) -> str:
    return repr(mesh_axis) if isinstance(mesh_axis, str) else "(" + ", ".join(map(repr, mesh_axis)) + ")"


@dataclass(frozen=True)
class Exchange(Movement):
    """All-to-all over ``mesh_axis``: ``gather`` loses it, ``scatter`` gains it.

    ``mesh_axis`` is one mesh axis name or a tuple of them (a group, as in
    ``PartitionSpec(('x', 'y'))``), of ``size`` devices in all. Usually ``gather``
    becomes whole and ``scatter`` was whole. ``gather_keep`` is how many devices
    still split ``gather`` afterwards (the major mesh axes it keeps), and
    ``scatter_had`` how many split ``scatter`` before (it gains ``mesh_axis`` as its
    minor part): such partial moves are planned only where both divide evenly.
    """

    mesh_axis: Split
    size: int
    gather: int
    scatter: int
    gather_keep: int = 1
    scatter_had: int = 1

    def inverse(self) -> "Exchange":
        return Exchange(self.mesh_axis, self.size, gather=self.scatter, scatter=self.gather,
                        gather_keep=self.scatter_had, scatter_had=self.gather_keep)

    def gathered_extent(self, shape) -> int:
        """Length of a block along ``gather`` after the exchange, the logical global
        ``shape`` before it given: the whole axis (padding cropped), or an even share
        where it keeps other mesh axes."""
        return shape[self.gather] // self.gather_keep

    def __str__(self) -> str:
        g = "becomes local" if self.gather_keep == 1 else "keeps its other mesh axes"
        s = "split" if self.scatter_had == 1 else "split further"
        return (f"all_to_all over {_names(self.mesh_axis)} ({self.size}): axis {self.gather} "
                f"{g}, axis {self.scatter} {s}")

    def after(self, layout: Layout) -> Layout:
        """The layout after it: ``mesh_axis`` moved from ``gather``'s split to the
        minor end of ``scatter``'s."""
        moved = names_of(self.mesh_axis)
        keep = tuple(m for m in names_of(layout.split[self.gather]) if m not in moved)
        return (layout.with_split(self.gather, keep)
                .with_split(self.scatter, names_of(layout.split[self.scatter]) + moved))

    def batched(self) -> "Exchange":
        """The same stage on a batch stacked in a new axis 0."""
        return replace(self, gather=self.gather + 1, scatter=self.scatter + 1)

    def resolve(self, walk: Walk, at: At) -> None:
        """Its step: XLA's all-to-all cutting and stacking the axes itself where the
        engine keeps numpy's order and the transport splits (and no uneven balanced
        block is cut), else packed with the device axis in front; the owed factor
        applied in its first copy."""
        extent = self.gathered_extent(at.shape)
        split = (at.engine.keeps_order and at.transport.capabilities.splits
                 and not (at.balanced and extent % self.size))
        before = walk.order
        after = before if split else self._order_after(walk, at)
        walk.order = after
        walk.extent[self.gather] = extent
        walk.extent[self.scatter] = at.layout_after.local_size(self.scatter)
        walk.add(AllToAll(self, walk.take_scale(), split, before, after, extent, at.balanced))

    def _order_after(self, walk: Walk, at: At) -> tuple[int, ...]:
        """The block's axis order after it, packed: the gathered axis outermost (its
        unpack a free reshape) where the engine keeps numpy's order, else the next
        transform's axes innermost."""
        g, nxt = self.gather, at.next_transform
        if at.engine.keeps_order:
            return (g,) + tuple(a for a in walk.order if a != g)
        if nxt is None:
            return order_for(walk.order, (g,))
        return order_for(walk.order, nxt.axes, exact=nxt.exact_axes)


@dataclass(frozen=True)
class Gather(Movement, OnOneAxis):
    """All-gather one unevenly split axis so the result can be held by JAX."""

    mesh_axis: Split
    size: int
    axis: int

    def inverse(self) -> "Scatter":
        return Scatter(self.mesh_axis, self.size, self.axis)

    def __str__(self) -> str:
        return (f"all_gather over {_names(self.mesh_axis)} ({self.size}): axis {self.axis} "
                f"becomes local (no exchange can make this layout even)")

    def after(self, layout: Layout) -> Layout:
        """The layout after it: the axis whole."""
        return layout.with_split(self.axis, None)

    def resolve(self, walk: Walk, at: At) -> None:
        """Its step: the all-gather, the owed factor applied first."""
        if not at.engine.keeps_order:
            # the gathered axis outermost: else XLA:CPU may lay out the gather, and the FFT
            # before it, with that axis outermost in memory, a layout its FFT refuses
            # (a RET_CHECK in fft_thunk at run time)
            walk.reorder((self.axis,) + tuple(a for a in walk.order if a != self.axis))
        pos = walk.order.index(self.axis)
        walk.extent[self.axis] = at.shape[self.axis]
        walk.add(AllGather(self, pos, walk.take_scale(), at.shape[self.axis], at.balanced))


@dataclass(frozen=True)
class Scatter(Movement, OnOneAxis):
    """Keep this device's block of a replicated axis (no communication)."""

    mesh_axis: Split
    size: int
    axis: int

    def inverse(self) -> Gather:
        return Gather(self.mesh_axis, self.size, self.axis)

    def __str__(self) -> str:
        return f"split axis {self.axis} over {_names(self.mesh_axis)} ({self.size}) (local slice)"

    def after(self, layout: Layout) -> Layout:
        """The layout after it: the axis split over ``mesh_axis``."""
        return layout.with_split(self.axis, self.mesh_axis)

    def resolve(self, walk: Walk, at: At) -> None:
        """Its step: this device's slice, the owed factor applied first."""
        pos = walk.order.index(self.axis)
        walk.extent[self.axis] = at.layout_after.local_size(self.axis)
        walk.add(Slice(self, pos, walk.take_scale(), at.balanced))


@dataclass(frozen=True)
class AllToAll:
    """Exchange ``stage`` by XLA's all-to-all, ``scale`` applied in its first copy.

    ``split``: the collective cuts the scattered axis and stacks the received blocks
    along the gathered one itself (``positions``: theirs; the order is kept).
    Otherwise the block is packed with the device axis in front and the axes in
    ``order_after`` (logical axes, physical order after the exchange), unpacked after.
    """

    stage: Exchange
    scale: float
    split: bool
    order_before: tuple[int, ...]
    order_after: tuple[int, ...]
    extent: int                     # the gathered axis's length after it
    balanced: bool

    def run(self, data, transport):
        return executor.exchange(data, self, transport)

    def __str__(self) -> str:
        how = "cut and stacked by the collective" if self.split else "packed"
        return f"{self.stage}, {how}{factor_text(self.scale)}"


@dataclass(frozen=True)
class AllGather:
    """Gather ``stage``'s axis (at physical ``position``), ``scale`` applied first."""

    stage: Gather
    position: int
    scale: float
    extent: int
    balanced: bool

    def run(self, data, transport):
        data = transport.all_gather(executor.scaled(data, self.scale), self.stage.mesh_axis,
                                    self.position)
        return executor.join(data, self.position, self.extent, self.stage.size,
                             self.balanced)

    def __str__(self) -> str:
        return f"{self.stage}{factor_text(self.scale)}"


@dataclass(frozen=True)
class Slice:
    """Keep this device's block of ``stage``'s axis (at physical ``position``)."""

    stage: Scatter
    position: int
    scale: float
    balanced: bool

    def run(self, data, transport):
        from jax import lax

        data = executor.cut(executor.scaled(data, self.scale), self.position,
                            self.stage.size, self.balanced)
        chunk = data.shape[self.position] // self.stage.size
        start = transport.axis_index(self.stage.mesh_axis) * chunk
        return lax.dynamic_slice_in_dim(data, start, chunk, axis=self.position)

    def __str__(self) -> str:
        return f"{self.stage}{factor_text(self.scale)}"
