"""Taylor–Green vortex at Re = 1600: a pseudo-spectral DNS on pfft.

The solver is :mod:`benchmarks.apps.navier_stokes` (rotational form, pressure projected
out in Fourier space, dealiased by 2/3-rule truncation or, ``--padding 1.5``, by the
3/2 rule in pfft's plan, classical RK4) with its transforms from pfft plans made once
(``rfftn``/``irfftn`` of the 3 velocity components over a pencil grid), advanced in a
jitted ``lax.fori_loop`` between diagnostics. Every ``--every`` time units it records
the kinetic energy ``E``, the enstrophy ``Ω = ½⟨|ω|²⟩`` and ``ε = 2νΩ``; ``-dE/dt``
is taken from ``E`` by central differences.

The step is chosen at the start of each record interval from the velocity then:
``dt · k_max · max(|u| + |v| + |w|) ≤ --cfl`` (default :data:`navier_stokes.CFL`, 0.64
of RK4's imaginary-axis limit 2√2; ``k_max`` the largest kept ``|k_i|``, ``n/3`` or
``n/2`` less a mode) and the viscous limit alike (:func:`navier_stokes.stable_step`),
``--dt`` its upper bound; an interval takes a whole number of equal steps, so that the
records stay every ``--every``. The jitted advance takes the step and their number as
arguments: a new step compiles nothing. The progress lines show the step, the run's
summary and ``.json`` the smallest and largest and the steps in all. ``--cfl 0`` keeps
a fixed step. The reference is the 512³ pseudo-spectral solution of the International
Workshop on High-Order CFD Methods (case C3.5; DeBonis 2013, NASA/TM-2013-217850),
whose history ``benchmarks/apps/data/spectral_Re1600_512.gdiag`` holds (source and
checksum in its README): ``E(0) = 0.125``, the peak of ``-dE/dt`` 0.012858 at
``t = 8.97``.

    python -m benchmarks.apps.taylor_green [--n 128] [--grid 2x4] [--dtype float32]
        [--dt 0.02] [--cfl 1.8] [--t-end 12] [--every 0.1] [--padding 1.5]
        [--compare-until 2] [--plot] [--quick]

``--grid one`` runs the same solver on one device with ``jnp.fft``. ``--mpi`` runs it
through ``pfft.mpi``, one process per device, on a process grid of ``--grid`` (e.g.
``mpirun -n 4 python -m benchmarks.apps.taylor_green --mpi --grid 2x2``); rank 0
prints, compares and writes. ``--distributed`` runs one JAX program over several
processes (``jax.distributed.initialize()``: under ``srun`` with no more arguments, e.g.
``srun -n 8 python -m benchmarks.apps.taylor_green --distributed --grid 2x4``; elsewhere
with ``--coordinator HOST:PORT --num-processes N --process-id I``), the mesh spanning
every process's devices; process 0 prints, compares and writes.
``--compare-until T`` also runs the one-device solver (``jnp.fft``, the same
dealiasing, the run's steps) to ``T`` and reports the largest difference in ``E(t)``.
The timing line gives the time per step and its ratio to the one-device solver's
step with the same dealiasing (the 3/2 rule there by zero-padding to ``3n/2`` points),
measured in the same process.

Against the reference it reports the peak of ``-dE/dt`` (value and time) and the RMS
deviation of the whole ``-dE/dt`` history (:func:`dissipation_deviation`: the
reference interpolated onto the run's record times within it, ``t ≤ 19.99``, the RMS of
the difference divided by the reference's peak; the goal :data:`RMS_GOAL` ≤ 1 %). The
history is written to ``OUT/taylor_green_<n>_<grid>_<dtype>[_padding..].txt``, and these
figures with the run's machine and command to the ``.json`` beside it.
"""
from __future__ import annotations

import argparse
import builtins
import datetime
import math
import os
import platform
import sys
import time

from .. import common
from ..common import (add_distributed_arguments, median_time, parse_grids, save_plot,
                      simulate_cpu_devices, start_distributed)

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from . import navier_stokes as ns  # noqa: E402

jax.config.update("jax_enable_x64", True)

NU = 1.0 / 1600.0
# the 512³ reference's values (benchmarks/apps/data/README.md), used where its file is absent
REFERENCE = dict(E0=0.125, peak_dissipation=0.012858, peak_time=8.97)
DATA = os.path.join(os.path.dirname(__file__), "data", "spectral_Re1600_512.gdiag")
#: the goal for the whole history: RMS of (-dE/dt - reference) at most 1 % of the
#: reference's peak -dE/dt
RMS_GOAL = 0.01
RMS_DEFINITION = ("RMS over the run's record times t within the reference (t <= 19.99) of "
                  "the run's -dE/dt minus the 512^3 reference's -dE/dt interpolated linearly "
                  "onto those times, divided by the reference's peak -dE/dt (the largest "
                  "sample of its column, 0.012858 at t = 8.97)")


def transforms_for(grid: str, n: int, dtype, padding: float = 1.0, *,
                   mpi: bool = False) -> ns.Transforms:
    """pfft on a mesh of ``grid`` (e.g. ``"2x4"``; ``padding=1.5``: the 3/2 rule),
    ``pfft.mpi`` on a process grid of that shape over ``MPI.COMM_WORLD`` (``mpi``), or
    ``jnp.fft`` on one device for ``"one"`` (the same dealiasing)."""
    if grid == "one":
        return ns.jnp_transforms(n, dtype, padding=padding)
    if mpi:
        from mpi4py import MPI

        import pfft.mpi

        grid = pfft.mpi.ProcessGrid(MPI.COMM_WORLD, parse_grids([grid])[0])
        return ns.mpi_transforms(n, grid, dtype, padding=padding)
    import pfft

    mesh = pfft.make_mesh(parse_grids([grid])[0])
    return ns.pfft_transforms(n, mesh, dtype, padding=padding)


def enstrophy(t: ns.Transforms, uh):
    """``½⟨|ω|²⟩`` (box average) with ``ω = ∇ × u`` taken spectrally."""
    w = t.backward(ns.curl_hat(t, uh))
    return 0.5 * t.average(jnp.sum(w * w, axis=0))


def diagnostics(t: ns.Transforms, uh):
    """``E = ½⟨|u|²⟩``, ``Ω = ½⟨|ω|²⟩`` and ``max(|u| + |v| + |w|)`` (for the step's
    CFL bound, :func:`navier_stokes.speed_sum`), one backward transform of ``u`` for
    both of its terms."""
    u = t.backward(uh)
    return 0.5 * t.average(jnp.sum(u * u, axis=0)), enstrophy(t, uh), ns.speed_sum(t, u)


class Simulation:
    """The solver on one set of transforms: state, a jitted advance and diagnostics.

    A record interval is ``dt * steps_per_record`` time units. With ``cfl`` None every
    interval takes ``steps_per_record`` steps of ``dt``; with a ``cfl`` number the steps
    are chosen at each interval's start from the velocity then
    (:func:`navier_stokes.stable_step`), ``dt`` their upper bound: ``steps =
    max(steps_per_record, ceil(interval / dt_stable))`` of ``interval / steps``.
    """

    def __init__(self, t: ns.Transforms, n: int, dtype, dt: float, steps_per_record: int,
                 cfl: float | None = None):
        self.transforms, self.n, self.dt, self.cfl = t, n, dt, cfl
        self.steps_per_record, self.interval = steps_per_record, dt * steps_per_record
        self.k_max, self.real = ns.largest_wavenumber(t, n), np.dtype(dtype).type
        rhs = ns.rhs_function(t, n, NU)
        self.state = t.forward(t.put(ns.taylor_green(t.points, dtype)))
        # dt and the step count traced: a new step does not compile again
        self.advance = jax.jit(lambda uh, dt, steps: jax.lax.fori_loop(
            0, steps, lambda i, u: ns.rk4_step(rhs, dt)(u), uh))
        self.one_step = jax.jit(ns.rk4_step(rhs, dt))
        self.diagnose = jax.jit(lambda uh: diagnostics(t, uh))
        self.steps: list[int] = []          # the RK4 steps of each record interval run

    def steps_for(self, speed: float) -> int:
        """The RK4 steps of the next record interval, from ``max(|u| + |v| + |w|)``
        at its start (``steps_per_record`` for a fixed step)."""
        if self.cfl is None:
            return self.steps_per_record
        stable = ns.stable_step(speed, self.k_max, NU, self.cfl)
        return max(self.steps_per_record, math.ceil(self.interval / stable))

    def run(self, records: int, progress=None, schedule=None) -> np.ndarray:
        """``records + 1`` rows of (E, Ω, max(|u| + |v| + |w|)), the first at t = 0;
        ``schedule``: the steps of each interval, as another run's :attr:`steps`."""
        rows = [_values(self.diagnose(self.state))]
        for i in range(records):
            steps = schedule[i] if schedule is not None else self.steps_for(rows[-1][2])
            self.state = self.advance(self.state, self.real(self.interval / steps),
                                      np.int32(steps))
            self.steps.append(steps)
            rows.append(_values(self.diagnose(self.state)))
            if progress:
                progress(i + 1, records, rows[-1])
        return np.array(rows)

    def time_per_step(self, repeats: int = 3) -> float:
        """Median seconds of one jitted RK4 step (after a warm-up)."""
        return median_time(self.one_step, self.state, repeats=repeats)

    def time_of_transforms(self, repeats: int = 3) -> float:
        """Median seconds of the transforms of one RK4 step alone, jitted: 4 stages of
        2 batched ``backward`` and 1 batched ``forward`` (36 real transforms), chained
        so that none can be skipped; the rest of the step is the solver's own work."""
        t = self.transforms

        def transforms_only(uh):
            for _ in range(4):
                uh = t.forward(t.backward(uh) + t.backward(uh))
            return uh
        return median_time(jax.jit(transforms_only), self.state, repeats=repeats)


def _values(scalars) -> tuple[float, ...]:
    """Replicated jitted scalars as floats (``pfft.to_host``: this process's copy; under
    ``jax.distributed`` other processes' devices are not addressable here)."""
    import pfft

    return tuple(float(pfft.to_host(v)) for v in scalars)


def dissipation_from_energy(times: np.ndarray, energy: np.ndarray) -> np.ndarray:
    """``-dE/dt`` by central differences (one-sided at the ends)."""
    return -np.gradient(energy, times)


def load_reference():
    """The reference history (t, E, -dE/dt, enstrophy), or None where it is absent."""
    if not os.path.exists(DATA):
        return None
    return np.loadtxt(DATA, comments=("#", "%"))


def peak(times: np.ndarray, values: np.ndarray) -> tuple[float, float]:
    """The largest value and its time, refined by a parabola through the top 3 points."""
    i = int(np.argmax(values))
    if 0 < i < len(values) - 1:
        y0, y1, y2 = values[i - 1:i + 2]
        h = times[i + 1] - times[i]
        denom = y0 - 2 * y1 + y2
        if denom < 0:
            shift = 0.5 * (y0 - y2) / denom
            return float(y1 - 0.25 * (y0 - y2) * shift), float(times[i] + shift * h)
    return float(values[i]), float(times[i])


def dissipation_deviation(times: np.ndarray, dedt: np.ndarray, ref: np.ndarray) -> dict:
    """The run's whole ``-dE/dt`` history against the reference's (:data:`RMS_DEFINITION`).

    ``ref`` is the reference history (columns t, E, -dE/dt, ...; :func:`load_reference`),
    interpolated linearly onto the run's times ``times`` that lie within its span (the
    vendored file ends at t = 19.99, so a run's point at t = 20 is left out). Returns
    ``rms`` (absolute), ``rms_over_ref_peak`` (the goal's measure, :data:`RMS_GOAL`),
    ``max_abs`` (the largest difference) and where: ``t_from``, ``t_to``, ``points``,
    ``ref_peak``.

    Raises
    ------
    ValueError
        Where no time of the run lies within the reference.
    """
    times, dedt = np.asarray(times, float), np.asarray(dedt, float)
    t_ref, d_ref = ref[:, 0], ref[:, 2]
    inside = (times >= t_ref[0]) & (times <= t_ref[-1])
    if not inside.any():
        raise ValueError(f"no time of the run lies within the reference's "
                         f"[{t_ref[0]}, {t_ref[-1]}]")
    diff = dedt[inside] - np.interp(times[inside], t_ref, d_ref)
    rms, ref_peak = float(np.sqrt(np.mean(diff ** 2))), float(np.max(d_ref))
    return dict(rms=rms, rms_over_ref_peak=rms / ref_peak, max_abs=float(np.max(np.abs(diff))),
                t_from=round(float(times[inside][0]), 6), t_to=round(float(times[inside][-1]), 6),
                points=int(inside.sum()), ref_peak=ref_peak)


def deviation_line(dev: dict) -> str:
    """The RMS deviation in words, with the goal's verdict."""
    met = dev["rms_over_ref_peak"] <= RMS_GOAL
    return (f"RMS deviation of -dE/dt from the reference over t = {dev['t_from']:g}..."
            f"{dev['t_to']:g} ({dev['points']} points, reference interpolated onto the run's "
            f"times): {dev['rms']:.2e} = {100 * dev['rms_over_ref_peak']:.2f}% of the "
            f"reference's peak {dev['ref_peak']:.5f} (largest {dev['max_abs']:.2e}); goal <= "
            f"{100 * RMS_GOAL:g}% of the peak: {'met' if met else 'NOT met'}")


def step_summary(steps, interval: float) -> dict:
    """The RK4 steps a run took, ``steps[i]`` in its ``i``-th record interval of
    ``interval`` time units: ``steps`` in all, ``dt_smallest`` and ``dt_largest``."""
    dts = interval / np.asarray(steps, float)
    return dict(steps=int(np.sum(steps)), dt_smallest=float(dts.min()),
                dt_largest=float(dts.max()))


def step_line(summary: dict, cfl: float | None, dt_bound: float, k_max: int) -> str:
    """:func:`step_summary` in words, with how the step was chosen."""
    how = ("a fixed step" if cfl is None else
           f"chosen per record interval: dt k_max max(|u|+|v|+|w|) <= CFL {cfl:g}, "
           f"k_max {k_max}, at most --dt {dt_bound:g}")
    return (f"RK4 steps: {summary['steps']} in all, dt {summary['dt_smallest']:.5g} to "
            f"{summary['dt_largest']:.5g} ({how})")


def parse_arguments(argv=None) -> argparse.Namespace:
    """The command line (module docstring); ``--quick`` sets the tests' size."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=128)
    ap.add_argument("--grid", default="2x4", help="device grid, or 'one' for jnp.fft")
    ap.add_argument("--dtype", default="float32", choices=["float32", "float64"])
    ap.add_argument("--dt", type=float, default=0.02,
                    help="the largest RK4 step (with --cfl 0: the step), rounded down to "
                         "a whole number of steps per --every")
    ap.add_argument("--cfl", type=float, default=ns.CFL,
                    help="the step's CFL bound dt k_max max(|u|+|v|+|w|) <= CFL, checked "
                         "every --every; 0: a fixed step")
    ap.add_argument("--t-end", type=float, default=12.0)
    ap.add_argument("--every", type=float, default=0.1)
    ap.add_argument("--padding", type=float, default=1.0,
                    help="1.5: dealias by the 3/2 rule in pfft's plan (default: 2/3 rule)")
    ap.add_argument("--compare-until", type=float, default=0.0,
                    help="also run the one-device solver to this time and compare E(t)")
    ap.add_argument("--mpi", action="store_true",
                    help="through pfft.mpi, one process per device (run under mpirun)")
    add_distributed_arguments(ap)
    ap.add_argument("--quick", action="store_true", help="32³, t ≤ 0.5, for the tests")
    ap.add_argument("--plot", action="store_true")
    ap.add_argument("--out", default="results")
    args = ap.parse_args(argv)
    if args.quick:
        args.n, args.t_end, args.dt, args.compare_until = 32, 0.5, 0.02, 0.5
    if not 0 <= args.cfl < ns.RK4_IMAGINARY_LIMIT:
        ap.error(f"--cfl must lie in [0, {ns.RK4_IMAGINARY_LIMIT:.3f}), got {args.cfl}")
    if not (args.dt > 0 and args.every > 0):
        ap.error(f"--dt and --every must be positive, got {args.dt} and {args.every}")
    return args


def time_steps(sim: Simulation, solo: Simulation | None, grid: str, rule: str, print):
    """Time one RK4 step and its 36 transforms on ``grid`` and on one device (``solo``,
    the same solver and dealiasing on ``jnp.fft``; None off the lead process), print
    them; returns the two step times in seconds."""
    t_step, t_ffts = sim.time_per_step(), sim.time_of_transforms()
    t_solo, t_solo_ffts = ((solo.time_per_step(), solo.time_of_transforms()) if solo
                           else (float("nan"), float("nan")))
    print(f"time per step, {rule} on both ({sim.transforms.points}^3 points): "
          f"{1e3 * t_step:.1f} ms on grid {grid}, {1e3 * t_solo:.1f} ms on one device "
          f"(jnp.fft): ratio {t_step / t_solo:.2f}", flush=True)
    print(f"of which the 36 transforms: {1e3 * t_ffts:.1f} ms ({100 * t_ffts / t_step:.0f} %) "
          f"on grid {grid}, {1e3 * t_solo_ffts:.1f} ms ({100 * t_solo_ffts / t_solo:.0f} %) "
          f"on one device", flush=True)
    return t_step, t_solo


def main(argv=None):
    args = parse_arguments(argv)
    if args.mpi:                       # one device per rank; rank 0 speaks for all
        from mpi4py import MPI

        lead = MPI.COMM_WORLD.rank == 0
        where = f"pfft.mpi over {MPI.COMM_WORLD.size} MPI ranks"
    elif args.distributed:
        lead, where = start_distributed(args)
    else:
        simulate_cpu_devices(8)
        lead, where = True, common.devices_in_words()
    print = builtins.print if lead else (lambda *a, **k: None)   # noqa: A001
    dtype = np.dtype(args.dtype).type
    # records on the --every grid: a whole number of steps per record, each at most --dt
    per_record = max(1, math.ceil(args.every / args.dt - 1e-9))
    records = int(round(args.t_end / args.every))
    cfl = args.cfl or None
    rule = "3/2 rule" if args.padding >= 1.5 else "2/3 rule"
    print(f"Taylor-Green vortex Re=1600, {args.n}^3 {args.dtype}, grid {args.grid}, RK4, "
          + (f"dt <= {args.every / per_record:g} by CFL {cfl:g}" if cfl else
             f"fixed dt {args.every / per_record:g}")
          + f", {rule} dealiasing; {datetime.date.today()}, {platform.node()}, "
          f"{os.cpu_count()} cores, jax {jax.__version__}, {where}", flush=True)
    sim = Simulation(transforms_for(args.grid, args.n, dtype, args.padding, mpi=args.mpi),
                     args.n, dtype, args.every / per_record, per_record, cfl)
    # the one-device solver runs on the lead process only (under MPI: beside rank 0)
    solo = (Simulation(transforms_for("one", args.n, dtype, args.padding), args.n, dtype,
                       args.every / per_record, per_record, cfl) if lead else None)
    t_step, t_solo = time_steps(sim, solo, args.grid, rule, print)
    start = time.monotonic()

    def progress(i, total, row):
        if i % 10 == 0 or i == total:
            print(f"  t = {i * args.every:6.2f}  E = {row[0]:.6f}  "
                  f"2 nu Omega = {2 * NU * row[1]:.6f}  dt {sim.interval / sim.steps[-1]:.5f}"
                  f"  max(|u|+|v|+|w|) {row[2]:.3f}  ({time.monotonic() - start:.0f} s)",
                  file=sys.stderr, flush=True)

    hist = sim.run(records, progress)
    times = np.arange(records + 1) * args.every
    energy, eps = hist[:, 0], 2 * NU * hist[:, 1]
    dedt = dissipation_from_energy(times, energy)
    p_eps, t_eps = peak(times, eps)
    p_dedt, t_dedt = peak(times, dedt)
    steps = step_summary(sim.steps, sim.interval)
    print(step_line(steps, cfl, sim.dt, sim.k_max))
    print(f"E(0) = {energy[0]:.6f} (reference {REFERENCE['E0']})")
    print(f"peak 2 nu Omega = {p_eps:.5f} at t = {t_eps:.2f}; peak -dE/dt = {p_dedt:.5f} "
          f"at t = {t_dedt:.2f}")
    ref = load_reference()
    if ref is not None:
        r_peak, r_time = peak(ref[:, 0], ref[:, 2])
        source = "reference file"
    else:
        r_peak, r_time = REFERENCE["peak_dissipation"], REFERENCE["peak_time"]
        source = "reference values (file absent)"
    print(f"{source}: peak -dE/dt = {r_peak:.5f} at t = {r_time:.2f}; "
          f"gap {100 * (p_dedt / r_peak - 1):+.1f}% at {t_dedt - r_time:+.2f} time units")
    figures = dict(E0=float(energy[0]), peak_dedt=p_dedt, peak_dedt_time=t_dedt,
                   reference_peak_dedt=r_peak, reference_peak_time=r_time,
                   peak_gap=p_dedt / r_peak - 1, peak_time_gap=t_dedt - r_time,
                   dealiasing=rule, one_device_dealiasing=rule, cfl=cfl, dt_bound=sim.dt,
                   k_max=sim.k_max, speed_sum_largest=float(np.max(hist[:, 2])), **steps)
    if ref is not None:
        dev = dissipation_deviation(times, dedt, ref)
        print(deviation_line(dev))
        figures.update(dedt_rms_deviation=dev["rms"],
                       dedt_rms_deviation_over_reference_peak=dev["rms_over_ref_peak"],
                       dedt_rms_goal=RMS_GOAL, dedt_rms_window=[dev["t_from"], dev["t_to"]],
                       dedt_rms_points=dev["points"], dedt_rms_definition=RMS_DEFINITION)
    if args.compare_until > 0 and lead:
        n_cmp = min(records, int(round(args.compare_until / args.every)))
        # its state is still the initial one; the same steps as the run's
        solo_hist = solo.run(n_cmp, schedule=sim.steps)
        diff = float(np.max(np.abs(solo_hist[:, 0] - energy[:n_cmp + 1])))
        print(f"max |E_pfft - E_one device| for t <= {args.compare_until}: {diff:.2e}")
    if not lead:
        return
    os.makedirs(args.out, exist_ok=True)
    name = (f"taylor_green_{args.n}_{'mpi' if args.mpi else ''}{args.grid}_{args.dtype}"
            + (f"_padding{args.padding:g}" if args.padding > 1 else ""))
    header = "t E -dE/dt 2*nu*enstrophy"
    if "dedt_rms_deviation" in figures:
        header += (f"\n-dE/dt RMS deviation {figures['dedt_rms_deviation']:.4e} = "
                   f"{100 * figures['dedt_rms_deviation_over_reference_peak']:.3f}% of the "
                   f"reference's peak: {RMS_DEFINITION}")
    np.savetxt(os.path.join(args.out, name + ".txt"),
               np.column_stack([times, energy, dedt, eps]), header=header, fmt="%.8e")
    common.write_info(os.path.join(args.out, name + ".txt"),
                      common.run_info("benchmarks.apps.taylor_green", argv, where,
                                      time_per_step_ms=1e3 * t_step,
                                      one_device_step_ms=1e3 * t_solo, **figures))
    if args.plot:
        plot(times, energy, dedt, eps, ref, os.path.join(args.out, name + ".png"),
              f"{args.n}³ {args.dtype}, grid {args.grid}")


def plot(times, energy, dedt, eps, ref, path, label, note: str | None = None):
    """``E(t)`` and the dissipation against the reference (``ref``: the loaded
    reference history or ``None``); ``note`` (machine, date, command) at the bottom."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 3.8))
    a.plot(times, energy, label=f"pfft {label}")
    b.plot(times, dedt, label=f"-dE/dt, pfft {label}")
    b.plot(times, eps, "--", label=f"2νΩ, pfft {label}")
    if ref is not None:
        a.plot(ref[:, 0], ref[:, 1], "k:", label="512³ spectral reference")
        b.plot(ref[:, 0], ref[:, 2], "k:", label="512³ spectral reference")
    else:
        b.plot([REFERENCE["peak_time"]], [REFERENCE["peak_dissipation"]], "k*",
               label="reference peak")
    a.set_xlabel("t")
    a.set_ylabel("E")
    b.set_xlabel("t")
    b.set_ylabel("dissipation")
    a.legend(fontsize=7)
    b.legend(fontsize=7)
    save_plot(fig, path, note)
    print(f"plot: {path}")


# -- the docs' tables (python -m benchmarks report) --------------------------------------
#: the runs the docs show: history file in docs/data -> the table (and the figure) made of
#: it: the 3/2-rule run on 8 simulated CPU devices, and benchmarks/gpu.sh's 256³ run on
#: one GPU (rendered where its history is in docs/data)
RUN = "taylor_green_128_2x4_float32_padding1.5.txt"
GPU_RUN = "taylor_green_256_1x1_float32_padding1.5.txt"
DOCS = {RUN: ("taylor_green.md", "taylor_green_128.png"), GPU_RUN: ("gpu_taylor_green.md",)}


def report_lines(times, energy, dedt, eps, ref, info: dict) -> list[str]:
    """The docs' table of a run's history against the reference: ``E(0)``, the peaks
    of ``-dE/dt`` and ``2νΩ``, the RMS deviation of the whole ``-dE/dt`` history
    (:func:`dissipation_deviation`) with the goal's verdict, the time per step."""
    r_peak, r_time = (peak(ref[:, 0], ref[:, 2]) if ref is not None
                      else (REFERENCE["peak_dissipation"], REFERENCE["peak_time"]))
    p_dedt, t_dedt = peak(times, dedt)
    p_eps, t_eps = peak(times, eps)
    lines = ["| quantity | pfft | 512³ spectral reference | gap |", "|---|---|---|---|",
             f"| `E(0)` | {energy[0]:.8f} | {REFERENCE['E0']} | "
             f"{energy[0] / REFERENCE['E0'] - 1:+.1e} |",
             f"| peak `−dE/dt` | {p_dedt:.5f} at t = {t_dedt:.2f} | {r_peak:.5f} at t = "
             f"{r_time:.2f} | **{100 * (p_dedt / r_peak - 1):+.1f} %, {t_dedt - r_time:+.2f}** |",
             f"| peak `2νΩ` | {p_eps:.5f} at t = {t_eps:.2f} | {r_peak:.5f} at t = {r_time:.2f} "
             f"| {100 * (p_eps / r_peak - 1):+.1f} %, {t_eps - r_time:+.2f} |"]
    if ref is not None:
        dev = dissipation_deviation(times, dedt, ref)
        met = dev["rms_over_ref_peak"] <= RMS_GOAL
        lines.append(
            f"| `−dE/dt` over t = {dev['t_from']:g}–{dev['t_to']:g} ({dev['points']} points): "
            f"RMS deviation, in % of the reference's peak | {dev['rms']:.2e} | "
            f"interpolated onto the run's times | **{100 * dev['rms_over_ref_peak']:.2f} %** "
            f"(goal ≤ {100 * RMS_GOAL:g} %: {'met' if met else 'not met'}) |")
    step = info.get("time_per_step_ms")
    if step:
        solo = info.get("one_device_step_ms")
        # a ratio for the same dealiasing only (before the run's JSON said which, the
        # one-device solver had the 2/3 rule)
        alike = (info["one_device_dealiasing"] == info["dealiasing"]
                 if "one_device_dealiasing" in info
                 else "--padding" not in info.get("command", ""))
        same = (f" {step / solo:.2f} of the same solver on `jnp.fft` ({solo:.1f} ms) "
                if solo and alike else "")
        lines.append(f"| time per RK4 step | {step:.{0 if step >= 100 else 1}f} ms | |{same}|")
    return lines


def report(data: str, figures: str) -> list[str]:
    """``data/taylor_green.md`` and ``figures/taylor_green_128.png`` from the history
    :data:`RUN`, and ``data/gpu_taylor_green.md`` from :data:`GPU_RUN`, each where its
    history is in ``data`` (:func:`report_lines`; the caption from the run's JSON)."""
    done = []
    ref = load_reference()
    for run, made in DOCS.items():
        path = os.path.join(data, run)
        if not os.path.exists(path):
            continue
        times, energy, dedt, eps = np.loadtxt(path).T
        info = common.read_info(path)
        lines = report_lines(times, energy, dedt, eps, ref, info)
        for png in (m for m in made if m.endswith(".png")):
            label = run.split("_")[2] + "³ " + " ".join(run[:-4].split("_")[3:])
            plot(times, energy, dedt, eps, ref, os.path.join(figures, png), label,
                 note=common.figure_note(info))
            done.append(os.path.join(figures, png))
        done.insert(0, common.write_doc(os.path.join(data, made[0]), info, "\n".join(lines)))
    return done


if __name__ == "__main__":
    main()
