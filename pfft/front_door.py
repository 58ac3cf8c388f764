"""What the front doors ``pfft.plan`` and ``pfft.mpi.plan`` (and ``pfft.tune``) share.

Their arguments that say what is transformed are one value (:class:`PlanArguments`),
checked the same way for every transport into the :class:`~pfft.problem.Problem` a
plan is made from (:meth:`PlanArguments.problem`, which also says when a real dtype
without ``kind`` plans the complex ``fftn``); and the grid that wisdom prefers for a
problem, tuning first where asked (:func:`preferred_grid`). A front door adds only
its place: the mesh or process grid, the input's layout on it, the plan cache.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from . import wisdom
from .arguments import (R2R_KINDS, check_dealiasing, check_fuse_exchanges, check_norm,
                        check_overwrite_x, check_plan_kinds, check_plan_options, check_shape,
                        complex_dtype, normalize_axes, r2r_dtype)
from .autodiff import caller_stacklevel
from .problem import Problem

__all__ = ["PlanArguments", "preferred_grid"]

# (entry point, shape, real dtype) that a plan without kind= was warned about: once each
_WARNED_REAL: set = set()


@dataclass(frozen=True)
class PlanArguments:
    """The arguments of :func:`pfft.plan` and :func:`pfft.mpi.plan` that say what is
    transformed and how, as the caller gave them (unchecked); see :func:`pfft.plan`."""

    shape: Any
    dtype: Any
    axes: Any = None
    norm: Any = "backward"
    kind: Any = None
    spectrum: Any = "numpy"
    padding: Any = 1.0
    engine: Any = None
    fuse_exchanges: Any = "auto"
    kinds: Any = None
    orthogonalize: Any = None
    overwrite_x: Any = False

    def problem(self, where: str) -> Problem:
        """The checked :class:`~pfft.problem.Problem` (its input layout left to the
        place), the same way for every transport; ``where`` names the caller in
        errors (``"plan"``, ``"pfft.mpi.plan"``, ``"tune"``).

        A real dtype given without ``kind`` or ``kinds`` plans the complex ``fftn``:
        a ``UserWarning`` says so once per shape and dtype, and the problem keeps the
        dtype given (``print(plan)`` says it too).

        Raises
        ------
        ValueError, TypeError
            As :func:`pfft.plan` documents, with numpy's wording.
        """
        promoted = _real_without_kind(self.dtype, self.kind, self.kinds)
        kinds, kind, orthogonalize = check_plan_kinds(self.shape, self.axes, self.kind or "c2c",
                                                      self.kinds, self.orthogonalize, where)
        check_plan_options(kind, self.spectrum, where)
        shape = check_shape(self.shape, where)
        try:
            dtype = np.dtype(self.dtype)
        except TypeError:
            raise TypeError(f"{where}: dtype {self.dtype!r} is not a numpy dtype") from None
        all_r2r = kinds is not None and all(k in R2R_KINDS for k in kinds)
        try:
            dtype = r2r_dtype(dtype) if all_r2r else complex_dtype(dtype)
        except TypeError as err:
            raise TypeError(f"{where}: {str(err).removeprefix('pfft: ')}") from None
        axes = normalize_axes(self.axes, len(shape), where)
        norm = check_norm(self.norm, where)
        shape, dealiased = check_dealiasing(self.padding, shape, axes, where)
        if dealiased and kinds is not None and any(k in R2R_KINDS for k in kinds):
            raise ValueError(f"{where}: padding (dealiasing) is for Fourier axes; a plan with "
                             f"real-to-real kinds takes padding=1")
        # the note and the fuse_exchanges error name the function in full ("pfft.plan")
        public = where if where.startswith("pfft.") else f"pfft.{where}"
        if promoted:
            _warn_real_without_kind(shape, self.dtype, dtype, public)
        return Problem(shape, dtype, axes, norm, kind, spectrum=self.spectrum,
                       dealiased=dealiased, kinds=kinds, orthogonalize=orthogonalize,
                       engine=self.engine,
                       fuse_exchanges=check_fuse_exchanges(self.fuse_exchanges, public),
                       overwrite_x=check_overwrite_x(self.overwrite_x, public),
                       promoted_from=np.dtype(self.dtype) if promoted else None)


def preferred_grid(problem: Problem, devices, transport: str,
                   measure: Callable | None = None) -> tuple[int, ...] | None:
    """The grid wisdom holds as fastest for ``problem`` on ``devices`` over
    ``transport`` (``"xla"`` or ``"mpi"``), or ``None`` where it holds none.

    ``measure``: where wisdom holds none, tune first (:func:`pfft.tune` or
    :func:`pfft.mpi.tune`, bound to the devices, called with the problem's shape,
    dtype and options).
    """
    entry = wisdom.lookup(problem, devices, transport)
    if entry is None and measure is not None:
        measure(problem.shape, problem.dtype, kind=problem.kind, axes=problem.axes,
                norm=problem.norm, spectra=(problem.spectrum,), kinds=problem.kinds,
                orthogonalize=problem.orthogonalize)
        entry = wisdom.lookup(problem, devices, transport)
    return None if entry is None else tuple(entry["grid"])


def _real_without_kind(dtype, kind, kinds) -> bool:
    """Whether a plan is asked for with a real (or integer, or bool) ``dtype`` and
    neither ``kind`` nor ``kinds``: it is then the complex ``fftn`` of real input.
    ``False`` for a bad dtype (:meth:`PlanArguments.problem` reports it)."""
    if kind is not None or kinds is not None:
        return False
    try:
        return np.dtype(dtype).kind in "biuf"
    except TypeError:
        return False


def _warn_real_without_kind(shape, given, dtype, where: str) -> None:
    """Say (a ``UserWarning``, once per shape and dtype) that a plan asked for with the
    real dtype ``given`` and no ``kind`` is the complex ``fftn`` in ``dtype``."""
    given = np.dtype(given)
    if (where, tuple(shape), given) in _WARNED_REAL:
        return
    _WARNED_REAL.add((where, tuple(shape), given))
    warnings.warn(f"{where}: dtype {given.name} is real, but without kind= the plan is the "
                  f"complex fftn ({np.dtype(dtype).name}; kind=\"c2c\"), taking {given.name} "
                  f"input promoted as numpy's fftn does. For the real transform (rfftn: half "
                  f"the work and memory) pass kind=\"r2c\"; pass kind=\"c2c\" to keep the "
                  f"complex one without this warning.", UserWarning,
                  stacklevel=caller_stacklevel())
