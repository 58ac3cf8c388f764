"""Pseudo-spectral incompressible Navier–Stokes in a periodic box [0, 2π)³.

Rotational form: ``∂u/∂t = P[u × ω] + ν ∇²u`` with ``ω = ∇ × u`` and ``P`` the projection
onto divergence-free fields, taken in Fourier space. The state is the velocity's half
spectrum ``û`` of shape ``(3, n, n, n//2 + 1)`` (numpy's ``rfftn`` over the last three
axes). Each right-hand side costs 9 real transforms: 3 ``irfftn`` for ``u``, 3 for
``ω``, 3 ``rfftn`` for ``u × ω``, done as one batched transform of the 3 components
each. The nonlinear term is dealiased by the 2/3 rule (modes with ``|k_i| ≥ n/3`` on
any axis are dropped), or by the 3/2 rule where pfft's plan pads (``padding=1.5``:
products formed on ``3n/2`` points). Time stepping: classical RK4.

The solver takes its transforms as arguments, so the same code runs on one device
with ``jnp.fft`` (:func:`jnp_transforms`), distributed with pfft on a mesh
(:func:`pfft_transforms`) and as one MPI rank's blocks with ``pfft.mpi``
(:func:`mpi_transforms`): the runs can be compared step for step.
"""
from __future__ import annotations

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


def jnp_transforms(n: int, dtype=np.float64) -> Transforms:
    """One device, ``jnp.fft``; wavenumbers in ``dtype`` (the fields' real dtype, so
    that float32 fields stay complex64)."""
    k = np.fft.fftfreq(n, 1.0 / n)
    kz = np.fft.rfftfreq(n, 1.0 / n)
    ks = (k.reshape(n, 1, 1), k.reshape(1, n, 1), kz.reshape(1, 1, -1))
    return Transforms(lambda u: jnp.fft.rfftn(u, axes=(1, 2, 3)),
                      lambda uh: jnp.fft.irfftn(uh, s=(n, n, n), axes=(1, 2, 3)),
                      lambda: tuple(jnp.asarray(a, dtype) for a in ks),
                      lambda a: jax.device_put(a, jax.local_devices()[0]), n)


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
    one plan for the 3 components (batch axis 0); box averages are summed over the
    grid's ranks (``mpi4jax.allreduce``, inside the jitted diagnostics)."""
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

    return Transforms(plan.forward, plan.backward, wavenumbers,
                      lambda a: jnp.asarray(a[plan.local_in_slices]), points,
                      truncate=padding < 1.5, average=average)


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


def rhs_function(t: Transforms, n: int, nu: float) -> Callable:
    """``dû/dt`` of the rotational form, dealiased by the 2/3 rule (or by the
    transforms' own padding, ``t.truncate`` False)."""
    def rhs(uh):
        kx, ky, kz = t.wavenumbers()
        k2 = kx * kx + ky * ky + kz * kz
        inv_k2 = jnp.where(k2 == 0, 0.0, 1.0 / jnp.where(k2 == 0, 1.0, k2))
        cut = n / 3.0
        keep = ((jnp.abs(kx) < cut) & (jnp.abs(ky) < cut) & (jnp.abs(kz) < cut)
                if t.truncate else True)
        u = t.backward(uh)
        w = t.backward(curl_hat(t, uh))
        cross = jnp.stack([u[1] * w[2] - u[2] * w[1], u[2] * w[0] - u[0] * w[2],
                           u[0] * w[1] - u[1] * w[0]])
        nh = jnp.where(keep, t.forward(cross), 0)
        div = (kx * nh[0] + ky * nh[1] + kz * nh[2]) * inv_k2
        nh = nh - jnp.stack([kx * div, ky * div, kz * div])
        return nh - nu * k2 * uh

    return rhs


def rk4_step(rhs: Callable, dt: float) -> Callable:
    """One classical Runge–Kutta step ``û -> û(t + dt)`` (4 right-hand sides, 36
    real transforms)."""
    def step(uh):
        a = rhs(uh)
        b = rhs(uh + 0.5 * dt * a)
        c = rhs(uh + 0.5 * dt * b)
        d = rhs(uh + dt * c)
        return uh + (dt / 6.0) * (a + 2 * b + 2 * c + d)
    return step


def energy(t: Transforms, uh, n: int):
    """Kinetic energy ``½ ⟨|u|²⟩`` (the box average) from the half spectrum."""
    u = t.backward(uh)
    return 0.5 * t.average(jnp.sum(u * u, axis=0))
