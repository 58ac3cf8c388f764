"""Taylor–Green vortex at Re = 1600: a pseudo-spectral DNS on pfft.

The solver is :mod:`benchmarks.apps.navier_stokes` (rotational form, pressure projected
out in Fourier space, 2/3-rule dealiasing by truncation, classical RK4) with its
transforms from pfft plans made once (``rfftn``/``irfftn`` of the 3 velocity
components over a pencil grid), advanced in a jitted ``lax.fori_loop`` between
diagnostics. Every ``--every`` time units it records the kinetic energy ``E``, the
enstrophy ``Ω = ½⟨|ω|²⟩`` and ``ε = 2νΩ``; ``-dE/dt`` is taken from ``E`` by central
differences. The reference is the 512³ pseudo-spectral solution of the International
Workshop on High-Order CFD Methods (case C3.5; DeBonis 2013, NASA/TM-2013-217850),
whose history ``benchmarks/apps/data/spectral_Re1600_512.gdiag`` holds (source and
checksum in its README): ``E(0) = 0.125``, the peak of ``-dE/dt`` 0.012858 at
``t = 8.97``.

    python -m benchmarks.apps.taylor_green [--n 128] [--grid 2x4] [--dtype float32]
        [--dt 0.02] [--t-end 12] [--every 0.1] [--compare-until 2] [--plot] [--quick]

``--grid one`` runs the same solver on one device with ``jnp.fft``. ``--mpi`` runs it
through ``pfft.mpi``, one process per device, on a process grid of ``--grid`` (e.g.
``mpirun -n 4 python -m benchmarks.apps.taylor_green --mpi --grid 2x2``); rank 0
prints, compares and writes. ``--distributed`` runs one JAX program over several
processes (``jax.distributed.initialize()``: under ``srun`` with no more arguments, e.g.
``srun -n 8 python -m benchmarks.apps.taylor_green --distributed --grid 2x4``; elsewhere
with ``--coordinator HOST:PORT --num-processes N --process-id I``), the mesh spanning
every process's devices; process 0 prints, compares and writes.
``--compare-until T`` also runs the one-device solver to ``T`` and reports the largest
difference in ``E(t)``. The timing line gives the time per step and its ratio to the
one-device solver's step (measured in the same process).
"""
from __future__ import annotations

import argparse
import builtins
import datetime
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


def transforms_for(grid: str, n: int, dtype, padding: float = 1.0, *,
                   mpi: bool = False) -> ns.Transforms:
    """pfft on a mesh of ``grid`` (e.g. ``"2x4"``; ``padding=1.5``: the 3/2 rule),
    ``pfft.mpi`` on a process grid of that shape over ``MPI.COMM_WORLD`` (``mpi``), or
    ``jnp.fft`` for ``"one"`` (2/3 rule)."""
    if grid == "one":
        return ns.jnp_transforms(n, dtype)
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


class Simulation:
    """The solver on one set of transforms: state, a jitted advance and diagnostics."""

    def __init__(self, t: ns.Transforms, n: int, dtype, dt: float, steps_per_record: int):
        self.transforms, self.n, self.dt = t, n, dt
        step = ns.rk4_step(ns.rhs_function(t, n, NU), dt)
        self.state = t.forward(t.put(ns.taylor_green(t.points, dtype)))
        self.advance = jax.jit(lambda uh: jax.lax.fori_loop(
            0, steps_per_record, lambda i, u: step(u), uh))
        self.one_step = jax.jit(step)
        self.diagnose = jax.jit(lambda uh: (ns.energy(t, uh, n), enstrophy(t, uh)))

    def run(self, records: int, progress=None) -> np.ndarray:
        """``records + 1`` rows of (E, Ω), the first at t = 0."""
        rows = [_values(self.diagnose(self.state))]
        for i in range(records):
            self.state = self.advance(self.state)
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


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=128)
    ap.add_argument("--grid", default="2x4", help="device grid, or 'one' for jnp.fft")
    ap.add_argument("--dtype", default="float32", choices=["float32", "float64"])
    ap.add_argument("--dt", type=float, default=0.02)
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
    if args.mpi:                       # one device per rank; rank 0 speaks for all
        from mpi4py import MPI

        lead = MPI.COMM_WORLD.rank == 0
        where = f"pfft.mpi over {MPI.COMM_WORLD.size} MPI ranks"
    elif args.distributed:
        lead, where = start_distributed(args)
    else:
        simulate_cpu_devices(8)
        lead, where = True, "8 simulated CPU devices"
    print = builtins.print if lead else (lambda *a, **k: None)   # noqa: A001
    dtype = np.dtype(args.dtype).type
    per_record = max(1, round(args.every / args.dt))
    records = int(round(args.t_end / (per_record * args.dt)))
    print(f"Taylor-Green vortex Re=1600, {args.n}^3 {args.dtype}, grid {args.grid}, "
          f"dt {args.dt}, RK4, {'3/2 rule' if args.padding >= 1.5 else '2/3 rule'} "
          f"dealiasing; {datetime.date.today()}, {platform.node()}, "
          f"{os.cpu_count()} cores, jax {jax.__version__}, {where}", flush=True)
    sim = Simulation(transforms_for(args.grid, args.n, dtype, args.padding, mpi=args.mpi),
                     args.n, dtype, args.dt, per_record)
    # the one-device solver runs on the lead process only (under MPI: beside rank 0)
    solo = (Simulation(transforms_for("one", args.n, dtype), args.n, dtype, args.dt,
                       per_record) if lead else None)
    t_step, t_ffts = sim.time_per_step(), sim.time_of_transforms()
    t_solo, t_solo_ffts = ((solo.time_per_step(), solo.time_of_transforms()) if lead
                           else (float("nan"), float("nan")))
    # a ratio only for the same step: the one-device solver has the 2/3 rule only
    same = "" if args.padding > 1 else f": ratio {t_step / t_solo:.2f}"
    print(f"time per step: {1e3 * t_step:.1f} ms on grid {args.grid}, "
          f"{1e3 * t_solo:.1f} ms on one device (jnp.fft, 2/3 rule){same}", flush=True)
    print(f"of which the 36 transforms: {1e3 * t_ffts:.1f} ms ({100 * t_ffts / t_step:.0f} %) "
          f"on grid {args.grid}, {1e3 * t_solo_ffts:.1f} ms ({100 * t_solo_ffts / t_solo:.0f} %) "
          f"on one device", flush=True)
    start = time.monotonic()

    def progress(i, total, row):
        if i % 10 == 0 or i == total:
            print(f"  t = {i * per_record * args.dt:6.2f}  E = {row[0]:.6f}  "
                  f"2 nu Omega = {2 * NU * row[1]:.6f}  ({time.monotonic() - start:.0f} s)",
                  file=sys.stderr, flush=True)

    hist = sim.run(records, progress)
    times = np.arange(records + 1) * per_record * args.dt
    energy, eps = hist[:, 0], 2 * NU * hist[:, 1]
    dedt = dissipation_from_energy(times, energy)
    p_eps, t_eps = peak(times, eps)
    p_dedt, t_dedt = peak(times, dedt)
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
    if args.compare_until > 0 and args.padding > 1:
        print("no comparison with the one-device solver: it dealiases by the 2/3 rule")
    elif args.compare_until > 0 and lead:
        n_cmp = int(round(args.compare_until / (per_record * args.dt)))
        solo_hist = solo.run(n_cmp)          # its state is still the initial one
        diff = float(np.max(np.abs(solo_hist[:, 0] - energy[:n_cmp + 1])))
        print(f"max |E_pfft - E_one device| for t <= {args.compare_until}: {diff:.2e}")
    if not lead:
        return
    os.makedirs(args.out, exist_ok=True)
    name = (f"taylor_green_{args.n}_{'mpi' if args.mpi else ''}{args.grid}_{args.dtype}"
            + (f"_padding{args.padding:g}" if args.padding > 1 else ""))
    np.savetxt(os.path.join(args.out, name + ".txt"),
               np.column_stack([times, energy, dedt, eps]),
               header="t E -dE/dt 2*nu*enstrophy", fmt="%.8e")
    common.write_info(os.path.join(args.out, name + ".txt"),
                      common.run_info("benchmarks.apps.taylor_green", argv, where,
                                      time_per_step_ms=1e3 * t_step))
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


# -- the docs' table (python -m benchmarks report) ---------------------------------------
#: the run the docs show: history file in docs/data -> the table and the figure made of it
RUN = "taylor_green_128_2x4_float32_padding1.5.txt"
DOCS = {RUN: ("taylor_green.md", "taylor_green_128.png")}


def report(data: str, figures: str) -> list[str]:
    """``data/taylor_green.md`` (the run's dissipation peak against the reference's) and
    ``figures/taylor_green_128.png`` from the history :data:`RUN` in ``data``."""
    path = os.path.join(data, RUN)
    if not os.path.exists(path):
        return []
    times, energy, dedt, eps = np.loadtxt(path).T
    info = common.read_info(path)
    ref = load_reference()
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
    if info.get("time_per_step_ms"):
        lines.append(f"| time per RK4 step | {info['time_per_step_ms']:.0f} ms | | |")
    label = RUN.split("_")[2] + "³ " + " ".join(RUN[:-4].split("_")[3:])
    plot(times, energy, dedt, eps, ref, os.path.join(figures, "taylor_green_128.png"),
         label, note=common.figure_note(info))
    return [common.write_doc(os.path.join(data, "taylor_green.md"), info, "\n".join(lines)),
            os.path.join(figures, "taylor_green_128.png")]


if __name__ == "__main__":
    main()
