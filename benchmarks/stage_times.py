"""Each step of a per-device program timed alone, against a floor of its own: which
stage of the local work is over its floor.

A plan's program for one variant (``core.transform.program(variant)``:
:class:`pfft.program.Program`, the steps ``print(plan)`` lists) is a sequence of
immutable steps, each run as ``step.run(block, transport)``. :mod:`benchmarks.per_device`
times the whole program; here each step is compiled by itself (:func:`step_program`,
over the same stand-in transport, :class:`benchmarks.device_program.CopyTransport`) on
a block of its input's shape and dtype (:func:`step_specs`), and timed, an exchange's
time less its stand-in copy (the whole program's transfers, each timed by itself), as
the program's local work is. Each step's floor (:func:`step_floor`): for an FFT step
the device's own ``jnp.fft`` transform of the same lengths laid out contiguously; for
an exchange one copy of the bytes it moves; for any other step (a transpose, a rescale)
one copy of the larger of its input and output; measured once per shape and dtype
(:func:`benchmarks.device_program.measured_ms`). :func:`columns` writes them as the
CSV's per-step columns, with the step most over its floor
(:func:`benchmarks.floors.worst_stage`).

A step alone pays its own call and is fused with none of its neighbours, so the steps'
times do not add up to the program's (mostly to more): they say where the local work
goes, the program's time what it costs. A step whose figure fails (an out-of-memory) has that
figure marked (``OOM``, ``error``), the other figures stand.
"""
from __future__ import annotations

import math
import sys
from dataclasses import dataclass, field, replace

import jax
import jax.numpy as jnp
import numpy as np

from pfft.autodiff import Variant
from pfft.plan_core import Transform
from pfft.program import Fft, RealFft

from .device_program import Compiler, failure_text, make_block, measured_ms
from .floors import worst_stage

__all__ = ["Stage", "step_program", "step_specs", "step_floor", "fft_floor", "prepare",
           "measure", "columns", "summary"]


@dataclass
class Stage:
    """One step of a program, timed alone.

    ``before`` and ``after``: the block's ``(shape, dtype)`` around it; ``transfers``:
    the ``(shape, dtype)`` of each stand-in transfer it makes (filled as it is traced);
    ``compiled``: a future of the compiled step. ``ms`` (its local time) and
    ``floor_ms`` are ``None`` until measured, then milliseconds, or the mark of the
    failure that left them unmeasured (``"OOM"``, ``"error"``).
    """

    step: object
    before: tuple
    after: tuple
    transfers: list = field(default_factory=list)
    compiled: object = None
    ms: float | str | None = None
    floor_ms: float | str | None = None


# -- one step alone, its blocks and its floor ---------------------------------------------
def step_program(transform: Transform, step, record: list | None = None):
    """``f(block, live)``: one ``step`` of ``transform``'s program alone, over its
    transport (a :class:`~benchmarks.device_program.CopyTransport`), as
    :func:`benchmarks.device_program.program` runs the whole; tracing it sets ``record``
    to the ``(shape, dtype)`` of each transfer the step makes.

    A step that writes its transform over its input (``inplace``: in the program the
    input is dead after it) runs here writing a new buffer: the argument of a program of
    its own is kept, and XLA would copy it first, a pass the whole program does not
    make (:mod:`pfft.engines.native`: no extra pass either way otherwise).
    """
    if getattr(step, "inplace", False):
        step = replace(step, inplace=False)

    def run(block, live):
        with transform.transport.running(live) as transfers:
            out = step.run(block, transform.transport)
        if record is not None:
            record[:] = transfers
        return out
    return run


def step_specs(transform: Transform, variant: Variant, in_dtype) -> list[tuple]:
    """The block's ``(shape, dtype)`` before each step of ``transform``'s ``variant``
    program and after the last: its physical shapes as the program records them, its
    dtypes by ``jax.eval_shape`` of the steps in order from an input of ``in_dtype``
    (real before a real-to-complex FFT, complex after it).

    Raises
    ------
    ValueError
        Where a step's output does not have the shape the program records.
    """
    prog = transform.program(variant)
    specs = [(tuple(prog.shapes[0]), np.dtype(in_dtype))]
    flag = jax.ShapeDtypeStruct((), np.bool_)
    for i, step in enumerate(prog.steps):
        out = jax.eval_shape(step_program(transform, step),
                             jax.ShapeDtypeStruct(*specs[-1]), flag)
        if tuple(out.shape) != tuple(prog.shapes[i + 1]):
            raise ValueError(f"step {i + 1} ({step}) makes a block {tuple(out.shape)}, the "
                             f"program records {tuple(prog.shapes[i + 1])}")
        specs.append((tuple(out.shape), np.dtype(out.dtype)))
    return specs


def step_floor(step, before: tuple, after: tuple, transfers) -> tuple:
    """The floor of one program step, ``(key, fn, (shape, dtype))`` as
    :func:`benchmarks.device_program.measured_ms` takes it: ``before`` and ``after``
    the block's ``(shape, dtype)`` around the step, ``transfers`` the ``(shape, dtype)``
    of each transfer it makes (:func:`step_program`'s record).

    - an FFT step (:class:`pfft.program.Fft`, :class:`pfft.program.RealFft`): the
      device's own transform of the same lengths laid out contiguously
      (:func:`fft_floor`);
    - a step that makes transfers (an exchange): one copy of their bytes;
    - any other step (a transpose, a rescale, ...): one copy of the larger of its input
      and output.
    """
    if isinstance(step, (Fft, RealFft)):
        return fft_floor(step, before)
    if transfers:
        return ("copy",), jnp.copy, _flat(transfers)
    larger = max((before, after), key=lambda s: math.prod(s[0]) * np.dtype(s[1]).itemsize)
    return ("copy",), jnp.copy, (tuple(larger[0]), np.dtype(larger[1]))


def fft_floor(step, before: tuple) -> tuple:
    """The device's own FFT of the lengths ``step`` transforms (an
    :class:`~pfft.program.Fft` or :class:`~pfft.program.RealFft`; ``before``: the
    block's ``(shape, dtype)``), laid out contiguously: the transformed axes innermost
    in one ``jnp.fft`` call, in the step's order, the block's other axes as one batch
    axis in front; for a real step ``rfftn`` / ``irfftn`` with the halved axis last.
    ``(key, fn, (shape, dtype))``."""
    shape, dtype = before
    lengths = tuple(shape[p] for p in step.positions)
    batch = math.prod(shape) // math.prod(lengths)
    axes = tuple(range(1, len(lengths) + 1))
    spec = ((batch,) + lengths, np.dtype(dtype))
    if isinstance(step, RealFft) and not step.stage.to_complex:
        real = lengths[:-1] + (step.stage.n,)
        return (("stage floor", "irfftn", real),
                lambda y: jnp.fft.irfftn(y, s=real, axes=axes), spec)
    name = "rfftn" if isinstance(step, RealFft) else "ifftn" if step.inverse else "fftn"
    transform = getattr(jnp.fft, name)
    return ("stage floor", name), lambda x: transform(x, axes=axes), spec


def _flat(arrays) -> tuple:
    """One flat array holding the bytes of every ``(shape, dtype)`` in ``arrays``.

    Raises
    ------
    ValueError
        Where their dtypes differ.
    """
    dtypes = {np.dtype(d) for _, d in arrays}
    if len(dtypes) != 1:
        raise ValueError(f"transfers of several dtypes: {sorted(map(str, dtypes))}")
    return (sum(math.prod(s) for s, _ in arrays),), dtypes.pop()


# -- compiled and timed -------------------------------------------------------------------
def prepare(transform: Transform, variant: Variant, in_dtype, comp: Compiler,
            name: str) -> list[Stage]:
    """Each step of ``transform``'s ``variant`` program (its input of ``in_dtype``)
    lowered alone, its compilation submitted to ``comp`` with the helpers that make its
    block and measure its floor. A floor that cannot be prepared is marked (that figure
    only, reported with ``name``, the case's); a step that cannot be traced alone,
    where the whole program traced it, raises."""
    on = jax.sharding.make_single_device_sharding(comp.device)
    flag = jax.ShapeDtypeStruct((), np.bool_, sharding=on)
    specs = step_specs(transform, variant, in_dtype)
    stages = []
    for k, (step, before, after) in enumerate(
            zip(transform.program(variant).steps, specs, specs[1:]), 1):
        st = Stage(step, before, after)
        lowered = jax.jit(step_program(transform, step, st.transfers)).lower(
            jax.ShapeDtypeStruct(*before, sharding=on), flag)
        st.compiled = comp.submit(lowered)
        comp.helper(("block",) + before, make_block(*before))
        # None (measured later) where its floor is prepared, else the failure's mark
        st.floor_ms = _figure_or_mark(name, k, lambda: _prepare_floor(st, comp))
        stages.append(st)
    return stages


def _prepare_floor(st: Stage, comp: Compiler) -> None:
    """Submit the compilations of ``st``'s floor and of the block it runs on."""
    key, fn, spec = step_floor(st.step, st.before, st.after, st.transfers)
    comp.helper(("block",) + spec, make_block(*spec))
    comp.helper(key, fn, spec)


def measure(stages: list[Stage], copies: list[tuple], comp: Compiler, live, timed,
            name: str) -> None:
    """Time each of ``stages`` alone, by ``timed(fn, *args)`` (ms, after a warm-up
    call), less the stand-in copies it makes, and its floor. ``copies``: the whole
    program's transfers as ``((shape, dtype), ms)`` pairs, in order, each timed by
    itself; ``live``: the stand-in's flag. A figure that fails is marked and reported
    with ``name`` (the case's); the other figures stand. Each step's compiled program is
    dropped once it is timed."""
    def floor(st):
        return measured_ms(comp, *step_floor(st.step, st.before, st.after, st.transfers),
                           timed)

    for k, (st, copy_ms) in enumerate(zip(stages, _copies_per_step(stages, copies)), 1):
        st.ms = _figure_or_mark(name, k, lambda: _step_ms(st, comp, live, timed) - copy_ms)
        st.compiled = None                        # timed: the program is not needed again
        if st.floor_ms is None:                   # else marked as it was prepared
            st.floor_ms = _figure_or_mark(name, k, lambda: floor(st))


def _copies_per_step(stages: list[Stage], copies: list[tuple]) -> list[float]:
    """The stand-in copies each of ``stages`` makes (ms): the whole program's
    ``copies`` handed to the steps that trace them, in order.

    Raises
    ------
    ValueError
        Where the steps alone trace other transfers than the whole program.
    """
    traced = [t for st in stages for t in st.transfers]
    if traced != [t for t, _ in copies]:
        raise ValueError(f"the steps alone trace the transfers {traced}, the program "
                         f"{[t for t, _ in copies]}")
    times = iter(ms for _, ms in copies)
    return [sum(next(times) for _ in st.transfers) for st in stages]


def _step_ms(st: Stage, comp: Compiler, live, timed) -> float:
    """Milliseconds of step ``st`` alone on a block of its input."""
    x = comp.helper(("block",) + tuple(st.before), make_block(*st.before)).result()()
    try:
        return timed(st.compiled.result(), x, live)
    finally:
        del x


def _figure_or_mark(name: str, k: int, measure_it) -> float | str | None:
    """``measure_it()``; where it fails, the failure's mark (``"OOM"``, ``"error"``),
    reported with step ``k`` of case ``name``, and the run goes on."""
    try:
        return measure_it()
    except Exception as exc:                      # noqa: BLE001 (reported, run goes on)
        why = failure_text(exc)
        print(f"{name}: step {k}: {why}", file=sys.stderr)
        return "OOM" if why == "OOM" else "error"


# -- what the CSV and the progress lines say -----------------------------------------------
def columns(stages: list[Stage]) -> dict:
    """The CSV's per-step columns (:data:`benchmarks.floors.STAGE_COLUMNS`), each
    ``";"``-joined in the steps' order: ``stages`` (``str(step)``), ``stage_ms`` and
    ``stage_floor_ms`` (ms, or a failure's mark), and ``worst_stage``; empty where the
    steps were not timed."""
    if not stages or any(st.ms is None for st in stages):
        return {}
    return dict(stages=_joined(str(st.step) for st in stages),
                stage_ms=_joined(_text(st.ms) for st in stages),
                stage_floor_ms=_joined(_text(st.floor_ms) for st in stages),
                worst_stage=_worst(stages))


def summary(stages: list[Stage]) -> str:
    """A progress line's account of the steps: their times over their floors and the
    worst, where over the goal."""
    if not stages:
        return ""
    worst = _worst(stages)
    return (f"steps {_joined(_text(st.ms) for st in stages)} ms over floors "
            f"{_joined(_text(st.floor_ms) for st in stages)} ms"
            + (f", worst {worst}" if worst else ""))


def _text(v: float | str | None) -> str:
    """A step's figure as the CSV writes it: ms, or the mark of its failure."""
    return "" if v is None else v if isinstance(v, str) else f"{v:.6g}"


def _joined(texts) -> str:
    """``texts`` joined by ``";"``.

    Raises
    ------
    ValueError
        Where one of them holds a ``";"`` (it would split in two).
    """
    texts = list(texts)
    bad = [t for t in texts if ";" in t]
    if bad:
        raise ValueError(f"a step's text holds ';': {bad}")
    return ";".join(texts)


def _worst(stages: list[Stage]) -> str:
    """The step most over its floor, where over the goal (or ``""``)."""
    def value(v):
        return v if isinstance(v, float) else math.nan
    return worst_stage([str(st.step) for st in stages], [value(st.ms) for st in stages],
                       [value(st.floor_ms) for st in stages])
