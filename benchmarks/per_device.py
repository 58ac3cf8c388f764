"""What a device of a ``p``-device plan runs, measured on one device.

For an ``N³`` transform over ``p`` devices, the per-device program of pfft's slab plan
(grid ``(p,)``) and pencil plan (grid ``pfft.dims_create(p, 2)``), complex64 ``fftn``
(``c2c``) and float32 ``rfftn`` (``r2c``), forward and (``--directions``) backward, the
plan's inverse (``ifftn``, ``irfftn``: the complex spectrum in): the device's block (``N³/p``
points, as the plan's input layout cuts it), its local transforms and each exchange's
local work (packing, unpacking) exactly as :func:`pfft.executor.run_chain` runs them,
with the transfer itself replaced by one copy of the same bytes
(:class:`CopyTransport`, below). Engines: ``native`` (pfft's kernels:
cuFFT on GPUs, DUCC on CPUs), ``xla`` (``lax.fft``) and ``auto`` (the per-stage engine
:class:`pfft.engines.choice.PerStageEngine`: ``lax.fft`` for transforms over the
innermost axes, native for strided ones; what ``engine="auto"`` runs on GPUs).
Pipelines (``--pipelines``): each engine's program as planned with ``pipeline=k``
(:mod:`pfft.pipeline`: each exchange's window of stages run on ``k`` pieces of the
block), ``1`` being the unpipelined program; ``--pipelined-engines`` limits the
pipelined programs to some engines (``auto``, whose programs the model predicts from,
in a short run).

For each configuration, in one run:

- the time of the program (median of ``--repeats`` runs after one warm-up call that
  also checks the result; calls under 2 ms are timed in a batch of back-to-back calls);
- the time of a plain copy of the block (``jnp.copy``: the bandwidth unit);
- the time of the stand-in transfers alone (each exchange's copy, timed by itself):
  what the program spends in copies that a real exchange replaces by the transfer;
  the rest is the device's local work, what :mod:`benchmarks.model` adds the modelled
  transfers to;
- for a pipelined program, the time of its stages outside every window (each run of
  them compiled and timed as a program of its own, less its stand-in copies): local
  work that runs on the whole block, which no piece's transfer can overlap (the CSV's
  ``outside_ms``: 0 where the windows cover every stage, blank for ``pipeline`` 1);
- the memory the program needs, from ``compiled.memory_analysis()`` (arguments +
  outputs + temporaries), in blocks of its input: kept, and with the input donated
  (``donate_argnums``, less what XLA aliases) to the program planned with
  ``overwrite_x=True``, which may work in the input's buffer;
- the agreement of the engines and pipelines (a strided sample of each output against
  the unpipelined ``xla`` engine's) and, for blocks up to ``--check-max-mib``, the
  error against numpy in float64 of the same block-level math (:func:`block_math`,
  which a pipelined program computes as well).

Configurations whose compiled program would not fit the device's memory are marked
and not run; so are those left when ``--budget-s`` seconds have passed. A failing case
(an error, an out-of-memory) is marked and the run goes on; the run exits with status
1 if any case raised an error or a result disagreed (beyond 1e-5). Writes
``per_device_<platform>.{md,csv}`` under ``--out``; every CSV row carries the machine,
the date and the command (:mod:`benchmarks.model` reads them).

    python -m benchmarks.per_device --platform cpu --sizes 32 --devices 4 8 \\
        --pipelines 1 2
    XLA_PYTHON_CLIENT_MEM_FRACTION=0.95 python -m benchmarks.per_device --platform gpu \\
        --sizes 1024 2048 512 --devices 4 8 64 256 --budget-s 100 --out results
"""
from __future__ import annotations

import argparse
import contextlib
import datetime
import gc
import math
import os
import platform as host_platform
import sys
import time
import traceback
import warnings
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace

# what XLA may take of a GPU's memory (its default is 75 %): the largest blocks need it
os.environ.setdefault("XLA_PYTHON_CLIENT_MEM_FRACTION", "0.95")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax import lax  # noqa: E402

from pfft.autodiff import BACKWARD, FORWARD, Variant  # noqa: E402
from pfft.core import PlanCore, boundary_dtype  # noqa: E402
from pfft.engines import native  # noqa: E402
from pfft.engines import xla as xla_engine  # noqa: E402
from pfft.engines.choice import PerStageEngine, engine_for_plan  # noqa: E402
from pfft.executor import run_chain  # noqa: E402
from pfft.grid import dims_create  # noqa: E402
from pfft.interfaces import TransportCapabilities  # noqa: E402
from pfft.layout import default_layout  # noqa: E402
from pfft.pipeline import per_stage, pipelined, run_order  # noqa: E402
from pfft.planner import Chain  # noqa: E402
from pfft.stages import Exchange, LocalFFT, RealFFT  # noqa: E402

from .common import first_device, median_time, write_results  # noqa: E402
from .model import measured_table  # noqa: E402

__all__ = ["Case", "Outside", "cases", "engines_for", "program", "run", "rows", "failures",
           "machine", "main", "COLUMNS", "CopyTransport", "transfer", "block_math",
           "outside_runs", "outside_program", "exchange_bytes"]

ENGINES = ("native", "xla", "auto")
PLANS = ("slab", "pencil")
KINDS = ("c2c", "r2c")
DIRECTIONS = {"forward": FORWARD, "backward": BACKWARD}   # a plan's forward and inverse
TOLERANCE = 1e-5              # relative L2, single precision, between engines and to numpy
BATCH_S = 2e-3                # calls shorter than this are timed in back-to-back batches
FITS = 0.97                   # share of the device's memory a program may plan to use

PIPELINES = (1, 4)            # pieces of each exchange's window (1: unpipelined)

#: The CSV's columns. ``exchange_mib``: the bytes entering each exchange of the chain
#: (a pipelined exchange's pieces summed); ``outside_ms``: the pipelined program's local
#: work outside every window (0 where the windows cover every stage; blank for
#: ``pipeline`` 1, where nothing is pipelined).
COLUMNS = ["platform", "device", "device_memory_gib", "date", "jax", "command", "n",
           "devices", "plan", "grid", "kind", "direction", "engine", "pipeline", "fft_engines", "block_mib",
           "exchanges", "exchange_groups", "exchange_sizes", "exchange_mib", "ms", "copy_ms",
           "copies_ms", "local_ms", "outside_ms", "local_over_copy", "kept_blocks",
           "donated_blocks", "kept_gib", "donated_gib", "engine_diff", "numpy_err", "status"]


# -- the stand-in transport -------------------------------------------------------------
# A stand-in transport: one device runs what a device of a ``p``-device plan runs.
#
# :class:`CopyTransport` has the interface of :mod:`pfft.transports.xla` (``all_to_all``,
# ``all_gather``, ``axis_index`` and the capability flags the executor reads), but it
# moves nothing between devices: its ``all_to_all`` returns what the real collective
# returns in shape and dtype, at the cost of one copy of the same bytes. So
# :func:`pfft.executor.run_chain` with it runs, on one device, a device's block through
# its local transforms and each exchange's local work (the packing and unpacking) exactly
# as a plan over ``p`` devices does, with the transfer itself replaced by that copy.
#
# The copy is a reversal of the exchange's leading (device) axis inside a ``lax.cond``
# on a flag the program takes as an argument (always true): XLA can neither drop it (a
# plain copy of a value is removed) nor fuse it into the pack before or the unpack after
# it, as it cannot fuse anything into an all-to-all (``optimization_barrier`` does not
# stop that fusion: XLA removes barriers before it fuses). The condition costs a read of
# the flag per exchange (on a GPU, a wait for the work before it: microseconds, which
# show only in blocks of a few MiB). Where the executor hands over a block to be cut
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
# >>> def program(block, live):                          # doctest: +SKIP
# ...     with t.running(live):
# ...         return run_chain(block, chain, inverse=False, scale=1.0, transport=t)


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

    # what pfft.executor and pfft.pieces read (pfft.interfaces): the all-to-all may cut
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


@dataclass
class Case:
    """One configuration: ``n³`` over ``devices`` on a ``plan`` grid, one kind, one
    engine, its exchanges pipelined in ``pipeline`` pieces (1: not pipelined), the
    plan's forward or backward (inverse) program (``direction``).

    ``status`` is empty while the case can run, else why it did not ("does not fit
    ...", "not run ...") or how it failed ("error: ...", "OOM"). The other attributes
    are filled as the case is built, compiled and run (``outside``: the programs of
    the stages a pipelined chain runs outside its windows).
    """

    n: int
    devices: int
    plan: str
    kind: str
    engine: str
    pipeline: int = 1
    direction: str = "forward"
    status: str = ""
    grid: tuple[int, ...] = ()
    core: PlanCore | None = None
    transfers: list = field(default_factory=list)
    fft_engines: str = ""
    compiled: object = None
    outside: list = field(default_factory=list)
    result: dict = field(default_factory=dict)

    @property
    def key(self) -> tuple:
        """The configuration without the engine and the pipeline (those are compared
        within one)."""
        return (self.n, self.devices, self.plan, self.kind, self.direction)

    @property
    def name(self) -> str:
        """``"32³ p=4 slab c2c auto"``, with ``" pipeline 4"`` where pipelined and
        ``" backward"`` for the inverse."""
        return (f"{self.n}³ p={self.devices} {self.plan} {self.kind} {self.engine}"
                + (f" pipeline {self.pipeline}" if self.pipeline > 1 else "")
                + (" backward" if self.direction == "backward" else ""))

    @property
    def variant(self) -> Variant:
        """The plan's variant this case runs."""
        return DIRECTIONS[self.direction]

    @property
    def chain(self) -> Chain:
        """The chain the program runs (the forward one, or it reversed)."""
        return self.core.transform.chain_for(self.variant)

    @property
    def in_dtype(self) -> np.dtype:
        """The input block's dtype: real for a forward ``r2c``, else complex64."""
        real = self.kind == "r2c" and self.direction == "forward"
        return np.dtype(np.float32 if real else np.complex64)


@dataclass
class Outside:
    """Stages ``start`` to ``stop - 1`` of a pipelined chain, outside every window: a
    program of their own on a block of ``shape`` and ``dtype``, run as the inverse
    transforms where ``inverse`` (``transfers``: those it traces, as
    :attr:`Case.transfers`)."""

    start: int
    stop: int
    chain: Chain
    shape: tuple[int, ...]
    dtype: np.dtype
    inverse: bool = False
    transfers: list = field(default_factory=list)


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


def cases(sizes, devices, plans=PLANS, kinds=KINDS, engines=ENGINES,
          pipelines=(1,), pipelined_engines=None, directions=("forward",)) -> list[Case]:
    """Every configuration, in groups of one size and direction that :func:`run` takes
    in order: each size's forward in the order given, the first size's backward right
    after its forward and the other sizes' backward after every forward (what a
    budget leaves out is the backward of the later sizes first); pipelines above 1
    only for ``pipelined_engines`` (None: every engine).

    Raises
    ------
    ValueError
        For a pipeline below 1 or an unknown direction.
    """
    bad = [k for k in pipelines if k < 1]
    if bad:
        raise ValueError(f"pipelines must be at least 1, got {bad}")
    unknown = [d for d in directions if d not in DIRECTIONS]
    if unknown:
        raise ValueError(f"directions must be among {tuple(DIRECTIONS)}, got {unknown}")
    piped = engines if pipelined_engines is None else pipelined_engines
    forward = [(n, "forward") for n in sizes if "forward" in directions]
    backward = [(n, "backward") for n in sizes if "backward" in directions]
    groups = forward[:1] + backward[:1] + forward[1:] + backward[1:]
    return [Case(n, p, plan, kind, engine, k, d) for n, d in groups for p in devices
            for plan in plans for kind in kinds for engine in engines
            for k in pipelines if k == 1 or engine in piped]


def engines_for(device, names) -> dict:
    """Each engine name's engine on ``device``'s platform, or why it is not available.

    The native engines never write pieces (``fuse=False``: pieces are a CPU path that
    the GPU program does not have). On CPUs, where ``engine="auto"`` means native, the
    per-stage engine is built directly.
    """
    plat = "cpu" if device.platform == "cpu" else "gpu"
    out = {}
    for name in names:
        if name not in ENGINES:
            raise ValueError(f"engine must be one of {ENGINES}, got {name!r}")
        if name == "xla":
            out[name] = xla_engine
        elif not native.available(plat):
            out[name] = f"native {plat} engine unavailable: {native.unavailable_reason(plat)}"
        elif name == "native":
            out[name] = engine_for_plan("native", [device], fuse=False)
        elif plat == "cpu":
            out[name] = PerStageEngine(native, native.num_threads(), "cpu", False)
        else:
            engine = engine_for_plan("auto", [device], fuse=False)
            out[name] = (engine if isinstance(engine, PerStageEngine)
                         else "engine='auto' is xla here")
    return out


def _build(case: Case, engine) -> None:
    """The plan core of ``case`` over a stand-in transport (``case.status`` says why
    there is none: a grid the default layout cannot use whole)."""
    case.grid = grid_of(case.plan, case.devices)
    if case.plan == "pencil" and case.grid[0] == 1:
        case.status = f"no pencil grid of {case.devices} devices"
        return
    mesh_shape = tuple(zip(("x", "y"), case.grid))
    shape = (case.n,) * 3
    layout = default_layout(shape, (0, 1, 2), mesh_shape)
    if layout.unused_mesh_axes:
        case.status = f"not a {case.plan}: {case.n}³ cannot be cut over {case.grid}"
        return
    case.core = PlanCore(shape, np.complex64, (0, 1, 2), "backward", layout, kind=case.kind,
                         n=None, spectrum="numpy", dealiased=(), engine=engine,
                         transport=CopyTransport(mesh_shape), pipeline=case.pipeline)


def _dtype_before(chain: Chain, start: int, dtype: np.dtype) -> np.dtype:
    """The dtype of the block entering stage ``start`` of ``chain`` (forward or
    reversed) of a plan computing in the complex ``dtype``: real until a real-to-complex stage, complex
    after it (and the reverse for complex-to-real)."""
    out = boundary_dtype(chain, dtype, first=True)
    for st in chain.stages[:start]:
        if isinstance(st, RealFFT):
            out = np.dtype(dtype) if st.to_complex else np.dtype(np.finfo(dtype).dtype)
    return out


def outside_runs(core: PlanCore, variant: Variant = FORWARD) -> list[Outside]:
    """The maximal runs of stages that the pipelined chain of ``core``'s ``variant``
    runs outside every window (on the whole block), each as a chain of its own; none
    for an unpipelined plan. Each run starts and ends in numpy's axis order: exact for
    a run that starts the chain (a slab's or a real transform's first stage), while a
    later run could take a reorder more or less than the program does."""
    pieces = core.transform.pipeline
    if pieces < 2:
        return []
    chain, windows = pipelined(core.transform.chain_for(variant), pieces)
    inside = {i for w in windows for i in range(w.start, w.stop)}
    layouts = (chain.in_layout,) + chain.layouts()
    out, i = [], 0
    while i < len(chain.stages):
        if i in inside:
            i += 1
            continue
        a = i
        while i < len(chain.stages) and i not in inside:
            i += 1
        sub = Chain(layouts[a], layouts[i], chain.stages[a:i])
        out.append(Outside(a, i, sub, tuple(layouts[a].local_shape),
                           _dtype_before(chain, a, core.dtype), variant.inverse))
    return out


def outside_program(core: PlanCore, run: Outside):
    """The program of ``run`` (:func:`outside_runs`): ``f(block, live)``, the chain's
    stages run unpipelined with ``core``'s engine and stand-in transport. Tracing it
    sets ``run.transfers``."""
    transport = core.transform.transport

    def stages(block, live):
        with transport.running(live) as transfers:
            out = run_chain(block, run.chain, inverse=run.inverse, scale=1.0,
                            engine=core.transform.engine, transport=transport)
        run.transfers[:] = transfers
        return out
    return stages


def exchange_bytes(core: PlanCore, transfers, variant: Variant = FORWARD) -> list[int]:
    """The bytes entering each exchange of the chain of ``core``'s ``variant``, in
    order, from the ``(shape, dtype)`` of each transfer its program traced: a pipelined
    exchange's pieces summed.

    Raises
    ------
    ValueError
        Where ``transfers`` are not one per exchange the program runs.
    """
    chain, windows = pipelined(core.transform.chain_for(variant), core.transform.pipeline)
    order = [i for i in run_order(chain, windows) if isinstance(chain.stages[i], Exchange)]
    if len(order) != len(transfers):
        raise ValueError(f"{len(transfers)} transfers traced, but the chain runs "
                         f"{len(order)} exchanges (pieces counted)")
    total = {i: 0 for i, st in enumerate(chain.stages) if isinstance(st, Exchange)}
    for i, (shape, dtype) in zip(order, transfers):
        total[i] += math.prod(shape) * np.dtype(dtype).itemsize
    return list(total.values())


def program(core: PlanCore, record: list | None = None, overwrite_x: bool = False,
            variant: Variant = FORWARD):
    """The per-device program of ``core``'s ``variant`` (forward, or ``BACKWARD``):
    ``f(block, live)``, ``live`` the stand-in's flag (pass ``True``). Tracing it sets
    ``record`` to the ``(shape, dtype)`` of each transfer. ``overwrite_x``: as the plan
    option, the program may work in its block's buffer (for a donated block)."""
    transform = replace(core.transform, overwrite_x=overwrite_x)

    def run(block, live):
        with transform.transport.running(live) as transfers:
            out = transform.apply(block, variant)
        if record is not None:
            record[:] = transfers
        return out
    return run


def _lower(case: Case, device):
    """Trace ``case``'s program (kept and donated) for ``device``; record its transfers
    and, for the per-stage engine, which engine each FFT stage runs."""
    on = jax.sharding.SingleDeviceSharding(device)
    specs = (jax.ShapeDtypeStruct(case.chain.in_layout.local_shape, case.in_dtype,
                                  sharding=on),
             jax.ShapeDtypeStruct((), np.bool_, sharding=on))
    fn = program(case.core, case.transfers, variant=case.variant)
    engine = case.core.engine
    log = []
    if isinstance(engine, PerStageEngine):
        with engine.recording() as log:
            kept = jax.jit(fn).lower(*specs)
    else:
        kept = jax.jit(fn).lower(*specs)
    chain, windows = pipelined(case.chain, case.core.transform.pipeline)
    case.fft_engines = ", ".join(per_stage(chain, windows, log, (LocalFFT, RealFFT)))
    with warnings.catch_warnings():                 # donated buffers of other shapes
        warnings.simplefilter("ignore")
        donated = jax.jit(program(case.core, overwrite_x=True, variant=case.variant),
                          donate_argnums=0).lower(*specs)
    return kept, donated


def _make_block(shape, dtype):
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


def _probe(y):
    """A strided sample of at most 32 points along each axis: what engines compare."""
    return y[tuple(slice(None, None, max(1, -(-d // 32))) for d in y.shape)]


def _rel(a, b) -> float:
    a, b = np.asarray(a, np.complex128), np.asarray(b, np.complex128)
    return float(np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-300))


def _device_memory(device) -> int:
    """Bytes XLA may use on ``device`` (the host's memory for a CPU)."""
    try:
        limit = (device.memory_stats() or {}).get("bytes_limit")
    except Exception:                               # noqa: BLE001 (not every backend)
        limit = None
    if limit:
        return int(limit)
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def _short(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}"
    if "RESOURCE_EXHAUSTED" in text or "out of memory" in text.lower():
        return "OOM"
    return "error: " + text.splitlines()[0][:160]


class _Compiler:
    """Compiles lowered programs in a pool of threads (XLA compiles without the
    interpreter lock) and remembers helper programs by their arguments."""

    def __init__(self, device, workers: int):
        self.device = device
        self.pool = ThreadPoolExecutor(max_workers=max(1, workers))
        self.helpers: dict = {}

    def submit(self, lowered):
        return self.pool.submit(lowered.compile)

    def helper(self, key: tuple, fn, *specs):
        """``jax.jit(fn)`` compiled for ``specs`` (shape, dtype pairs), submitted once
        per ``key`` (what names ``fn``) and ``specs``."""
        key = tuple(key) + tuple(specs)
        if key not in self.helpers:
            on = jax.sharding.SingleDeviceSharding(self.device)
            args = [jax.ShapeDtypeStruct(s, d, sharding=on) for s, d in specs]
            lowered = jax.jit(fn, out_shardings=on).lower(*args)
            self.helpers[key] = self.submit(lowered)
        return self.helpers[key]


def _transfer_spec(shape, dtype) -> tuple:
    """A transfer's array as ``(p, rest)``: its copy costs the same for any shape."""
    return ((shape[0], math.prod(shape[1:])), np.dtype(dtype))


def _timed(fn, *args, repeats: int) -> float:
    """Median ms of ``fn(*args)`` (warmed up by the caller), in batches of back-to-back
    calls where one call is under :data:`BATCH_S`."""
    start = time.perf_counter()
    fn(*args).block_until_ready()
    once = time.perf_counter() - start
    calls = max(1, min(50, int(BATCH_S / max(once, 1e-6))))
    return 1e3 * median_time(fn, *args, repeats=repeats, warmup=0, calls=calls)


def run(cases_: list[Case], device, *, repeats: int = 5, check_max_mib: float = 4.0,
        budget_s: float | None = None, workers: int | None = None, progress=print) -> list[Case]:
    """Build, compile and run every case on ``device``; fills each case's ``result``
    and ``status``. Cases are taken in groups of one size and direction, in the order
    given: a group's programs are compiled together (in threads), then run one after
    the other."""
    start = time.perf_counter()
    limit = _device_memory(device)
    engines = engines_for(device, sorted({c.engine for c in cases_}))
    comp = _Compiler(device, workers or min(16, os.cpu_count() or 1))
    live = jax.device_put(np.bool_(True), device)
    late = f"not run: past the {budget_s:g} s budget" if budget_s is not None else ""

    def over_budget() -> bool:
        return budget_s is not None and time.perf_counter() - start > budget_s

    for n, direction in dict.fromkeys((c.n, c.direction) for c in cases_):
        group = [c for c in cases_ if (c.n, c.direction) == (n, direction)]
        if over_budget():
            for c in group:
                c.status = c.status or late
            continue
        pending = {id(c): _prepare(c, engines[c.engine], device, comp, limit) for c in group}
        for c in group:
            if pending[id(c)] is not None:
                _compiled(c, pending[id(c)], limit)
        for c in group:
            if c.status or c.compiled is None:
                continue
            if over_budget():
                c.status = late
                continue
            _guarded(c, _measure, c, comp, live, repeats, check_max_mib)
            c.compiled = None
            gc.collect()
            progress(_line(c))
        _compare(group)
    comp.pool.shutdown()
    return cases_


def _guarded(c: Case, fn, *args):
    """``fn(*args)``; an exception marks ``c`` (its status) and the run goes on."""
    try:
        return fn(*args)
    except Exception as exc:                      # noqa: BLE001 (reported, run goes on)
        c.status = _short(exc)
        traceback.print_exc(file=sys.stderr)
        return None


def _prepare(c: Case, engine, device, comp: _Compiler, limit: int):
    """Build and lower ``c`` and submit its compilations (its programs and the helpers
    that make, copy and sample its blocks); ``None`` where it cannot run."""
    if isinstance(engine, str):                   # why the engine is not available
        c.status = engine
        return None

    def prepare():
        _build(c, engine)
        if c.status:
            return None
        shape = c.chain.in_layout.local_shape
        nbytes = math.prod(shape) * c.in_dtype.itemsize
        if 2 * nbytes > limit:                    # its input and output alone
            c.status = (f"does not fit: 2 blocks of {nbytes / 2**30:.1f} GiB > "
                        f"{limit / 2**30:.0f} GiB")
            return None
        kept, donated = _lower(c, device)
        comp.helper(("block", shape, c.in_dtype), _make_block(shape, c.in_dtype))
        comp.helper(("copy",), jnp.copy, (shape, c.in_dtype))
        c.outside = outside_runs(c.core, c.variant)
        for r in c.outside:                     # tracing each records its transfers
            comp.helper(("block", r.shape, r.dtype), _make_block(r.shape, r.dtype))
            comp.helper(("outside", c.name, r.start), outside_program(c.core, r),
                        (r.shape, r.dtype), ((), np.bool_))
        for t in c.transfers + [t for r in c.outside for t in r.transfers]:
            comp.helper(("transfer",), transfer, _transfer_spec(*t), ((), np.bool_))
        out = jax.eval_shape(program(c.core, variant=c.variant),
                             jax.ShapeDtypeStruct(shape, c.in_dtype),
                             jax.ShapeDtypeStruct((), np.bool_))
        comp.helper(("probe",), _probe, (out.shape, out.dtype))
        return comp.submit(kept), comp.submit(donated)
    return _guarded(c, prepare)


def _compiled(c: Case, futures, limit: int) -> None:
    """Wait for ``c``'s programs; read their memory; mark it if it would not fit."""
    def collect():
        kept, donated = (f.result() for f in futures)
        _memory(c, kept, donated)
        if c.result["kept_bytes"] > FITS * limit:
            c.status = (f"does not fit: needs {c.result['kept_bytes'] / 2**30:.1f} GiB of "
                        f"{limit / 2**30:.0f} GiB")
        else:
            c.compiled = kept
    _guarded(c, collect)


def _memory(c: Case, kept, donated) -> None:
    """Arguments + outputs + temporaries of both compiled programs, in input blocks."""
    block = math.prod(c.chain.in_layout.local_shape) * c.in_dtype.itemsize
    for name, compiled in (("kept", kept), ("donated", donated)):
        m = compiled.memory_analysis()
        if m is None:                             # pragma: no cover - backend without it
            continue
        total = (m.argument_size_in_bytes + m.output_size_in_bytes + m.temp_size_in_bytes
                 - (m.alias_size_in_bytes if name == "donated" else 0))
        c.result[f"{name}_bytes"] = total
        c.result[f"{name}_blocks"] = total / block
    c.result.setdefault("kept_bytes", 0)


def _measure(c: Case, comp: _Compiler, live, repeats: int, check_max_mib: float) -> None:
    """Run ``c`` (the warm-up call checks it), time it, its copies and a block copy."""
    shape = c.chain.in_layout.local_shape
    x = comp.helper(("block", shape, c.in_dtype), _make_block(shape, c.in_dtype)).result()()
    y = c.compiled(x, live)
    c.result["probe"] = np.asarray(comp.helper(("probe",), _probe, (y.shape, y.dtype)).result()(y))
    block_mib = x.size * x.dtype.itemsize / 2 ** 20
    if block_mib <= check_max_mib:
        c.result["numpy_err"] = _rel(y, block_math(np.asarray(x), c.chain, c.variant.inverse))
    del y
    c.result["ms"] = _timed(c.compiled, x, live, repeats=repeats)
    c.result["copy_ms"] = _timed(comp.helper(("copy",), jnp.copy, (shape, c.in_dtype)).result(), x,
                                 repeats=repeats)
    del x
    c.result["copies_ms"] = _copies_ms(c.transfers, comp, live, repeats)
    if c.pipeline > 1:
        c.result["outside_ms"] = sum(_outside_ms(c, r, comp, live, repeats) for r in c.outside)


def _copies_ms(transfers, comp: _Compiler, live, repeats: int) -> float:
    """The stand-in copies of ``transfers``, each timed by itself, summed."""
    total = 0.0
    for t in transfers:
        spec = _transfer_spec(*t)
        fn = comp.helper(("transfer",), transfer, spec, ((), np.bool_)).result()
        a = jnp.zeros(*spec, device=comp.device)
        fn(a, live).block_until_ready()
        total += _timed(fn, a, live, repeats=repeats)
        del a
    return total


def _outside_ms(c: Case, r: Outside, comp: _Compiler, live, repeats: int) -> float:
    """The time of the stages ``r`` of ``c``'s pipelined chain run by themselves on a
    block of their input's shape and dtype, less the stand-in copies they make."""
    x = comp.helper(("block", r.shape, r.dtype), _make_block(r.shape, r.dtype)).result()()
    fn = comp.helper(("outside", c.name, r.start), outside_program(c.core, r),
                     (r.shape, r.dtype), ((), np.bool_)).result()
    fn(x, live).block_until_ready()
    ms = _timed(fn, x, live, repeats=repeats)
    del x
    return ms - _copies_ms(r.transfers, comp, live, repeats)


def _compare(group: list[Case]) -> None:
    """Each engine's and pipeline's sample against the reference of its configuration:
    the unpipelined xla engine's (else the first xla run's, else the first run's)."""
    for key in dict.fromkeys(c.key for c in group):
        ran = [c for c in group if c.key == key and "probe" in c.result]
        if not ran:
            continue
        xla = [c for c in ran if c.engine == "xla"]
        ref = next((c for c in xla if c.pipeline == 1), (xla or ran)[0])
        for c in ran:
            c.result["engine_diff"] = _rel(c.result["probe"], ref.result["probe"])
            c.result["reference"] = (ref.engine if ref.pipeline == 1
                                     else f"{ref.engine} pipeline {ref.pipeline}")


def _line(c: Case) -> str:
    r = c.result
    if c.status:
        return f"{c.name}: {c.status}"
    outside = (f", outside windows {r['outside_ms']:.3g} ms" if "outside_ms" in r else "")
    return (f"{c.name}: {r['ms']:.3g} ms (copy {r['copy_ms']:.3g}, in copies "
            f"{r['copies_ms']:.3g}{outside}), memory {r.get('kept_blocks', math.nan):.2f} / "
            f"{r.get('donated_blocks', math.nan):.2f} blocks")


def failures(cases_: list[Case]) -> list[str]:
    """What failed: errors and results beyond :data:`TOLERANCE` (a program that ran out
    of memory is marked in the table, not counted here: it says how much fits)."""
    out = []
    for c in cases_:
        what = c.name
        if c.status.startswith("error"):
            out.append(f"{what}: {c.status}")
        for key in ("engine_diff", "numpy_err"):
            v = c.result.get(key)
            if v is not None and not v <= TOLERANCE:
                out.append(f"{what}: {key} {v:.1e}")
    return out


def rows(cases_: list[Case], meta: dict) -> list[dict]:
    """One CSV row (:data:`COLUMNS`) per case; ``meta`` fills the machine's columns."""
    out = []
    for c in cases_:
        r = c.result
        row = dict(meta, n=c.n, devices=c.devices, plan=c.plan,
                   grid="x".join(map(str, c.grid or grid_of(c.plan, c.devices))),
                   kind=c.kind, direction=c.direction, engine=c.engine, pipeline=c.pipeline,
                   fft_engines=c.fft_engines,
                   status=c.status or "ok")
        if c.core is not None:
            layout = c.chain.in_layout
            names = [m for m, _ in layout.mesh_shape]
            row["block_mib"] = math.prod(layout.local_shape) * c.in_dtype.itemsize / 2 ** 20
            ex = [st for st in c.chain.stages if isinstance(st, Exchange)]
            groups = [((st.mesh_axis,) if isinstance(st.mesh_axis, str) else st.mesh_axis)
                      for st in ex]
            row["exchanges"] = len(ex)
            row["exchange_groups"] = ";".join("+".join(str(names.index(m)) for m in g)
                                              for g in groups)
            row["exchange_sizes"] = ";".join(str(st.size) for st in ex)
            if c.transfers:                       # traced
                row["exchange_mib"] = ";".join(f"{b / 2**20:.6g}"
                                               for b in exchange_bytes(c.core, c.transfers,
                                                                       c.variant))
        for key in ("ms", "copy_ms", "copies_ms", "outside_ms", "engine_diff", "numpy_err"):
            row[key] = r.get(key, "")
        if "ms" in r:
            row["local_ms"] = r["ms"] - r["copies_ms"]
            row["local_over_copy"] = row["local_ms"] / r["copy_ms"]
        for key in ("kept", "donated"):
            if f"{key}_bytes" in r and r[f"{key}_bytes"]:
                row[f"{key}_blocks"] = r[f"{key}_blocks"]
                row[f"{key}_gib"] = r[f"{key}_bytes"] / 2 ** 30
        out.append({k: row.get(k, "") for k in COLUMNS})
    return out


def machine(device, command: str) -> dict:
    """The columns every row carries: platform, device, memory, date, jax, command."""
    return dict(platform="cpu" if device.platform == "cpu" else "gpu",
                device=(device.device_kind if device.platform != "cpu" else
                        f"{host_platform.processor() or host_platform.machine()}, "
                        f"{os.cpu_count()} cores"),
                device_memory_gib=f"{_device_memory(device) / 2**30:.1f}",
                date=str(datetime.date.today()), jax=jax.__version__, command=command)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--platform", choices=["cpu", "gpu"], default="cpu")
    ap.add_argument("--sizes", type=int, nargs="+", default=[512, 1024, 2048])
    ap.add_argument("--devices", type=int, nargs="+", default=[4, 8, 64, 256])
    ap.add_argument("--plans", nargs="+", choices=PLANS, default=list(PLANS))
    ap.add_argument("--kinds", nargs="+", choices=KINDS, default=list(KINDS))
    ap.add_argument("--engines", nargs="+", choices=ENGINES, default=list(ENGINES))
    ap.add_argument("--pipelines", type=int, nargs="+", default=list(PIPELINES),
                    help="pieces each exchange's window is cut into (pfft's pipeline=; "
                         "1: unpipelined; default: %(default)s)")
    ap.add_argument("--pipelined-engines", nargs="+", choices=ENGINES, default=None,
                    help="the engines measured at pipelines above 1 (default: every one)")
    ap.add_argument("--directions", nargs="+", choices=list(DIRECTIONS), default=["forward"],
                    help="the plan's forward program, its backward (inverse) one, or both "
                         "(default: %(default)s)")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--check-max-mib", type=float, default=4.0,
                    help="largest input block (MiB) checked against numpy on the host")
    ap.add_argument("--budget-s", type=float, default=None,
                    help="start no configuration after this many seconds")
    ap.add_argument("--workers", type=int, default=None, help="threads compiling (default: "
                    "the cores, at most 16)")
    ap.add_argument("--out", default="results")
    args = ap.parse_args(argv)
    device = first_device(args.platform)
    command = "python -m benchmarks.per_device " + " ".join(
        argv if argv is not None else sys.argv[1:])
    meta = machine(device, command)
    header = (f"pfft per-device programs, {meta['date']}, {meta['device']} "
              f"({meta['device_memory_gib']} GiB for XLA), jax {meta['jax']}; median of "
              f"{args.repeats} after a warm-up; `{command}`")
    print(header, flush=True)
    started = time.perf_counter()
    if min(args.pipelines) < 1:
        ap.error(f"--pipelines must be at least 1, got {args.pipelines}")
    done = run(cases(args.sizes, args.devices, args.plans, args.kinds, args.engines,
                     args.pipelines, args.pipelined_engines, args.directions), device,
               repeats=args.repeats, check_max_mib=args.check_max_mib, budget_s=args.budget_s,
               workers=args.workers, progress=lambda s: print(s, file=sys.stderr, flush=True))
    out = rows(done, meta)
    text = measured_table(out, header + f" ({time.perf_counter() - started:.0f} s)")
    print(text.split("\n", 2)[2])
    write_results(out, text, args.out, f"per_device_{meta['platform']}")
    failed = failures(done)
    if failed:
        sys.exit("FAILED: " + "; ".join(failed))


if __name__ == "__main__":
    main()
