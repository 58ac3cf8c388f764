"""Plans: a stage chain compiled for one shape, dtype, mesh and layout, and their cache.

Plan once (cheap here, but compilation is not), execute many times: ``pfft.plan``
returns the same :class:`Plan` object for the same arguments, and each plan holds
its jitted functions, so a simulation's loop never replans nor retraces.
"""
from __future__ import annotations

import functools
import math
import operator
import os
from typing import Callable

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from .autodiff import BACKWARD, FORWARD, Variant, apply
from .engines.choice import engine_for_plan
from .executor import run_chain
from .grid import grid_axes
from .layout import Layout, default_layout, layout_from_spec
from .lru import LRUCache
from .pieces import collectives, enabled as pieces_enabled
from .planner import Chain, build_chain
from .sharding import is_tracer, place
from .stages import Exchange, Gather
from .transports import xla as xla_transport

__all__ = ["Plan", "plan", "clear_plan_cache", "plan_cache_info", "set_plan_cache_size",
           "NORMS", "SPECTRA"]

NORMS = ("backward", "ortho", "forward")
SPECTRA = ("numpy", "padded")


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
        What the plan transforms: ``shape`` is the input of :meth:`forward` (real
        for a real plan), ``dtype`` the complex dtype it computes in.
    kind
        ``"c2c"``, ``"r2c"`` (:meth:`forward` is ``rfftn``, :meth:`backward`
        ``irfftn``) or ``"c2r"`` (internal: ``irfftn`` from a spectrum's layout).
    spectrum
        ``"numpy"``: the output has numpy's shape and is evenly sharded;
        ``"padded"`` (real plans): the halved axis is left split where the chain
        ends, zero-padded to a multiple of the grid axis (saves an all-to-all).
    grid
        ``(mesh axis, size)`` pairs the plan distributes over.
    chain
        The :class:`~pfft.planner.Chain` of stages; ``print(plan)`` lists them.
    in_sharding, out_sharding
        Where :meth:`forward` takes its input and leaves its output
        (:meth:`backward` the reverse). ``None`` for a plan without a mesh.
    in_shape, out_shape
        Global shapes of :meth:`forward`'s input and output (``out_shape`` is
        padded for ``spectrum="padded"``).

    Examples
    --------
    >>> plan = pfft.plan((64, 64, 64), "complex64", pfft.make_mesh(4))  # doctest: +SKIP
    >>> k = plan.forward(x)                                             # doctest: +SKIP
    >>> x2 = plan.backward(k)                                           # doctest: +SKIP
    """

    def __init__(self, shape, dtype, mesh, axes, norm, in_layout: Layout, *,
                 kind: str = "c2c", n: int | None = None, spectrum: str = "numpy",
                 padding: tuple[tuple[int, int], ...] = (), engine: str = "auto",
                 chain: Chain | None = None):
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)
        self.real_dtype = np.dtype(np.finfo(self.dtype).dtype)
        self.mesh = mesh
        self.axes = tuple(axes)
        self.norm = norm
        self.kind = kind
        self.spectrum = spectrum
        self.grid = in_layout.grid
        self.padding = dict(padding)              # axis -> spectral length kept (dealiasing)
        self.engine_name = engine
        devices = list(mesh.devices.flat) if isinstance(mesh, Mesh) else None
        self.engine = engine_for_plan(engine, devices)
        self.chain: Chain = chain or build_chain(
            in_layout, self.axes, kind=kind, n=n, spectral=self.padding or None,
            even_output=(spectrum == "numpy" or kind == "c2r"))
        self._chains = {False: self.chain, True: self.chain.reversed()}
        lengths = dict(zip(self.axes, (self.shape[a] for a in self.axes)))
        real = self.chain.real_stage
        if real is not None:
            lengths[real.axis] = real.n
        kept = {a: self.padding.get(a, n) for a, n in lengths.items()}
        # numpy's scaling for the spectral grid; the forward also rescales the sums
        # of the finer (padded) grid to the spectral grid's: (N / M) per axis
        self.spectral_shape = tuple(kept.get(a, n) for a, n in enumerate(self.shape))
        self.size = math.prod(kept.values())
        self._dealias = math.prod(kept.values()) / math.prod(lengths.values())
        self.in_shape = self.chain.in_layout.padded_shape
        self.out_shape = self.chain.out_layout.padded_shape
        self.in_sharding = None if mesh is None else in_layout.sharding(mesh)
        self.out_sharding = None if mesh is None else self.chain.out_layout.sharding(mesh)
        self.trace_count = 0                      # how often a function was traced
        self._jitted: dict[Variant, Callable] = {}
        self._batched: dict[int, "Plan"] = {}

    @property
    def is_real(self) -> bool:
        return self.kind != "c2c"

    # -- execution -------------------------------------------------------------------
    def forward(self, x):
        """numpy's ``fftn`` (``rfftn`` for a real plan) over :attr:`axes`:
        ``in_sharding`` in, ``out_sharding`` out."""
        return self._call(x, FORWARD)

    def backward(self, y):
        """numpy's ``ifftn`` (``irfftn``), the inverse of :meth:`forward`:
        ``out_sharding`` in, ``in_sharding`` out (the chain run backwards)."""
        return self._call(y, BACKWARD)

    def _call(self, x, variant: Variant):
        if variant not in self._jitted:
            self._jitted[variant] = jax.jit(self._entry(variant))
        if self.mesh is not None and self.grid and not is_tracer(x):
            x = place(x, self._chains[variant.reverse].in_layout.sharding(self.mesh))
        return self._jitted[variant](x)

    def _entry(self, variant: Variant) -> Callable:
        """The traced function behind :meth:`forward` and friends: check, cast, place, apply."""
        chain = self._chains[variant.reverse]
        want = _boundary_dtype(chain, self, first=True)

        def local(block):
            return apply(block, self, variant)

        def run(x):
            self.trace_count += 1
            if tuple(x.shape) != chain.in_layout.padded_shape:
                raise ValueError(f"plan for input shape {chain.in_layout.padded_shape} called on an "
                                 f"array of shape {tuple(x.shape)}")
            if jnp.promote_types(x.dtype, want) != want:
                raise TypeError(f"plan input must be {want} (or cast to it without loss), "
                                f"got an array of dtype {np.dtype(x.dtype)}")
            x = x.astype(want)
            if self.mesh is None or not self.grid:          # one device: a plain local FFT
                return local(x)
            x = place(x, chain.in_layout.sharding(self.mesh))
            check = xla_transport.GATHER_IS_INVARIANT or not any(
                isinstance(st, Gather) for st in chain.stages)
            return jax.shard_map(local, mesh=self.mesh, in_specs=chain.in_layout.spec,
                                 out_specs=chain.out_layout.spec, check_vma=check)(x)
        return run

    # -- the interface of pfft.autodiff ------------------------------------------------
    def apply(self, block, variant: Variant):
        """Run ``variant`` of the chain on one device's ``block``."""
        return run_chain(block, self._chains[variant.reverse], inverse=variant.inverse,
                         scale=self._scale(variant.inverse),
                         weighted=variant.weighted, engine=self.engine)

    def _scale(self, inverse: bool) -> float:
        scale = norm_scale(self.norm, inverse, self.size)
        return scale if inverse else scale * self._dealias

    def out_type(self, aval, variant: Variant):
        """Local block shape and dtype of ``variant``'s output; the grid's mesh axes
        and those that split the output (what the block varies over)."""
        chain = self._chains[variant.reverse]
        want = (chain.in_layout.local_shape, _boundary_dtype(chain, self, first=True))
        if (tuple(aval.shape), np.dtype(aval.dtype)) != want:
            raise ValueError(f"plan expects blocks {want[0]} {want[1]}, got "
                             f"{tuple(aval.shape)} {np.dtype(aval.dtype)}")
        split = frozenset(m for m in chain.out_layout.split if m is not None)
        return (chain.out_layout.local_shape, _boundary_dtype(chain, self, first=False),
                (frozenset(m for m, _ in self.grid), split))

    def batched(self, size: int) -> "Plan":
        """This plan on a batch of ``size`` arrays stacked in a new leading axis."""
        if size not in self._batched:
            chain = self.chain.with_leading_axis(size)
            self._batched[size] = Plan((size,) + self.shape, self.dtype, self.mesh,
                                       tuple(a + 1 for a in self.axes), self.norm,
                                       chain.in_layout, kind=self.kind,
                                       spectrum=self.spectrum, chain=chain,
                                       padding=tuple((a + 1, n) for a, n in self.padding.items()),
                                       engine=self.engine_name)
        return self._batched[size]

    # -- wavenumbers -------------------------------------------------------------------
    def wavenumbers(self, d: float = 1.0, *, angular: bool = False) -> tuple[jax.Array, ...]:
        """Frequencies of :meth:`forward`'s output, one broadcastable array per axis.

        Parameters
        ----------
        d
            Sample spacing (a number, or one per transformed axis).
        angular
            ``2 pi`` times the frequency (radians per unit) instead of cycles per unit.

        Returns
        -------
        tuple of jax.Array
            For each transformed axis in increasing order, an array with that axis's
            output length and size one elsewhere, sharded like the output along it:
            ``numpy.fft.fftfreq`` values (``rfftfreq`` on the halved axis of a real
            plan). Padding positions of a ``spectrum="padded"`` plan hold 0.
        """
        if self.kind == "c2r":
            raise ValueError("wavenumbers: a c2r plan has no spectrum output")
        spacing = np.broadcast_to(np.asarray(d, dtype=float), (len(self.axes),))
        out = self.chain.out_layout
        real = self.chain.real_stage
        result = []
        for a in sorted(self.axes):
            step = float(spacing[self.axes.index(a)])
            n = self.spectral_shape[a]
            freq = np.fft.rfftfreq(n, step) if (real and a == real.axis) else np.fft.fftfreq(n, step)
            if angular:
                freq = 2 * np.pi * freq
            values = np.zeros(out.padded_shape[a], dtype=self.real_dtype)
            values[:freq.size] = freq
            shape = [1] * len(self.shape)
            shape[a] = values.size
            values = values.reshape(shape)
            if self.mesh is not None and self.grid:
                split = [None] * len(shape)
                split[a] = out.split[a]
                result.append(place(values, NamedSharding(self.mesh, PartitionSpec(*split))))
            else:
                result.append(jnp.asarray(values))
        return tuple(result)

    def k2(self, d: float = 1.0, *, angular: bool = False) -> jax.Array:
        """``|k|^2`` on :meth:`forward`'s output grid, sharded like the output."""
        ks = self.wavenumbers(d, angular=angular)
        sharding = self.out_sharding

        @functools.partial(jax.jit, out_shardings=sharding)
        def total(*ks):
            return functools.reduce(jnp.add, [k * k for k in ks]) * jnp.ones(
                self.out_shape, self.real_dtype)
        return total(*ks)

    def kabs(self, d: float = 1.0, *, angular: bool = False) -> jax.Array:
        """``|k|`` on :meth:`forward`'s output grid, sharded like the output."""
        return jnp.sqrt(self.k2(d, angular=angular))

    def collectives(self, *, reverse: bool = False) -> dict[str, int]:
        """The collectives :meth:`forward` (``reverse``: :meth:`backward`) compiles to.

        Keys are HLO op names: ``"all-to-all"``, ``"collective-permute"`` (the shifts
        an exchange becomes when the native CPU engine packs its pieces, ``p - 1`` per
        exchange over ``p`` devices; see :mod:`pfft.pieces`) and ``"all-gather"``.
        """
        chain = self._chains[reverse]
        return collectives(chain.stages, self.engine, xla_transport)

    # -- description -----------------------------------------------------------------
    def __repr__(self) -> str:
        grid = "x".join(str(s) for _, s in self.grid) or "1"
        names = ",".join(m for m, _ in self.grid)
        what = {"c2c": "fftn", "r2c": "rfftn", "c2r": "irfftn"}[self.kind]
        extra = ", spectrum='padded'" if self.spectrum == "padded" else ""
        extra += f", engine {getattr(self.engine, 'name', 'xla')}"
        lines = [f"Plan({what} {self.shape} {self.dtype.name}, axes={self.axes}, "
                 f"norm={self.norm!r}{extra}, grid {grid}" + (f" ({names})" if names else "") + ")",
                 f"  in : {self.chain.in_layout}"]
        shifts = pieces_enabled(self.engine, xla_transport)
        lines += [f"  {i}. {st}" + (f", as {st.size - 1} collective permute(s) of pieces"
                                    if shifts and isinstance(st, Exchange) else "")
                  for i, st in enumerate(self.chain.stages, 1)]
        lines.append(f"  out: {self.chain.out_layout}")
        return "\n".join(lines)


def _boundary_dtype(chain: Chain, plan: Plan, *, first: bool) -> np.dtype:
    """dtype of ``chain``'s input (``first``) or output: real on the real side."""
    real = chain.real_stage
    if real is None:
        return plan.dtype
    real_side_first = real.to_complex
    return plan.real_dtype if real_side_first == first else plan.dtype


_CACHE = LRUCache(256)


def plan_cache_info() -> dict:
    """Hits, misses, current size and maximum size of the plan cache."""
    return _CACHE.info()


def set_plan_cache_size(maxsize: int) -> None:
    """Bound the plan cache to ``maxsize`` plans (least recently used go first)."""
    if not isinstance(maxsize, int) or maxsize < 1:
        raise ValueError(f"set_plan_cache_size: maxsize must be a positive int, got {maxsize!r}")
    _CACHE.resize(maxsize)


def clear_plan_cache() -> None:
    """Forget every cached plan."""
    _CACHE.clear()


def get_plan(shape, dtype, mesh, axes, norm, in_layout: Layout, *, kind: str = "c2c",
             n: int | None = None, spectrum: str = "numpy", padding=(),
             engine: str | None = None) -> Plan:
    """The cached plan for these arguments (made on first use)."""
    engine = (engine or os.environ.get("PFFT_ENGINE") or "auto").lower()
    key = (tuple(shape), np.dtype(dtype), mesh, tuple(axes), norm, in_layout, kind, n, spectrum,
           tuple(padding), engine)
    return _CACHE.get_or_make(key, lambda: Plan(shape, dtype, mesh, axes, norm, in_layout,
                                                kind=kind, n=n, spectrum=spectrum,
                                                padding=tuple(padding), engine=engine))


def plan(shape, dtype, mesh=None, *, axes=None, norm: str = "backward",
         in_sharding=None, kind: str = "c2c", spectrum: str = "numpy",
         padding: float = 1.0, tune: str | None = None, engine: str | None = None) -> Plan:
    """Plan a distributed ``fftn`` or ``rfftn`` (and its inverse) for arrays of one shape.

    Parameters
    ----------
    shape
        Global shape of the input (real for ``kind="r2c"``).
    dtype
        Input dtype; real dtypes are promoted to complex as numpy does (for
        ``kind="r2c"``, the real dtype or its complex counterpart).
    mesh
        A 1-D or 2-D :class:`jax.sharding.Mesh` (see :func:`pfft.make_mesh`), or ``None``
        for a single-device plan.
    axes
        Axes to transform; default the last three (fewer if ``shape`` has fewer). For
        ``kind="r2c"`` the last of them is halved to ``n//2 + 1``.
    norm
        ``"backward"``, ``"ortho"`` or ``"forward"``, as in numpy.
    in_sharding
        A :class:`NamedSharding` or :class:`PartitionSpec` the input already has. By
        default the plan picks its input pencil (the last transformed axis whole,
        the grid splitting the others).
    kind
        ``"c2c"`` (:meth:`Plan.forward` is ``fftn``) or ``"r2c"`` (``rfftn``).
    spectrum
        ``"numpy"`` (default): the output has numpy's shape, evenly sharded.
        ``"padded"`` (``kind="r2c"`` only): the spectrum stays in the pencil the
        transform ends in, its halved axis zero-padded to a multiple of the grid
        axis splitting it: one all-to-all fewer on a pencil grid.
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
    tune
        ``None`` (default): plan on ``mesh`` as given. ``"wisdom"``: use the grid that
        :func:`pfft.tune` found fastest for this problem on ``mesh``'s devices, if
        there is such wisdom (saved with :func:`pfft.save_wisdom`, read with
        :func:`pfft.load_wisdom`), else ``mesh``. ``"measure"``: the same, but tune now
        when there is no wisdom yet. The plan's mesh then has that grid (same devices
        and axis types); place inputs with ``plan.in_sharding``.

    Returns
    -------
    Plan
        Cached: the same arguments return the same object.
    """
    from .api import complex_dtype, normalize_axes, check_norm  # one place for argument rules

    if kind not in ("c2c", "r2c"):
        raise ValueError(f"plan: kind must be 'c2c' or 'r2c', got {kind!r}")
    if spectrum not in SPECTRA:
        raise ValueError(f"plan: spectrum must be one of {SPECTRA}, got {spectrum!r}")
    if spectrum == "padded" and kind != "r2c":
        raise ValueError("plan: spectrum='padded' is for kind='r2c' (a complex transform's "
                         "output is never padded)")
    try:
        shape = tuple(operator.index(n) for n in shape)
    except TypeError:
        raise TypeError(f"plan: shape must be a sequence of ints, got {shape!r}") from None
    if not shape or any(n < 1 for n in shape):
        raise ValueError(f"plan: shape must have at least one axis and positive sizes, "
                         f"got {shape}")
    try:
        dtype = np.dtype(dtype)
    except TypeError:
        raise TypeError(f"plan: dtype {dtype!r} is not a numpy dtype") from None
    dtype = complex_dtype(dtype)
    axes = normalize_axes(axes, len(shape), "plan")
    norm = check_norm(norm, "plan")
    try:
        padding = float(padding)
    except (TypeError, ValueError):
        raise TypeError(f"plan: padding must be a number >= 1, got {padding!r}") from None
    if not padding >= 1.0 or not math.isfinite(padding):
        raise ValueError(f"plan: padding must be a finite number >= 1, got {padding!r}")
    spectral = ()
    if padding > 1.0:
        spectral = tuple((a, shape[a]) for a in axes)
        shape = tuple(math.ceil(padding * n - 1e-9) if a in axes else n
                      for a, n in enumerate(shape))
        spectral = tuple((a, n) for a, n in spectral if shape[a] != n)
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
    if tune is not None:
        if tune not in ("wisdom", "measure"):
            raise ValueError(f"plan: tune must be None, 'wisdom' or 'measure', got {tune!r}")
        if in_sharding is not None:
            raise ValueError("plan: tune chooses the grid, so it cannot honour in_sharding")
        if mesh is not None and grid:
            mesh = _tuned_mesh(shape, dtype, mesh, kind, axes, norm, spectrum, tune)
            grid = grid_axes(mesh)
    if layout is None:
        layout = default_layout(shape, axes, grid)
    return get_plan(shape, dtype, mesh, axes, norm, layout, kind=kind, spectrum=spectrum,
                    padding=spectral, engine=engine)


def _tuned_mesh(shape, dtype, mesh, kind, axes, norm, spectrum, mode):
    """``mesh``'s devices on the grid wisdom prefers (tuning first for ``"measure"``)."""
    from . import tuning
    from .grid import make_mesh

    devices = list(mesh.devices.flat)
    entry = tuning.lookup(shape, dtype, kind, axes, norm, devices)
    if entry is None and mode == "measure":
        tuning.tune(shape, dtype, devices, kind=kind, axes=axes, norm=norm,
                    spectra=(spectrum,))
        entry = tuning.lookup(shape, dtype, kind, axes, norm, devices)
    if entry is None:
        return mesh
    grid = tuple(entry["grid"])
    types = {jax.sharding.AxisType.Explicit: "explicit", jax.sharding.AxisType.Auto: "auto"}
    axis_types = types.get(tuple(mesh.axis_types)[0], "explicit")
    if tuple(s for s in mesh.devices.shape if s > 1) == tuple(s for s in grid if s > 1):
        return mesh
    return make_mesh(grid, devices, axis_types=axis_types)
