"""The stages a plan chains: local FFTs and data movements between layouts.

Each stage is a small immutable value that knows its inverse (the stage that undoes
its data movement), prints as one line of the plan, and holds every other rule of its
kind (the layout it leaves, its batched form, the program steps it resolves into, its
pieces-kernel form): :mod:`pfft.stage_kinds` defines them, a module per family, and
:data:`STAGE_KINDS` here is the one table of them.
"""
from __future__ import annotations

from typing import Union

from .stage_kinds.exchange import Exchange, Gather, Scatter
from .stage_kinds.fft import LocalFFT, RealFFT
from .stage_kinds.r2r import LocalR2R
from .stage_kinds.resize import Resize

__all__ = ["LocalFFT", "RealFFT", "LocalR2R", "Resize", "Exchange", "Gather", "Scatter",
           "Stage", "STAGE_KINDS"]

#: every kind of stage a chain may hold; a new kind is a class of
#: :mod:`pfft.stage_kinds` with the rules its package's docstring lists, added here
STAGE_KINDS = (LocalFFT, RealFFT, LocalR2R, Resize, Exchange, Gather, Scatter)

#: any stage: one of :data:`STAGE_KINDS`
Stage = Union[STAGE_KINDS]
