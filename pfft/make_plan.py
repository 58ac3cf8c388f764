"""``pfft.plan``: the front door to plans.

Check a plan's arguments, place its grid (the mesh as given, or the grid that wisdom
or tuning now prefers, ``tune=``), and fetch the cached :class:`~pfft.mesh_plan.Plan`.
It sits above :mod:`pfft.tuning` (``tune="measure"`` tunes first), which sits above
the plans themselves (:mod:`pfft.mesh_plan`) and the wisdom store (:mod:`pfft.wisdom`).
"""
from __future__ import annotations

import warnings
from typing import Sequence

import jax
import numpy as np
from jax.sharding import NamedSharding

from . import wisdom
from .arguments import check_plan_kinds, check_tune
from .autodiff import caller_stacklevel
from .plan_core import layout_of_spec, plan_arguments
from .grid import make_mesh, mesh_shape_of
from .layout import Layout, default_layout
from .mesh_plan import Plan, get_plan
from .tuning import tune

__all__ = ["plan"]

# (entry point, shape, real dtype) that a plan without kind= was warned about: once each
_WARNED_REAL: set = set()


def plan(shape, dtype, mesh=None, *, axes=None, norm: str = "backward",
         in_sharding=None, kind: str | None = None, spectrum: str = "numpy",
         padding: float = 1.0, tune: str | None = None, engine: str | None = None,
         fuse_exchanges: bool | str = "auto", kinds: Sequence[str] | None = None,
         orthogonalize: bool | None = None) -> Plan:
    """Plan a distributed ``fftn``, ``rfftn``, ``dctn``/``dstn`` or a mixed transform
    (and its inverse) for arrays of one shape.

    Parameters
    ----------
    shape
        Global shape of the input (real for ``kind="r2c"``).
    dtype
        Input dtype. For ``kind="r2c"`` the real dtype or its complex counterpart.
        Otherwise a real dtype is promoted to complex as numpy's ``fftn`` does
        (float32 to complex64): ``pfft.plan(shape, np.float32, mesh)`` plans the
        complex ``fftn``, which takes real input. Given without ``kind`` it says so
        (a ``UserWarning``, once per shape and dtype, and ``print(plan)``); pass
        ``kind="r2c"`` for ``rfftn`` (half the work and memory), or ``kind="c2c"``
        for the complex transform.
    mesh
        A 1-D or 2-D :class:`jax.sharding.Mesh` (see :func:`pfft.make_mesh`), or ``None``
        for a single-device plan.
    axes
        Axes to transform; default all of them (as numpy). For
        ``kind="r2c"`` the last of them is halved to ``n//2 + 1``.
    norm
        ``"backward"``, ``"ortho"`` or ``"forward"``, as in numpy.
    in_sharding
        A :class:`NamedSharding` or :class:`PartitionSpec` the input already has. By
        default the plan picks its input pencil (the last transformed axis whole,
        the grid splitting the others).
    kind
        ``"c2c"`` (:meth:`Plan.forward` is ``fftn``; the default) or ``"r2c"``
        (``rfftn``).
    spectrum
        ``"numpy"`` (default): the output has numpy's shape, evenly sharded.
        ``"padded"`` (``kind="r2c"`` only): the spectrum stays in the pencil the
        transform ends in, each unevenly split axis there (the halved one, and any
        other the grid does not divide) zero-padded to a multiple of its devices:
        one all-to-all fewer on a pencil grid.
        :meth:`Plan.backward` and :func:`pfft.irfftn` take it back.
    padding
        Dealiasing factor (at least 1; ``1.5`` is the 3/2 rule). ``shape`` is then the
        spectral grid ``N``; the plan's input (:attr:`Plan.in_shape`) is the finer
        physical grid ``ceil(padding * N)`` along each transformed axis. The forward
        transform keeps the lowest ``N`` frequencies of each axis (truncating each
        axis right after its FFT, while it is local: nothing is gathered) and the
        backward zero-pads them back. Scaling follows numpy's for the ``N`` grid, so
        the spectrum of a band-limited field is the same as from ``N`` samples.
    engine
        Local FFT engine: ``"auto"`` (default, or ``$PFFT_ENGINE``): pfft's native
        kernels on CPU where they are built (``make kernels``), else XLA's;
        ``"native"`` or ``"xla"`` to force one; ``"cufft"`` is ``"native"`` on GPUs
        (on CPUs it warns and chooses as ``"auto"``; see ``docs/engines.md``).
    fuse_exchanges
        On CPU with the native engine: let the FFT before an exchange write the pieces
        it moves and the FFT after it read them where they land (one swap, XLA's tuple
        all-to-all, per exchange: :mod:`pfft.pieces`). ``"auto"`` (default) does so
        for every exchange; where JAX offers no swap (``p - 1`` collective permutes
        instead), for those whose blocks are large enough to pay for the extra
        collectives (every exchange over 2 devices; over ``p`` devices, blocks of at
        least ``(p - 2) * 80 KiB``: :func:`pfft.pieces.shifts_pay`), running the
        others as one all-to-all each; ``True`` fuses every exchange, ``False`` none.
        The result is the same up to rounding. Part of the plan's cache key.
    tune
        ``None`` (default): plan on ``mesh`` as given. ``"wisdom"``: use the grid that
        :func:`pfft.tune` found fastest for this problem on ``mesh``'s devices, if
        there is such wisdom (saved with :func:`pfft.save_wisdom`, read with
        :func:`pfft.load_wisdom`), else ``mesh``. ``"measure"``: the same, but tune now
        when there is no wisdom yet. The plan's mesh then has that grid (same devices
        and axis types); place inputs with ``plan.in_sharding``.

    kinds
        The transform along each axis of ``axes`` (default all axes), one of
        ``"fft"``, ``"rfft"`` (at most one: the halved axis of a real plan, whose
        other Fourier axes are complex FFTs), ``"dct1"`` ... ``"dct4"``,
        ``"dst1"`` ... ``"dst4"`` (scipy's ``dct``/``dst`` of that type, with
        ``norm``). ``None`` (default): every axis ``"fft"`` (``"rfft"`` on the last
        for ``kind="r2c"``). :meth:`Plan.forward` is then each axis's transform,
        :meth:`Plan.backward` its inverse (scipy's ``idct``/``idst``); a plan whose
        axes are all real-to-real maps real arrays to real arrays (complex ones
        part by part). ``wavenumbers()`` gives each axis its own (Fourier, cosine or
        sine modes: :func:`pfft.plan_core.r2r_frequencies`). See ``docs/r2r.md``.
    orthogonalize
        scipy's ``orthogonalize`` for the real-to-real axes (default: ``norm ==
        "ortho"``).

    Returns
    -------
    Plan
        Cached: the same arguments return the same object.
    """
    promoted = real_without_kind(dtype, kind, kinds)
    kinds, kind, orthogonalize = check_plan_kinds(shape, axes, kind or "c2c", kinds,
                                                  orthogonalize, "plan")
    given = dtype
    shape, dtype, axes, norm, dealiased = plan_arguments(shape, dtype, axes, norm, kind,
                                                         spectrum, padding, "plan", kinds)
    if promoted:
        warn_real_without_kind(shape, given, dtype, "pfft.plan")
    check_tune(tune, "plan", in_sharding)
    mesh_shape = mesh_shape_of(mesh)
    layout = None
    if in_sharding is not None:
        layout = _layout_of_sharding(in_sharding, shape, mesh, mesh_shape)
    if tune is not None:
        if mesh is not None and mesh_shape:
            mesh = _tuned_mesh(shape, dtype, mesh, kind, axes, norm, spectrum, tune,
                               kinds, orthogonalize)
            mesh_shape = mesh_shape_of(mesh)
    if layout is None:
        layout = default_layout(shape, axes, mesh_shape)
    made = get_plan(shape, dtype, mesh, axes, norm, layout, kind=kind, spectrum=spectrum,
                    dealiased=dealiased, engine=engine, fuse_exchanges=fuse_exchanges,
                    kinds=kinds, orthogonalize=orthogonalize)
    if promoted:
        mark_promoted(made, given)
    return made


# -- a real dtype without kind: the complex plan, said (pfft.plan and pfft.mpi.plan) -----

def real_without_kind(dtype, kind, kinds) -> bool:
    """Whether a plan is asked for with a real (or integer, or bool) ``dtype`` and
    neither ``kind`` nor ``kinds``: it is then the complex ``fftn`` of real input.
    ``False`` for a bad dtype (:func:`pfft.plan_core.plan_arguments` reports it)."""
    if kind is not None or kinds is not None:
        return False
    try:
        return np.dtype(dtype).kind in "biuf"
    except TypeError:
        return False


def warn_real_without_kind(shape, given, dtype, where: str) -> None:
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


def mark_promoted(plan, given) -> None:
    """Let ``print(plan)`` say that it was asked for with the real dtype ``given`` and no
    ``kind`` (the plan is cached: the first such dtype stays)."""
    plan._promoted_from = getattr(plan, "_promoted_from", None) or np.dtype(given)


def _layout_of_sharding(in_sharding, shape, mesh, mesh_shape) -> Layout:
    """The layout ``in_sharding`` (a NamedSharding or PartitionSpec) gives ``shape``."""
    if isinstance(in_sharding, NamedSharding):
        if mesh is not None and in_sharding.mesh.shape != mesh.shape:
            raise ValueError("plan: in_sharding is on a different mesh than `mesh`")
        spec = in_sharding.spec
    else:
        spec = in_sharding
    names = mesh.axis_names if mesh is not None else ()
    return layout_of_spec(shape, spec, mesh_shape, names, "plan", even=True)


def _tuned_mesh(shape, dtype, mesh, kind, axes, norm, spectrum, mode, kinds, orthogonalize):
    """``mesh``'s devices on the grid wisdom prefers (tuning first for ``"measure"``)."""
    devices = list(mesh.devices.flat)
    problem = dict(kinds=kinds, orthogonalize=orthogonalize)
    entry = wisdom.lookup(shape, dtype, kind, axes, norm, devices, **problem)
    if entry is None and mode == "measure":
        tune(shape, dtype, devices, kind=kind, axes=axes, norm=norm, spectra=(spectrum,),
             **problem)
        entry = wisdom.lookup(shape, dtype, kind, axes, norm, devices, **problem)
    if entry is None:
        return mesh
    dims = tuple(entry["grid"])
    types = {jax.sharding.AxisType.Explicit: "explicit", jax.sharding.AxisType.Auto: "auto"}
    axis_types = types.get(tuple(mesh.axis_types)[0], "explicit")
    if tuple(s for s in mesh.devices.shape if s > 1) == tuple(s for s in dims if s > 1):
        return mesh
    return make_mesh(dims, devices, axis_types=axis_types)
