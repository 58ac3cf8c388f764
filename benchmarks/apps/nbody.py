"""Particle-mesh N-body cosmology on pfft: Einstein–de Sitter, Zel'dovich start.

The solver is :mod:`benchmarks.apps.particle_mesh`: ``n³`` particles on an ``n³`` mesh
of a periodic box, a Gaussian linear field from :mod:`pfft.spectral` (standard-CDM BBKS
spectrum, ``σ_8 = 0.8`` at ``a = 1``), Zel'dovich displacements and momenta at ``a0``,
cloud-in-cell painting into each device's block plus a halo and
:func:`pfft.halo_reduce`, reading after :func:`pfft.halo_exchange`, forces from the
spectral Poisson solve (pfft ``rfftn``/``irfftn`` plans), a kick-drift-kick leapfrog in
``a`` with FastPM's factors for ``D = a``. The particles are distributed with the mesh
and keep their owner (Lagrangian ownership; the halo bounds the displacement and the
run raises if a particle outgrows it): see that module's docstring.

    python -m benchmarks.apps.nbody [--n 64] [--grid 2x4] [--box 512] [--a0 0.02]
        [--steps 20] [--dtype float32] [--halo 8] [--kernel fd4|ik] [--plot]
        [--compare-jaxpm] [--quick] [--save-final] [--skip-one-device] [--out results]
        [--distributed [--coordinator HOST:PORT --num-processes N --process-id I]]

It prints and writes (``OUT/nbody_<n>_<grid>_<dtype>.json``):

- (a) linear growth: ``P(k, 1) / P(k, a0) / (1/a0)²`` in the largest-scale bins, and
  what linear theory of the PM scheme predicts there
  (:func:`~benchmarks.apps.particle_mesh.linear_growth_on_the_mesh`: the CIC windows
  and the gradient kernel slow the growth of a mode by a computable amount);
- (c) mass conservation of painting (``|Σρ - N| / N`` at ``a0`` and at the end);
- pfft's run against the same code on one device with ``jnp.fft`` (final density);
- (d) ``jax.grad`` of a loss on the final density with respect to the linear field,
  under ``jit`` through the whole simulation on the device grid, against central
  finite differences along random directions (float64);
- time per step (median of repeats, same process) and memory per device: the
  compiled step's ``memory_analysis()`` (arguments + outputs + temporaries; CPU
  devices report no ``memory_stats()``);
- (b) with ``--compare-jaxpm`` and JaxPM importable: the final density against JaxPM on
  one device from the same linear field, with this leapfrog and JaxPM's ``pm_forces``
  from this code's initial conditions and from JaxPM's ``lpt``, with JaxPM's adaptive
  ``odeint`` from both (the last is JaxPM's own pipeline), and the leapfrog's
  convergence in steps toward ``odeint`` (:func:`compare_jaxpm`).

``--grid one`` runs everything on one device with ``jnp.fft``.

``--distributed`` runs one JAX program over several processes
(``jax.distributed.initialize()``: under ``srun`` with no more arguments, e.g.
``srun -n 8 python -m benchmarks.apps.nbody --distributed --grid 2x4 --n 512``;
elsewhere with ``--coordinator HOST:PORT --num-processes N --process-id I``), the mesh
spanning every process's devices. The linear field is drawn block by block where it
lives, the particles are sharded with the mesh, and the checks are computed from the
distributed arrays (only spectra, scalars and the plot's slab come to the hosts);
process 0 prints and writes. The one-device comparison gathers the linear and the
final field to every process and runs on process 0 (``--skip-one-device`` where one
device cannot hold the run); ``--compare-jaxpm`` is refused (JaxPM runs the whole field
on one device). ``--save-final`` writes the final density contrast
(``OUT/nbody_<n>_<grid>_<dtype>_delta.npy``, gathered to the hosts).
"""
from __future__ import annotations

import argparse
import builtins
import datetime
import functools
import json
import os
import platform
import time

from .. import common
from ..common import (add_distributed_arguments, median_time, parse_grids, simulate_cpu_devices,
                      start_distributed)

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from . import particle_mesh as pmlib  # noqa: E402
from pfft import to_host  # noqa: E402

jax.config.update("jax_enable_x64", True)

SIGMA8 = 0.8
BINS = (0.5, 1.5, 2.5, 3.5, 4.5)        # in units of the fundamental 2π/box


def make_solver(n: int, box: float, grid: str, dtype, halo: int, kernel: str):
    """The solver on a pfft mesh of ``grid`` (``"2x4"``), or on one device (``"one"``)."""
    mesh = None
    if grid != "one":
        import pfft

        mesh = pfft.make_mesh(parse_grids([grid])[0])
    return pmlib.ParticleMesh(n, box, mesh, dtype, halo=halo, kernel=kernel)


def a_grid(a0: float, steps: int) -> np.ndarray:
    """Scale factors of the steps, uniform in ``a`` from ``a0`` to 1."""
    return np.linspace(a0, 1.0, steps + 1)


class Run:
    """One simulation: initial state, a jitted advance between recorded scale factors."""

    def __init__(self, pm: pmlib.ParticleMesh, delta_l, a0: float, steps: int):
        self.pm, self.a = pm, a_grid(a0, steps)
        self.initial = jax.jit(lambda d: pm.initial_state(d, a0))(pm.put_field(delta_l))
        self._advance = jax.jit(lambda st, i0, i1: pm.run(st, self.a, i0, i1))
        self.one_step = jax.jit(lambda st: pm.step(st, self.a[1])).lower(
            self.initial).compile()
        self.delta = jax.jit(pm.density_contrast)
        self.mass = jax.jit(lambda s: jnp.sum(pm.paint(s).astype(jnp.float64)))

    def advance(self, state, i0: int, i1: int):
        """From step index ``i0 - 1`` (``state.a == a[i0 - 1]``) to ``a[i1 - 1]``."""
        return self._advance(state, i0, i1)

    def final(self):
        return self.advance(self.initial, 1, len(self.a))

    def time_per_step(self, repeats: int = 5) -> float:
        return median_time(lambda st: self.one_step(st).s, self.initial, repeats=repeats)

    def step_memory(self) -> dict:
        """Per device bytes of the compiled step (``memory_analysis``), and the devices'
        own ``memory_stats()`` peak where the backend has one."""
        m = self.one_step.memory_analysis()
        out = {}
        if m is not None:
            out = dict(arguments=m.argument_size_in_bytes, outputs=m.output_size_in_bytes,
                       temporaries=m.temp_size_in_bytes, aliased=m.alias_size_in_bytes)
            out["total"] = (out["arguments"] + out["outputs"] + out["temporaries"]
                            - out["aliased"])
        stats = jax.local_devices()[0].memory_stats()
        if stats and "peak_bytes_in_use" in stats:
            out["device_peak"] = stats["peak_bytes_in_use"]
        return out


def growth_table(pm, d0, d1, a0: float, a1: float, power) -> dict:
    """Measured ``P(k,a1)/P(k,a0)/(a1/a0)²`` per bin and the PM-linear-theory value."""
    p0, p1 = pm.power_spectrum(d0, BINS), pm.power_spectrum(d1, BINS)
    power0, power1 = to_host(p0.power), to_host(p1.power)
    measured = power1 / power0 / (a1 / a0) ** 2
    expected = pmlib.linear_growth_on_the_mesh(pm.n, pm.box, power, a0, a1, BINS, pm.kernel)
    return dict(k=to_host(p0.k).tolist(), modes=to_host(p0.counts).tolist(),
                measured=measured.tolist(), pm_linear_theory=expected.tolist(),
                power_a0=power0.tolist(), power_final=power1.tolist())


def grad_check(pm: pmlib.ParticleMesh, delta_l, a0: float, steps: int,
               directions: int = 3, eps: float = 1e-7, seed: int = 0) -> list:
    """``<grad L, v>`` under ``jit`` against central differences, on ``pm`` (float64).

    ``L(δ_L) = ½ mean(δ_final²)`` (nonlinear in ``δ_L`` through the whole simulation);
    ``v`` random unit-rms directions; the difference step is ``eps`` times the rms of
    ``δ_L``. CIC makes ``L`` piecewise smooth (its slope jumps where a particle crosses a
    cell face), so the step must be small enough that few particles cross: at
    ``eps = 1e-5`` the two sides differ by 1e-2, at ``1e-7`` by 1e-6 (32³, float64).
    """
    a = a_grid(a0, steps)

    def loss(d):
        st = pm.initial_state(d, a0)
        st = pm.run(st, a)
        return 0.5 * jnp.mean(pm.density_contrast(st.s) ** 2)

    shifted = jax.jit(lambda d, v, h: loss(d + h * v))
    g = jax.jit(jax.grad(loss))(delta_l)
    h = eps * float(to_host(jnp.std(delta_l)))
    rng = np.random.default_rng(seed)
    rows = []
    for _ in range(directions):
        v = pm.put_field(rng.standard_normal((pm.n,) * 3))
        ad = float(to_host(jnp.sum(g * v)))
        fd = (float(to_host(shifted(delta_l, v, h)))
              - float(to_host(shifted(delta_l, v, -h)))) / (2 * h)
        rows.append(dict(autodiff=ad, finite_difference=fd,
                         relative_error=abs(ad - fd) / abs(fd)))
    return rows


def compare_jaxpm(n: int, box: float, a0: float, steps: int, halo: int, delta_l,
                  delta_pfft, leapfrog_steps=(20, 40, 80, 160)) -> dict:
    """The final density against JaxPM's on one device from the same linear field, and
    the difference between the two pipelines split into its causes.

    JaxPM runs in float64 here (``jax_enable_x64`` is on, and its painting then adds
    float64 weights), pfft's run in its own dtype. Every run below uses JaxPM's
    ``pm_forces`` (absolute positions, CIC, ``-1/k²``, 4th-order finite-difference
    gradient: the conventions of ``kernel="fd4"``) and paints with JaxPM's ``cic_paint``;
    they differ in the initial conditions and the time integration:

    - initial conditions: this code's (:meth:`ParticleMesh.initial_state`: the
      Zel'dovich displacement shifted exactly to the cell centres by a Fourier phase),
      or JaxPM's ``lpt`` (order 1), which reads it at the particles by CIC (at cell
      centres: the mean of the 8 surrounding mesh points, the field smoothed by
      ``Π cos(k_i/2)``); the growth factor and rate of ``jax_cosmo`` are ``a`` and 1 in
      this Einstein–de Sitter cosmology (``Ω_c + Ω_b = 1``), as here;
    - integration: this module's KDK leapfrog (FastPM factors), ``steps`` steps uniform
      in ``a``, or ``jax.experimental.ode.odeint`` (adaptive Dormand–Prince, rtol =
      atol = 1e-5) of JaxPM's ``make_ode_fn`` from ``a0`` to 1.

    Rows (keys of the result; relative L2 of the final density and its largest
    difference against pfft's run unless said otherwise):

    1. ``same_stepper``: this code's ICs and ``steps`` KDK steps, as pfft's run but
       with JaxPM's force function: float32 round-off;
    2. ``jaxpm_ics_leapfrog``: JaxPM's ``lpt`` and ``steps`` KDK steps: the initial
       conditions alone;
    3. ``odeint_this_ics``: this code's ICs and ``odeint``: the integrator alone;
    4. ``jaxpm_odeint``: JaxPM's own pipeline (``lpt`` + ``odeint``); rows 2-4 also give
       ``P_pfft / P`` per bin (``power_ratio``) and 3-4 the seconds and the number of
       force evaluations of ``odeint``;
    5. ``jaxpm_odeint_vs_jaxpm_ics_leapfrog``: 4 against 2 (the integrator with JaxPM's
       ICs), ``jaxpm_odeint_vs_odeint_this_ics``: 4 against 3 (the ICs under
       ``odeint``), ``initial_displacement``: JaxPM's ``lpt`` displacement at ``a0``
       against this code's, and ``initial_displacement_windowed``: against this code's
       times ``Π cos(k_i/2)`` (the CIC read's window at cell centres, applied in Fourier
       space): round-off if that window is the whole difference of the ICs;
    6. ``leapfrog_convergence``: this code's ICs and ``leapfrog_steps`` KDK steps, each
       against ``odeint`` at rtol = atol = 1e-7 from the same ICs, and
       ``odeint_tolerance``: ``odeint`` at 1e-5 (row 3) against 1e-7;
    7. ``jaxpm_odeint_mesh_points``: JaxPM's own pipeline with the particles on the mesh
       points (JaxPM's usual lattice, where its CIC read is exact and nothing is
       smoothed; the others start them at cell centres, as this code does): a
       different sampling of the same Lagrangian map, so only the spectra compare.
    """
    import jax_cosmo as jc
    from jax.experimental.ode import odeint
    from jaxpm.painting import cic_paint
    from jaxpm.pm import lpt, make_ode_fn, pm_forces

    pm = make_solver(n, box, "one", np.float64, halo, "fd4")   # JaxPM paints in float64
    lattice = jnp.stack(jnp.meshgrid(*[jnp.arange(n, dtype=jnp.float64) + 0.5] * 3,
                                     indexing="ij"))                # cell centres
    particles = jnp.moveaxis(lattice, 0, -1).reshape(-1, 3)

    def flat(s):                        # (3, n, n, n) -> JaxPM's (n³, 3), and back
        return jnp.moveaxis(s, 0, -1).reshape(-1, 3)

    def grid(x):
        return jnp.moveaxis(x.reshape(n, n, n, 3), -1, 0)

    def jaxpm_forces(s):
        return grid(pm_forces(flat(lattice + s), mesh_shape=(n, n, n))).astype(s.dtype)

    def paint(s):
        return cic_paint(jnp.zeros((n, n, n), s.dtype), flat(lattice + s)) - 1

    def eds():      # a fresh one per trace: jax_cosmo caches its growth table in it
        return jc.Planck15(Omega_c=0.95, Omega_b=0.05)

    @jax.jit
    def this_ics(d):
        st = pm.initial_state(d, a0)
        return st.s, st.p

    @functools.partial(jax.jit, static_argnums=1)
    def jaxpm_ics(d, offset=0.5):    # JaxPM's lpt for particles at lattice - 0.5 + offset
        q = particles + (offset - 0.5)
        dx, p, _ = lpt(eds(), d, particles=q, a=a0, order=1)
        return grid(dx), grid(p)

    @functools.partial(jax.jit, static_argnums=2)
    def leapfrog(s, p, nsteps):
        st = pmlib.State(s, p, jaxpm_forces(s), jnp.asarray(a0, s.dtype),
                         jnp.max(jnp.abs(s)))
        return paint(pm.run(st, a_grid(a0, nsteps), force_fn=jaxpm_forces).s)

    calls = [0]

    def ode(state, a, cosmo):
        jax.debug.callback(lambda: calls.__setitem__(0, calls[0] + 1))
        return make_ode_fn((n, n, n))(state, a, cosmo)

    @functools.partial(jax.jit, static_argnums=(2, 3))
    def integrate(s, p, tol, offset=0.5):
        res = odeint(ode, [flat(lattice + s) + (offset - 0.5), flat(p)],
                     jnp.array([a0, 1.0]), eds(), rtol=tol, atol=tol)
        return cic_paint(jnp.zeros((n, n, n)), res[0][-1]) - 1

    def timed_odeint(s, p, tol, offset=0.5):
        """One integration, timed once with its compilation (no warm-up: a run's own
        time) by the harness (:func:`benchmarks.common.timings`)."""
        calls[0] = 0
        out = []
        ((seconds,),) = common.timings(
            [lambda: out.append(np.asarray(integrate(s, p, tol, offset)))],
            repeats=1, warmup=0)
        return out[0], dict(seconds=seconds, force_evaluations=calls[0])

    def diff(x, ref):
        x, ref = np.asarray(x, np.float64), np.asarray(ref, np.float64)
        return dict(relative_l2=float(np.linalg.norm(x - ref) / np.linalg.norm(ref)),
                    max_abs=float(np.max(np.abs(x - ref))))

    def power_ratio(x, ref):           # P_ref / P_x per bin (ref: pfft's run)
        px = pm.power_spectrum(pm.put_field(np.asarray(x)), BINS)
        pr = pm.power_spectrum(pm.put_field(np.asarray(ref)), BINS)
        return (np.asarray(pr.power) / np.asarray(px.power)).tolist()

    ref = np.asarray(delta_pfft, np.float64)
    dl = pm.put_field(np.asarray(delta_l))
    ics = {"this": this_ics(dl), "jaxpm": jaxpm_ics(dl)}
    lf = {k: np.asarray(leapfrog(*v, steps)) for k, v in ics.items()}
    ode_this, info_this = timed_odeint(*ics["this"], 1e-5)
    ode_jaxpm, info_jaxpm = timed_odeint(*ics["jaxpm"], 1e-5)
    out = {"same_stepper": diff(lf["this"], ref),
           "jaxpm_ics_leapfrog": diff(lf["jaxpm"], ref),
           "odeint_this_ics": dict(diff(ode_this, ref), **info_this),
           "jaxpm_odeint": dict(diff(ode_jaxpm, ref), **info_jaxpm),
           "jaxpm_odeint_vs_jaxpm_ics_leapfrog": diff(ode_jaxpm, lf["jaxpm"]),
           "jaxpm_odeint_vs_odeint_this_ics": diff(ode_jaxpm, ode_this),
           "initial_displacement": diff(ics["jaxpm"][0], ics["this"][0])}
    out["jaxpm_odeint"]["power_ratio"] = power_ratio(ode_jaxpm, ref)
    out["jaxpm_ics_leapfrog"]["power_ratio"] = power_ratio(lf["jaxpm"], ref)
    out["odeint_this_ics"]["power_ratio"] = power_ratio(ode_this, ref)
    s_this = np.asarray(ics["this"][0])
    kk = 2 * np.pi * np.fft.fftfreq(n)
    window = (np.cos(kk / 2)[:, None, None] * np.cos(kk / 2)[None, :, None]
              * np.cos(kk[: n // 2 + 1] / 2)[None, None, :])
    windowed = np.fft.irfftn(np.fft.rfftn(s_this, axes=(1, 2, 3)) * window, s=(n,) * 3,
                             axes=(1, 2, 3))
    out["initial_displacement_windowed"] = diff(ics["jaxpm"][0], windowed)
    tight, info = timed_odeint(*ics["this"], 1e-7)
    out["leapfrog_convergence"] = [
        dict(steps=k, **diff(lf["this"] if k == steps else leapfrog(*ics["this"], k), tight))
        for k in leapfrog_steps]
    out["odeint_tolerance"] = dict(diff(ode_this, tight), rtol=1e-7, **info)
    # JaxPM's usual lattice: particles on the mesh points, where its CIC read is exact
    on_points, info = timed_odeint(*jaxpm_ics(dl, 0.0), 1e-5, 0.0)
    out["jaxpm_odeint_mesh_points"] = dict(diff(on_points, ref), **info,
                                           power_ratio=power_ratio(on_points, ref))
    return out


def print_jaxpm(c: dict, steps: int) -> None:
    """The rows of :func:`compare_jaxpm`'s result."""
    from importlib.metadata import version

    def row(label, r, extra=""):
        print(f"    {label:<44s} {r['relative_l2']:8.2e}  (max |diff| {r['max_abs']:.1e})"
              + extra)

    def ratio(r):
        return "; P_pfft/P per bin " + " ".join(f"{v:.4f}" for v in r["power_ratio"])

    print(f"(b) against JaxPM {version('jaxpm')} (one device, float64, JaxPM's pm_forces "
          f"and cic_paint throughout), final delta, relative L2 difference:")
    print(f"    against pfft's run ({steps} KDK steps from this code's ICs):")
    row(f"same ICs, same {steps} KDK steps", c["same_stepper"])
    row(f"JaxPM's lpt ICs, {steps} KDK steps", c["jaxpm_ics_leapfrog"],
        ratio(c["jaxpm_ics_leapfrog"]))
    o = c["odeint_this_ics"]
    row("this code's ICs, odeint (rtol 1e-5)", o,
        ratio(o) + f"; {o['force_evaluations']} forces")
    o = c["jaxpm_odeint"]
    row("JaxPM's lpt + odeint (rtol 1e-5)", o,
        ratio(o) + f"; {o['force_evaluations']} forces")
    print("    the other pairs:")
    row(f"lpt + odeint vs lpt + {steps} KDK steps", c["jaxpm_odeint_vs_jaxpm_ics_leapfrog"])
    row("lpt + odeint vs this code's ICs + odeint", c["jaxpm_odeint_vs_odeint_this_ics"])
    row("displacement at a0: lpt vs this code's", c["initial_displacement"])
    row("  vs this code's times prod cos(k_i/2)", c["initial_displacement_windowed"])
    t = c["odeint_tolerance"]
    print(f"    from this code's ICs, against odeint at rtol 1e-7 "
          f"({t['force_evaluations']} forces):")
    for r in c["leapfrog_convergence"]:
        row(f"{r['steps']} KDK steps", r)
    row("odeint rtol 1e-5", t)
    o = c["jaxpm_odeint_mesh_points"]
    print("    JaxPM's lpt + odeint with the particles on the mesh points (JaxPM's usual "
          "lattice; a different sampling, compare the spectra), against pfft's run:")
    row("lpt + odeint, particles on mesh points", o,
        ratio(o) + f"; {o['force_evaluations']} forces")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=64, help="particles and mesh points per axis")
    ap.add_argument("--grid", default="2x4", help="device grid, or 'one' for jnp.fft")
    ap.add_argument("--box", type=float, default=512.0,
                    help="box side, Mpc/h (default 512: cells of 8 Mpc/h at 64³)")
    ap.add_argument("--a0", type=float, default=0.02)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--dtype", default="float32", choices=["float32", "float64"])
    ap.add_argument("--halo", type=int, default=8, help="halo width, cells")
    ap.add_argument("--kernel", default="fd4", choices=list(pmlib.KERNELS))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--grad-steps", type=int, default=None,
                    help="steps of the gradient check (default --steps)")
    ap.add_argument("--grad-n", type=int, default=None,
                    help="mesh of the gradient check (default --n)")
    ap.add_argument("--no-grad", action="store_true", help="skip the gradient check")
    ap.add_argument("--compare-jaxpm", action="store_true",
                    help="against JaxPM on one device (not with --distributed)")
    ap.add_argument("--skip-one-device", action="store_true",
                    help="no one-device jnp.fft run (comparison and time ratio): for runs "
                         "one device cannot hold")
    ap.add_argument("--save-final", action="store_true",
                    help="write the final density contrast as OUT/nbody_..._delta.npy "
                         "(gathered to every host)")
    add_distributed_arguments(ap)
    ap.add_argument("--quick", action="store_true",
                    help="32³, 8 steps, float64; gradient check at 16³, 4 steps (the tests)")
    ap.add_argument("--plot", action="store_true")
    ap.add_argument("--out", default="results")
    args = ap.parse_args(argv)
    if args.quick:
        args.n, args.box, args.steps, args.halo, args.dtype = 32, 256.0, 8, 4, "float64"
        args.grad_n, args.grad_steps = 16, 4
    if args.distributed and args.compare_jaxpm:
        ap.error("--compare-jaxpm runs JaxPM on one device with the whole field: "
                 "not with --distributed")
    if args.distributed and args.grid == "one":
        ap.error("--distributed needs a device grid (--grid), not 'one'")
    if args.distributed:
        lead, where = start_distributed(args)
        where = f"; {where}"
    else:
        simulate_cpu_devices(8)
        lead, where = True, ""
    print = builtins.print if lead else (lambda *a, **k: None)   # noqa: A001
    dtype = np.dtype(args.dtype).type
    power = pmlib.bbks_power(SIGMA8)
    key = jax.random.key(args.seed)
    print(f"PM N-body, EdS, BBKS sigma8={SIGMA8}: {args.n}^3 particles on a {args.n}^3 mesh, "
          f"box {args.box:g} Mpc/h, grid {args.grid}, {args.dtype}, a0 {args.a0}, "
          f"{args.steps} KDK steps, halo {args.halo}, kernel {args.kernel}; "
          f"{datetime.date.today()}, {platform.node()}, {os.cpu_count()} cores, "
          f"jax {jax.__version__}{where}", flush=True)
    result = dict(n=args.n, grid=args.grid, box=args.box, a0=args.a0, steps=args.steps,
                  dtype=args.dtype, halo=args.halo, kernel=args.kernel,
                  run=common.run_info("benchmarks.apps.nbody", argv, where.lstrip("; ")
                                      or common.devices_in_words()))
    if args.distributed:
        result["processes"] = jax.process_count()

    pm = make_solver(args.n, args.box, args.grid, dtype, args.halo, args.kernel)
    delta_l = pm.linear_field(key, power)
    run = Run(pm, delta_l, args.a0, args.steps)
    start = time.monotonic()                  # the whole run's wall time, with compilation
    final = run.final()
    d0, d1 = run.delta(run.initial.s), run.delta(final.s)
    result["max_displacement"] = pm.check_halo(final)
    result["run_seconds"] = time.monotonic() - start
    print(f"ran to a = {float(to_host(final.a)):.3f} in {result['run_seconds']:.1f} s (with "
          f"compilation); largest displacement {result['max_displacement']:.2f} cells "
          f"(halo {args.halo})")

    g = growth_table(pm, d0, d1, args.a0, 1.0, power)
    result["growth"] = g
    print(f"(a) linear growth P(k,1)/P(k,a0)/(1/a0)^2, a0 = {args.a0}:")
    print("    k [h/Mpc]  modes  measured  PM linear theory")
    for k, c, m, e in zip(g["k"], g["modes"], g["measured"], g["pm_linear_theory"]):
        print(f"    {k:9.4f}  {c:5d}  {m:8.4f}  {e:8.4f}")

    n3 = args.n ** 3
    mass = [abs(float(to_host(run.mass(st.s))) - n3) / n3 for st in (run.initial, final)]
    result["mass_error"] = mass
    print(f"(c) mass |sum rho - N|/N: {mass[0]:.1e} at a0, {mass[1]:.1e} at a = 1")

    # the whole final field on the hosts: gathered by every process (a collective)
    d1h = (to_host(d1) if args.save_final or (args.grid != "one" and not args.skip_one_device)
           else None)
    solo = None
    if args.grid == "one":
        solo = run
    elif not args.skip_one_device:
        dlh = to_host(delta_l)                  # a collective too: before the lead's own run
        if lead:
            solo = Run(make_solver(args.n, args.box, "one", dtype, args.halo, args.kernel),
                       dlh, args.a0, args.steps)
            s1 = np.asarray(solo.delta(solo.final().s), np.float64)
            d1f = np.asarray(d1h, np.float64)
            result["vs_one_device"] = dict(
                relative_l2=float(np.linalg.norm(d1f - s1) / np.linalg.norm(s1)),
                max_abs=float(np.max(np.abs(d1f - s1))))
            print(f"pfft {args.grid} vs one device (jnp.fft), final delta: relative L2 "
                  f"{result['vs_one_device']['relative_l2']:.1e}, max |diff| "
                  f"{result['vs_one_device']['max_abs']:.1e} (max |delta| "
                  f"{float(np.max(np.abs(s1))):.1f})")

    if not args.no_grad:
        t = time.monotonic()
        gn = args.grad_n or args.n
        gpm, gdl = pm, delta_l
        if dtype is not np.float64 or gn != args.n:
            gpm = make_solver(gn, args.box, args.grid, np.float64, min(args.halo, gn // 4),
                              args.kernel)
            gdl = delta_l if gn == args.n else gpm.linear_field(key, power)
            gdl = gpm.put_field(gdl)
        rows = grad_check(gpm, gdl, args.a0, args.grad_steps or args.steps)
        result["grad_check"] = rows
        print(f"(d) grad vs central differences ({gn}^3, "
              f"{args.grad_steps or args.steps} steps, float64, jit, grid {args.grid}, "
              f"{time.monotonic() - t:.0f} s):")
        for r in rows:
            print(f"    autodiff {r['autodiff']:+.8e}  finite difference "
                  f"{r['finite_difference']:+.8e}  relative error {r['relative_error']:.1e}")

    t_grid = run.time_per_step()
    t_one = solo.time_per_step() if solo is not None else float("nan")
    mem_grid = run.step_memory()
    mem_one = solo.step_memory() if solo is not None else {}
    result["time_per_step"] = dict(grid=t_grid, one_device=t_one)
    result["memory_per_device"] = dict(grid=mem_grid, one_device=mem_one)
    if solo is not None:
        print(f"time per step: {1e3 * t_grid:.1f} ms on grid {args.grid}, {1e3 * t_one:.1f} "
              f"ms on one device (jnp.fft): ratio {t_grid / t_one:.2f}")
    else:
        print(f"time per step: {1e3 * t_grid:.1f} ms on grid {args.grid}")
    if mem_grid.get("total"):
        one = (f", {mem_one['total'] / 2**20:.1f} MiB on one device" if mem_one.get("total")
               else "")
        print(f"memory per device of the compiled step (arguments + outputs + temporaries, "
              f"memory_analysis): {mem_grid['total'] / 2**20:.1f} MiB on grid {args.grid}"
              + one)
    if "device_peak" in mem_grid:
        print(f"device peak (memory_stats): {mem_grid['device_peak'] / 2**20:.1f} MiB")

    if args.compare_jaxpm:
        try:
            import jaxpm  # noqa: F401
        except ImportError:
            print("(b) JaxPM is not importable here: no comparison (see docs/applications.md)")
        else:
            c = compare_jaxpm(args.n, args.box, args.a0, args.steps, args.halo, delta_l, d1)
            result["jaxpm"] = c
            print_jaxpm(c, args.steps)

    name = f"nbody_{args.n}_{args.grid}_{args.dtype}"
    if lead:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, name + ".json"), "w") as f:
            json.dump(result, f, indent=1)
        if args.save_final:
            np.save(os.path.join(args.out, name + "_delta.npy"), d1h)
    if args.plot:               # every process computes (collectives), the lead draws
        plot(pm, run, power, args.a0, os.path.join(args.out, name + ".png"),
             f"{args.n}³, grid {args.grid}", draw=lead)


def plot(pm, run, power, a0, path, label, records=(0.1, 0.3, 1.0), draw=True):
    """A slice of the final density and ``P(k)`` at a few ``a`` against linear theory.

    The simulation and the spectra run on every process (collectives); only the
    spectra and the slab's projection come to the hosts, and ``draw`` says whether
    this one draws and writes."""
    edges = np.geomspace(2 * np.pi / pm.box * 0.99, np.pi * pm.n / pm.box, 16)
    kf = 2 * np.pi / pm.box
    states, state, i = [(a0, run.initial)], run.initial, 1
    for a in records:
        j = int(np.searchsorted(run.a, a - 1e-9)) + 1
        state, i = run.advance(state, i, j), j
        states.append((float(run.a[j - 1]), state))
    depth = max(1, pm.n // 16)
    slab = to_host(jax.jit(lambda d: d[:, :, :depth].mean(axis=2))(run.delta(states[-1][1].s)))
    spectra = []
    for a, st in states:
        ps = pm.power_spectrum(run.delta(st.s), edges / kf)
        spectra.append((a, to_host(ps.k), to_host(ps.power)))
    if not draw:
        return
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax0, ax1) = plt.subplots(1, 2, figsize=(11, 4.5))
    ax0.imshow(np.log10(2 + slab).T,
               origin="lower", cmap="magma", extent=(0, pm.box, 0, pm.box))
    ax0.set_title(f"log10(2 + δ), a = 1, slab of {pm.box / 16:g} Mpc/h")
    kk = np.geomspace(edges[0], edges[-1], 200)
    for a, k, p in spectra:
        line, = ax1.loglog(k, p, "o", ms=4, label=f"pfft PM, a = {a:.2f}")
        ax1.loglog(kk, a * a * np.asarray(power(kk)), "-", color=line.get_color(), lw=0.8)
    ax1.set_xlabel("k [h/Mpc]")
    ax1.set_ylabel("P(k) [(Mpc/h)³]")
    ax1.set_title(f"{label}; lines: linear theory a² P(k)")
    ax1.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    print(f"plot: {path}")


# -- the docs' tables (python -m benchmarks report) --------------------------------------
#: the runs the docs show: result file in docs/data -> the table (and the figure) made of
#: it: 64³ on 8 simulated CPU devices, and benchmarks/gpu.sh's 256³ run on one GPU
#: (rendered where its result is in docs/data)
RUN = "nbody_64_2x4_float32.json"
GPU_RUN = "nbody_256_1x1_float32.json"
DOCS = {RUN: ("nbody.md", "nbody_growth.png"), GPU_RUN: ("gpu_nbody.md",)}


def report_lines(r: dict) -> list[str]:
    """The docs' table of a run's result (its JSON): growth against linear theory,
    mass, the one-device run, the gradient check, the time per step."""
    g = r["growth"]
    lines = ["| check | result |", "|---|---|"]
    for k, modes, got, want in zip(g["k"], g["modes"], g["measured"], g["pm_linear_theory"]):
        lines.append(f"| (a) growth `P(k,1)/P(k,a0)/(1/a0)²` at k = {k:.4f} h/Mpc ({modes} "
                     f"modes) | **{got:.3f}**; PM linear theory {want:.3f} |")
    lines.append(f"| (c) mass: abs(Σρ − N) / N | {r['mass_error'][0]:.1e} at a0, "
                 f"{r['mass_error'][1]:.1e} at a = 1 |")
    if "vs_one_device" in r:
        lines.append(f"| pfft {r['grid']} against the same code on one device (`jnp.fft`), "
                     f"final `δ` | relative L2 {r['vs_one_device']['relative_l2']:.1e}, max "
                     f"{r['vs_one_device']['max_abs']:.1e} |")
    for i, c in enumerate(r.get("grad_check", [])):
        lines.append(f"| (d) `jax.grad` against central differences, direction {i + 1} "
                     f"(float64) | relative error {c['relative_error']:.1e} |")
    t = r.get("time_per_step", {})
    if t.get("one_device"):
        digits = 0 if 1e3 * t["grid"] >= 10 else 1
        lines.append(f"| time per step | {1e3 * t['grid']:.{digits}f} ms on {r['grid']}, "
                     f"{1e3 * t['one_device']:.{digits}f} ms on one device "
                     f"({t['grid'] / t['one_device']:.2f}) |")
    return lines


def report(data: str, figures: str) -> list[str]:
    """``data/nbody.md`` and ``figures/nbody_growth.png`` from the result :data:`RUN`,
    and ``data/gpu_nbody.md`` from :data:`GPU_RUN`, each where its result is in
    ``data`` (:func:`report_lines`; the caption from the run's record)."""
    done = []
    for run, made in DOCS.items():
        path = os.path.join(data, run)
        if not os.path.exists(path):
            continue
        with open(path) as f:
            r = json.load(f)
        info, g = r.get("run", {}), r["growth"]
        for png in (m for m in made if m.endswith(".png")):
            plt = common.pyplot()
            fig, ax = plt.subplots(figsize=(5.5, 3.6))
            ax.plot(g["k"], g["measured"], "o-", label=f"pfft {r['n']}³ on {r['grid']}")
            ax.plot(g["k"], g["pm_linear_theory"], "k:", label="PM linear theory")
            ax.axhline(1.0, color="grey", lw=0.8, label="continuum linear theory")
            ax.set(xlabel="k [h/Mpc]", ylabel="P(k,1) / P(k,a0) / (1/a0)²")
            ax.legend(fontsize=7)
            common.save_plot(fig, os.path.join(figures, png), common.figure_note(info))
            done.append(os.path.join(figures, png))
        done.insert(0, common.write_doc(os.path.join(data, made[0]), info,
                                        "\n".join(report_lines(r))))
    return done


if __name__ == "__main__":
    main()
