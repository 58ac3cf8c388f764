"""The plan core: what every plan is, whichever transport moves its data.

A plan on XLA's collectives (:class:`pfft.mesh_plan.Plan`, over a mesh inside
``shard_map``) and a plan on MPI (:class:`pfft.mpi.MPIPlan`, one rank's block) are
both a :class:`PlanCore`, made from one :class:`~pfft.problem.Problem`: one planner
call, one dtype rule, one scaling, the same dealiasing, frequencies, batching and
text form, and one immutable :class:`Transform` that pfft's primitive carries. A
transport's plan adds only where the blocks come from and go to, and how its arrays
are cut (JAX arrays evenly, MPI blocks balanced). Each transport caches its plans in
a :class:`PlanCache`, keyed on the problem and the place it runs on.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass, replace
from typing import Any, Callable, Protocol

import numpy as np

from .arguments import R2R_KINDS, norm_scale
from .autodiff import BACKWARD, FORWARD, Variant, apply
from .engines.r2r import scipy_op
from .executor import run_program
from .frequencies import axis_frequencies
from .layout import Layout, layout_from_spec
from .chain_search import Chain, build_chain
from .lru import LRUCache
from .memory import PlanMemory, measure
from .problem import Problem
from .program import Program, resolve
from .sharding import check_spec
from . import wisdom

__all__ = ["PlanCore", "PlanCache", "Placement", "Transform", "layout_of_spec", "boundary_dtype"]


def layout_of_spec(shape, spec, mesh_shape, axis_names, where: str, *,
                   even: bool) -> Layout:
    """The input layout a plan's ``in_sharding`` (a :class:`PartitionSpec`) gives
    ``shape`` over ``mesh_shape`` (``(name, size)`` pairs; ``axis_names``: all the
    mesh's), checked by :func:`pfft.sharding.check_spec` (``even``: refuse uneven
    splits, as JAX arrays are never split unevenly; MPI blocks may be)."""
    sizes = {m: 1 for m in axis_names} | dict(mesh_shape)
    check_spec(spec, shape, sizes, where, "in_sharding", even=even)
    return layout_from_spec(shape, spec, mesh_shape, axis_names, even=even)


def boundary_dtype(chain: Chain, dtype: np.dtype, *, first: bool) -> np.dtype:
    """dtype of ``chain``'s input (``first``) or output for a plan computing in the
    complex ``dtype``: real on the real side of a real transform."""
    real = chain.real_stage
    if real is None or real.to_complex != first:
        return np.dtype(dtype)
    return np.dtype(np.finfo(dtype).dtype)


class Placement(Protocol):
    """Where a plan's blocks live: what a plan on a mesh (:class:`pfft.mesh_plan.
    MeshPlacement`) and one on MPI ranks (:class:`pfft.mpi.rank_plan.RankPlacement`)
    do differently, as one object the plan core holds.

    Attributes
    ----------
    even_blocks
        Whether the arrays handed over are split evenly (JAX arrays: a chain ends
        in an even output); MPI ranks take balanced blocks.

    Methods
    -------
    bound(core)
        The placement for the plan ``core`` (its chain made): what it derives from
        the chain, such as a rank's blocks.
    entry(core, variant)
        The traced function of ``variant``: check, cast, place, ``core._apply``.
    place(core, x, variant)
        A concrete input put where ``entry``'s function takes it.
    abstract_input(core, variant)
        A ``jax.ShapeDtypeStruct`` of what ``entry``'s function takes.
    output_values(core, axis, values), on_output(core, fn, args)
        One axis's values held as the output is; ``fn`` of such values on the whole
        output (the wavenumbers and ``k2``).
    """

    even_blocks: bool

    def bound(self, core: "PlanCore") -> "Placement": ...

    def entry(self, core: "PlanCore", variant: Variant) -> Callable: ...

    def place(self, core: "PlanCore", x, variant: Variant): ...

    def abstract_input(self, core: "PlanCore", variant: Variant): ...

    def output_values(self, core: "PlanCore", axis: int, values: np.ndarray): ...

    def on_output(self, core: "PlanCore", fn, args): ...


@dataclass(frozen=True)
class Transform:
    """The linear map pfft's primitive applies: an immutable, hashable value.

    As ``lax.fft`` takes ``fft_type`` and ``fft_lengths``, the primitive takes this
    description, not the plan that made it: jit's caches then hold no plan, so a plan
    evicted from the plan cache is freed and the cache's bound bounds memory. Equal
    descriptions (the same chain, dtype, scaling, engine and transport) share
    compiled code.

    Attributes
    ----------
    chain
        The forward chain; variants with ``reverse`` run it backwards.
    dtype
        The dtype computed in: complex, or real for an all real-to-real plan.
    norm, size, dealias
        numpy's ``norm``, the number of points it scales by (Fourier axes only:
        real-to-real stages carry their own scaling), and the factor a
        dealiased forward rescales the finer grid's sums by (``N / M``).
    engine, transport
        The local FFT engine and the collectives (both hashable).
    mesh_axes
        The names of the mesh axes the plan distributes over (empty off
        ``shard_map``).
    effects
        JAX effects the transport's collectives carry (mpi4jax's ordered effect).
    overwrite_input
        The programs' first transform may write over the block it is given
        (scipy's ``overwrite_x``; :func:`pfft.program.resolve`).
    """

    chain: Chain
    dtype: np.dtype
    norm: str
    size: int
    dealias: float
    engine: Any
    transport: Any
    mesh_axes: frozenset = frozenset()
    effects: frozenset = frozenset()
    overwrite_input: bool = False

    @property
    def is_real(self) -> bool:
        return self.chain.real_stage is not None

    @functools.cached_property
    def _reversed(self) -> Chain:
        return self.chain.reversed()

    def chain_for(self, variant: Variant) -> Chain:
        """The chain ``variant`` runs (the forward one, or it backwards)."""
        return self._reversed if variant.reverse else self.chain

    @functools.cached_property
    def programs(self) -> dict[Variant, Program]:
        """The program of every variant the plan can run (:mod:`pfft.program`): the
        forward and inverse maps in either direction of the chain, and for a real
        plan their transposes' weighted ones. Resolved together, once."""
        variants = [Variant(reverse, inverse, weighted)
                    for reverse in (False, True) for inverse in (False, True)
                    for weighted in ((False, True) if self.is_real else (False,))]
        return {v: self._resolve(v) for v in variants}

    def _resolve(self, variant: Variant) -> Program:
        chain = self.chain_for(variant)
        return resolve(chain, inverse=variant.inverse, weighted=variant.weighted,
                       scale=self.scale(variant.inverse),
                       dtype=boundary_dtype(chain, self.dtype, first=True),
                       engine=self.engine, transport=self.transport,
                       overwrite_input=self.overwrite_input)

    def program(self, variant: Variant) -> Program:
        """What ``variant`` runs on a block (:attr:`programs`)."""
        return self.programs[variant]

    def scale(self, inverse: bool) -> float:
        """numpy's factor for the direction (the forward also undoes dealiasing's
        finer grid)."""
        scale = norm_scale(self.norm, inverse, self.size)
        return scale if inverse else scale * self.dealias

    # -- the interface of pfft.autodiff ------------------------------------------------
    def apply(self, block, variant: Variant):
        """Run ``variant``'s program on one device's (or rank's) padded ``block``."""
        return run_program(block, self.program(variant), self.transport)

    def out_type(self, aval, variant: Variant):
        """Local block shape and dtype of ``variant``'s output; the plan's mesh axes
        and those that split the output (what the block varies over)."""
        chain = self.chain_for(variant)
        want = (chain.in_layout.local_shape, boundary_dtype(chain, self.dtype, first=True))
        if (tuple(aval.shape), np.dtype(aval.dtype)) != want:
            raise ValueError(f"plan expects blocks {want[0]} {want[1]}, got "
                             f"{tuple(aval.shape)} {np.dtype(aval.dtype)}")
        split = chain.out_layout.used_mesh_axes if self.mesh_axes else frozenset()
        return (chain.out_layout.local_shape, boundary_dtype(chain, self.dtype, first=False),
                (self.mesh_axes, split))

    def batched(self, size: int) -> "Transform":
        """The same map on a batch of ``size`` blocks stacked in a new leading axis
        (its programs resolved for those blocks)."""
        return replace(self, chain=self.chain.with_leading_axis(size))


class PlanCore:
    """What every plan holds and does; a transport's plan subclasses it.

    Attributes
    ----------
    problem
        The :class:`~pfft.problem.Problem` the plan was made from (its input layout
        resolved); the attributes below read it.
    shape, dtype, axes, norm, kind, spectrum
        ``shape`` is the global input of :meth:`forward` (real for ``kind="r2c"``,
        the finer grid for ``padding > 1``), ``dtype`` the dtype computed in
        (complex; real for an all real-to-real plan of real data).
    kinds, orthogonalize
        ``None`` for an FFT plan; else the kind of each axis of ``axes``
        (``"fft"``, ``"rfft"``, ``"dct1"`` ... ``"dst4"``) and scipy's
        ``orthogonalize`` for the real-to-real ones.
    r2r
        ``{axis: R2R}``: the forward map of each real-to-real axis
        (:func:`pfft.engines.r2r.scipy_op`).
    real_dtype
        Its real counterpart.
    dealiased
        ``{axis: N}``: the spectral lengths dealiasing keeps.
    spectral_shape
        The shape of the spectral grid (``shape`` with dealiased axes at ``N``).
    size
        The number of points numpy's scaling counts.
    chain
        The planner's :class:`~pfft.chain_search.Chain`; ``print(plan)`` lists it.
    transform
        The :class:`Transform` the primitive applies.
    in_dtype, out_dtype
        dtypes of :meth:`forward`'s input and output.
    trace_count
        How often :meth:`forward`/:meth:`backward` were traced (a loop should not
        retrace).

    placement
        Where the blocks live (:class:`Placement`): what differs between a plan on a
        mesh and one on MPI ranks, bound to this plan.

    A transport's plan (:class:`pfft.mesh_plan.Plan`, :class:`pfft.mpi.MPIPlan`)
    gives its placement and adds its own attributes and ``__repr__`` (from
    :meth:`_headline` and :meth:`_stage_lines`).
    """

    def __init__(self, problem: Problem, *, placement: "Placement", engine, transport,
                 mesh_axes=frozenset(), effects=frozenset()):
        if problem.in_layout is None:
            raise ValueError("a plan is made from a problem with its input layout")
        self.problem = problem
        self.shape, self.dtype, self.axes = problem.shape, problem.dtype, problem.axes
        self.real_dtype = np.dtype(np.finfo(self.dtype).dtype)
        self.norm, self.kind, self.spectrum = problem.norm, problem.kind, problem.spectrum
        self.dealiased = dict(problem.dealiased)          # axis -> spectral length kept
        self.engine = engine
        self.kinds, self.orthogonalize = problem.kinds, problem.orthogonalize
        chain_axes, self.r2r = self.axes, {}
        if self.kinds is not None:
            # the halved axis last among the Fourier ones (the planner's rule), then
            # the real-to-real axes with their forward maps (scaling included)
            self.r2r = {a: scipy_op(k, self.shape[a], self.norm, self.orthogonalize)
                        for a, k in zip(self.axes, self.kinds) if k in R2R_KINDS}
            by_kind = dict(zip(self.axes, self.kinds))
            chain_axes = (tuple(a for a in self.axes if by_kind[a] == "fft")
                          + tuple(a for a in self.axes if by_kind[a] == "rfft")
                          + tuple(self.r2r))
        self.chain: Chain = build_chain(
            problem.in_layout, chain_axes, kind=self.kind, n=problem.n,
            dealiased=self.dealiased or None,
            even_output=placement.even_blocks and (self.spectrum == "numpy"
                                                   or self.kind == "c2r"),
            r2r=tuple(self.r2r.items()), prune=engine.prunes_dealiased)
        lengths = {a: self.shape[a] for a in self.axes if a not in self.r2r}
        real = self.chain.real_stage
        if real is not None:
            lengths[real.axis] = real.n
        kept = {a: self.dealiased.get(a, n) for a, n in lengths.items()}
        # numpy's scaling for the spectral grid; the forward also rescales the sums
        # of the finer (padded) grid to the spectral grid's: (N / M) per axis
        self.spectral_shape = tuple(kept.get(a, n) for a, n in enumerate(self.shape))
        self.size = math.prod(kept.values())          # Fourier axes (r2r ones scale themselves)
        self.transform = Transform(self.chain, self.dtype, self.norm, self.size,
                                   math.prod(kept.values()) / math.prod(lengths.values()),
                                   engine, transport, frozenset(mesh_axes), frozenset(effects),
                                   problem.overwrite_x)
        self.programs = self.transform.programs        # every variant's, resolved now
        self.trace_count = 0
        self._jitted: dict[Variant, Callable] = {}
        self._memory: PlanMemory | None = None
        self.placement = placement.bound(self)

    @property
    def is_real(self) -> bool:
        return self.kind != "c2c"

    def _chain(self, variant: Variant) -> Chain:
        return self.transform.chain_for(variant)

    def _dtype_at(self, chain: Chain, first: bool) -> np.dtype:
        return boundary_dtype(chain, self.dtype, first=first)

    @property
    def in_dtype(self) -> np.dtype:
        """dtype of :meth:`forward`'s input (and :meth:`backward`'s output)."""
        return self._dtype_at(self.chain, first=True)

    @property
    def out_dtype(self) -> np.dtype:
        """dtype of :meth:`forward`'s output (and :meth:`backward`'s input)."""
        return self._dtype_at(self.chain, first=False)

    # -- execution -------------------------------------------------------------------
    def forward(self, x):
        """numpy's ``fftn`` (``rfftn`` for a real plan) over :attr:`axes`.

        Jittable and differentiable (``grad``, ``vjp``, ``jvp``, ``vmap``); the
        transport's plan says where the input and output live.
        """
        return self.run(x, FORWARD)

    def backward(self, y):
        """numpy's ``ifftn`` (``irfftn``), the inverse of :meth:`forward`: the chain
        run backwards, :meth:`forward`'s output in, its input out."""
        return self.run(y, BACKWARD)

    def run(self, x, variant: Variant):
        """Run ``variant`` of the plan on ``x``: :meth:`forward` is ``run(x, FORWARD)``,
        :meth:`backward` ``run(y, BACKWARD)``; an inverse transform may also run the
        chain forwards with the inverse sign (``Variant(reverse=False,
        inverse=True)``), from the layout its input is in (:mod:`pfft.inverse`)."""
        fn = self._jitted_for(variant)
        return fn(self._place(x, variant))

    def _jitted_for(self, variant: Variant) -> Callable:
        import jax

        if variant not in self._jitted:
            self._jitted[variant] = jax.jit(self._entry(variant))
        return self._jitted[variant]

    def _apply(self, block, variant: Variant):
        """The primitive on a (padded) block: what :meth:`_entry` calls."""
        return apply(block, self.transform, variant)

    def _place(self, x, variant: Variant):
        return self.placement.place(self, x, variant)

    def _entry(self, variant: Variant) -> Callable:
        """The traced function of ``variant``: the placement's check, cast and
        placing around :meth:`_apply`."""
        return self.placement.entry(self, variant)

    def _abstract_input(self, variant: Variant):
        """A ``jax.ShapeDtypeStruct`` of what :meth:`_entry`'s function takes."""
        return self.placement.abstract_input(self, variant)

    def memory(self) -> "PlanMemory":
        """What :meth:`forward` and :meth:`backward` hold on one device, from their
        compiled programs (compiled once, on first call): argument, output and
        temporaries in bytes and in blocks of the forward input, with the input kept
        and donated, and the FFT work area among the temporaries
        (:class:`pfft.memory.PlanMemory`; ``print`` it for a table).
        ``plan.memory().peak`` is the most bytes a device needs for the plan."""
        if self._memory is None:
            traced = self.trace_count            # compiling to measure is not a use
            self._memory = measure(self, (FORWARD, BACKWARD))
            self.trace_count = traced
        return self._memory

    def fft_engines(self) -> list[str] | None:
        """For a plan whose engine chooses per transform (``engine="auto"`` on GPUs):
        the engine ("xla" or "native") each FFT step of :meth:`forward`'s program
        runs, in order; else None."""
        if not hasattr(self.engine, "choose"):
            return None
        return self.programs[FORWARD].engines()

    # -- wavenumbers -------------------------------------------------------------------
    def _frequencies(self, d, angular: bool) -> list[tuple[int, np.ndarray]]:
        """``(axis, values)`` for each transformed axis in increasing order: numpy's
        frequencies of :meth:`forward`'s output along it, zero-padded to the
        output's padded length."""
        if self.kind == "c2r":
            raise ValueError("wavenumbers: a c2r plan has no spectrum output")
        spacing = np.broadcast_to(np.asarray(d, dtype=float), (len(self.axes),))
        out = self.chain.out_layout
        real = self.chain.real_stage
        result = []
        for a in sorted(self.axes):
            step = float(spacing[self.axes.index(a)])
            n = self.spectral_shape[a]
            kind = (self.r2r[a].kind if a in self.r2r
                    else "rfft" if real and a == real.axis else "fft")
            freq = axis_frequencies(kind, n, step)
            if angular:
                freq = 2 * np.pi * freq
            values = np.zeros(out.padded_shape[a], dtype=self.real_dtype)
            values[:freq.size] = freq
            result.append((a, values))
        return result

    def wavenumbers(self, d: float = 1.0, *, angular: bool = False) -> tuple:
        """Frequencies of :meth:`forward`'s output, one broadcastable array per axis.

        Parameters
        ----------
        d
            Sample spacing: a number, or one per transformed axis in the order of
            :attr:`axes` (as ``s`` pairs with ``axes``; the arrays returned are in
            increasing axis order).
        angular
            ``2 pi`` times the frequency (radians per unit) instead of cycles per unit.

        Returns
        -------
        tuple of jax.Array
            For each transformed axis in increasing order, an array with the output's
            length along that axis (this rank's block of it, on MPI) and size one
            elsewhere, held like the output along it: ``numpy.fft.fftfreq`` values
            (``rfftfreq`` on the halved axis of a real plan; on a real-to-real axis
            the wavenumber of each cosine or sine mode, :func:`pfft.r2rfreq`).
            Padding positions of a ``spectrum="padded"`` plan hold 0.

        Notes
        -----
        Call it inside the jitted function that uses it (it costs a few small
        constants there) rather than closing over its result: across processes
        (``jax.distributed``) the arrays are global, and ``jit`` refuses to close over
        arrays that other processes hold part of.
        """
        return tuple(self.placement.output_values(self, a, values)
                     for a, values in self._frequencies(d, angular))

    def k2(self, d: float = 1.0, *, angular: bool = False):
        """``|k|^2`` on :meth:`forward`'s output grid, held like the output."""
        return self.placement.on_output(
            self, lambda *ks: functools.reduce(lambda s, k: s + k * k, ks[1:], ks[0] * ks[0]),
            self.wavenumbers(d, angular=angular))

    def kabs(self, d: float = 1.0, *, angular: bool = False):
        """``|k|`` on :meth:`forward`'s output grid, held like the output."""
        import jax.numpy as jnp

        return jnp.sqrt(self.k2(d, angular=angular))

    # -- description -----------------------------------------------------------------
    def _stage_lines(self) -> list[str]:
        """The forward program, one step a line (what :meth:`forward` runs), between the
        chain's input and output layouts."""
        chain = self.chain
        lines = [f"  in : {chain.in_layout}"]
        lines += [f"  {i}. {line}" for i, line in enumerate(self.programs[FORWARD].lines(), 1)]
        lines.append(f"  out: {chain.out_layout}")
        return lines

    def _headline(self, name: str, grid: str) -> str:
        what = {"c2c": "fftn", "r2c": "rfftn", "c2r": "irfftn"}[self.kind]
        extra = ", spectrum='padded'" if self.spectrum == "padded" else ""
        if self.kinds is not None:
            what = "r2r" if len(self.r2r) == len(self.axes) else "mixed"
            extra += f", kinds={self.kinds}"
            if self.orthogonalize is not None:
                extra += f", orthogonalize={self.orthogonalize}"
        if self.dealiased:
            extra += f", dealiased to {self.spectral_shape}"
        extra += f", engine {self.engine.name}"
        dtype = self.dtype.name
        promoted = self.problem.promoted_from       # pfft.plan given a real dtype
        if promoted is not None and self.kind == "c2c":
            dtype += (f" (planned for {promoted.name} without kind=: the complex fftn of "
                      f"real input; kind=\"r2c\" plans rfftn)")
        return (f"{name}({what} {self.shape} {dtype}, axes={self.axes}, "
                f"norm={self.norm!r}{extra}, {grid})")


class PlanCache(LRUCache):
    """A transport's plan cache: one plan per problem and place (a mesh, or an MPI
    process grid), made on first use; at most ``maxsize`` plans, the least recently
    used going first. Thread-safe.

    A plan's programs read the FFT steps' wisdom when it is made (``engine="auto"``
    on GPUs, :func:`pfft.wisdom.stage_choices`), so the key holds that wisdom's
    generation too: a plan made before the wisdom changed is not handed out after."""

    def plan(self, problem: Problem, place, make: Callable) -> PlanCore:
        """The plan cached for ``problem`` on ``place`` (the key: the two side by
        side, and :func:`pfft.wisdom.stage_generation`), made by ``make(problem,
        place)`` on a miss."""
        key = (problem, place, wisdom.stage_generation())
        return self.get_or_make(key, lambda: make(problem, place))
