"""A particle-mesh (PM) N-body solver in an Einstein–de Sitter universe, on pfft.

Units and equations
-------------------
Positions, displacements and momenta are in mesh cells; time is the scale factor
``a`` (Hubble constant 1). In comoving coordinates with canonical momentum
``p = a² dx/dt`` the equations of motion are (JaxPM's ``make_ode_fn`` with ``Ω_m = 1``,
``E(a) = a^{-3/2}``)::

    dx/da = p / (a³ E(a)) = a^{-3/2} p
    dp/da = 3/2 Ω_m F / (a² E(a)) = 3/2 a^{-1/2} F,     F = -∇ ∇^{-2} δ

with ``δ`` the density contrast painted from the particles. In linear theory
``δ(a) = D(a) δ_L`` with the growth factor ``D = a``, ``F = a Ψ`` and ``Ψ = -∇∇^{-2}δ_L``
the Zel'dovich displacement, so ``x = q + a Ψ`` and ``p = a^{3/2} Ψ``: the initial
conditions at ``a_0`` (:meth:`ParticleMesh.initial_state`).

Forces (:meth:`ParticleMesh.force_grid`): ``F_i = irfftn(-g_i(k) · (-1/|k|²) · rfftn(ρ))``
with ``k = 2π fftfreq(n)`` radians per cell, the continuous inverse Laplacian and, for
``g_i``, either the 4th-order finite-difference gradient ``i (8 sin k_i - sin 2k_i)/6``
(``kernel="fd4"``, JaxPM's ``gradient_kernel`` default) or the spectral ``i k_i`` with the
Nyquist mode zeroed (``kernel="ik"``, :func:`pfft.spectral.gradient`'s). One forward real
transform (a pfft ``r2c`` plan) and one batched inverse of the three components (a plan
of shape ``(3, n, n, n)`` over axes 1-3, whose spectrum is the first plan's with a batch
axis in front) per force evaluation; no CIC compensation (neither does JaxPM's
``pm_forces``). :mod:`pfft.spectral`'s ``poisson`` then ``gradient`` would take two
forward and four inverse transforms for the same force.

Time stepping (:meth:`ParticleMesh.step`): kick-drift-kick leapfrog on steps uniform in
``a``, with the kick and drift factors of FastPM (Feng et al. 2016) for ``D = a``: a kick
from ``a_i`` to ``a_f`` with the force taken at ``a_e`` is ``Δp = F(a_e) (a_f^{3/2} -
a_i^{3/2}) / a_e``, a drift with the momentum taken at ``a_e`` is ``Δx = p(a_e) (a_f -
a_i) / a_e^{3/2}``. Both are the exact integrals where ``F ∝ a`` and ``p ∝ a^{3/2}``, so
linear growth is exact at any step count (where the force is), and to leading order in
the step they are the plain leapfrog. One force evaluation per step.

Particles distributed with the mesh (Lagrangian ownership)
----------------------------------------------------------
There is one particle per mesh cell, starting at the cell's centre ``q + 1/2`` (mesh
points are at integers). Not at the mesh points: there CIC's weights have a kink, a
particle's first move gives all its mass to the neighbour on the side it moves to, and
while displacements are below a cell the large scales grow about 2 % too slowly from
``a0 = 0.02`` at 64³ (measured: 0.969 of ``(a/a0)²`` at ``k_f`` in the linear regime, against
0.987 from :func:`linear_growth_on_the_mesh`). The particle that starts in cell ``q`` is held
forever by the device whose block of the mesh holds ``q``: the particle arrays (the
displacement ``s = x - q`` and the momentum ``p``, shape ``(3, n, n, n)``) are sharded
exactly like the density field (the pencil of pfft's plan; batch axis first). Storing
``s`` rather than ``x`` keeps float32 positions accurate to ``1e-7`` cells.

- Painting (:meth:`ParticleMesh.paint`): each device deposits its particles by
  cloud-in-cell into its own block extended by ``halo`` cells on every side (one
  scatter-add in ``jax.shard_map``), then :func:`pfft.halo_reduce` sends every halo to
  the neighbour that owns those cells and adds it there (along a whole axis a block
  wraps onto itself). The result is the density in the field's sharding.
- Reading (:meth:`ParticleMesh.read`): :func:`pfft.halo_exchange` gives every block of
  the three force components its neighbours' edges, and each device interpolates
  (CIC, the transpose of painting) at its own particles.

This is exact as long as every displacement component stays in ``[-halo - 1/2, halo - 1/2)``:
then the 8 cells a particle touches lie in its owner's extended block. The solver
tracks ``max |s|`` over the whole run (a reduction per step) and
:meth:`ParticleMesh.check_halo` raises ``RuntimeError`` if it reached ``halo - 1/2``;
particles beyond the halo are masked out of painting (their mass would be lost, which
the mass-conservation check would also show) instead of corrupting other cells.
No particle ever changes owner, so there is no particle exchange and the arrays keep
static shapes (which ``jit`` and ``jax.grad`` want); the price is a halo as wide as the
largest displacement (at 64³ in a 256 Mpc/h box, ``σ_8 = 0.8``, about 6 cells by
``a = 1``), and that the work per device follows the Lagrangian, not the Eulerian,
distribution of particles. Codes that run to strongly clustered states (or much
larger displacements in cells) move particles between owners instead.

The same class runs on one device with ``jnp.fft`` (``mesh=None``): there the halo
"exchange" is the block's own periodic wrap, so both runs execute the same painting
and reading code and can be compared step for step.

It also runs as one JAX program over several processes (``jax.distributed``, a mesh
spanning every process's devices): nothing global is closed over in ``jit`` (the
wavenumbers are made inside the traced functions), host fields are placed block by
block (:meth:`ParticleMesh.put_field`, ``pfft.from_host``) and ``pfft.to_host`` brings
replicated scalars and small gathered arrays to the host.
"""
from __future__ import annotations

import functools
import math
from typing import Callable, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import NamedSharding, PartitionSpec

import pfft

KERNELS = ("fd4", "ik")


class State(NamedTuple):
    """The particles at scale factor ``a``: displacement ``s = x - q``, momentum ``p``
    and the force ``f`` at ``a`` (all ``(3, n, n, n)`` in cells), and the largest
    ``|s|`` met so far."""
    s: jax.Array
    p: jax.Array
    f: jax.Array
    a: jax.Array
    max_disp: jax.Array


# -- the initial power spectrum -------------------------------------------------------------

def bbks_power(sigma8: float = 0.8, gamma: float = 0.5, ns: float = 1.0) -> Callable:
    """The linear matter power spectrum at ``a = 1`` of standard CDM (``Ω_m = 1``).

    BBKS transfer function (Bardeen et al. 1986) with shape parameter ``Γ = Ω_m h``,
    primordial slope ``n_s``, normalised to ``σ_8`` (the rms of the linear density in
    top-hat spheres of 8 Mpc/h, by quadrature). ``k`` in h/Mpc, ``P`` in (Mpc/h)³.
    """
    def shape(k):
        q = k / gamma
        t = (jnp.log1p(2.34 * q) / (2.34 * q)
             * (1 + 3.89 * q + (16.1 * q) ** 2 + (5.46 * q) ** 3 + (6.71 * q) ** 4) ** -0.25)
        return k ** ns * t * t

    k = np.logspace(-5, 3, 40001)
    x = 8.0 * k
    window = 3 * (np.sin(x) - x * np.cos(x)) / x ** 3
    var = np.trapezoid(np.asarray(shape(k)) * window ** 2 * k ** 2, k) / (2 * np.pi ** 2)
    amplitude = sigma8 ** 2 / var

    def power(k):
        return amplitude * shape(k)
    return power


# -- the solver ------------------------------------------------------------------------

class ParticleMesh:
    """``n³`` particles on an ``n³`` mesh of a periodic box, on a device grid or one device.

    Parameters
    ----------
    n
        Mesh points (and particles) per axis.
    box
        Box side in Mpc/h (only the initial spectrum and the ``k`` of spectra use it).
    mesh
        A pfft mesh (:func:`pfft.make_mesh`); ``None``: one device with ``jnp.fft``.
    dtype
        Real dtype of fields and particles.
    halo
        Halo width in cells: the largest displacement component the particles may
        reach (see the module docstring).
    kernel
        Gradient kernel of the force, ``"fd4"`` or ``"ik"``.
    """

    def __init__(self, n: int, box: float, mesh=None, dtype=np.float32, halo: int = 4,
                 kernel: str = "fd4"):
        if kernel not in KERNELS:
            raise ValueError(f"kernel must be one of {KERNELS}, got {kernel!r}")
        if halo < 1:
            raise ValueError(f"halo must be at least 1 cell, got {halo}")
        self.n, self.box, self.mesh, self.kernel = n, float(box), mesh, kernel
        self.dtype = np.dtype(dtype).type
        self.halo = int(halo)
        self._plan = None
        if mesh is None:
            self._forward = jnp.fft.rfftn
            self._backward3 = functools.partial(jnp.fft.irfftn, s=(n, n, n), axes=(1, 2, 3))
            self.field_sharding = self.particle_sharding = None
            self._spec = None
        else:
            plan = pfft.plan((n, n, n), self.dtype, mesh, kind="r2c")
            # the three force components go back in one batched transform: its spectrum
            # is the scalar plan's with a batch axis in front
            plan3 = pfft.plan((3, n, n, n), self.dtype, mesh, kind="r2c", axes=(1, 2, 3))
            self._forward, self._backward3 = plan.forward, plan3.backward
            self._plan = plan
            self.field_sharding = plan.in_sharding
            spec = tuple(plan.in_sharding.spec) + (None,) * (3 - len(plan.in_sharding.spec))
            self._spec = PartitionSpec(*spec)
            self.particle_sharding = NamedSharding(mesh, PartitionSpec(None, *spec))
            blocks = [n // math.prod(mesh.shape[m] for m in _names(e)) for e in spec]
            if self.halo > min(blocks):
                raise ValueError(f"halo {self.halo} exceeds the smallest local block "
                                 f"({min(blocks)} cells) of the {n}³ mesh on {dict(mesh.shape)}")
        self._particle_spec = None if self._spec is None else PartitionSpec(None, *self._spec)

    # -- placement -------------------------------------------------------------------
    def put_field(self, x):
        """A numpy or jax field of shape ``(n, n, n)``, placed as the solver holds fields.

        On a mesh a host array (the same in every process) is placed block by block
        (``pfft.from_host``: each process puts only its own devices' blocks, also
        across processes under ``jax.distributed``); a jax array is converted and
        resharded where it is."""
        if self.field_sharding is None:
            return jax.device_put(np.asarray(x, self.dtype), jax.local_devices()[0])
        if isinstance(x, jax.Array):
            return jax.device_put(x.astype(self.dtype), self.field_sharding)
        return pfft.from_host(np.asarray(x, self.dtype), self.field_sharding)

    def _per_block(self, fn, in_specs, out_specs):
        if self.mesh is None:
            return fn
        return jax.shard_map(fn, mesh=self.mesh, in_specs=in_specs, out_specs=out_specs)

    # -- painting and reading -----------------------------------------------------------
    def paint(self, s):
        """Cloud-in-cell mass per cell (each particle mass 1: the mean is 1) of the
        particles displaced by ``s`` from their lattice points; the field's sharding."""
        h = self.halo
        ext = self._per_block(functools.partial(_paint_block, halo=h, dtype=self.dtype),
                              self._particle_spec, self._spec)(s)
        return pfft.halo_reduce(ext, (h, h, h), mesh=self.mesh, spec=self._spec)

    def read(self, fields, s):
        """Cloud-in-cell interpolation of ``fields`` (shape ``(c, n, n, n)``) at the
        particles: shape ``(c, n, n, n)``, sharded like the particles."""
        h = self.halo
        ext = pfft.halo_exchange(fields, (0, h, h, h), mesh=self.mesh,
                                 spec=self._particle_spec)
        return self._per_block(functools.partial(_read_block, halo=h),
                               (self._particle_spec, self._particle_spec),
                               self._particle_spec)(ext, s)

    # -- forces ------------------------------------------------------------------------
    def _wavenumbers(self):
        """Angular wavenumbers (radians per cell) of the spectrum, broadcastable; made
        where they are used (inside ``jit``), so that no global array is closed over
        (``jax.distributed`` forbids that)."""
        if self._plan is not None:
            return tuple(k.astype(self.dtype)
                         for k in self._plan.wavenumbers(1.0, angular=True))
        n = self.n
        k = 2 * np.pi * np.fft.fftfreq(n)
        kz = 2 * np.pi * np.fft.rfftfreq(n)
        return tuple(jnp.asarray(a, self.dtype) for a in
                     (k.reshape(n, 1, 1), k.reshape(1, n, 1), kz.reshape(1, 1, -1)))

    def _gradient_kernels(self, ks):
        if self.kernel == "fd4":
            return tuple(1j * (8 * jnp.sin(k) - jnp.sin(2 * k)) / 6 for k in ks)
        n = self.n
        return tuple(1j * jnp.where(jnp.abs(k) == np.pi, 0, k) if n % 2 == 0 else 1j * k
                     for k in ks)

    def force_grid(self, rho, shift: float = 0.0):
        """``F = -∇∇^{-2} ρ`` on the mesh (``(3, n, n, n)``, the particles' sharding);
        the mean of ``ρ`` does not matter. ``shift``: sampled at ``x + shift`` on every
        axis (a phase in Fourier space; the Nyquist planes then lose their real part)."""
        ks = kx, ky, kz = self._wavenumbers()
        k2 = kx * kx + ky * ky + kz * kz
        inv = jnp.where(k2 > 0, 1 / jnp.where(k2 > 0, k2, 1), 0)   # -(-1/k²): the sign of -∇
        if shift:
            inv = inv * jnp.exp(1j * shift * (kx + ky + kz))
        rho_k = self._forward(rho) * inv
        return self._backward3(jnp.stack([g * rho_k for g in self._gradient_kernels(ks)]))

    def forces(self, s):
        """The force ``F = -∇∇^{-2}δ`` at the particles displaced by ``s``."""
        return self.read(self.force_grid(self.paint(s)), s)

    # -- initial conditions and stepping ----------------------------------------------------
    def linear_field(self, key, power: Callable):
        """The linear density contrast at ``a = 1`` on the mesh (``pfft.spectral``'s
        Gaussian random field with spectrum ``power(k)``, k in h/Mpc)."""
        return pfft.spectral.gaussian_random_field(key, (self.n,) * 3, power, self.mesh,
                                                   d=self.box / self.n, dtype=self.dtype)

    def initial_state(self, delta_l, a0: float) -> State:
        """Zel'dovich displacements and momenta at ``a0`` from the linear field at ``a = 1``."""
        psi = self.force_grid(delta_l, shift=0.5)      # Ψ = -∇∇^{-2} δ_L at the cell centres
        s = a0 * psi
        state = State(s, a0 ** 1.5 * psi, None, jnp.asarray(a0, self.dtype),
                      jnp.max(jnp.abs(s)))
        return state._replace(f=self.forces(s))

    def step(self, state: State, a_next, force_fn: Callable | None = None) -> State:
        """One kick-drift-kick step from ``state.a`` to ``a_next`` (FastPM factors for
        ``D = a``). ``force_fn(s)`` replaces :meth:`forces` (the JaxPM comparison)."""
        force_fn = force_fn or self.forces
        ai, af = state.a, jnp.asarray(a_next, self.dtype)
        ac = 0.5 * (ai + af)
        p = state.p + state.f * ((ac ** 1.5 - ai ** 1.5) / ai)
        s = state.s + p * ((af - ai) / ac ** 1.5)
        f = force_fn(s)
        p = p + f * ((af ** 1.5 - ac ** 1.5) / af)
        return State(s, p, f, af, jnp.maximum(state.max_disp, jnp.max(jnp.abs(s))))

    def run(self, state: State, a_grid, start: int = 1, stop: int | None = None,
            force_fn: Callable | None = None) -> State:
        """Step to the scale factors ``a_grid[start:stop]`` (``state.a`` is
        ``a_grid[start - 1]``). Static ``start`` and ``stop`` (the default: all of
        ``a_grid``) give a loop ``jax.grad`` can reverse; traced ones a while loop."""
        a_grid = jnp.asarray(a_grid, self.dtype)
        stop = a_grid.shape[0] if stop is None else stop
        return jax.lax.fori_loop(start, stop,
                                 lambda i, st: self.step(st, a_grid[i], force_fn), state)

    def check_halo(self, state: State) -> float:
        """The largest displacement component met so far, in cells.

        Raises
        ------
        RuntimeError
            If it reached the halo width less half a cell (the particles start at cell
            centres): painting and reading were then incomplete.
        """
        m = float(pfft.to_host(state.max_disp))
        if m >= self.halo - 0.5:
            raise RuntimeError(f"a particle moved {m:.2f} cells from its lattice point, beyond "
                               f"the halo of {self.halo} cells: rerun with a wider --halo")
        return m

    def density_contrast(self, s):
        """``δ = ρ/ρ̄ - 1`` painted from the particles."""
        return self.paint(s) - 1

    def power_spectrum(self, delta, kf_bins=(0.5, 1.5, 2.5, 3.5, 4.5)):
        """``pfft.spectral.power_spectrum`` of ``delta`` in bins given in units of the
        fundamental ``k_f = 2π/box`` (or the bin edges in h/Mpc, if more than 5)."""
        edges = np.asarray(kf_bins, float) * 2 * np.pi / self.box
        return pfft.spectral.power_spectrum(delta, bins=edges, d=self.box / self.n,
                                            mesh=self.mesh)


def linear_growth_on_the_mesh(n: int, box: float, power: Callable, a0: float, a: float,
                              kf_bins=(0.5, 1.5, 2.5, 3.5, 4.5), kernel: str = "fd4"
                              ) -> np.ndarray:
    """The expected ``P(k, a) / P(k, a0) / (a/a0)²`` per bin in linear theory *of the PM
    scheme*, where it differs from 1.

    A PM force is the true one times a transfer ``W(k)``: the CIC window of painting and of
    reading (``Π_i sinc⁴(k_i/2)``) and the gradient kernel's ``k·g(k)/|k|²``. In
    Einstein–de Sitter a mode whose force is ``W`` times the true one grows as
    ``a^α`` with ``α² + α/2 = 3W/2``, so its power grows by ``(a/a0)^{2α}``, not
    ``(a/a0)²``: at ``k = k_f`` on a 32³ mesh ``W = 0.994`` and the power falls 3 % short
    of ``(a/a0)²`` from ``a0 = 0.02`` to 1, on a 64³ mesh 0.8 %. Bins average the modes
    weighted by ``power`` times the painting window squared (the expected spectrum).
    Only the modes below the last edge are formed (host numpy, the same on every
    process: a few thousand modes, not ``n³``).
    """
    lim = np.ceil(np.asarray(kf_bins, float)[-1])       # |k_i| ≤ |k| < last edge
    full = np.fft.fftfreq(n) * n
    half = np.fft.rfftfreq(n) * n
    sel, sel_z = np.abs(full) <= lim, half <= lim
    k1 = 2 * np.pi * np.fft.fftfreq(n)[sel]
    kx, ky, kz = np.meshgrid(k1, k1, 2 * np.pi * np.fft.rfftfreq(n)[sel_z], indexing="ij")
    k2 = kx ** 2 + ky ** 2 + kz ** 2
    k2[0, 0, 0] = 1
    if kernel == "fd4":
        grad = [(8 * np.sin(k) - np.sin(2 * k)) / 6 for k in (kx, ky, kz)]
    else:
        grad = [np.where(np.abs(k) == np.pi, 0, k) for k in (kx, ky, kz)]
    window = (np.sinc(kx / (2 * np.pi)) * np.sinc(ky / (2 * np.pi))
              * np.sinc(kz / (2 * np.pi))) ** 2
    w = window ** 2 * (kx * grad[0] + ky * grad[1] + kz * grad[2]) / k2
    alpha = (-0.5 + np.sqrt(0.25 + 6 * w)) / 2
    ratio = (a / a0) ** (2 * (alpha - 1))
    kphys = np.sqrt(k2) * n / box
    weight = np.asarray(power(np.maximum(kphys, 1e-6))) * window ** 2
    modes = np.full(n // 2 + 1, 2.0)
    modes[0] = 1
    if n % 2 == 0:
        modes[-1] = 1
    weight = weight * modes[sel_z]
    edges = np.asarray(kf_bins, float) * 2 * np.pi / box
    out = []
    for lo, hi in zip(edges[:-1], edges[1:]):
        m = (kphys >= lo) & (kphys < hi)
        out.append((ratio * weight)[m].sum() / weight[m].sum() if m.any() else np.nan)
    return np.array(out)


def _names(entry) -> tuple:
    if entry is None:
        return ()
    return tuple(entry) if isinstance(entry, (tuple, list)) else (entry,)


# -- per-block painting and reading ------------------------------------------------------------

_CORNERS = np.array([[i, j, k] for i in (0, 1) for j in (0, 1) for k in (0, 1)])


def _cic(s, halo: int):
    """Flat indices into the extended block (``(8, m)``), CIC weights (``(8, m)``) and
    whether each particle's cells lie inside it (``(m,)``), for the block's particles
    displaced by ``s`` (``(3, bx, by, bz)``) from the cell centres ``q + 1/2``."""
    shape = s.shape[1:]
    ext = tuple(b + 2 * halo for b in shape)
    lattice = jnp.meshgrid(*(jnp.arange(b, dtype=s.dtype) for b in shape), indexing="ij")
    pos = jnp.stack([(lattice[d] + (halo + 0.5) + s[d]).reshape(-1) for d in range(3)])
    base = jnp.floor(pos)
    frac = pos - base
    base = base.astype(jnp.int32)
    inside = jnp.all((base >= 0) & (base <= jnp.asarray(ext, jnp.int32)[:, None] - 2), axis=0)
    base = jnp.where(inside, base, 0)
    corners = jnp.asarray(_CORNERS, jnp.int32)[:, :, None]                    # (8, 3, 1)
    idx = base[None] + corners                                                  # (8, 3, m)
    flat = (idx[:, 0] * ext[1] + idx[:, 1]) * ext[2] + idx[:, 2]
    w = jnp.where(corners == 1, frac[None], 1 - frac[None])
    return flat, w[:, 0] * w[:, 1] * w[:, 2], inside


def _paint_block(s, *, halo: int, dtype):
    ext = tuple(b + 2 * halo for b in s.shape[1:])
    flat, w, inside = _cic(s, halo)
    w = jnp.where(inside[None], w, 0).astype(dtype)
    out = jnp.zeros(math.prod(ext), dtype).at[flat.reshape(-1)].add(w.reshape(-1))
    return out.reshape(ext)


def _read_block(fields, s, *, halo: int):
    flat, w, inside = _cic(s, halo)
    c = fields.shape[0]
    values = fields.reshape(c, -1)[:, flat]                                     # (c, 8, m)
    out = jnp.sum(values * jnp.where(inside[None], w, 0)[None], axis=1)
    return out.reshape((c,) + s.shape[1:])
