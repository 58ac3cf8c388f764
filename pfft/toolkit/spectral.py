"""Spectral operators on periodic 3-D grids: Poisson, gradients, random fields, spectra.

Every function transforms with :func:`pfft.fftn` (:func:`pfft.rfftn` when
``HALF_SPECTRUM`` is set), works in Fourier space one local block at a time inside
``jax.shard_map`` (each device builds the wavenumbers of its own block; no global
``k`` array is ever materialised) and transforms back with :func:`pfft.ifftn`.
They run inside and outside ``jit``, on Explicit and Auto meshes, and are
differentiable (all but :func:`power_spectrum` are linear in the field).

Conventions
-----------
- Wavenumbers are angular: ``k = 2 pi * fftfreq(n, d)``; ``d`` is the grid spacing,
  one number or one per axis.
- Fields are real: a real input gives a real output (its dtype), a complex one a
  complex output.
- The power spectrum of a field ``delta`` on ``N`` cells of volume ``dV`` is
  ``P(k) = dV / N * <|DFT(delta)(k)|^2>`` (the continuum convention
  ``<delta_k delta_k'*> = V P(k) delta_kk'`` with box volume ``V = N dV``), so that
  ``power_spectrum(gaussian_random_field(key, shape, P)) ~ P``.
"""
from __future__ import annotations

import functools
import math
import operator
from typing import Callable, NamedTuple, Sequence

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from ..api import device_put, fftn, ifftn, irfftn, rfftn
from ..frequencies import axis_frequencies
from ..blocks import Blocks, blocks_of
from ..grid import mesh_shape_of
from ..layout import default_layout
from ..make_plan import plan as make_plan
from ..sharding import is_tracer, mesh_of, place, spec_of

__all__ = ["poisson", "gradient", "laplacian", "gaussian_random_field", "power_spectrum",
           "PowerSpectrum"]

GREENS = ("continuous", "discrete")


# -- the transforms: the one place that knows full or half spectra -------------------------
# Real fields go through pfft.rfftn/irfftn (half the work and memory of the complex
# transforms): the wavenumbers of the halved last axis come from rfftfreq, and
# power_spectrum counts each mode of the half space 0 < k_z < n_z/2 twice (itself and
# its conjugate). HALF_SPECTRUM = False routes them through fftn/ifftn and the real
# part instead (the same results to rounding; a test checks both agree).
HALF_SPECTRUM = True


def _half(x) -> bool:
    """Whether ``x``'s spectrum is taken with the real transforms."""
    return HALF_SPECTRUM and not jnp.iscomplexobj(x)


def _forward(x, mesh, half: bool):
    return (rfftn if half else fftn)(x, axes=(0, 1, 2), mesh=mesh)


def _backward(k, shape, real: bool, mesh, half: bool):
    if half:
        return irfftn(k, s=shape, axes=(0, 1, 2), mesh=mesh)
    y = ifftn(k, axes=(0, 1, 2), mesh=mesh)
    return y.real if real else y


def _frequencies(n: int, d: float, zero_nyquist: bool = False, half: bool = False
                 ) -> np.ndarray:
    """Angular wavenumbers of one spectrum axis (``fftfreq`` order, ``rfftfreq`` if ``half``).

    ``zero_nyquist`` sets the Nyquist wavenumber of an even axis to 0, as odd
    derivatives need (it sits at index ``n // 2`` in both orders).
    """
    k = 2 * np.pi * axis_frequencies("rfft" if half else "fft", n, d)
    if zero_nyquist and n % 2 == 0:
        k[n // 2] = 0
    return k


def _mode_weights(n: int) -> np.ndarray:
    """How many modes each point of a halved axis of length ``n // 2 + 1`` stands for."""
    w = np.full(n // 2 + 1, 2.0)
    w[0] = 1.0
    if n % 2 == 0:
        w[-1] = 1.0
    return w


# -- arguments -----------------------------------------------------------------------

def _spacing(d, where: str) -> tuple[float, float, float]:
    if np.ndim(d) > 1 or np.ndim(d) == 1 and len(d) != 3:
        raise ValueError(f"{where}: d must be a number or one spacing per axis (3), got {d!r}")
    values = np.broadcast_to(np.asarray(d, dtype=float), (3,))
    if not np.all(np.isfinite(values)) or np.any(values <= 0):
        raise ValueError(f"{where}: d must be positive and finite, got {d!r}")
    return tuple(float(v) for v in values)


def _field(x, mesh, where: str):
    """``x`` as an array with its mesh resolved (numpy input placed in pfft's pencil)."""
    if not (isinstance(x, (jax.Array, np.ndarray)) or is_tracer(x)):
        x = np.asarray(x)
    if x.ndim != 3:
        raise ValueError(f"{where}: expected a 3-D field, got shape {x.shape}")
    if not (jnp.issubdtype(x.dtype, jnp.floating) or jnp.issubdtype(x.dtype, jnp.complexfloating)):
        raise TypeError(f"{where}: expected a float or complex field, got dtype {x.dtype}")
    if mesh is None:
        mesh = mesh_of(x)
    elif not isinstance(mesh, (Mesh, jax.sharding.AbstractMesh)):
        raise TypeError(f"{where}: mesh must be a jax.sharding.Mesh, got {type(mesh).__name__}")
    if isinstance(x, np.ndarray) and isinstance(mesh, Mesh):
        x = device_put(x, mesh)
    return x, mesh


def _spectrum_blocks(k, mesh, shape, half: bool) -> Blocks:
    """The block structure of a spectrum ``k`` returned by :func:`_forward`."""
    spec = spec_of(k)
    if spec is None and mesh is not None and is_tracer(k):
        # an Auto mesh inside jit: the sharding pfft's plan leaves its output in (any
        # spec would be correct: shard_map moves the data to the spec it is given)
        try:
            out = (make_plan(shape, _real_dtype(k.dtype), mesh, axes=(0, 1, 2), kind="r2c")
                   if half else make_plan(shape, k.dtype, mesh, axes=(0, 1, 2))).out_sharding
            spec = None if out is None else out.spec
        except (TypeError, ValueError):
            spec = None
    return blocks_of(k, mesh, spec, where="spectral")[1]


def _local(blocks: Blocks, tables) -> list[jax.Array]:
    """Inside ``shard_map``: this block's part of one 1-D table per axis, broadcastable."""
    out = []
    for axis, table in enumerate(tables):
        n = table.shape[0] // blocks.parts[axis]
        if blocks.parts[axis] > 1:
            table = jax.lax.dynamic_slice_in_dim(table, blocks.block_index(axis) * n, n)
        view = [1] * len(tables)
        view[axis] = n
        out.append(table.reshape(view))
    return out


def _wavenumbers(shape, d, dtype, half: bool, zero_nyquist: bool = False) -> list[jax.Array]:
    """The wavenumber tables of a spectrum of a field of ``shape`` (the last halved if ``half``)."""
    return [jnp.asarray(_frequencies(n, h, zero_nyquist, half and axis == 2), dtype=dtype)
            for axis, (n, h) in enumerate(zip(shape, d))]


def _real_dtype(dtype):
    return jnp.finfo(dtype).dtype


def _fourier_multiply(k, mesh, shape, d, half: bool, factor: Callable, *,
                      zero_nyquist: bool = False):
    """``k * factor(kx, ky, kz)`` block by block (``factor`` of this block's wavenumbers).

    ``shape`` is the field's shape (``k``'s, but for the halved axis of a half spectrum).
    """
    blocks = _spectrum_blocks(k, mesh, shape, half)
    dtype = _real_dtype(k.dtype)

    def local(block):
        tables = _wavenumbers(shape, d, dtype, half, zero_nyquist)
        # the factor (real, or complex for a derivative) in the block's dtype: what
        # JAX's standard promotion converts it to, spelled out for its strict mode
        return block * factor(*_local(blocks, tables)).astype(block.dtype)
    return blocks.shard_map(local)(k)


def _k2(kx, ky, kz, d, green: str):
    if green == "continuous":
        return kx * kx + ky * ky + kz * kz
    total = 0
    for k, h in zip((kx, ky, kz), d):
        s = 2 * jnp.sin(k * (h / 2)) / h             # eigenvalue of the 3-point stencil
        total = total + s * s
    return total


# -- public operators ----------------------------------------------------------------

def poisson(rho, *, d: float | Sequence[float] = 1.0, green: str = "continuous",
            mesh: Mesh | None = None) -> jax.Array:
    """Solve ``-laplacian(phi) = rho`` on a periodic grid.

    Parameters
    ----------
    rho
        The source, a 3-D float (or complex) array, sharded or not.
    d
        Grid spacing: one number or ``(dx, dy, dz)``.
    green
        ``"continuous"``: ``phi_k = rho_k / |k|^2`` (the spectral Laplacian);
        ``"discrete"``: the inverse of the second-order finite-difference (7-point)
        Laplacian, ``|k|^2 -> sum_i (2 sin(k_i d_i / 2) / d_i)^2``.
    mesh
        The mesh; default ``rho``'s (pass it inside ``jit`` on an Auto mesh).

    Returns
    -------
    jax.Array
        ``phi``, with zero mean (the ``k = 0`` mode, undetermined, is set to 0), in
        ``rho``'s sharding and (real) dtype.

    Examples
    --------
    >>> phi = pfft.spectral.poisson(rho, d=0.1)                  # doctest: +SKIP
    """
    if green not in GREENS:
        raise ValueError(f"poisson: green must be one of {GREENS}, got {green!r}")
    d = _spacing(d, "poisson")
    rho, mesh = _field(rho, mesh, "poisson")
    return _poisson(rho, d, green, mesh, _half(rho))


@functools.partial(jax.jit, static_argnums=(1, 2, 3, 4))
def _poisson(rho, d, green, mesh, half):
    def inverse_k2(kx, ky, kz):
        k2 = _k2(kx, ky, kz, d, green)
        return jnp.where(k2 > 0, 1 / jnp.where(k2 > 0, k2, 1), 0)
    k = _fourier_multiply(_forward(rho, mesh, half), mesh, rho.shape, d, half, inverse_k2)
    return _backward(k, rho.shape, not jnp.iscomplexobj(rho), mesh, half)


def laplacian(phi, d: float | Sequence[float] = 1.0, *, kind: str = "continuous",
              mesh: Mesh | None = None) -> jax.Array:
    """The Laplacian of a periodic field, spectrally.

    Parameters
    ----------
    phi
        A 3-D float (or complex) array.
    d
        Grid spacing: one number or ``(dx, dy, dz)``.
    kind
        ``"continuous"``: multiply by ``-|k|^2``; ``"discrete"``: the 7-point
        finite-difference Laplacian (as :func:`poisson`'s ``green="discrete"``).
    mesh
        The mesh; default ``phi``'s.

    Returns
    -------
    jax.Array
        In ``phi``'s sharding and dtype; ``poisson(-laplacian(phi))`` is ``phi`` minus
        its mean.
    """
    if kind not in GREENS:
        raise ValueError(f"laplacian: kind must be one of {GREENS}, got {kind!r}")
    d = _spacing(d, "laplacian")
    phi, mesh = _field(phi, mesh, "laplacian")
    return _laplacian(phi, d, kind, mesh, _half(phi))


@functools.partial(jax.jit, static_argnums=(1, 2, 3, 4))
def _laplacian(phi, d, kind, mesh, half):
    k = _fourier_multiply(_forward(phi, mesh, half), mesh, phi.shape, d, half,
                          lambda kx, ky, kz: -_k2(kx, ky, kz, d, kind))
    return _backward(k, phi.shape, not jnp.iscomplexobj(phi), mesh, half)


def gradient(phi, axis: int | None = None, d: float | Sequence[float] = 1.0, *,
             mesh: Mesh | None = None):
    """Spectral derivative of a periodic field along ``axis`` (or all three).

    Multiplies by ``i k_axis``; on an even axis the Nyquist wavenumber is taken as 0
    (its derivative is not representable in a real field), as in most spectral codes.

    Parameters
    ----------
    phi
        A 3-D float (or complex) array.
    axis
        0, 1 or 2 (negative counts from the end); ``None`` for all three.
    d
        Grid spacing: one number or ``(dx, dy, dz)``.
    mesh
        The mesh; default ``phi``'s.

    Returns
    -------
    jax.Array or tuple of jax.Array
        ``d phi / d x_axis`` in ``phi``'s sharding and dtype; for ``axis=None`` the
        three components (one forward transform shared).
    """
    if axis is not None:
        try:
            axis = operator.index(axis)
        except TypeError:
            raise TypeError(f"gradient: axis must be an int or None, got {axis!r}") from None
        if not -3 <= axis < 3:
            raise ValueError(f"gradient: axis must be in [-3, 3), got {axis}")
        axis %= 3
    d = _spacing(d, "gradient")
    phi, mesh = _field(phi, mesh, "gradient")
    return _gradient(phi, axis, d, mesh, _half(phi))


@functools.partial(jax.jit, static_argnums=(1, 2, 3, 4))
def _gradient(phi, axis, d, mesh, half):
    k = _forward(phi, mesh, half)
    real = not jnp.iscomplexobj(phi)

    def one(a):
        i_k = lambda *ks: jax.lax.complex(jnp.zeros_like(ks[a]), ks[a])      # i k_a
        spectrum = _fourier_multiply(k, mesh, phi.shape, d, half, i_k, zero_nyquist=True)
        return _backward(spectrum, phi.shape, real, mesh, half)
    if axis is None:
        return tuple(one(a) for a in range(3))
    return one(axis)


def gaussian_random_field(key, shape: Sequence[int], power_spectrum: Callable,
                          mesh: Mesh | None = None, d: float | Sequence[float] = 1.0, *,
                          dtype=None) -> jax.Array:
    """A real Gaussian random field with a given isotropic power spectrum.

    White noise ``w = jax.random.normal(key, shape, float32)`` is drawn independently
    of the mesh (each device draws its own block of the same global sequence), so one
    key gives the same field on every grid (and, up to rounding, in every ``dtype``).
    The field is ``ifftn(fftn(w) * sqrt(P(|k|) / dV))`` with the ``k = 0`` mode set to 0 (zero
    mean), ``dV`` the cell volume; its :func:`power_spectrum` estimates ``P``.

    Parameters
    ----------
    key
        A ``jax.random`` key.
    shape
        Global grid shape ``(nx, ny, nz)``.
    power_spectrum
        ``P(k)``: a jax-traceable function of the angular wavenumber magnitude
        (an array), non-negative; it is not called at ``k = 0``.
    mesh
        Mesh to distribute the field on (``None``: one device).
    d
        Grid spacing: one number or ``(dx, dy, dz)``.
    dtype
        Real dtype of the field; default jax's default float dtype.

    Returns
    -------
    jax.Array
        The field, sharded like :func:`pfft.device_put` places an array of ``shape``.

    Examples
    --------
    >>> delta = pfft.spectral.gaussian_random_field(                 # doctest: +SKIP
    ...     jax.random.key(0), (64, 64, 64), lambda k: k ** -2.0, mesh)
    """
    shape = tuple(operator.index(n) for n in shape)
    if len(shape) != 3 or any(n < 1 for n in shape):
        raise ValueError(f"gaussian_random_field: shape must be 3 positive sizes, got {shape}")
    if not callable(power_spectrum):
        raise TypeError("gaussian_random_field: power_spectrum must be a function of |k|")
    if mesh is not None and not isinstance(mesh, (Mesh, jax.sharding.AbstractMesh)):
        raise TypeError(f"gaussian_random_field: mesh must be a jax.sharding.Mesh, "
                        f"got {type(mesh).__name__}")
    d = _spacing(d, "gaussian_random_field")
    dtype = jnp.dtype(dtype or jnp.result_type(float))
    if not jnp.issubdtype(dtype, jnp.floating):
        raise TypeError(f"gaussian_random_field: dtype must be a real float dtype, got {dtype}")
    noise = _white_noise(key, shape, dtype, mesh)
    return _colour(noise, power_spectrum, d, mesh, _half(noise))


def _white_noise(key, shape, dtype, mesh):
    """Unit normal noise, drawn in float32 whatever ``dtype``: the same numbers for one
    key on every grid, with or without ``jax_enable_x64``."""
    sharding = None if mesh is None else NamedSharding(mesh, _pencil_spec(shape, mesh))
    if is_tracer(key) or not isinstance(mesh, Mesh):
        w = jax.random.normal(key, shape, jnp.float32).astype(dtype)
        return w if sharding is None else place(w, sharding)
    return _draw(shape, sharding)(key).astype(dtype)


@functools.lru_cache(maxsize=32)
def _draw(shape, sharding):
    """A compiled draw (threefry compiles slowly on CPU: once per shape and sharding).

    With ``out_shardings`` each device draws its own block; threefry's counters are
    partitionable, so the numbers do not depend on the sharding.
    """
    return jax.jit(lambda k: jax.random.normal(k, shape, jnp.float32), out_shardings=sharding)


def _pencil_spec(shape, mesh) -> PartitionSpec:
    return default_layout(shape, (0, 1, 2), mesh_shape_of(mesh)).spec


@functools.partial(jax.jit, static_argnums=(1, 2, 3, 4))
def _colour(noise, power, d, mesh, half):
    cell = math.prod(d)

    def amplitude(kx, ky, kz):
        kabs = jnp.sqrt(kx * kx + ky * ky + kz * kz)
        safe = jnp.where(kabs > 0, kabs, 1)
        p = jnp.asarray(power(safe), dtype=kabs.dtype)
        return jnp.where(kabs > 0, jnp.sqrt(jnp.maximum(p, 0) / cell), 0)
    k = _fourier_multiply(_forward(noise, mesh, half), mesh, noise.shape, d, half, amplitude)
    return _backward(k, noise.shape, True, mesh, half)


class PowerSpectrum(NamedTuple):
    """A binned power spectrum: per bin, the mean ``|k|``, the mean power, the mode count."""

    k: jax.Array
    power: jax.Array
    counts: jax.Array


def power_spectrum(delta, *, bins: int | Sequence[float], d: float | Sequence[float] = 1.0,
                   mesh: Mesh | None = None) -> PowerSpectrum:
    """The isotropic power spectrum of a field: ``|delta_k|^2`` averaged in ``|k|`` shells.

    Parameters
    ----------
    delta
        A 3-D float (or complex) field.
    bins
        A number of equal-width bins from 0 to the largest ``|k|`` of the grid, or
        the bin edges (increasing angular wavenumbers). Bins are half-open
        ``[lo, hi)`` except the last, which includes its upper edge (as
        :func:`numpy.histogram`); the ``k = 0`` mode is never counted.
    d
        Grid spacing: one number or ``(dx, dy, dz)``.
    mesh
        The mesh; default ``delta``'s.

    Returns
    -------
    PowerSpectrum
        ``(k, power, counts)``, one entry per bin: the mean ``|k|`` of the modes in
        the bin, their mean power ``dV / N * |DFT(delta)|^2`` (see the module's
        conventions) and how many there are. Empty bins hold ``nan`` in ``k`` and
        ``power``.
    """
    d = _spacing(d, "power_spectrum")
    delta, mesh = _field(delta, mesh, "power_spectrum")
    if isinstance(bins, (int, np.integer)):
        if bins < 1:
            raise ValueError(f"power_spectrum: bins must be positive, got {bins}")
        kmax = math.sqrt(sum(float(np.max(np.abs(_frequencies(n, h)))) ** 2
                             for n, h in zip(delta.shape, d)))
        edges = np.linspace(0.0, kmax, int(bins) + 1)
    else:
        edges = np.asarray(bins, dtype=float)
        if edges.ndim != 1 or edges.size < 2 or np.any(np.diff(edges) <= 0):
            raise ValueError("power_spectrum: bins must be a positive int or at least two "
                             "increasing edges")
    return _power_spectrum(delta, tuple(edges.tolist()), d, mesh, _half(delta))


@functools.partial(jax.jit, static_argnums=(1, 2, 3, 4))
def _power_spectrum(delta, edges, d, mesh, half):
    shape = delta.shape
    k = _forward(delta, mesh, half)
    blocks = _spectrum_blocks(k, mesh, shape, half)
    dtype = _real_dtype(k.dtype)
    nbins = len(edges) - 1
    norm = math.prod(d) / math.prod(shape)

    def local(block):
        kx, ky, kz = _local(blocks, _wavenumbers(shape, d, dtype, half))
        kabs = jnp.sqrt(kx * kx + ky * ky + kz * kz)
        power = (block.real ** 2 + block.imag ** 2) * jnp.asarray(norm, dtype)
        # modes per point: 1, or 2 in the open half space of a half spectrum
        if half:
            table = jnp.asarray(_mode_weights(shape[2]), jnp.int32)
            modes = _local(blocks, [jnp.ones(n, jnp.int32) for n in k.shape[:2]] + [table])
            modes = jnp.broadcast_to(modes[0] * modes[1] * modes[2], block.shape)
        else:
            modes = jnp.ones(block.shape, jnp.int32)
        edge = jnp.asarray(edges, dtype)
        index = jnp.searchsorted(edge, kabs, side="right") - 1
        index = jnp.where(kabs == edge[-1], nbins - 1, index)      # the last bin is closed
        index = jnp.where((kabs > 0) & (index >= 0) & (index < nbins), index, nbins)
        index = jnp.broadcast_to(index, block.shape).reshape(-1)
        weight = modes.astype(dtype)
        sums = [jax.ops.segment_sum(v.reshape(-1), index, nbins + 1)[:nbins]
                for v in (weight * kabs, weight * power, modes)]
        names = _mesh_axes(blocks.spec)
        return tuple(jax.lax.psum(s, names) for s in sums) if names else tuple(sums)

    if blocks.distributed:
        local = jax.shard_map(local, mesh=blocks.mesh, in_specs=blocks.spec,
                              out_specs=(PartitionSpec(),) * 3)
    ksum, psum, counts = local(k)
    empty = counts == 0
    safe = jnp.where(empty, 1, counts).astype(dtype)
    return PowerSpectrum(jnp.where(empty, jnp.nan, ksum / safe),
                         jnp.where(empty, jnp.nan, psum / safe), counts)


def _mesh_axes(spec: PartitionSpec) -> tuple[str, ...]:
    names = []
    for e in spec:
        if e is None:
            continue
        names += list(e) if isinstance(e, (tuple, list)) else [e]
    return tuple(names)
