"""Plans: a stage chain compiled for one problem on one mesh, and their cache.

Plan once (cheap here, but compilation is not), execute many times: :func:`get_plan`
(behind ``pfft.plan``, :mod:`pfft.make_plan`, and every transform) returns the same
:class:`Plan` object for the same :class:`~pfft.problem.Problem` and mesh, and each
plan holds its jitted functions, so a simulation's loop never replans nor retraces.
"""
from __future__ import annotations

import functools
import math
import warnings
from dataclasses import dataclass, replace
from typing import Any, Callable

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from .arguments import NORMS, SPECTRA, check_cast
from .autodiff import (BACKWARD, FORWARD, Variant, caller_stacklevel,
                       explain_mesh_context_errors, warn_if_differentiated_outside_mesh)
from .plan_core import PlanCache, PlanCore
from .engines.choice import engine_for_plan
from .grid import mesh_shape_of
from .hlo import count_collectives
from .layout import default_layout
from .forward_record import FORWARDS
from .problem import Problem
from .sharding import is_tracer, place
from .stages import Gather
from .transports import xla as xla_transport

__all__ = ["Plan", "get_plan", "clear_plan_cache", "plan_cache_info", "set_plan_cache_size",
           "NORMS", "SPECTRA", "ReplicationWarning"]


class ReplicationWarning(UserWarning):
    """A plan leaves devices repeating each other's work: no axis of the array can be
    split evenly over some mesh axis (sizes too small or indivisible)."""


@dataclass(frozen=True)
class MeshPlacement:
    """Where a mesh plan's blocks live (:class:`pfft.plan_core.Placement`): JAX arrays
    split evenly over ``mesh`` (its axes ``mesh_shape``), each device's block
    transformed inside ``shard_map``; without a mesh, or with no axis distributed,
    one device's whole array."""

    mesh: Any
    mesh_shape: tuple

    even_blocks = True          # JAX splits arrays evenly: uneven axes are padded

    @property
    def distributed(self) -> bool:
        return self.mesh is not None and bool(self.mesh_shape)

    def bound(self, core: PlanCore) -> "MeshPlacement":
        return self

    def place(self, core: PlanCore, x, variant: Variant):
        """A concrete input put where ``variant``'s chain takes it. A forward call is
        noted (:data:`pfft.forward_record.FORWARDS`): an inverse that cannot see where
        its input is looks there."""
        if variant == FORWARD:
            FORWARDS.record(core)
        if self.distributed:
            warn_if_differentiated_outside_mesh(x)
        if self.distributed and not is_tracer(x):
            x = place(x, core._chain(variant).in_layout.sharding(self.mesh))
        return x

    def abstract_input(self, core: PlanCore, variant: Variant) -> jax.ShapeDtypeStruct:
        chain = core._chain(variant)
        return jax.ShapeDtypeStruct(chain.in_layout.padded_shape,
                                    core._dtype_at(chain, first=True),
                                    sharding=chain.in_layout.sharding(self.mesh)
                                    if self.distributed else None)

    def entry(self, core: PlanCore, variant: Variant) -> Callable:
        """The traced function behind :meth:`Plan.forward` and friends: check, cast,
        place, apply."""
        chain = core._chain(variant)
        want = core._dtype_at(chain, first=True)

        def local(block):
            return core._apply(block, variant)

        def run(x):
            core.trace_count += 1
            if tuple(x.shape) != chain.in_layout.padded_shape:
                raise ValueError(f"plan for input shape {chain.in_layout.padded_shape} called on an "
                                 f"array of shape {tuple(x.shape)}")
            check_cast(x.dtype, want, "plan")
            x = x.astype(want)
            if not self.distributed:                     # one device: a plain local FFT
                return local(x)
            if x.size == 0:
                # an empty batch: nothing to transform, and JAX cannot read back a
                # zero-size array sharded over the mesh (its blocks come out whole)
                return jnp.zeros(chain.out_layout.padded_shape,
                                 core._dtype_at(chain, first=False))
            x = place(x, chain.in_layout.sharding(self.mesh))
            return jax.shard_map(local, mesh=self.mesh, in_specs=chain.in_layout.spec,
                                 out_specs=chain.out_layout.spec)(x)
        return run

    def output_values(self, core: PlanCore, axis: int, values: np.ndarray) -> jax.Array:
        """``values`` along ``axis`` of the output (size one elsewhere), sharded as
        the output is along it."""
        shape = [1] * len(core.shape)
        shape[axis] = values.size
        values = values.reshape(shape)
        if not self.distributed:
            return jnp.asarray(values)
        split = [None] * len(shape)
        split[axis] = core.chain.out_layout.split[axis]
        return place(values, NamedSharding(self.mesh, PartitionSpec(*split)))

    def on_output(self, core: PlanCore, fn, args) -> jax.Array:
        """``fn(*args)`` broadcast over the whole output, sharded as it is."""
        out_sharding = (None if self.mesh is None
                        else core.chain.out_layout.sharding(self.mesh))
        out_shape = core.chain.out_layout.padded_shape

        @functools.partial(jax.jit, out_shardings=out_sharding)
        def whole(*args):
            return fn(*args) * jnp.ones(out_shape, core.real_dtype)
        return whole(*args)


class Plan(PlanCore):
    """A distributed FFT over fixed shape, dtype, mesh, axes, norm and input layout,
    on XLA's collectives (inside ``shard_map``).

    Attributes
    ----------
    shape, dtype, mesh, axes, norm
        What the plan transforms: ``shape`` is the input of :meth:`forward` (real
        for a real plan), ``dtype`` the complex dtype it computes in.
    kind
        ``"c2c"``, ``"r2c"`` (:meth:`forward` is ``rfftn``, :meth:`backward`
        ``irfftn``) or ``"c2r"`` (internal: ``irfftn`` from a spectrum's layout).
    kinds, orthogonalize
        Per-axis kinds of a real-to-real or mixed plan (``None`` for an FFT plan),
        and scipy's ``orthogonalize``; see :func:`pfft.plan`.
    spectrum
        ``"numpy"``: the output has numpy's shape and is evenly sharded;
        ``"padded"`` (real plans): the output stays in the pencil the chain ends in,
        each unevenly split axis (the halved one, and any the grid does not divide)
        zero-padded to a multiple of its devices (saves an all-to-all).
    mesh_shape
        ``(mesh axis, size)`` pairs the plan distributes over
        (:func:`pfft.grid.mesh_shape_of`).
    chain
        The :class:`~pfft.chain_search.Chain` of stages; ``print(plan)`` lists them.
    in_sharding, out_sharding
        Where :meth:`forward` takes its input and leaves its output
        (:meth:`backward` the reverse). ``None`` for a plan without a mesh.
    in_shape, out_shape
        Global shapes of :meth:`forward`'s input and output (``out_shape`` is
        padded for ``spectrum="padded"``).

    The rest (``problem``, ``dealiased``, ``spectral_shape``, ``wavenumbers``, ``k2``,
    ``kabs``, ``trace_count``) is the plan core's, the same on MPI
    (:class:`pfft.plan_core.PlanCore`).

    Examples
    --------
    >>> plan = pfft.plan((64, 64, 64), "complex64", pfft.make_mesh(4))  # doctest: +SKIP
    >>> k = plan.forward(x)                                             # doctest: +SKIP
    >>> x2 = plan.backward(k)                                           # doctest: +SKIP
    """

    def __init__(self, problem: Problem, mesh):
        self.mesh = mesh
        self.mesh_shape = problem.in_layout.mesh_shape
        devices = _devices_of(mesh)
        super().__init__(problem, placement=MeshPlacement(mesh, self.mesh_shape),
                         engine=engine_for_plan(problem.engine, devices, problem.fuse_exchanges),
                         transport=xla_transport,
                         mesh_axes=frozenset(m for m, _ in self.mesh_shape))
        self.in_shape = self.chain.in_layout.padded_shape
        self.out_shape = self.chain.out_layout.padded_shape
        self.in_sharding = None if mesh is None else problem.in_layout.sharding(mesh)
        self.out_sharding = None if mesh is None else self.chain.out_layout.sharding(mesh)
        self._collectives: dict[bool, dict[str, int]] = {}
        _warn_if_replicated(self)

    # -- execution -------------------------------------------------------------------
    def run(self, x, variant: Variant):
        with explain_mesh_context_errors():
            return super().run(x, variant)

    run.__doc__ = PlanCore.run.__doc__

    def collectives(self, *, reverse: bool = False) -> dict[str, int]:
        """The collectives :meth:`forward` (``reverse``: :meth:`backward`) compiles to.

        Read from the compiled HLO of the plan's own jitted call (compiled once per
        direction): keys are HLO op names, ``"all-to-all"``, ``"collective-permute"``
        (the shifts an exchange becomes when the native CPU engine packs its pieces,
        ``p - 1`` per exchange over ``p`` devices; see :mod:`pfft.pieces`),
        ``"all-gather"``, ``"all-reduce"`` and ``"reduce-scatter"``.
        """
        if reverse not in self._collectives:
            variant = BACKWARD if reverse else FORWARD
            text = self._jitted_for(variant).lower(self._abstract_input(variant)).compile().as_text()
            self._collectives[reverse] = count_collectives(text)
        return dict(self._collectives[reverse])

    # -- description -----------------------------------------------------------------
    def __repr__(self) -> str:
        grid = "x".join(str(s) for _, s in self.mesh_shape) or "1"
        names = ",".join(m for m, _ in self.mesh_shape)
        head = self._headline("Plan", f"grid {grid}" + (f" ({names})" if names else ""))
        return "\n".join([head] + self._stage_lines())


def _devices_of(mesh) -> list | None:
    """The devices a plan's engine is chosen for (their platform) and shares the cores
    among (those of this process): the mesh's own, or for an abstract mesh (a plan made
    under ``jit``, where the mesh's devices are not known) as many of this process's
    devices of its platform as it has per process. ``None`` without a mesh."""
    if mesh is None:
        return None
    if isinstance(mesh, Mesh):
        return list(mesh.devices.flat)
    platform = getattr(getattr(mesh, "abstract_device", None), "platform", None)
    if platform is None:                     # pragma: no cover - other jax versions
        return None
    per_process = max(1, math.prod(mesh.shape.values()) // jax.process_count())
    return jax.local_devices(backend=platform)[:per_process]


def _warn_if_replicated(plan: "Plan") -> None:
    """Warn (once per plan: plans are cached) where devices would repeat work."""
    chain = plan.chain
    # the mesh axes idle from start to end (one all-gathered on the way is the gathers')
    idle = tuple(m for m in chain.out_layout.unused_mesh_axes
                 if m in chain.in_layout.unused_mesh_axes)
    gathers = [st for st in chain.stages if isinstance(st, Gather)]
    if idle:
        also = (f" The plan also all-gathers {len(gathers)} time(s), as no even layout is left "
                f"for the dimensions the other mesh axes split." if gathers else "")
        warnings.warn(f"pfft: a plan for shape {plan.shape} on grid {dict(plan.mesh_shape)} repeats "
                      f"work across devices: "
                      f"{idle_mesh_axes_text(plan.shape, plan.mesh_shape, idle)}{also}",
                      ReplicationWarning,
                      stacklevel=caller_stacklevel())
    elif gathers:
        warnings.warn(f"pfft: a plan for shape {plan.shape} on grid {dict(plan.mesh_shape)} repeats "
                      f"work across devices: {len(gathers)} all-gather(s), as no even layout is "
                      f"left for the dimensions the mesh splits. Use dimensions that the mesh "
                      f"axes' sizes divide, or a smaller mesh.", ReplicationWarning,
                      stacklevel=caller_stacklevel())


def idle_mesh_axes_text(shape, mesh_shape, idle) -> str:
    """What a :class:`ReplicationWarning` says of the mesh axes ``idle`` that split no
    dimension of an array of ``shape`` on a grid of ``mesh_shape`` (``(name, size)``
    pairs), why, and what to do about it (``pfft.device_put`` says it too).

    Three cases, each said as it is: another layout splits the array over every mesh
    axis (:func:`pfft.layout.default_layout`'s, named; only a plan from another
    layout can be here); no dimension's length is a multiple of the idle axes'
    devices; or some are, but no layout shares the array out over all the mesh's
    devices at once."""
    shape = tuple(shape)
    sizes = dict(mesh_shape)
    one = len(idle) == 1
    names = " and ".join(f"{m!r} ({sizes[m]} devices)" for m in idle)
    devices = math.prod(sizes[m] for m in idle)
    head = (f"mesh {'axis' if one else 'axes'} {names} split{'s' if one else ''} no dimension "
            f"of the array {shape}")
    repeats = "so they hold the same data and each repeats the others' work"
    everywhere = default_layout(shape, tuple(range(len(shape))), tuple(mesh_shape))
    if not everywhere.unused_mesh_axes:
        spec = f"P({', '.join(repr(entry) for entry in everywhere.split)})"
        return (f"{head} in this layout, {repeats}; {spec} splits it over all "
                f"{math.prod(sizes.values())} devices: start from that layout "
                f"(pfft.device_put puts arrays there).")
    used = [(m, s) for m, s in mesh_shape if m not in idle]
    smaller = (f"a mesh without {' and '.join(repr(m) for m in idle)} "
               f"(pfft.make_mesh({tuple(s for _, s in used)!r}), "
               f"{math.prod(s for _, s in used)} devices)" if used
               else "no mesh (mesh=None: one device)")
    if not any(n % sizes[m] == 0 for m in idle for n in shape):
        besides = (f" (besides the split over {' and '.join(repr(m) for m, _ in used)})"
                   if used else "")
        divisors = " or ".join(sorted({str(sizes[m]) for m in idle}))
        return (f"{head}: no dimension's length can be shared out evenly among "
                f"{'its' if one else 'their'} {devices} devices{besides}, {repeats}. Use an "
                f"array with a dimension that {divisors} divides, or {smaller}.")
    every = " and ".join(str(s) for _, s in mesh_shape)
    return (f"{head}: no layout shares the array out evenly over all "
            f"{math.prod(sizes.values())} devices of the mesh, {repeats}. Use an array "
            f"with a dimension that "
            f"{math.prod(sizes.values())} divides or dimensions that {every} divide, one "
            f"each, or {smaller}.")


_CACHE = PlanCache(256)


def plan_cache_info() -> dict:
    """Hits, misses, current size and maximum size of the plan cache."""
    return _CACHE.info()


def set_plan_cache_size(maxsize: int) -> None:
    """Bound the plan cache to ``maxsize`` plans (least recently used go first)."""
    if not isinstance(maxsize, int) or maxsize < 1:
        raise ValueError(f"set_plan_cache_size: maxsize must be a positive int, got {maxsize!r}")
    _CACHE.resize(maxsize)


def clear_plan_cache() -> None:
    """Forget every cached plan (and which plan last produced which output)."""
    _CACHE.clear()
    FORWARDS.clear()




def get_plan(problem: Problem, mesh) -> Plan:
    """The cached plan of ``problem`` on ``mesh`` (made on first use); a problem
    without an input layout starts in the mesh's default pencil
    (:func:`pfft.layout.default_layout`)."""
    if problem.in_layout is None:
        problem = replace(problem, in_layout=default_layout(problem.shape, problem.axes,
                                                            mesh_shape_of(mesh)))
    return _CACHE.plan(problem, mesh, Plan)
