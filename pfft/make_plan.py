"""``pfft.plan``: the front door to plans.

Check a plan's arguments into its :class:`~pfft.problem.Problem`
(:mod:`pfft.front_door`, as ``pfft.mpi.plan`` does), place its grid (the mesh as
given, or the grid that wisdom or tuning now prefers, ``tune=``), and fetch the
cached :class:`~pfft.mesh_plan.Plan`.
It sits above :mod:`pfft.tuning` (``tune="measure"`` tunes first), which sits above
the plans themselves (:mod:`pfft.mesh_plan`) and the wisdom store (:mod:`pfft.wisdom`).
"""
from __future__ import annotations

import functools
from dataclasses import replace
from typing import Sequence

import jax

from .arguments import check_tune
from .front_door import PlanArguments, preferred_grid
from .plan_core import layout_of_spec
from .grid import make_mesh, mesh_shape_of
from .layout import Layout
from .mesh_plan import Plan, get_plan
from .problem import Problem
from .sharding import check_mesh, check_sharding
from .tuning import tune

__all__ = ["plan"]


def plan(shape, dtype, mesh=None, *, axes=None, norm: str = "backward",
         in_sharding=None, kind: str | None = None, spectrum: str = "numpy",
         padding: float = 1.0, tune: str | None = None, engine: str | None = None,
         fuse_exchanges: bool | str = "auto", kinds: Sequence[str] | None = None,
         orthogonalize: bool | None = None, overwrite_x: bool = False) -> Plan:
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
        when there is no wisdom yet (on one device, where there is no grid to choose,
        that times its FFT steps' engines on GPUs: :func:`pfft.tune`). The plan's mesh
        then has that grid (same devices and axis types); place inputs with
        ``plan.in_sharding``.

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
        sine modes: :func:`pfft.r2rfreq`). See ``docs/r2r.md``.
    orthogonalize
        scipy's ``orthogonalize`` for the real-to-real axes (default: ``norm ==
        "ortho"``).
    overwrite_x
        scipy's ``overwrite_x``: ``True`` lets the transforms write over their input.
        Called under ``jax.jit(..., donate_argnums=0)`` (or on an array the program
        made), the first transform then runs in the input's buffer (pfft's native
        kernels; XLA's own FFT decides for itself): a block less
        (one device: 1 block instead of 2; :meth:`Plan.memory`), and faster. An input
        the caller keeps is copied first instead: the same memory as without, and
        slower by that copy (``docs/memory.md``). The values are the same either way.
        Part of the plan's cache key.

    Returns
    -------
    Plan
        Cached: the same arguments return the same object.
    """
    problem = PlanArguments(shape, dtype, axes, norm, kind, spectrum, padding, engine,
                            fuse_exchanges, kinds, orthogonalize, overwrite_x).problem("plan")
    check_tune(tune, "plan", in_sharding)
    check_mesh(mesh, "plan")
    if in_sharding is not None:
        problem = replace(problem, in_layout=_layout_of_sharding(in_sharding, problem.shape,
                                                                 mesh))
    if tune is not None and mesh is not None and mesh_shape_of(mesh):
        mesh = _tuned_mesh(problem, mesh, tune)
    elif tune == "measure":                 # one device: no grid to choose, its FFT steps
        _tune_one_device(problem, mesh)
    return get_plan(problem, mesh)


def _layout_of_sharding(in_sharding, shape, mesh) -> Layout:
    """The layout ``in_sharding`` (a NamedSharding or PartitionSpec, checked against
    ``mesh`` by :func:`pfft.sharding.check_sharding`) gives ``shape``."""
    target = check_sharding(in_sharding, shape, mesh, "plan", "in_sharding")
    spec = target.spec if target is not None else in_sharding
    names = mesh.axis_names if mesh is not None else ()
    return layout_of_spec(shape, spec, mesh_shape_of(mesh), names, "plan", even=True)


def _tune_one_device(problem: Problem, mesh) -> None:
    """Tune ``problem`` on the one device ``mesh`` has (or the default device) where
    wisdom holds nothing for it yet: on GPUs its FFT steps' engines, which the plan
    made next takes (:func:`pfft.tune`)."""
    devices = list(mesh.devices.flat)[:1] if mesh is not None else jax.devices()[:1]
    preferred_grid(problem, devices, "xla",
                   functools.partial(tune, devices_or_mesh=devices, progress=False))


def _tuned_mesh(problem: Problem, mesh, mode: str):
    """``mesh``'s devices on the grid wisdom prefers (tuning first for ``"measure"``)."""
    devices = list(mesh.devices.flat)
    measure = functools.partial(tune, devices_or_mesh=devices) if mode == "measure" else None
    dims = preferred_grid(problem, devices, "xla", measure)
    if dims is None:
        return mesh
    types = {jax.sharding.AxisType.Explicit: "explicit", jax.sharding.AxisType.Auto: "auto"}
    axis_types = types.get(tuple(mesh.axis_types)[0], "explicit")
    if tuple(s for s in mesh.devices.shape if s > 1) == tuple(s for s in dims if s > 1):
        return mesh
    return make_mesh(dims, devices, axis_types=axis_types)
