"""Particle-mesh N-body cosmology on pfft (issue 16): Einstein–de Sitter, Zel'dovich start.

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
        [--compare-jaxpm] [--quick] [--out results]

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
  one device from the same initial conditions, both with this leapfrog and JaxPM's
  ``pm_forces``, and with JaxPM's own ``lpt`` + adaptive ``odeint``.

``--grid one`` runs everything on one device with ``jnp.fft``.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import time

from ..common import median_time, parse_grids, simulate_cpu_devices

simulate_cpu_devices(8)

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from . import particle_mesh as pmlib  # noqa: E402

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
        stats = jax.devices()[0].memory_stats()
        if stats and "peak_bytes_in_use" in stats:
            out["device_peak"] = stats["peak_bytes_in_use"]
        return out


def growth_table(pm, d0, d1, a0: float, a1: float, power) -> dict:
    """Measured ``P(k,a1)/P(k,a0)/(a1/a0)²`` per bin and the PM-linear-theory value."""
    p0, p1 = pm.power_spectrum(d0, BINS), pm.power_spectrum(d1, BINS)
    measured = np.asarray(p1.power) / np.asarray(p0.power) / (a1 / a0) ** 2
    expected = pmlib.linear_growth_on_the_mesh(pm.n, pm.box, power, a0, a1, BINS, pm.kernel)
    return dict(k=np.asarray(p0.k).tolist(), modes=np.asarray(p0.counts).tolist(),
                measured=measured.tolist(), pm_linear_theory=expected.tolist())


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
    h = eps * float(jnp.std(delta_l))
    rng = np.random.default_rng(seed)
    rows = []
    for _ in range(directions):
        v = pm.put_field(rng.standard_normal((pm.n,) * 3))
        ad = float(jnp.sum(g * v))
        fd = (float(shifted(delta_l, v, h)) - float(shifted(delta_l, v, -h))) / (2 * h)
        rows.append(dict(autodiff=ad, finite_difference=fd,
                         relative_error=abs(ad - fd) / abs(fd)))
    return rows


def compare_jaxpm(n: int, box: float, a0: float, steps: int, halo: int, delta_l,
                  delta_pfft) -> dict:
    """The final density against JaxPM's on one device from the same linear field.

    JaxPM runs in float64 here (``jax_enable_x64`` is on, and its painting then adds
    float64 weights), pfft's run in its own dtype.

    1. The same leapfrog (this module's, FastPM factors) with JaxPM's ``pm_forces``
       (absolute positions, CIC, ``-1/k²``, 4th-order finite-difference gradient: the
       conventions of ``kernel="fd4"``), painted with JaxPM's ``cic_paint``.
    2. JaxPM's own pipeline: ``lpt`` (order 1) at ``a0`` and ``odeint`` (adaptive
       Dormand–Prince, rtol = atol = 1e-5) to ``a = 1``, in an Einstein–de Sitter
       ``jax_cosmo`` cosmology (``Ω_c + Ω_b = 1``).
    """
    import jax_cosmo as jc
    from jax.experimental.ode import odeint
    from jaxpm.painting import cic_paint
    from jaxpm.pm import lpt, make_ode_fn, pm_forces

    pm = make_solver(n, box, "one", np.float64, halo, "fd4")   # JaxPM paints in float64
    lattice = jnp.stack(jnp.meshgrid(*[jnp.arange(n, dtype=jnp.float64) + 0.5] * 3,
                                     indexing="ij"))                # cell centres

    def jaxpm_forces(s):
        pos = jnp.moveaxis(lattice + s, 0, -1)
        return jnp.moveaxis(pm_forces(pos, mesh_shape=(n, n, n)), -1, 0).astype(s.dtype)

    def paint(s):
        return cic_paint(jnp.zeros((n, n, n), s.dtype), jnp.moveaxis(lattice + s, 0, -1)) - 1

    a = a_grid(a0, steps)
    dl = pm.put_field(np.asarray(delta_l))

    @jax.jit
    def same_stepper(d):
        st = pm.initial_state(d, a0)
        st = st._replace(f=jaxpm_forces(st.s))
        return paint(pm.run(st, a, force_fn=jaxpm_forces).s)

    cosmo = jc.Planck15(Omega_c=0.95, Omega_b=0.05)
    particles = jnp.moveaxis(lattice, 0, -1).reshape(-1, 3).astype(jnp.float64)

    @jax.jit
    def own_pipeline(d):
        dx, p, _ = lpt(cosmo, d, particles=particles, a=a0, order=1)
        pos = particles + dx.reshape(-1, 3)
        res = odeint(make_ode_fn((n, n, n)), [pos, p.reshape(-1, 3)],
                     jnp.array([a0, 1.0]), cosmo, rtol=1e-5, atol=1e-5)
        return cic_paint(jnp.zeros((n, n, n)), res[0][-1]) - 1

    ref = np.asarray(delta_pfft, np.float64)

    def diff(x):
        x = np.asarray(x, np.float64)
        return dict(relative_l2=float(np.linalg.norm(x - ref) / np.linalg.norm(ref)),
                    max_abs=float(np.max(np.abs(x - ref))))

    out = {"same_stepper": diff(same_stepper(dl))}
    t = time.perf_counter()
    own = own_pipeline(dl)
    out["jaxpm_odeint"] = diff(own)
    out["jaxpm_odeint"]["seconds"] = time.perf_counter() - t
    p_own = pm.power_spectrum(pm.put_field(np.asarray(own)), BINS)
    p_ref = pm.power_spectrum(pm.put_field(ref), BINS)
    out["jaxpm_odeint"]["power_ratio"] = (np.asarray(p_ref.power)
                                          / np.asarray(p_own.power)).tolist()
    return out


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
    ap.add_argument("--compare-jaxpm", action="store_true")
    ap.add_argument("--quick", action="store_true",
                    help="32³, 8 steps, float64; gradient check at 16³, 4 steps (the tests)")
    ap.add_argument("--plot", action="store_true")
    ap.add_argument("--out", default="results")
    args = ap.parse_args(argv)
    if args.quick:
        args.n, args.box, args.steps, args.halo, args.dtype = 32, 256.0, 8, 4, "float64"
        args.grad_n, args.grad_steps = 16, 4
    dtype = np.dtype(args.dtype).type
    power = pmlib.bbks_power(SIGMA8)
    key = jax.random.key(args.seed)
    print(f"PM N-body, EdS, BBKS sigma8={SIGMA8}: {args.n}^3 particles on a {args.n}^3 mesh, "
          f"box {args.box:g} Mpc/h, grid {args.grid}, {args.dtype}, a0 {args.a0}, "
          f"{args.steps} KDK steps, halo {args.halo}, kernel {args.kernel}; "
          f"{datetime.date.today()}, {platform.node()}, {os.cpu_count()} cores, "
          f"jax {jax.__version__}", flush=True)
    result = dict(n=args.n, grid=args.grid, box=args.box, a0=args.a0, steps=args.steps,
                  dtype=args.dtype, halo=args.halo, kernel=args.kernel)

    pm = make_solver(args.n, args.box, args.grid, dtype, args.halo, args.kernel)
    delta_l = pm.linear_field(key, power)
    run = Run(pm, delta_l, args.a0, args.steps)
    start = time.perf_counter()
    final = run.final()
    d0, d1 = run.delta(run.initial.s), run.delta(final.s)
    result["max_displacement"] = pm.check_halo(final)
    result["run_seconds"] = time.perf_counter() - start
    print(f"ran to a = {float(final.a):.3f} in {result['run_seconds']:.1f} s (with "
          f"compilation); largest displacement {result['max_displacement']:.2f} cells "
          f"(halo {args.halo})")

    g = growth_table(pm, d0, d1, args.a0, 1.0, power)
    result["growth"] = g
    print(f"(a) linear growth P(k,1)/P(k,a0)/(1/a0)^2, a0 = {args.a0}:")
    print("    k [h/Mpc]  modes  measured  PM linear theory")
    for k, c, m, e in zip(g["k"], g["modes"], g["measured"], g["pm_linear_theory"]):
        print(f"    {k:9.4f}  {c:5d}  {m:8.4f}  {e:8.4f}")

    n3 = args.n ** 3
    mass = [abs(float(run.mass(st.s)) - n3) / n3 for st in (run.initial, final)]
    result["mass_error"] = mass
    print(f"(c) mass |sum rho - N|/N: {mass[0]:.1e} at a0, {mass[1]:.1e} at a = 1")

    solo = Run(make_solver(args.n, args.box, "one", dtype, args.halo, args.kernel),
               delta_l, args.a0, args.steps) if args.grid != "one" else run
    if args.grid != "one":
        s1 = np.asarray(solo.delta(solo.final().s), np.float64)
        d1h = np.asarray(d1, np.float64)
        result["vs_one_device"] = dict(
            relative_l2=float(np.linalg.norm(d1h - s1) / np.linalg.norm(s1)),
            max_abs=float(np.max(np.abs(d1h - s1))))
        print(f"pfft {args.grid} vs one device (jnp.fft), final delta: relative L2 "
              f"{result['vs_one_device']['relative_l2']:.1e}, max |diff| "
              f"{result['vs_one_device']['max_abs']:.1e} (max |delta| "
              f"{float(np.max(np.abs(s1))):.1f})")

    if not args.no_grad:
        t = time.perf_counter()
        gn = args.grad_n or args.n
        gpm, gdl = pm, delta_l
        if dtype is not np.float64 or gn != args.n:
            gpm = make_solver(gn, args.box, args.grid, np.float64, min(args.halo, gn // 4),
                              args.kernel)
            gdl = delta_l if gn == args.n else gpm.linear_field(key, power)
            gdl = gpm.put_field(np.asarray(gdl, np.float64))
        rows = grad_check(gpm, gdl, args.a0, args.grad_steps or args.steps)
        result["grad_check"] = rows
        print(f"(d) grad vs central differences ({gn}^3, "
              f"{args.grad_steps or args.steps} steps, float64, jit, grid {args.grid}, "
              f"{time.perf_counter() - t:.0f} s):")
        for r in rows:
            print(f"    autodiff {r['autodiff']:+.8e}  finite difference "
                  f"{r['finite_difference']:+.8e}  relative error {r['relative_error']:.1e}")

    t_grid, t_one = run.time_per_step(), solo.time_per_step()
    mem_grid, mem_one = run.step_memory(), solo.step_memory()
    result["time_per_step"] = dict(grid=t_grid, one_device=t_one)
    result["memory_per_device"] = dict(grid=mem_grid, one_device=mem_one)
    print(f"time per step: {1e3 * t_grid:.1f} ms on grid {args.grid}, {1e3 * t_one:.1f} ms "
          f"on one device (jnp.fft): ratio {t_grid / t_one:.2f}")
    if mem_grid.get("total"):
        print(f"memory per device of the compiled step (arguments + outputs + temporaries, "
              f"memory_analysis): {mem_grid['total'] / 2**20:.1f} MiB on grid {args.grid}, "
              f"{mem_one['total'] / 2**20:.1f} MiB on one device")
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
            from importlib.metadata import version
            print(f"(b) against JaxPM {version('jaxpm')} (one device), final delta, "
                  f"relative L2 difference:")
            print(f"    same KDK steps, JaxPM's pm_forces: "
                  f"{c['same_stepper']['relative_l2']:.1e} (max |diff| "
                  f"{c['same_stepper']['max_abs']:.1e})")
            print(f"    JaxPM's lpt + odeint (rtol 1e-5): "
                  f"{c['jaxpm_odeint']['relative_l2']:.2e}; P_pfft/P_jaxpm per bin "
                  + " ".join(f"{v:.4f}" for v in c["jaxpm_odeint"]["power_ratio"]))

    os.makedirs(args.out, exist_ok=True)
    name = f"nbody_{args.n}_{args.grid}_{args.dtype}"
    with open(os.path.join(args.out, name + ".json"), "w") as f:
        json.dump(result, f, indent=1)
    if args.plot:
        plot(pm, run, power, args.a0, os.path.join(args.out, name + ".png"),
             f"{args.n}³, grid {args.grid}")


def plot(pm, run, power, a0, path, label, records=(0.1, 0.3, 1.0)):
    """A slice of the final density and ``P(k)`` at a few ``a`` against linear theory."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    edges = np.geomspace(2 * np.pi / pm.box * 0.99, np.pi * pm.n / pm.box, 16)
    kf = 2 * np.pi / pm.box
    states, state, i = [(a0, run.initial)], run.initial, 1
    for a in records:
        j = int(np.searchsorted(run.a, a - 1e-9)) + 1
        state, i = run.advance(state, i, j), j
        states.append((float(run.a[j - 1]), state))
    fig, (ax0, ax1) = plt.subplots(1, 2, figsize=(11, 4.5))
    delta = np.asarray(run.delta(states[-1][1].s))
    ax0.imshow(np.log10(2 + delta[:, :, : max(1, pm.n // 16)].mean(axis=2)).T,
               origin="lower", cmap="magma", extent=(0, pm.box, 0, pm.box))
    ax0.set_title(f"log10(2 + δ), a = 1, slab of {pm.box / 16:g} Mpc/h")
    kk = np.geomspace(edges[0], edges[-1], 200)
    for a, st in states:
        ps = pm.power_spectrum(run.delta(st.s), edges / kf)
        line, = ax1.loglog(np.asarray(ps.k), np.asarray(ps.power), "o", ms=4,
                           label=f"pfft PM, a = {a:.2f}")
        ax1.loglog(kk, a * a * np.asarray(power(kk)), "-", color=line.get_color(), lw=0.8)
    ax1.set_xlabel("k [h/Mpc]")
    ax1.set_ylabel("P(k) [(Mpc/h)³]")
    ax1.set_title(f"{label}; lines: linear theory a² P(k)")
    ax1.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    print(f"plot: {path}")


if __name__ == "__main__":
    main()
