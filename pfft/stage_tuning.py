"""Tuning a plan's FFT steps: for a plan whose engine chooses per step
(``engine="auto"`` on GPUs, :class:`pfft.engines.per_stage.PerStageEngine`), each FFT
step of its forward and backward programs timed with each engine on the device, and
the faster filed as wisdom (:func:`pfft.wisdom.record_stage`), which the programs of
plans made afterwards take (:meth:`PerStageEngine.choose`).

A step is timed alone, on a block of its own shape and dtype, as its program runs it
(out of place: an in-place step's input would have to be donated anew on each call).
:func:`pfft.tune` and :func:`pfft.mpi.tune` call it for each candidate grid before
timing the candidate.
"""
from __future__ import annotations

import statistics
import time
from dataclasses import replace

import jax
import numpy as np

from . import wisdom
from .autodiff import BACKWARD, FORWARD
from .program import Fft, RealFft

__all__ = ["tune_stages", "median_seconds"]


def median_seconds(fn, x, repeats: int, sync=None) -> float:
    """Median seconds of ``repeats`` calls ``fn(x)`` after a warm-up call (``sync``: a
    function that turns one rank's time into the slowest rank's)."""
    fn(x).block_until_ready()
    runs = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn(x).block_until_ready()
        elapsed = time.perf_counter() - t0
        runs.append(sync(elapsed) if sync else elapsed)
    return statistics.median(runs)


def tune_stages(plan, device, repeats: int = 3) -> int:
    """Time each FFT step of ``plan``'s forward and backward programs with each engine
    its engine chooses between, on ``device``, and file the faster as wisdom.

    Returns
    -------
    int
        How many steps' choices changed (a plan made again takes them); 0 also where
        the plan's engine does not choose per step.
    """
    engine = plan.engine
    if not hasattr(engine, "choose"):
        return 0
    precision = np.result_type(plan.dtype, np.complex64)
    changed = 0
    seen: set[str] = set()
    for variant in (FORWARD, BACKWARD):
        program = plan.transform.program(variant)
        for step, shape in zip(program.steps, program.shapes):
            if not isinstance(step, (Fft, RealFft)):
                continue
            key = _key(engine, step, shape, precision)
            if key in seen:
                continue
            seen.add(key)
            block = _block(step, shape, precision, device)
            timings = {e.name: _time_step(step, e, block, repeats)
                       for e in (engine.native, engine.xla)}
            del block
            best = min(timings, key=timings.get)
            changed += wisdom.record_stage(key, {"engine": best, "timings_s": timings,
                                                 "jax": jax.__version__})
    return changed


def _key(engine, step, shape, precision) -> str:
    """The wisdom key of ``step`` (before it the block has ``shape``): what
    :meth:`PerStageEngine.choose` looked it up by when the program was resolved."""
    real = isinstance(step, RealFft)
    scales_inverse = (not step.stage.to_complex) if real else step.inverse
    return wisdom.stage_key(engine.device_kind, precision, shape, step.positions, real=real,
                            inverse=scales_inverse, scale=step.scale)


def _block(step, shape, precision, device) -> jax.Array:
    """A block of ``shape`` made on ``device`` (no host copy: blocks reach 2³¹ points),
    real where ``step`` starts on the real side, else complex."""
    real_in = isinstance(step, RealFft) and step.stage.to_complex
    dtype = np.finfo(precision).dtype if real_in else precision
    with jax.default_device(device):
        return jax.random.normal(jax.random.key(0), shape, dtype)


def _time_step(step, engine, block, repeats: int) -> float:
    """Median seconds of ``step`` run by ``engine`` on ``block``."""
    if isinstance(step, Fft):
        step = replace(step, engine=engine, inplace=False)
    else:
        step = replace(step, engine=engine)
    fn = jax.jit(lambda x: step.run(x, None))
    return median_seconds(fn, block, repeats)
