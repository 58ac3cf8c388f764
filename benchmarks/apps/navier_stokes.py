"""Pseudo-spectral incompressible Navier–Stokes in a periodic box [0, 2π)³.

Rotational form: ``∂u/∂t = P[u × ω] + ν ∇²u`` with ``ω = ∇ × u`` and ``P`` the projection
onto divergence-free fields, taken in Fourier space. The state is the velocity's half
spectrum ``û`` of shape ``(3, n, n, n//2 + 1)`` (numpy's ``rfftn`` over the last three
axes). Each right-hand side costs 9 real transforms: 3 ``irfftn`` for ``u``, 3 for
``ω``, 3 ``rfftn`` for ``u × ω``, done as one batched transform of the 3 components
each. The nonlinear term is dealiased by the 2/3 rule (modes with ``|k_i| ≥ n/3`` on
any axis are dropped), or by the 3/2 rule where the transforms pad (``padding=1.5``:
products formed on ``3n/2`` points; an even ``n``'s Nyquist modes dropped,
:func:`dealiasing_cut`). Time stepping: classical RK4, its stable step bounded by
:func:`stable_step` from the velocity's largest values.

The solver takes its transforms as arguments, so the same code runs on one device
with ``jnp.fft`` (:func:`jnp_transforms`), distributed with pfft on a mesh
(:func:`pfft_transforms`) and as one MPI rank's blocks with ``pfft.mpi``
(:func:`mpi_transforms`): the runs can be compared step for step.
"""
from __future__ import annotations

import math
from typing import Callable, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np


class Transforms(NamedTuple):
    """What the solver needs from an FFT library, for fields of shape ``(3, n, n, n)``."""
    forward: Callable          # real (3, n, n, n) -> half spectrum (3, n, n, n//2+1)
    backward: Callable         # half spectrum -> real
    wavenumbers: Callable      # () -> (kx, ky, kz): integer wavenumbers, broadcastable to
    #                            û[i]; called inside the jitted solver, so that no global
    #                            array is closed over (jax.distributed forbids that)
    put: Callable              # numpy array -> array placed as ``forward`` wants it
    points: int                # grid points per axis of the physical fields
    truncate: bool = True      # dealias by the 2/3 rule (False: the transforms pad, 3/2 rule)
    average: Callable = jnp.mean   # the box average of a physical field (over all ranks)
    maximum: Callable = jnp.max    # the largest value of a physical field (over all ranks)


#: RK4's stability limits: ``|R(z)| ≤ 1`` on the imaginary axis up to ``|z| = 2√2`` and
#: on the negative real axis down to ``z = -2.785`` (``R(z) = 1 + z + ... + z⁴/24``)
RK4_IMAGINARY_LIMIT = 2 * math.sqrt(2)
RK4_REAL_LIMIT = 2.785
#: the default safety CFL number: ``dt · k_max · max(|u| + |v| + |w|) ≤ CFL``, a fraction
#: 0.64 of RK4's imaginary-axis limit. Up to 0.68 the whole rectangle of eigenvalues
#: ``[-f·2.785, 0] × [-f·2√2, f·2√2]`` lies in RK4's stability region, so that the
#: advective and the viscous limit may each be taken alone (:func:`stable_step`). The
#: rest is margin for the velocity's growth within a record interval (the step is chosen
#: at its start) and for the term the frozen-coefficient bound leaves out (``u'·∇U``).
#: The bound is near-sharp at large n: at 256³ (3/2 rule, k_max 128) fixed steps of
#: 0.02 diverged from t ≈ 4.3, where it is about 4 (the velocity maxima of a 64³ run),
#: those of 0.01 (at most 2.7 to t = 6) did not.
CFL = 1.8


def jnp_transforms(n: int, dtype=np.float64, padding: float = 1.0) -> Transforms:
    """One device, ``jnp.fft``; wavenumbers in ``dtype`` (the fields' real dtype, so
    that float32 fields stay complex64).

    ``padding=1.5`` dealiases by the 3/2 rule as pfft's plan does: fields on
    ``m = ceil(1.5 n)`` points, the forward transform keeping the ``n`` lowest modes per
    axis (numpy's order: ``ceil(n/2)`` first, ``floor(n/2)`` last; ``n//2 + 1`` of the
    halved axis) and the backward one zero-padding them, scaled as numpy's for ``n``
    points; 1 leaves the 2/3 rule to the solver.
    """
    m = math.ceil(padding * n - 1e-9)
    k = np.fft.fftfreq(n, 1.0 / n)
    kz = np.fft.rfftfreq(n, 1.0 / n)
    ks = (k.reshape(n, 1, 1), k.reshape(1, n, 1), kz.reshape(1, 1, -1))

    def forward(u):
        uh = jnp.fft.rfftn(u, axes=(1, 2, 3))
        return uh if m == n else _resize(uh, m, n) * (n / m) ** 3

    def backward(uh):
        if m > n:
            uh = _resize(uh, n, m) * (m / n) ** 3
        return jnp.fft.irfftn(uh, s=(m, m, m), axes=(1, 2, 3))

    return Transforms(forward, backward, lambda: tuple(jnp.asarray(a, dtype) for a in ks),
                      lambda a: jax.device_put(a, jax.local_devices()[0]), m,
                      truncate=padding < 1.5)


def _resize(uh, n_from: int, n_to: int):
    """A half spectrum of ``n_from`` points per axis truncated, or zero-padded, to
    ``n_to``: the lowest ``min(n_from, n_to)`` modes of each axis kept in place."""
    n, big = min(n_from, n_to), max(n_from, n_to)
    low = np.r_[0:(n + 1) // 2, big - n // 2:big]      # the kept modes' places, numpy's order
    if n_to < n_from:
        return uh[:, low[:, None], low[None, :], :n // 2 + 1]
    padded = jnp.zeros(uh.shape[:1] + (big, big, big // 2 + 1), uh.dtype)
    return padded.at[:, low[:, None], low[None, :], :n // 2 + 1].set(uh)


def pfft_transforms(n: int, mesh, dtype=np.float64, padding: float = 1.0) -> Transforms:
    """pfft on ``mesh``: one plan for the 3 components (batch axis 0), made once.

    ``padding=1.5`` dealiases by the 3/2 rule inside the plan (``n`` modes per axis,
    fields on ``ceil(1.5 n)`` points, nothing truncated); 1 leaves the 2/3 rule to
    the solver.
    """
    import pfft

    plan = pfft.plan((3, n, n, n), dtype, mesh, kind="r2c", axes=(1, 2, 3), padding=padding)
    def wavenumbers():                                      # d = 1/n: integers
        return tuple(k[0].astype(dtype) for k in plan.wavenumbers(1.0 / n))

    return Transforms(plan.forward, plan.backward, wavenumbers,
                      lambda a: pfft.from_host(a, plan.in_sharding), plan.in_shape[1],
                      truncate=padding < 1.5)


def mpi_transforms(n: int, grid, dtype=np.float64, padding: float = 1.0) -> Transforms:
    """``pfft.mpi`` on a :class:`pfft.mpi.ProcessGrid`: this rank's blocks in and out,
    one plan for the 3 components (batch axis 0); box averages are summed, and maxima
    taken, over the grid's ranks (``mpi4jax.allreduce``, inside the jitted
    diagnostics)."""
    import mpi4jax
    from mpi4py import MPI

    import pfft.mpi

    plan = pfft.mpi.plan((3, n, n, n), dtype, grid, kind="r2c", axes=(1, 2, 3),
                         padding=padding)
    points = plan.in_shape[1]

    def wavenumbers():
        return tuple(k[0].astype(dtype) for k in plan.wavenumbers(1.0 / n))

    def average(field):
        return mpi4jax.allreduce(jnp.sum(field), op=MPI.SUM, comm=grid.comm) / points ** 3

    def maximum(field):
        return mpi4jax.allreduce(jnp.max(field), op=MPI.MAX, comm=grid.comm)

    return Transforms(plan.forward, plan.backward, wavenumbers,
                      lambda a: jnp.asarray(a[plan.local_in_slices]), points,
                      truncate=padding < 1.5, average=average, maximum=maximum)


def taylor_green(n: int, dtype=np.float64) -> np.ndarray:
    """The Taylor–Green vortex ``u = sin x cos y cos z, v = -cos x sin y cos z, w = 0``
    on an ``n³`` grid of [0, 2π)³, shape ``(3, n, n, n)``."""
    x = 2 * np.pi * np.arange(n) / n
    X, Y, Z = np.meshgrid(x, x, x, indexing="ij")
    return np.stack([np.sin(X) * np.cos(Y) * np.cos(Z),
                     -np.cos(X) * np.sin(Y) * np.cos(Z),
                     np.zeros_like(X)]).astype(dtype)


def curl_hat(t: Transforms, uh):
    """The spectrum of ``ω = ∇ × u`` from ``u``'s half spectrum."""
    kx, ky, kz = t.wavenumbers()
    return 1j * jnp.stack([ky * uh[2] - kz * uh[1], kz * uh[0] - kx * uh[2],
                           kx * uh[1] - ky * uh[0]])


def dealiasing_cut(t: Transforms, n: int) -> float:
    """The solver keeps the modes with ``|k_i| < cut`` on every axis: ``n/3`` for the 2/3
    rule, ``n/2`` where the transforms pad (the 3/2 rule, ``t.truncate`` False).

    The 3/2 rule's ``n/2`` drops an even ``n``'s Nyquist modes (``k_i = -n/2`` on a full
    axis, ``+n/2`` on the halved one), as the 2/3 rule does: on the finer grid they lack
    their partner of the opposite sign, and the nonlinear term does not conserve energy
    through them. Taylor–Green at 32³, float64, dt 0.05: the transfer ``⟨u·N(u)⟩``, zero
    for an exact Galerkin term, reached -0.04 % of the dissipation ``2νΩ`` at t = 2 and
    -0.9 % at t = 6 with them, 1e-15 without; with them the outermost shell of modes
    held 0.2 to 1.7 times the energy of the shell inside it.
    """
    return n / 3.0 if t.truncate else n / 2.0


def largest_wavenumber(t: Transforms, n: int) -> int:
    """The largest ``|k_i|`` the solver keeps on an axis (:func:`dealiasing_cut`)."""
    return math.ceil(dealiasing_cut(t, n)) - 1


def rhs_function(t: Transforms, n: int, nu: float) -> Callable:
    """``dû/dt`` of the rotational form, dealiased by the 2/3 rule (or by the
    transforms' own padding, ``t.truncate`` False), the modes past
    :func:`dealiasing_cut` dropped."""
    def rhs(uh):
        kx, ky, kz = t.wavenumbers()
        k2 = kx * kx + ky * ky + kz * kz
        inv_k2 = jnp.where(k2 == 0, 0.0, 1.0 / jnp.where(k2 == 0, 1.0, k2))
        cut = dealiasing_cut(t, n)
        keep = (jnp.abs(kx) < cut) & (jnp.abs(ky) < cut) & (jnp.abs(kz) < cut)
        u = t.backward(uh)
        w = t.backward(curl_hat(t, uh))
        cross = jnp.stack([u[1] * w[2] - u[2] * w[1], u[2] * w[0] - u[0] * w[2],
                           u[0] * w[1] - u[1] * w[0]])
        nh = jnp.where(keep, t.forward(cross), 0)
        div = (kx * nh[0] + ky * nh[1] + kz * nh[2]) * inv_k2
        nh = nh - jnp.stack([kx * div, ky * div, kz * div])
        return nh - nu * k2 * uh

    return rhs


def rk4_step(rhs: Callable, dt) -> Callable:
    """One classical Runge–Kutta step ``û -> û(t + dt)`` (4 right-hand sides, 36
    real transforms); ``dt`` a number or a traced scalar."""
    def step(uh):
        a = rhs(uh)
        b = rhs(uh + 0.5 * dt * a)
        c = rhs(uh + 0.5 * dt * b)
        d = rhs(uh + dt * c)
        return uh + (dt / 6.0) * (a + 2 * b + 2 * c + d)
    return step


def speed_sum(t: Transforms, u):
    """``max(|u| + |v| + |w|)`` over the grid (and over all ranks) of the physical
    velocity ``u``: times the largest kept ``|k_i|`` it bounds ``|u·k|``, the advective
    term's rate for a mode ``k`` frozen at a point."""
    return t.maximum(jnp.sum(jnp.abs(u), axis=0))


def stable_step(speed: float, k_max: int, nu: float, cfl: float = CFL) -> float:
    """The largest RK4 step the bound allows: ``dt · k_max · speed ≤ cfl`` (advection,
    ``speed`` from :func:`speed_sum`) and ``dt · ν · 3 k_max² ≤ cfl · 2.785 / 2√2``
    (the viscous term, the same fraction of RK4's real-axis limit).

    Raises
    ------
    ValueError
        Where ``cfl`` is not in ``(0, 2√2)`` or ``speed`` is not finite.
    """
    if not 0 < cfl < RK4_IMAGINARY_LIMIT:
        raise ValueError(f"cfl must lie in (0, {RK4_IMAGINARY_LIMIT:.3f}), got {cfl}")
    if not math.isfinite(speed):
        raise ValueError(f"the velocity is not finite (max |u| + |v| + |w| = {speed})")
    fraction = cfl / RK4_IMAGINARY_LIMIT
    limits = [fraction * RK4_REAL_LIMIT / (nu * 3 * k_max ** 2)] if nu > 0 else []
    if speed > 0:
        limits.append(cfl / (k_max * speed))
    return min(limits, default=math.inf)
