"""MPI plans: the planner's chain run by each rank on its own block, over MPI.

A :class:`MPIPlan` is the same chain of stages as :class:`pfft.Plan` (same planner,
same executor and local FFT engines), run on one rank's block with the MPI transport
instead of inside ``shard_map``. Blocks are numpy-ordered local arrays: the rank's
*true* part of the global array, never padded (an uneven axis gives the last ranks
smaller, possibly empty, blocks). The plan pads them to the chain's block size before
its primitive and crops after, with ``jnp`` (so autodiff sees plain pads and slices).
"""
from __future__ import annotations

import math
from typing import Callable

import jax
import jax.numpy as jnp
import numpy as np

from ..arguments import check_cast, check_plan_options, check_shape, norm_scale
from ..autodiff import BACKWARD, FORWARD, Variant, apply
from ..engines.choice import engine_for_plan
from ..executor import run_chain
from ..lru import LRUCache
from ..layout import Layout
from ..planner import Chain, build_chain
from .grid import ProcessGrid

__all__ = ["MPIPlan", "plan", "mpi_layout", "clear_plan_cache", "plan_cache_info"]


def mpi_layout(shape, axes, grid) -> Layout:
    """The input layout of an MPI plan: the last transformed axis whole, the grid's
    first axis splitting the first transformed axis, its second the next.

    Like :func:`pfft.layout.default_layout`, except that an axis the grid axis does not
    divide may still be split (unevenly, ceil-sized blocks): MPI ranks hold uneven
    blocks, JAX arrays cannot. A mesh axis prefers an axis it divides, then any axis at
    least as long as the grid axis; if none is, the data is replicated over it.
    """
    shape, axes = tuple(shape), tuple(axes)
    candidates = list(axes[:-1]) + [a for a in range(len(shape)) if a not in axes]
    split: list[str | None] = [None] * len(shape)
    for mesh_axis, size in grid:
        free = [a for a in candidates if split[a] is None]
        pick = next((a for a in free if shape[a] % size == 0), None)
        if pick is None:
            pick = next((a for a in free if shape[a] >= size), None)
        if pick is not None:
            split[pick] = mesh_axis
    return Layout(shape, tuple(split), tuple(grid))


def _block_slices(layout: Layout, coords: dict[str, int], padded: bool) -> tuple[slice, ...]:
    """This rank's block of ``layout`` in global indices (ceil-sized blocks).

    ``padded``: the chain's full block, which may reach past ``layout.shape`` (the
    positions beyond hold zeros); else the true, cropped block.
    """
    out = []
    for a, m in enumerate(layout.split):
        n = layout.shape[a]
        if m is None:
            out.append(slice(0, n))
            continue
        chunk = layout.local_size(a)
        start = coords[m] * chunk
        out.append(slice(start, start + chunk) if padded else
                   slice(min(start, n), min(start + chunk, n)))
    return tuple(out)


def _extent(slices) -> tuple[int, ...]:
    return tuple(s.stop - s.start for s in slices)


class MPIPlan:
    """A distributed FFT over MPI ranks: one rank's block in, its block out.

    Attributes
    ----------
    shape, dtype, axes, norm, kind, spectrum
        As :class:`pfft.Plan`: ``shape`` is the global input of :meth:`forward`
        (real for ``kind="r2c"``), ``dtype`` the complex dtype computed in.
    grid
        The :class:`~pfft.mpi.ProcessGrid`.
    chain
        The planner's :class:`~pfft.planner.Chain`; ``print(plan)`` lists it.
    in_shape, out_shape
        Global shapes of :meth:`forward`'s input and output (``out_shape`` padded for
        ``spectrum="padded"``).
    local_in_slices, local_out_slices
        This rank's block of the global input and output, as slices in global index
        terms (``global_array[plan.local_in_slices]`` is the block :meth:`forward` takes).
        Blocks are ceil-sized: an axis of ``n`` points over ``p`` ranks gives blocks of
        ``ceil(n/p)`` and the remainder last (``n=10, p=4``: 3, 3, 3, 1; ``n=9, p=4``:
        3, 3, 3, 0).
    local_in_shape, local_out_shape
        Their shapes.
    trace_count
        How often :meth:`forward`/:meth:`backward` were traced (a loop should not retrace).

    Examples
    --------
    >>> grid = pfft.mpi.ProcessGrid(MPI.COMM_WORLD)                      # doctest: +SKIP
    >>> plan = pfft.mpi.plan((64, 64, 64), "complex64", grid)            # doctest: +SKIP
    >>> x = jnp.asarray(x_global[plan.local_in_slices])                  # doctest: +SKIP
    >>> k = jax.jit(plan.forward)(x)     # == numpy.fft.fftn(x_global)[plan.local_out_slices]
    """

    def __init__(self, shape, dtype, grid: ProcessGrid, axes, norm, in_layout: Layout, *,
                 kind: str = "c2c", spectrum: str = "numpy", chain: Chain | None = None,
                 engine=None):
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)
        self.real_dtype = np.dtype(np.finfo(self.dtype).dtype)
        self.grid = grid
        self.axes = tuple(axes)
        self.norm = norm
        self.kind = kind
        self.spectrum = spectrum
        # a name ("auto", "native", "xla", or None for $PFFT_ENGINE / auto) or a module
        self.engine = (engine_for_plan(engine, jax.local_devices()[:1])
                       if engine is None or isinstance(engine, str) else engine)
        # uneven blocks are fine for MPI ranks: no all-to-all just to even the output up
        self.chain: Chain = chain or build_chain(in_layout, self.axes, kind=kind,
                                                 even_output=False)
        self._chains = {False: self.chain, True: self.chain.reversed()}
        lengths = {a: self.shape[a] for a in self.axes}
        real = self.chain.real_stage
        if real is not None:
            lengths[real.axis] = real.n
        self.size = math.prod(lengths.values())
        self.transport = grid.transport
        self.effects = self.transport.effects()
        out = self.chain.out_layout
        padded = spectrum == "padded"
        self.in_shape = self.chain.in_layout.shape
        self.out_shape = out.padded_shape if padded else out.shape
        self.local_in_slices = _block_slices(self.chain.in_layout, grid.coords, padded=False)
        self.local_out_slices = _block_slices(out, grid.coords, padded=padded)
        self.local_in_shape = _extent(self.local_in_slices)
        self.local_out_shape = _extent(self.local_out_slices)
        self.trace_count = 0
        self._jitted: dict[Variant, Callable] = {}
        self._batched: dict[int, MPIPlan] = {}

    @property
    def is_real(self) -> bool:
        return self.kind != "c2c"

    def _dtype_at(self, chain: Chain, first: bool) -> np.dtype:
        """dtype of ``chain``'s input (``first``) or output: real on the real side."""
        real = chain.real_stage
        if real is None:
            return self.dtype
        return self.real_dtype if real.to_complex == first else self.dtype

    @property
    def in_dtype(self) -> np.dtype:
        """dtype of :meth:`forward`'s input (and :meth:`backward`'s output)."""
        return self._dtype_at(self.chain, first=True)

    @property
    def out_dtype(self) -> np.dtype:
        """dtype of :meth:`forward`'s output (and :meth:`backward`'s input)."""
        return self._dtype_at(self.chain, first=False)

    # -- execution -------------------------------------------------------------------
    def zeros_input(self) -> jax.Array:
        """Zeros shaped and typed as this rank's input block of :meth:`forward`."""
        return jnp.zeros(self.local_in_shape, self.in_dtype)

    def zeros_output(self) -> jax.Array:
        """Zeros shaped and typed as this rank's output block (:meth:`backward`'s input)."""
        return jnp.zeros(self.local_out_shape, self.out_dtype)

    def forward(self, x) -> jax.Array:
        """numpy's ``fftn`` (``rfftn``) of the global array, one rank's block in and out.

        Collective: every rank of the grid must call it, in the same order as its
        other MPI operations. Jittable and differentiable (``grad``, ``vjp``, ``jvp``,
        ``vmap``).
        """
        return self._call(x, FORWARD)

    def backward(self, y) -> jax.Array:
        """numpy's ``ifftn`` (``irfftn``): :meth:`forward`'s output block in, input block out."""
        return self._call(y, BACKWARD)

    def _call(self, x, variant: Variant):
        fn = self._jitted.get(variant)
        if fn is None:
            fn = self._jitted[variant] = jax.jit(self._entry(variant))
        return fn(x)

    def _entry(self, variant: Variant) -> Callable:
        """The traced function: check, cast, pad to the chain's block, apply, crop."""
        chain = self._chains[variant.reverse]
        true_in, true_out = ((self.local_out_shape, self.local_in_shape) if variant.reverse
                             else (self.local_in_shape, self.local_out_shape))
        want = self._dtype_at(chain, first=True)
        block = chain.in_layout.local_shape

        def run(x):
            self.trace_count += 1
            x = jnp.asarray(x)
            if tuple(x.shape) != true_in:
                raise ValueError(f"MPI plan on rank {self.grid.rank} expects a block of shape "
                                 f"{true_in}, got {tuple(x.shape)}")
            check_cast(x.dtype, want, "MPI plan")
            x = x.astype(want)
            if tuple(x.shape) != block:
                x = jnp.pad(x, [(0, b - n) for n, b in zip(x.shape, block)])
            y = apply(x, self, variant)
            if tuple(y.shape) != true_out:
                y = y[tuple(slice(0, n) for n in true_out)]
            return y
        return run

    # -- the interface of pfft.autodiff ------------------------------------------------
    def apply(self, block, variant: Variant):
        """Run ``variant`` of the chain on this rank's (padded) ``block``."""
        return run_chain(block, self._chains[variant.reverse], inverse=variant.inverse,
                         scale=norm_scale(self.norm, variant.inverse, self.size),
                         weighted=variant.weighted, engine=self.engine,
                         transport=self.transport)

    def out_type(self, aval, variant: Variant):
        """Padded block shape and dtype of ``variant``'s output; no mesh axes (an MPI
        rank's block is not inside ``shard_map``)."""
        chain = self._chains[variant.reverse]
        want = (chain.in_layout.local_shape, self._dtype_at(chain, first=True))
        if (tuple(aval.shape), np.dtype(aval.dtype)) != want:
            raise ValueError(f"MPI plan expects blocks {want[0]} {want[1]}, got "
                             f"{tuple(aval.shape)} {np.dtype(aval.dtype)}")
        return (chain.out_layout.local_shape, self._dtype_at(chain, first=False),
                (frozenset(), frozenset()))

    def batched(self, size: int) -> "MPIPlan":
        """This plan on a batch of ``size`` blocks stacked in a new leading axis."""
        if size not in self._batched:
            chain = self.chain.with_leading_axis(size)
            self._batched[size] = MPIPlan(
                (size,) + self.shape, self.dtype, self.grid, tuple(a + 1 for a in self.axes),
                self.norm, chain.in_layout, kind=self.kind, spectrum=self.spectrum,
                chain=chain, engine=self.engine)
        return self._batched[size]

    # -- description -----------------------------------------------------------------
    def __repr__(self) -> str:
        g = self.grid
        what = {"c2c": "fftn", "r2c": "rfftn", "c2r": "irfftn"}[self.kind]
        extra = ", spectrum='padded'" if self.spectrum == "padded" else ""
        dims = "x".join(map(str, g.dims))

        def where(slices):
            return "[" + ", ".join(f"{s.start}:{s.stop}" for s in slices) + "]"
        lines = [f"MPIPlan({what} {self.shape} {self.dtype.name}, axes={self.axes}, "
                 f"norm={self.norm!r}{extra}, grid {dims} ({','.join(g.names)}) over "
                 f"{g.size} MPI ranks)",
                 f"  in : {self.chain.in_layout}"]
        lines += [f"  {i}. {st}" for i, st in enumerate(self.chain.stages, 1)]
        lines.append(f"  out: {self.chain.out_layout}")
        lines.append(f"  rank {g.rank} {g.coords}: in block {where(self.local_in_slices)} "
                     f"{self.local_in_shape}, out block {where(self.local_out_slices)} "
                     f"{self.local_out_shape}")
        return "\n".join(lines)


_CACHE = LRUCache(128)


def plan_cache_info() -> dict:
    """Hits, misses, current and maximum size of the MPI plan cache."""
    return _CACHE.info()


def clear_plan_cache() -> None:
    """Forget every cached MPI plan."""
    _CACHE.clear()


def plan(shape, dtype, grid: ProcessGrid, *, axes=None, norm: str = "backward",
         kind: str = "c2c", spectrum: str = "numpy", engine=None) -> MPIPlan:
    """Plan a distributed ``fftn`` or ``rfftn`` (and its inverse) over MPI ranks.

    Parameters
    ----------
    shape
        Global shape of the input (real for ``kind="r2c"``).
    dtype
        Input dtype, promoted to complex as numpy does (``"float32"`` computes in
        complex64).
    grid
        The :class:`~pfft.mpi.ProcessGrid` of the ranks taking part.
    axes
        Axes to transform; default all of them (as numpy). Others are batch axes.
    norm
        ``"backward"``, ``"ortho"`` or ``"forward"``, as in numpy.
    kind
        ``"c2c"`` or ``"r2c"`` (:meth:`MPIPlan.forward` is ``rfftn``, ``backward``
        ``irfftn``).
    spectrum
        ``"numpy"``: output blocks of numpy's spectrum (``n//2 + 1`` on the halved
        axis). ``"padded"`` (``r2c`` only): the chain's blocks as they are, every split
        axis zero-padded to a multiple of its grid axis (no crop and pad per call).
    engine
        Local FFT engine: ``"auto"`` (default), ``"native"``, ``"xla"``, ``"cufft"`` (as for
        :func:`pfft.plan`), or an engine module.

    Returns
    -------
    MPIPlan
        Cached: the same arguments (and the same grid object) return the same plan.
    """
    from ..arguments import check_norm, complex_dtype, normalize_axes

    if not isinstance(grid, ProcessGrid):
        raise TypeError(f"pfft.mpi.plan: grid must be a pfft.mpi.ProcessGrid, got "
                        f"{type(grid).__name__}")
    check_plan_options(kind, spectrum, "pfft.mpi.plan")
    shape = check_shape(shape, "pfft.mpi.plan")
    dtype = complex_dtype(np.dtype(dtype))
    axes = normalize_axes(axes, len(shape), "pfft.mpi.plan")
    norm = check_norm(norm, "pfft.mpi.plan")
    key = (shape, dtype, grid, axes, norm, kind, spectrum, engine)
    layout = mpi_layout(shape, axes, grid.grid)
    return _CACHE.get_or_make(key, lambda: MPIPlan(shape, dtype, grid, axes, norm, layout,
                                                   kind=kind, spectrum=spectrum, engine=engine))
