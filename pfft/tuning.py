"""Plan tuning, in FFTW's vocabulary.

:func:`tune` times the candidate plans for one problem (every slab and pencil grid
the devices allow, both real-transform spectrum layouts where allowed) within a time
budget, with a progress bar, and returns the fastest. Each result is filed as
*wisdom* (:mod:`pfft.wisdom`, keyed by shape, dtype, kind, axes, norm, device kind
and device count), which ``pfft.plan(..., tune="wisdom")`` reuses without timing
again. The candidate loop, the timing and the progress bar serve
:func:`pfft.mpi.tune` too.
"""
from __future__ import annotations

import sys
import time
from dataclasses import replace
from typing import Sequence

import jax
import numpy as np
from jax.sharding import Mesh

from . import wisdom
from .front_door import PlanArguments
from .grid import make_mesh
from .mesh_plan import get_plan
from .problem import Problem
from .stage_tuning import median_seconds, tune_stages

__all__ = ["tune", "candidate_grids", "time_candidates", "time_forward",
           "problem_candidates", "problem_name", "random_input", "check_budget", "Progress"]


def candidate_grids(n: int) -> list[tuple[int, ...]]:
    """Every slab ``(n,)`` and pencil ``(p, q)`` grid of ``n`` devices (``p, q > 1``)."""
    if n == 1:
        return [(1,)]
    pencils = [(p, n // p) for p in range(2, n // 2 + 1) if n % p == 0]
    return [(n,)] + pencils


def _devices_of(devices_or_mesh) -> list:
    if devices_or_mesh is None:
        return list(jax.devices())
    if isinstance(devices_or_mesh, Mesh):
        return list(devices_or_mesh.devices.flat)
    if isinstance(devices_or_mesh, (int, np.integer)):
        return list(jax.devices()[:int(devices_or_mesh)])
    return list(devices_or_mesh)


class Progress:
    """tqdm when installed, else one line per step on stderr."""

    def __init__(self, total: int, enabled: bool, desc: str):
        self.bar = None
        self.enabled = enabled
        if enabled:
            try:
                from tqdm.auto import tqdm
                self.bar = tqdm(total=total, desc=desc, leave=False)
            except ImportError:
                print(f"{desc}: {total} candidates", file=sys.stderr)

    def step(self, text: str) -> None:
        if self.bar is not None:
            self.bar.set_postfix_str(text)
            self.bar.update(1)
        elif self.enabled:
            print(f"  {text}", file=sys.stderr)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def tune(shape: Sequence[int], dtype, devices_or_mesh=None, *, kind: str = "c2c",
         axes: Sequence[int] | None = None, norm: str = "backward",
         spectra: Sequence[str] = ("numpy",), budget_s: float = 60.0, repeats: int = 3,
         progress: bool = True, kinds: Sequence[str] | None = None,
         orthogonalize: bool | None = None, stages: bool = True):
    """Time the candidate plans for one problem and return the fastest.

    Parameters
    ----------
    shape, dtype, kind, axes, norm, kinds, orthogonalize
        The problem, as for :func:`pfft.plan` (``kinds``: a real-to-real or mixed
        plan's per-axis kinds).
    devices_or_mesh
        The devices to spread over: a mesh, a sequence of devices, a count, or
        ``None`` for all of ``jax.devices()``. Every slab and pencil grid of them is a
        candidate (the mesh's own shape is only one of them).
    spectra
        Real plans: the spectrum layouts allowed (add ``"padded"`` if your code takes
        the padded spectrum; see :func:`pfft.plan`).
    budget_s
        Time budget in seconds. Candidates are timed one after another (compile,
        warm-up, ``repeats`` runs); once the budget is spent no new candidate is
        started, so the total exceeds it by at most one candidate's time. At least
        one candidate is always timed.
    repeats
        Timed runs per candidate (the median counts).
    progress
        Show a progress bar (tqdm if installed).
    stages
        Where ``engine="auto"`` chooses an engine per FFT step (on GPUs): first time
        each FFT step of a candidate's forward and backward programs with each engine
        (pfft's cuFFT kernels, ``lax.fft``) and keep the faster as wisdom, which
        every plan made afterwards takes (``pfft.fftn`` and friends too; ``print(plan)``
        shows the engine of each step). Elsewhere it changes nothing; over the
        devices of several processes (``jax.distributed``) the steps are not timed,
        as each process would time its own and one program must serve them all.

    Returns
    -------
    Plan
        The fastest plan; its timings are kept as wisdom (see :func:`save_wisdom`).
    """
    devices = _devices_of(devices_or_mesh)
    problem = PlanArguments(shape, dtype, axes, norm, kind, kinds=kinds,
                            orthogonalize=orthogonalize).problem("tune")
    check_budget(budget_s, repeats, "tune")
    candidates = problem_candidates(len(devices), problem.kind, spectra)
    host = random_input(problem)
    # devices of several processes run one program: steps timed by each could differ
    one_process = stages and all(d.process_index == jax.process_index() for d in devices)

    def time_one(dims, spectrum):
        candidate, mesh = replace(problem, spectrum=spectrum), make_mesh(dims, devices)
        plan = get_plan(candidate, mesh)
        if one_process and tune_stages(plan, devices[0], repeats):
            plan = get_plan(candidate, mesh)       # made again: it takes what was measured
        return plan, time_forward(plan, jax.device_put(host, plan.in_sharding), repeats)

    return time_candidates(candidates, time_one, budget_s,
                           Progress(len(candidates), progress, problem_name(problem, "pfft.tune")),
                           key=wisdom.wisdom_key(problem, devices))


def problem_name(problem: Problem, title: str) -> str:
    """How progress output names a problem: ``title``, its shape, dtype and kind (or
    kinds)."""
    what = problem.kind if problem.kinds is None else ",".join(problem.kinds)
    return f"{title} {problem.shape} {problem.dtype.name} {what}"


def problem_candidates(devices: int, kind: str, spectra) -> list[tuple[tuple[int, ...], str]]:
    """``(dims, spectrum)`` pairs to time: every grid, each allowed spectrum layout."""
    spectra = tuple(spectra) if kind == "r2c" else ("numpy",)
    return [(dims, spectrum) for dims in candidate_grids(devices) for spectrum in spectra]


def random_input(problem: Problem) -> np.ndarray:
    """The array candidates are timed on (real for ``r2c`` and for a real dtype, an all
    real-to-real problem's)."""
    dtype = problem.dtype
    in_dtype = np.dtype(np.finfo(dtype).dtype) if problem.kind == "r2c" else dtype
    return np.random.default_rng(0).standard_normal(problem.shape).astype(in_dtype)


def check_budget(budget_s: float, repeats: int, where: str) -> None:
    if budget_s < 0 or repeats < 1:
        raise ValueError(f"{where}: budget_s must be >= 0 and repeats >= 1, got {budget_s!r}, "
                         f"{repeats!r}")


def time_forward(plan, x, repeats: int, sync=None) -> float:
    """Median seconds of ``repeats`` jitted :meth:`forward` calls after a warm-up
    (``sync``: a function that turns one rank's time into the slowest rank's)."""
    return median_seconds(jax.jit(plan.forward), x, repeats, sync)


def time_candidates(candidates, time_one, budget_s: float, bar, key: str,
                    agree=lambda over: over):
    """Time ``(dims, spectrum)`` candidates (a grid's sizes, a spectrum layout) in order
    within ``budget_s`` and file the fastest as wisdom under ``key``; returns its plan.

    ``time_one(dims, spectrum)`` returns ``(plan, seconds)``. ``agree`` turns this
    process's "over budget" into a decision every process shares (MPI ranks must
    stop at the same candidate). At least one candidate is timed.
    """
    start = time.perf_counter()
    timings: dict[str, float] = {}
    best = None
    try:
        for dims, spectrum in candidates:
            if timings and agree(time.perf_counter() - start > budget_s):
                break
            plan, t = time_one(dims, spectrum)
            name = "x".join(map(str, dims)) + ("" if spectrum == "numpy" else f" {spectrum}")
            timings[name] = t
            if best is None or t < best[0]:
                best = (t, dims, spectrum, plan)
            bar.step(f"{name}: {1e3 * t:.1f} ms")
    finally:
        bar.close()
    t, dims, spectrum, plan = best
    wisdom.record(key, {"grid": list(dims), "spectrum": spectrum, "time_s": t,
                        "timings_s": timings, "jax": jax.__version__,
                        "tuned_in_s": time.perf_counter() - start})
    return plan
