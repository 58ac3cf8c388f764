"""Which forward plan last made an output of a given kind, shape, dtype and mesh:
what an inverse transform assumes of its input where JAX hides the input's layout
(:mod:`pfft.inverse`). Mesh plans note each forward call here
(:meth:`pfft.mesh_plan.MeshPlacement.place`)."""
from __future__ import annotations

import weakref
from typing import TYPE_CHECKING

import numpy as np

from .lru import LRUCache

if TYPE_CHECKING:
    from .mesh_plan import Plan

__all__ = ["ForwardRecord", "FORWARDS"]


class ForwardRecord:
    """Which forward plan last produced an output of a given kind, shape, dtype, mesh,
    axes and kinds: what an inverse transform assumes of its input where JAX hides the
    input's layout (an Auto mesh inside ``jit``; :mod:`pfft.inverse`).

    There the inverse cannot see where its input is, nor whether a real spectrum is
    padded (a ``spectrum="padded"`` plan's, whose shape does not say its real
    length): it takes the input to be what the plan recorded here last made (so
    ``irfftn(plan.forward(u))`` gives ``u``'s shape back). Every :meth:`Plan.forward`
    call, eager or traced, records its plan. Where the layout is visible the record
    is not read: the inverse is then a function of its arguments alone. Bounded,
    thread-safe, holding plans weakly (an evicted plan is not kept alive).
    """

    def __init__(self, maxsize: int = 256):
        self._refs = LRUCache(maxsize)          # key -> weakref.ref(plan)

    @staticmethod
    def _key(kind: str, shape, dtype, mesh, axes, kinds) -> tuple:
        """``kind``: the plan's (``"c2c"``, or ``"r2c"`` for either spectrum); a
        concrete mesh counts as its abstract mesh (a plan made outside ``jit`` serves
        an inverse traced inside it)."""
        mesh = getattr(mesh, "abstract_mesh", mesh)
        return (kind, tuple(shape), np.dtype(dtype), mesh, tuple(axes),
                None if kinds is None else tuple(kinds))

    def record(self, plan: "Plan") -> None:
        """Note that ``plan``'s forward call made an output (plans without a mesh, with
        dealiasing, or of kind ``"c2r"`` have no inverse that looks here)."""
        if plan.out_sharding is None or plan.dealiased or plan.kind == "c2r":
            return
        key = self._key(plan.kind, plan.out_shape, plan.out_dtype, plan.mesh, plan.axes,
                        plan.kinds)
        self._refs.put(key, weakref.ref(plan))

    def last(self, kind: str, shape, dtype, mesh, axes, kinds=None) -> "Plan | None":
        """The plan whose forward call last produced such an output, if it is alive."""
        if mesh is None:
            return None
        ref = self._refs.get(self._key(kind, shape, dtype, mesh, axes, kinds))
        return None if ref is None else ref()

    def clear(self) -> None:
        self._refs.clear()


FORWARDS = ForwardRecord()
