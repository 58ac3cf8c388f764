"""What one device of a ``p``-device plan runs, on one device: the pieces
:mod:`benchmarks.per_device` measures with.

- :class:`CopyTransport`, a stand-in transport handed to the plan core
  (``PlanCore(..., transport=CopyTransport(mesh_shape))``): every transfer one copy of
  the same bytes on the one device;
- :func:`program`, the per-device program of a plan core's forward or backward
  transform (``core.transform.apply``) over it, and :func:`exchange_bytes`, the bytes
  entering each exchange, from the transfers it traced;
- :func:`block_math`, what the program computes from a device's block, in numpy
  (float64): the reference;
- :func:`grid_of` and :func:`engines_for`: the plans' grids and engines;
- :func:`make_block`, :func:`rel_diff` and :class:`Compiler`: blocks made on the
  device, the error measure, and programs compiled in threads;
- :func:`floor_transform` and :func:`floor_fft_ms`: the device's own FFT of a block of
  the same size (``jnp.fft.fftn`` / ``rfftn``: cuFFT's 3-D transform on a GPU), the
  transform part of the local work's floor;
- :func:`measured_ms`: a helper's time on a block, measured once per shape (the
  floors; :mod:`benchmarks.stage_times` each step's), and :func:`failure_text`, how a
  failure is reported (``OOM`` for an out-of-memory);
- :func:`device_memory` and :func:`machine`: what XLA may use of the device, and the
  columns every row carries.

The plan is reached only through its public seam: ``PlanCore`` (handed the stand-in
transport), ``core.transform``, ``Transform.apply(block, variant)``,
``Transform.chain_for(variant)``, ``Transform.program(variant)`` (the resolved steps,
each run alone by :mod:`benchmarks.stage_times`) and
:class:`pfft.interfaces.TransportCapabilities`.
"""
from __future__ import annotations

import contextlib
import datetime
import math
import os
import platform
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass, field

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from pfft.autodiff import FORWARD, Variant
from pfft.plan_core import PlanCore
from pfft.engines import native
from pfft.engines.choice import PerStageEngine, engine_for_plan
from pfft.grid import dims_create
from pfft.interfaces import TransportCapabilities
from pfft.chain_search import Chain
from pfft.stages import Exchange, LocalFFT, RealFFT

__all__ = ["CopyTransport", "transfer", "block_math", "program", "exchange_bytes",
           "make_block", "rel_diff", "Compiler", "transfer_spec", "grid_of",
           "engines_for", "floor_transform", "floor_fft_ms", "measured_ms", "failure_text",
           "device_memory", "machine", "ENGINES", "PLANS"]

ENGINES = ("native", "xla", "auto")
PLANS = ("slab", "pencil")


# -- the stand-in transport -------------------------------------------------------------
# A stand-in transport: one device runs what a device of a ``p``-device plan runs.
#
# :class:`CopyTransport` has the interface of :mod:`pfft.transports.xla` (``all_to_all``,
# ``all_gather``, ``axis_index`` and the capability flags the executor reads), but it
# moves nothing between devices: its ``all_to_all`` returns what the real collective
# returns in shape and dtype, at the cost of one copy of the same bytes. So a plan core
# handed it (``PlanCore(..., transport=CopyTransport(mesh_shape))``) runs, on one device,
# a device's block through its local transforms and each exchange's local work (the
# packing and unpacking) exactly as a plan over ``p`` devices does, with the transfer
# itself replaced by that copy.
#
# The copy is a reversal of the exchange's leading (device) axis inside a ``lax.cond``
# on a flag the program takes as an argument (always true): XLA can neither drop it (a
# plain copy of a value is removed) nor fuse it into the pack before or the unpack after
# it, as it cannot fuse anything into an all-to-all (``optimization_barrier`` does not
# stop that fusion: XLA removes barriers before it fuses). The condition costs a read of
# the flag per exchange (on a GPU, a wait for the work before it: microseconds, which
# show only in blocks of a few MiB). Where the plan hands over a block to be cut
# along one axis and stacked along another (the strided engines' ``split``/``merge``
# form), the stand-in packs and unpacks with the two transposes that put the chunks'
# axis first and back, as XLA does around an all-to-all whose split axis is not the
# outermost.
#
# What a device computes with it is then a fixed function of its own block:
# :func:`block_math` is that function in numpy (float64), the reference the benchmark
# checks each engine against.
#
# >>> t = CopyTransport((("x", 2), ("y", 4)))
# >>> t.size(("x", "y"))
# 8
# >>> problem = Problem(shape, np.complex64, (0, 1, 2), in_layout=layout)
# >>> core = PlanCore(problem, placement=MeshPlacement(None, t.mesh_shape), engine=engine,
# ...                 transport=t)
# >>> def run(block, live):                              # doctest: +SKIP
# ...     with t.running(live):
# ...         return core.transform.apply(block, FORWARD)


def transfer(x: jax.Array, live: jax.Array) -> jax.Array:
    """The stand-in for the transfer of an all-to-all: ``x`` with its leading axis
    reversed where ``live`` (a traced boolean; always true), as one copy that XLA
    cannot remove or fuse with its neighbours. The other branch makes zeros (a branch
    returning ``x`` itself would make XLA place the result in ``x``'s buffer, and the
    reversal cost a second copy back into it)."""
    return lax.cond(live, lambda a: lax.rev(a, (0,)), jnp.zeros_like, x)


@dataclass(frozen=True)
class CopyTransport:
    """The XLA transport's interface on one device, every transfer one copy.

    Parameters
    ----------
    mesh_shape
        The plan's ``(mesh axis name, size)`` pairs: the sizes the collectives would
        have.

    Collectives are traced inside :meth:`running`, which gives them the flag their
    copies depend on and lists them.
    """

    mesh_shape: tuple[tuple[str, int], ...]
    _state: dict = field(default_factory=dict, compare=False, hash=False, repr=False)

    # what the plan reads (pfft.interfaces.TransportCapabilities): the all-to-all may cut
    # and stack any axes (as the XLA transport's); no shifts or swaps, so never the
    # pieces path
    capabilities = TransportCapabilities(splits=True)

    def size(self, mesh_axis) -> int:
        """Devices along ``mesh_axis`` (a name or a tuple of names)."""
        names = (mesh_axis,) if isinstance(mesh_axis, str) else tuple(mesh_axis)
        sizes = dict(self.mesh_shape)
        unknown = [m for m in names if m not in sizes]
        if unknown:
            raise ValueError(f"mesh axes {unknown} are not in the grid {sizes}")
        return math.prod(sizes[m] for m in names)

    @contextlib.contextmanager
    def running(self, live: jax.Array):
        """Trace collectives whose copies depend on ``live`` (a traced boolean argument
        of the program, passed true). Yields the list of ``(shape, dtype)`` of every
        transfer traced inside, in order: the array that goes into the collective,
        padding included."""
        transfers = []
        self._state.update(live=live, transfers=transfers)
        try:
            yield transfers
        finally:
            self._state.clear()

    def _transfer(self, x: jax.Array) -> jax.Array:
        if "live" not in self._state:
            raise RuntimeError("CopyTransport: trace collectives inside `running(live)`")
        self._state["transfers"].append((tuple(x.shape), np.dtype(x.dtype)))
        return transfer(x, self._state["live"])

    def all_to_all(self, x: jax.Array, mesh_axis, *, split: int | None = None,
                   merge: int | None = None) -> jax.Array:
        """What :func:`pfft.transports.xla.all_to_all` returns, in shape and dtype.

        Without ``split`` the leading axis (one entry per device) is reversed. With
        ``split=a, merge=b`` axis ``a`` is cut into ``p`` chunks (the pack: the chunks'
        axis moved first), the chunks reversed, and stacked along axis ``b`` (the
        unpack).
        """
        p = self.size(mesh_axis)
        if split is None:
            if x.shape[0] != p:
                raise ValueError(f"all_to_all over {p} devices of a block whose leading "
                                 f"axis has {x.shape[0]} entries")
            return self._transfer(x)
        shape = tuple(x.shape)
        if shape[split] % p:
            raise ValueError(f"all_to_all over {p} devices cannot cut axis {split} of "
                             f"{shape} evenly")
        y = x.reshape(shape[:split] + (p, shape[split] // p) + shape[split + 1:])
        y = self._transfer(jnp.moveaxis(y, split, 0))
        y = jnp.moveaxis(y, 0, merge)               # the chunks' axis just before merge's
        out = list(y.shape[:merge]) + [p * y.shape[merge + 1]] + list(y.shape[merge + 2:])
        return y.reshape(out)

    def all_gather(self, x: jax.Array, mesh_axis, axis: int) -> jax.Array:
        """What :func:`pfft.transports.xla.all_gather` returns in shape: ``p`` copies of
        ``x`` laid end to end along ``axis``."""
        return jnp.concatenate([x] * self.size(mesh_axis), axis=axis)

    def axis_index(self, mesh_axis) -> jax.Array:
        """Device 0's place along ``mesh_axis``."""
        self.size(mesh_axis)
        return jnp.int32(0)


def block_math(x: np.ndarray, chain: Chain, inverse: bool = False) -> np.ndarray:
    """What one device computes from its block ``x`` running ``chain`` over a
    :class:`CopyTransport`, in numpy (float64 or complex128): a plan's forward chain,
    or (``inverse``) its reversed one with the inverse transforms, scaled by ``1/n``
    along each axis as numpy's inverse transforms are (the plan's own ``1/N³`` in all).

    Local stages are ``numpy.fft``'s transforms; an exchange cuts the scattered axis into
    ``p`` chunks (zero-padded to equal lengths), stacks them along the gathered axis in
    reverse order (the stand-in's reversal) and crops the gathered axis to the length
    the plan gives it.

    Raises
    ------
    ValueError
        For a stage a slab or pencil chain does not have.
    """
    y = np.asarray(x, dtype=np.result_type(x.dtype, np.float64))
    shape = list(chain.in_layout.shape)
    for st in chain.stages:
        if isinstance(st, LocalFFT):
            y = (np.fft.ifftn if inverse else np.fft.fftn)(y, axes=st.axes)
        elif isinstance(st, RealFFT) and st.to_complex and not inverse:
            y = np.fft.rfftn(y, axes=st.axes)
            shape[st.axis] = st.half
        elif isinstance(st, RealFFT) and not st.to_complex and inverse:
            lengths = [st.n if a == st.axis else y.shape[a] for a in st.axes]
            y = np.fft.irfftn(y, s=lengths, axes=st.axes)
            shape[st.axis] = st.n
        elif isinstance(st, Exchange):
            p, s, g = st.size, st.scatter, st.gather
            chunk = -(-y.shape[s] // p)
            pad = [(0, 0)] * y.ndim
            pad[s] = (0, chunk * p - y.shape[s])
            pieces = np.split(np.pad(y, pad), p, axis=s)
            y = np.concatenate(pieces[::-1], axis=g)
            y = np.take(y, np.arange(shape[g] // st.gather_keep), axis=g)
        else:
            raise ValueError(f"block_math: no {'inverse' if inverse else 'forward'} slab "
                             f"or pencil chain has {st}")
    return y


# -- the per-device program, its blocks and its compilation ------------------------------
def exchange_bytes(core: PlanCore, transfers, variant: Variant = FORWARD) -> list[int]:
    """The bytes entering each exchange of the chain of ``core``'s ``variant``, in
    order, from the ``(shape, dtype)`` of each transfer its program traced (one per
    :class:`~pfft.stages.Exchange` stage of ``core.transform.chain_for(variant)``).

    Raises
    ------
    ValueError
        Where ``transfers`` are not one per exchange of the chain.
    """
    stages = core.transform.chain_for(variant).stages
    exchanges = sum(isinstance(st, Exchange) for st in stages)
    if exchanges != len(transfers):
        raise ValueError(f"{len(transfers)} transfers traced, but the chain has "
                         f"{exchanges} exchanges")
    return [math.prod(shape) * np.dtype(dtype).itemsize for shape, dtype in transfers]


def program(core: PlanCore, record: list | None = None, variant: Variant = FORWARD):
    """The per-device program of ``core``'s ``variant`` (forward, or ``BACKWARD``):
    ``f(block, live)``, ``live`` the stand-in's flag (pass ``True``). Tracing it sets
    ``record`` to the ``(shape, dtype)`` of each transfer."""
    transform = core.transform

    def run(block, live):
        with transform.transport.running(live) as transfers:
            out = transform.apply(block, variant)
        if record is not None:
            record[:] = transfers
        return out
    return run


def make_block(shape, dtype):
    """A function making a block of pseudo-random values in [-1, 1) (both parts for
    complex), in one pass on the device (a hash of each point's indices)."""
    def mix(h):
        h = h ^ (h >> 15)
        h = h * jnp.uint32(0x2C1B3C6D)
        h = h ^ (h >> 12)
        h = h * jnp.uint32(0x297A2D39)
        return h ^ (h >> 15)

    def unit(h):
        return (h >> 8).astype(jnp.float32) * np.float32(2.0 ** -23) - np.float32(1.0)

    def make():
        h = sum(lax.broadcasted_iota(jnp.uint32, shape, d) * jnp.uint32(c)
                for d, c in enumerate((0x9E3779B1, 0x85EBCA77, 0xC2B2AE3D)[:len(shape)]))
        h = mix(h)
        if np.dtype(dtype).kind != "c":
            return unit(h).astype(dtype)
        return lax.complex(unit(h), unit(mix(h ^ jnp.uint32(0x5BD1E995)))).astype(dtype)
    return make


def rel_diff(a, b) -> float:
    """Relative L2 difference of ``a`` from ``b``."""
    a, b = np.asarray(a, np.complex128), np.asarray(b, np.complex128)
    return float(np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-300))


class Compiler:
    """Compiles lowered programs in a pool of threads (XLA compiles without the
    interpreter lock), remembers helper programs by their arguments and what was
    measured of them (``measured``: :func:`measured_ms`'s times)."""

    def __init__(self, device, workers: int):
        self.device = device
        self.pool = ThreadPoolExecutor(max_workers=max(1, workers))
        self.helpers: dict = {}
        self.measured: dict = {}
        self._pending: list = []

    def submit(self, lowered):
        """Compile ``lowered`` in the pool: a future of the compiled program."""
        future = self.pool.submit(lowered.compile)
        self._pending.append(future)
        return future

    def settle(self) -> None:
        """Wait until every compilation submitted so far has ended (its failure, if
        any, stays in its future), so that none runs beside a timing."""
        wait(self._pending)
        self._pending.clear()

    def helper(self, key: tuple, fn, *specs):
        """``jax.jit(fn)`` compiled for ``specs`` (shape, dtype pairs), submitted once
        per ``key`` (what names ``fn``) and ``specs``."""
        key = tuple(key) + tuple(specs)
        if key not in self.helpers:
            on = jax.sharding.make_single_device_sharding(self.device)
            args = [jax.ShapeDtypeStruct(s, d, sharding=on) for s, d in specs]
            lowered = jax.jit(fn, out_shardings=on).lower(*args)
            self.helpers[key] = self.submit(lowered)
        return self.helpers[key]


def floor_transform(core: PlanCore, kind: str, variant: Variant = FORWARD):
    """The device's own FFT of a block the size of the input of ``core``'s ``variant``
    program: the transform part of the local work's floor. ``(key, fn, (shape, dtype))``.

    ``c2c``: ``jnp.fft.fftn`` (``ifftn`` backward) of a complex64 block of the program's
    input shape. ``r2c``: ``jnp.fft.rfftn`` of the forward program's real float32 block,
    and backward ``jnp.fft.irfftn`` of its half spectrum (last axis ``n // 2 + 1``) back
    to that block. All three axes in one call: on a GPU one cuFFT 3-D plan.
    """
    inverse = variant.inverse
    if kind == "c2c":
        shape = tuple(core.transform.chain_for(variant).in_layout.local_shape)
        return (("floor", "ifftn" if inverse else "fftn"),
                jnp.fft.ifftn if inverse else jnp.fft.fftn, (shape, np.dtype(np.complex64)))
    real = tuple(core.transform.chain_for(FORWARD).in_layout.local_shape)
    if not inverse:
        return ("floor", "rfftn"), jnp.fft.rfftn, (real, np.dtype(np.float32))
    half = real[:-1] + (real[-1] // 2 + 1,)
    return (("floor", "irfftn", real), lambda y: jnp.fft.irfftn(y, s=real, axes=(0, 1, 2)),
            (half, np.dtype(np.complex64)))


def floor_fft_ms(comp: Compiler, core: PlanCore, kind: str, variant: Variant, timed) -> float:
    """Milliseconds of :func:`floor_transform` on a block made on ``comp``'s device, by
    ``timed(fn, block)`` (the benchmark's timing), measured once per transform and
    block shape (:func:`measured_ms`) however many engines share it; where that failed
    (an out-of-memory), its exception again."""
    return measured_ms(comp, *floor_transform(core, kind, variant), timed)


def measured_ms(comp: Compiler, key: tuple, fn, spec: tuple, timed) -> float:
    """Milliseconds of ``jax.jit(fn)`` (a helper of ``comp`` named by ``key``) on a
    block of ``spec`` (shape, dtype) made on ``comp``'s device, by ``timed(fn, block)``;
    measured once per ``key`` and ``spec`` (``comp.measured``), however many
    configurations share it.

    Raises
    ------
    RuntimeError
        Where the measurement failed (an out-of-memory), now and on every later call
        for the same ``key`` and ``spec``: its message, kept without the traceback,
        whose frames would keep the block alive.
    """
    where = tuple(key) + tuple(spec)
    if where not in comp.measured:
        x = None
        try:
            x = comp.helper(("block",) + tuple(spec), make_block(*spec)).result()()
            comp.measured[where] = timed(comp.helper(key, fn, spec).result(), x)
        except Exception as exc:                  # noqa: BLE001 (the caller reports it)
            comp.measured[where] = RuntimeError(f"{type(exc).__name__}: {exc}")
        finally:
            del x
    if isinstance(comp.measured[where], Exception):
        raise comp.measured[where]
    return comp.measured[where]


def failure_text(exc: BaseException) -> str:
    """How a failure is reported: ``"OOM"`` for an out-of-memory, else ``"error: "``
    and the first line of its message."""
    text = f"{type(exc).__name__}: {exc}"
    if "RESOURCE_EXHAUSTED" in text or "out of memory" in text.lower():
        return "OOM"
    return "error: " + text.splitlines()[0][:160]


def transfer_spec(shape, dtype) -> tuple:
    """A transfer's array as ``(p, rest)``: its copy costs the same for any shape."""
    return ((shape[0], math.prod(shape[1:])), np.dtype(dtype))


# -- the machine ----------------------------------------------------------------------
def device_memory(device) -> int:
    """Bytes XLA may use on ``device`` (the host's memory for a CPU)."""
    try:
        limit = (device.memory_stats() or {}).get("bytes_limit")
    except Exception:                               # noqa: BLE001 (not every backend)
        limit = None
    if limit:
        return int(limit)
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def machine(device, command: str) -> dict:
    """The columns every row carries: platform, device, memory, date, jax, command."""
    return dict(platform="cpu" if device.platform == "cpu" else "gpu",
                device=(device.device_kind if device.platform != "cpu" else
                        f"{platform.processor() or platform.machine()}, "
                        f"{os.cpu_count()} cores"),
                device_memory_gib=f"{device_memory(device) / 2**30:.1f}",
                date=str(datetime.date.today()), jax=jax.__version__, command=command)


# -- the plans measured: their grids and engines ------------------------------------------
def grid_of(plan: str, devices: int) -> tuple[int, ...]:
    """The grid of a slab (``(p,)``) or pencil (``dims_create(p, 2)``) plan.

    Raises
    ------
    ValueError
        For an unknown plan.
    """
    if plan == "slab":
        return (devices,)
    if plan == "pencil":
        return dims_create(devices, 2)
    raise ValueError(f"plan must be one of {PLANS}, got {plan!r}")


def engines_for(device, names) -> dict:
    """Each engine name's engine on ``device``'s platform, or why it is not available:
    the plan's own (:func:`pfft.engines.choice.engine_for_plan`).

    The native engines never write pieces (``fuse=False``: pieces are a CPU path that
    the GPU program does not have). On CPUs, where ``engine="auto"`` means native, the
    per-stage engine is built directly (:class:`pfft.engines.choice.PerStageEngine`
    with the CPU kernels).
    """
    plat = "cpu" if device.platform == "cpu" else "gpu"
    out = {}
    for name in names:
        if name not in ENGINES:
            raise ValueError(f"engine must be one of {ENGINES}, got {name!r}")
        if name == "xla":
            out[name] = engine_for_plan("xla", [device], fuse=False)
        elif not native.available(plat):
            out[name] = f"native {plat} engine unavailable: {native.unavailable_reason(plat)}"
        elif name == "auto" and plat == "cpu":
            out[name] = PerStageEngine(native.num_threads(), "cpu")
        else:
            engine = engine_for_plan(name, [device], fuse=False)
            out[name] = (engine if name == "native" or isinstance(engine, PerStageEngine)
                         else "engine='auto' is xla here")
    return out
