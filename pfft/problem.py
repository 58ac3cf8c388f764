"""The problem a plan solves: one frozen value.

As ``lax.fft`` takes its transform as two small parameters, a plan is made from one
:class:`Problem`: the global shape and dtype, the axes and what each one's transform
is, numpy's norm, the spectrum's layout and dealiasing, how the plan may run it (the
engine's name, whether exchanges move as pieces) and the layout its input starts in.
Where it runs (a mesh, or an MPI process grid) stands beside it: the plan caches key
on ``(problem, place)`` (:func:`pfft.plan_core.PlanCache`), and the plans, the
tuning and the wisdom store take the problem whole.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import settings
from .layout import Layout

__all__ = ["Problem"]


@dataclass(frozen=True)
class Problem:
    """What a plan computes, and from which input layout: an immutable, hashable value.

    Equal problems (on the same mesh or process grid) are one cached plan. The
    fields are checked by the entry points (:mod:`pfft.front_door` for
    ``pfft.plan`` and ``pfft.mpi.plan``; :mod:`pfft.inputs` for the transforms);
    here they are only put in one spelling, so that equal problems compare equal.

    Attributes
    ----------
    shape
        Global shape of the forward input (real for ``kind="r2c"``; the finer,
        physical grid where dealiasing pads it).
    dtype
        The dtype computed in: complex, or real for an all real-to-real plan of real
        data.
    axes
        The transformed axes, in numpy's order (the last is a real plan's halved one).
    norm
        ``"backward"``, ``"ortho"`` or ``"forward"``, numpy's.
    kind
        ``"c2c"``, ``"r2c"`` or ``"c2r"`` (internal: ``irfftn`` from a spectrum's
        layout, ``n`` real points on the halved axis).
    n
        A ``"c2r"`` problem's real length of the halved axis; else ``None``.
    spectrum
        ``"numpy"`` or ``"padded"`` (a real plan's output left padded).
    dealiased
        ``(axis, N)`` pairs: the spectral lengths dealiasing keeps.
    kinds, orthogonalize
        Per-axis kinds of a real-to-real or mixed plan (``None`` for an FFT plan), and
        scipy's ``orthogonalize`` (``None`` without kinds, where it means nothing).
    engine
        The local FFT engine's name, lower case (``None`` given: ``$PFFT_ENGINE``'s,
        read when the problem is made), or on MPI an engine object
        (:class:`pfft.interfaces.Engine`).
    fuse_exchanges
        ``"auto"``, ``True`` or ``False`` (:func:`pfft.plan`).
    overwrite_x
        Whether the transforms may write over the input (:func:`pfft.plan`).
    in_layout
        The :class:`~pfft.layout.Layout` the forward input is in; ``None``: the
        default of the place the plan runs on (a mesh's pencil, an MPI grid's).
    promoted_from
        The real dtype ``pfft.plan`` was given without ``kind`` (``print(plan)`` says
        so), else ``None``. Not part of the problem's identity: asked for with
        ``kind="c2c"`` it is the same plan, and the one made first says what it was
        asked for with.
    """

    shape: tuple[int, ...]
    dtype: np.dtype
    axes: tuple[int, ...]
    norm: str = "backward"
    kind: str = "c2c"
    n: int | None = None
    spectrum: str = "numpy"
    dealiased: tuple[tuple[int, int], ...] = ()
    kinds: tuple[str, ...] | None = None
    orthogonalize: bool | None = None
    engine: Any = None
    fuse_exchanges: bool | str = "auto"
    overwrite_x: bool = False
    in_layout: Layout | None = None
    promoted_from: np.dtype | None = field(default=None, compare=False)

    def __post_init__(self):
        def put(name, value):
            object.__setattr__(self, name, value)
        put("shape", tuple(self.shape))
        put("dtype", np.dtype(self.dtype))
        put("axes", tuple(self.axes))
        put("dealiased", tuple(tuple(pair) for pair in self.dealiased))
        if self.kinds is None:
            put("orthogonalize", None)
        else:
            put("kinds", tuple(self.kinds))
        if self.engine is None or isinstance(self.engine, str):
            put("engine", (self.engine or settings.engine()).lower())
        if self.promoted_from is not None:
            put("promoted_from", np.dtype(self.promoted_from))
