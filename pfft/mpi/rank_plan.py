"""MPI plans: the plan core's chain run by each rank on its own block, over MPI.

A :class:`MPIPlan` is a :class:`pfft.plan_core.PlanCore`, as :class:`pfft.Plan` is: the
same argument checks, planner, executor, engines, scaling, dealiasing and
frequencies, run on one rank's block with the MPI transport instead of inside
``shard_map``. Blocks are numpy-ordered local arrays: the rank's *true* part of the
global array, never padded, cut as mpi4py-fft and FFTW-MPI cut (balanced: 9 points
over 4 ranks are 3, 2, 2, 2; :func:`pfft.layout.block_bounds`). The plan pads them to
the chain's block size before its primitive and crops after, with ``jnp`` (so
autodiff sees plain pads and slices).
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable

import jax
import jax.numpy as jnp
import numpy as np

from ..arguments import check_cast
from ..autodiff import Variant
from ..plan_core import PlanCache, PlanCore
from ..engines.choice import engine_for_plan
from ..layout import Layout
from ..problem import Problem
from .grid import ProcessGrid

__all__ = ["MPIPlan", "get_plan", "mpi_layout", "clear_plan_cache", "plan_cache_info"]


def mpi_layout(shape, axes, mesh_shape) -> Layout:
    """The input layout of an MPI plan: the last transformed axis whole, the grid's
    first axis splitting the first transformed axis, its second the next.

    Like :func:`pfft.layout.default_layout`, except that an axis the grid axis does not
    divide may still be split (unevenly, in balanced blocks): MPI ranks hold uneven
    blocks, JAX arrays cannot. A mesh axis prefers an axis it divides, then any axis at
    least as long as the grid axis; if none is, the data is replicated over it.
    """
    shape, axes = tuple(shape), tuple(axes)
    candidates = list(axes[:-1]) + [a for a in range(len(shape)) if a not in axes]
    split: list[str | None] = [None] * len(shape)
    for mesh_axis, size in mesh_shape:
        free = [a for a in candidates if split[a] is None]
        pick = next((a for a in free if shape[a] % size == 0), None)
        if pick is None:
            pick = next((a for a in free if shape[a] >= size), None)
        if pick is not None:
            split[pick] = mesh_axis
    return Layout(shape, tuple(split), tuple(mesh_shape), balanced=True)


def _block_slices(layout: Layout, coords: dict) -> tuple[slice, ...]:
    """This rank's block of ``layout`` in global indices (``coords``: the rank's place
    along each mesh axis name or group of names)."""
    out = []
    for a, entry in enumerate(layout.split):
        if entry is None:
            out.append(slice(0, layout.shape[a]))
            continue
        out.append(slice(*layout.block_bounds(a, coords[entry])))
    return tuple(out)


def _extent(slices) -> tuple[int, ...]:
    return tuple(s.stop - s.start for s in slices)


@dataclass(frozen=True)
class RankPlacement:
    """Where an MPI plan's blocks live (:class:`pfft.plan_core.Placement`): this rank's
    balanced block of each array of ``grid`` (uneven blocks are fine: no all-to-all
    needs them even), padded to the chain's block inside, cropped after. Bound to a
    plan (:meth:`bound`), it holds the rank's block of the input and the output, in
    global index terms (``in_slices``, ``out_slices``) and their shapes."""

    grid: ProcessGrid
    in_slices: tuple = ()
    out_slices: tuple = ()
    in_shape: tuple = ()
    out_shape: tuple = ()

    even_blocks = False

    def bound(self, core: PlanCore) -> "RankPlacement":
        out = core.chain.out_layout
        coords = {**self.grid.coords, **self.grid.transport.coords}
        in_slices = _block_slices(core.chain.in_layout, coords)
        out_slices = _block_slices(out, coords)
        out_shape = out.local_shape if core.spectrum == "padded" else _extent(out_slices)
        return replace(self, in_slices=in_slices, out_slices=out_slices,
                       in_shape=_extent(in_slices), out_shape=out_shape)

    def place(self, core: PlanCore, x, variant: Variant):
        return x

    def abstract_input(self, core: PlanCore, variant: Variant) -> jax.ShapeDtypeStruct:
        shape = self.out_shape if variant.reverse else self.in_shape
        return jax.ShapeDtypeStruct(shape, core._dtype_at(core._chain(variant), first=True))

    def entry(self, core: PlanCore, variant: Variant) -> Callable:
        """The traced function: check, cast, pad to the chain's block, apply, crop.

        Collective: every rank of the grid must call the plan's :meth:`forward` and
        :meth:`backward` in the same order as its other MPI operations.
        """
        chain = core._chain(variant)
        true_in, true_out = ((self.out_shape, self.in_shape) if variant.reverse
                             else (self.in_shape, self.out_shape))
        want = core._dtype_at(chain, first=True)
        block = chain.in_layout.local_shape

        def run(x):
            core.trace_count += 1
            x = jnp.asarray(x)
            if tuple(x.shape) != true_in:
                raise ValueError(f"MPI plan on rank {self.grid.rank} expects a block of shape "
                                 f"{true_in}, got {tuple(x.shape)}")
            check_cast(x.dtype, want, "MPI plan")
            x = x.astype(want)
            if tuple(x.shape) != block:
                x = jnp.pad(x, [(0, b - n) for n, b in zip(x.shape, block)])
            y = core._apply(x, variant)
            if tuple(y.shape) != true_out:
                y = y[tuple(slice(0, n) for n in true_out)]
            return y
        return run

    def output_values(self, core: PlanCore, axis: int, values: np.ndarray) -> jax.Array:
        """This rank's part of ``values`` along ``axis`` of the output (size one
        elsewhere), padded as the output block is."""
        part = values[self.out_slices[axis]]
        part = np.pad(part, (0, self.out_shape[axis] - part.size))
        shape = [1] * len(core.shape)
        shape[axis] = part.size
        return jnp.asarray(part.reshape(shape))

    def on_output(self, core: PlanCore, fn, args) -> jax.Array:
        """``fn(*args)`` broadcast over this rank's output block."""
        return jax.jit(fn)(*args) * jnp.ones(self.out_shape, core.real_dtype)


class MPIPlan(PlanCore):
    """A distributed FFT over MPI ranks: one rank's block in, its block out.

    Attributes
    ----------
    shape, dtype, axes, norm, kind, spectrum, dealiased
        As :class:`pfft.Plan` (the plan core's): ``shape`` is the global input of
        :meth:`forward` (real for ``kind="r2c"``; the finer grid for
        ``padding > 1``), ``dtype`` the dtype computed in (complex; real for an all
        real-to-real plan of real data).
    kinds, orthogonalize
        Per-axis kinds of a real-to-real or mixed plan (``None`` for an FFT plan) and
        scipy's ``orthogonalize``, as :class:`pfft.Plan`'s.
    grid
        The :class:`~pfft.mpi.ProcessGrid` (with ``tune``, the one tuning chose).
    mesh_shape
        Its ``(name, size)`` pairs, as :attr:`pfft.Plan.mesh_shape`.
    chain
        The planner's :class:`~pfft.chain_search.Chain`; ``print(plan)`` lists it.
    in_shape, out_shape
        Global shapes of :meth:`forward`'s input and output (numpy's spectrum;
        for ``spectrum="padded"`` the padded total of the blocks).
    local_in_slices, local_out_slices
        This rank's block of the global input and output, as slices in global index
        terms (``global_array[plan.local_in_slices]`` is the block :meth:`forward` takes).
        Blocks are balanced: an axis of ``n`` points over ``p`` ranks gives the first
        ``n % p`` ranks ``n // p + 1`` points and the others ``n // p`` (``n=10, p=4``:
        3, 3, 2, 2; ``n=9, p=4``: 3, 2, 2, 2), as mpi4py-fft's.
    local_in_shape, local_out_shape
        The blocks' shapes. For ``spectrum="padded"`` the output block is the chain's
        block as it is, the same shape on every rank: this rank's part of the
        spectrum (``spectrum[local_out_slices]``) first along each axis, zeros after.
    trace_count
        How often :meth:`forward`/:meth:`backward` were traced (a loop should not retrace).

    Examples
    --------
    >>> grid = pfft.mpi.ProcessGrid(MPI.COMM_WORLD)                      # doctest: +SKIP
    >>> plan = pfft.mpi.plan((64, 64, 64), "complex64", grid)            # doctest: +SKIP
    >>> x = jnp.asarray(x_global[plan.local_in_slices])                  # doctest: +SKIP
    >>> k = jax.jit(plan.forward)(x)     # == numpy.fft.fftn(x_global)[plan.local_out_slices]
    """

    def __init__(self, problem: Problem, grid: ProcessGrid):
        self.grid = grid
        self.mesh_shape = grid.mesh_shape
        # a name ("auto", "native", "xla") or an engine object
        bound = (engine_for_plan(problem.engine, jax.local_devices()[:1], problem.fuse_exchanges)
                 if isinstance(problem.engine, str) else problem.engine)
        super().__init__(problem, placement=RankPlacement(grid), engine=bound,
                         transport=grid.transport, effects=grid.transport.effects())
        out = self.chain.out_layout
        self.in_shape = self.chain.in_layout.shape
        self.out_shape = out.padded_shape if self.spectrum == "padded" else out.shape

    @property
    def local_in_slices(self) -> tuple[slice, ...]:
        return self.placement.in_slices

    @property
    def local_out_slices(self) -> tuple[slice, ...]:
        return self.placement.out_slices

    @property
    def local_in_shape(self) -> tuple[int, ...]:
        return self.placement.in_shape

    @property
    def local_out_shape(self) -> tuple[int, ...]:
        return self.placement.out_shape

    # -- execution -------------------------------------------------------------------
    def zeros_input(self) -> jax.Array:
        """Zeros shaped and typed as this rank's input block of :meth:`forward`."""
        return jnp.zeros(self.local_in_shape, self.in_dtype)

    def zeros_output(self) -> jax.Array:
        """Zeros shaped and typed as this rank's output block (:meth:`backward`'s input)."""
        return jnp.zeros(self.local_out_shape, self.out_dtype)

    # -- description -----------------------------------------------------------------
    def __repr__(self) -> str:
        g = self.grid
        dims = "x".join(map(str, g.dims))

        def where(slices):
            return "[" + ", ".join(f"{s.start}:{s.stop}" for s in slices) + "]"
        head = self._headline("MPIPlan", f"grid {dims} ({','.join(g.names)}) over "
                                         f"{g.size} MPI ranks")
        lines = [head] + self._stage_lines()
        lines.append(f"  rank {g.rank} {g.coords}: in block {where(self.local_in_slices)} "
                     f"{self.local_in_shape}, out block {where(self.local_out_slices)} "
                     f"{self.local_out_shape}")
        return "\n".join(lines)


_CACHE = PlanCache(128)


def plan_cache_info() -> dict:
    """Hits, misses, current and maximum size of the MPI plan cache."""
    return _CACHE.info()


def clear_plan_cache() -> None:
    """Forget every cached MPI plan."""
    _CACHE.clear()


def get_plan(problem: Problem, grid: ProcessGrid) -> MPIPlan:
    """The cached MPI plan of ``problem`` on ``grid`` (made on first use); a problem
    without an input layout starts in :func:`mpi_layout`'s."""
    if problem.in_layout is None:
        problem = replace(problem, in_layout=mpi_layout(problem.shape, problem.axes,
                                                        grid.mesh_shape))
    return _CACHE.plan(problem, grid, MPIPlan)
