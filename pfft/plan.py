"""Plans: a stage chain compiled for one shape, dtype, mesh and layout, and their cache.

Plan once (cheap here, but compilation is not), execute many times: ``pfft.plan``
returns the same :class:`Plan` object for the same arguments, and each plan holds
its jitted functions, so a simulation's loop never replans nor retraces.
"""
from __future__ import annotations

import collections
import math
import threading
from typing import Callable

import jax
import numpy as np
from jax.sharding import NamedSharding

from .executor import run_chain
from .grid import grid_axes
from .layout import Layout, default_layout, layout_from_spec
from .planner import Chain, build_chain
from .sharding import is_tracer, place
from .stages import Gather
from .transports import xla as xla_transport

__all__ = ["Plan", "plan", "clear_plan_cache", "plan_cache_info", "set_plan_cache_size",
           "NORMS"]

NORMS = ("backward", "ortho", "forward")


def norm_scale(norm: str, inverse: bool, n: int) -> float:
    """numpy's scaling of a transform of ``n`` points."""
    if norm == "ortho":
        return 1.0 / math.sqrt(n)
    return 1.0 / n if (norm == "forward") != inverse else 1.0


class Plan:
    """A distributed FFT over fixed shape, dtype, mesh, axes, norm and input layout.

    Attributes
    ----------
    shape, dtype, mesh, axes, norm
        What the plan transforms (``dtype`` is the complex dtype it computes in).
    grid
        ``(mesh axis, size)`` pairs the plan distributes over.
    chain
        The :class:`~pfft.planner.Chain` of stages; ``print(plan)`` lists them.
    in_sharding, out_sharding
        Where :meth:`forward` takes its input and leaves its output
        (:meth:`backward` the reverse). ``None`` for a plan without a mesh.

    Examples
    --------
    >>> plan = pfft.plan((64, 64, 64), "complex64", pfft.make_mesh(4))  # doctest: +SKIP
    >>> k = plan.forward(x)                                             # doctest: +SKIP
    >>> x2 = plan.backward(k)                                           # doctest: +SKIP
    """

    def __init__(self, shape, dtype, mesh, axes, norm, in_layout: Layout):
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)
        self.mesh = mesh
        self.axes = tuple(axes)
        self.norm = norm
        self.grid = in_layout.grid
        self.chain: Chain = build_chain(in_layout, self.axes)
        self.size = math.prod(self.shape[a] for a in self.axes)
        self.in_sharding = None if mesh is None else in_layout.sharding(mesh)
        self.out_sharding = None if mesh is None else self.chain.out_layout.sharding(mesh)
        self.trace_count = 0                      # how often a function was traced
        # (reverse, inverse) -> (chain it runs, jitted function): built once per plan
        self._compiled: dict[tuple[bool, bool], tuple[Chain, Callable]] = {}

    # -- execution -------------------------------------------------------------------
    def forward(self, x):
        """numpy's ``fftn`` over :attr:`axes`: ``in_sharding`` in, ``out_sharding`` out."""
        return self._call(x, reverse=False, inverse=False)

    def backward(self, y):
        """numpy's ``ifftn``, the inverse of :meth:`forward`: ``out_sharding`` in,
        ``in_sharding`` out (the chain run backwards)."""
        return self._call(y, reverse=True, inverse=True)

    def _inverse_from_input(self, x):
        """``ifftn`` along the forward chain (used by :func:`pfft.ifftn`)."""
        return self._call(x, reverse=False, inverse=True)

    def _call(self, x, *, reverse: bool, inverse: bool):
        key = (reverse, inverse)
        if key not in self._compiled:
            chain = self.chain.reversed() if reverse else self.chain
            self._compiled[key] = (chain, jax.jit(self._build(chain, inverse)))
        chain, fn = self._compiled[key]
        if self.mesh is not None and not is_tracer(x):
            x = place(x, chain.in_layout.sharding(self.mesh))
        return fn(x)

    def _build(self, chain: Chain, inverse: bool) -> Callable:
        scale = norm_scale(self.norm, inverse, self.size)
        mesh, dtype = self.mesh, self.dtype

        def local(block):
            return run_chain(block, chain, inverse=inverse, scale=scale)

        def run(x):
            self.trace_count += 1
            if x.shape != self.shape:
                raise ValueError(f"plan for shape {self.shape} called on an array of shape "
                                 f"{x.shape}")
            x = x.astype(dtype)
            if not self.grid:                     # one device: a plain local FFT
                return local(x)
            x = place(x, chain.in_layout.sharding(mesh))
            check = xla_transport.GATHER_IS_INVARIANT or not any(
                isinstance(st, Gather) for st in chain.stages)
            return jax.shard_map(local, mesh=mesh, in_specs=chain.in_layout.spec,
                                 out_specs=chain.out_layout.spec, check_vma=check)(x)
        return run

    # -- description -----------------------------------------------------------------
    def __repr__(self) -> str:
        grid = "x".join(str(s) for _, s in self.grid) or "1"
        names = ",".join(m for m, _ in self.grid)
        lines = [f"Plan(fftn {self.shape} {self.dtype.name}, axes={self.axes}, "
                 f"norm={self.norm!r}, grid {grid}" + (f" ({names})" if names else "") + ")",
                 f"  in : {self.chain.in_layout}"]
        lines += [f"  {i}. {st}" for i, st in enumerate(self.chain.stages, 1)]
        lines.append(f"  out: {self.chain.out_layout}")
        return "\n".join(lines)


class _LRU:
    """A small thread-safe LRU cache of plans."""

    def __init__(self, maxsize: int):
        self.maxsize = maxsize
        self._data: collections.OrderedDict = collections.OrderedDict()
        self._lock = threading.Lock()
        self.hits = self.misses = 0

    def get_or_make(self, key, make: Callable[[], Plan]) -> Plan:
        with self._lock:
            if key in self._data:
                self._data.move_to_end(key)
                self.hits += 1
                return self._data[key]
            self.misses += 1
            value = make()
            self._data[key] = value
            while len(self._data) > self.maxsize:
                self._data.popitem(last=False)
            return value


_CACHE = _LRU(256)


def plan_cache_info() -> dict:
    """Hits, misses, current size and maximum size of the plan cache."""
    return {"hits": _CACHE.hits, "misses": _CACHE.misses, "size": len(_CACHE._data),
            "maxsize": _CACHE.maxsize}


def set_plan_cache_size(maxsize: int) -> None:
    """Bound the plan cache to ``maxsize`` plans (least recently used go first)."""
    if not isinstance(maxsize, int) or maxsize < 1:
        raise ValueError(f"set_plan_cache_size: maxsize must be a positive int, got {maxsize!r}")
    with _CACHE._lock:
        _CACHE.maxsize = maxsize
        while len(_CACHE._data) > maxsize:
            _CACHE._data.popitem(last=False)


def clear_plan_cache() -> None:
    """Forget every cached plan."""
    with _CACHE._lock:
        _CACHE._data.clear()


def get_plan(shape, dtype, mesh, axes, norm, in_layout: Layout) -> Plan:
    key = (tuple(shape), np.dtype(dtype), mesh, tuple(axes), norm, in_layout)
    return _CACHE.get_or_make(key, lambda: Plan(shape, dtype, mesh, axes, norm, in_layout))


def plan(shape, dtype, mesh=None, *, axes=None, norm: str = "backward",
         in_sharding=None) -> Plan:
    """Plan a distributed ``fftn`` (and its inverse) for arrays of one shape.

    Parameters
    ----------
    shape
        Global array shape.
    dtype
        Input dtype; real dtypes are promoted to complex as numpy does.
    mesh
        A 1-D or 2-D :class:`jax.sharding.Mesh` (see :func:`pfft.make_mesh`), or ``None``
        for a single-device plan.
    axes
        Axes to transform; default the last three (fewer if ``shape`` has fewer).
    norm
        ``"backward"``, ``"ortho"`` or ``"forward"``, as in numpy.
    in_sharding
        A :class:`NamedSharding` or :class:`PartitionSpec` the input already has. By
        default the plan picks its input pencil (the last transformed axis whole,
        the grid splitting the others).

    Returns
    -------
    Plan
        Cached: the same arguments return the same object.
    """
    from .api import complex_dtype, normalize_axes, check_norm  # one place for argument rules

    shape = tuple(int(n) for n in shape)
    dtype = complex_dtype(np.dtype(dtype))
    axes = normalize_axes(axes, len(shape), "plan")
    norm = check_norm(norm, "plan")
    grid = grid_axes(mesh)
    layout = None
    if in_sharding is not None:
        spec = in_sharding.spec if isinstance(in_sharding, NamedSharding) else in_sharding
        if isinstance(in_sharding, NamedSharding) and mesh is not None and \
                in_sharding.mesh.shape != mesh.shape:
            raise ValueError("plan: in_sharding is on a different mesh than `mesh`")
        layout = layout_from_spec(shape, spec, grid)
        if layout is None:
            raise ValueError(
                f"plan: in_sharding {spec} cannot be used for shape {shape} on grid {grid}: "
                f"each array axis may be split by one mesh axis, evenly")
    if layout is None:
        layout = default_layout(shape, axes, grid)
    return get_plan(shape, dtype, mesh, axes, norm, layout)
