"""A 1-D FFT along an axis that stays split: the six-step algorithm over the devices.

pfft's plans make a transformed axis whole by moving its split onto another axis (an
all-to-all). Where no other axis can take the split — a 1-D array, or batch axes
shorter than the device count — the plan would have to all-gather the axis and repeat
the transform on every device. This module transforms such an axis where it lies.

With ``n = n1 * n2`` points, input index ``j = j1 + n1*j2`` and output index
``k = n2*k1 + k2``::

    X[n2*k1 + k2] = sum_j1 w_n1^(j1*k1) * w_n^(j1*k2) * sum_j2 w_n2^(j2*k2) * x[j1 + n1*j2]

(``w_m = exp(-2 pi i / m)``). Seen as an ``(n2, n1)`` matrix, device ``d``'s block of
``n/p`` points is a band of rows ``j2``, all ``j1``. So, with ``p`` dividing ``n1`` and
``n2``:

1. an all-to-all makes ``j2`` whole (each device keeps a band of columns ``j1``);
2. a local FFT over ``j2`` of length ``n2``, then the twiddle ``w_n^(j1*k2)``;
3. an all-to-all makes ``j1`` whole (a band of rows ``k2``);
4. a local FFT over ``j1`` of length ``n1``;
5. an all-to-all and a local transpose put the ``(k1, k2)`` matrix in numpy's order,
   each device holding the same ``n/p`` points it held on input.

Three all-to-alls, each moving ``(p-1)/p`` of the block once: the same traffic as a
3-D FFT on a pencil grid, and no device holds more than its block. It needs ``p**2``
to divide ``n``; other lengths keep the plan's route. The local FFTs are XLA's
(``jnp.fft``) and the collectives ``jax.lax.all_to_all`` inside ``shard_map``, so
``grad``, ``vjp``, ``jvp`` and ``vmap`` follow from JAX's own rules and cost one such
transform.
"""
from __future__ import annotations

import functools
import math

import jax.numpy as jnp
import numpy as np
from jax import lax

from jax.sharding import NamedSharding, PartitionSpec

from .arguments import complex_dtype
from .blocks import blocks_of
from .grid import mesh_shape_of
from .layout import default_layout, layout_from_spec, names_of
from .chain_search import build_chain
from .engines import lax_fft
from .sharding import is_explicit, is_tracer, mesh_of, place, spec_of
from .stages import Gather

__all__ = ["factors", "split_spec", "split_axis_fft"]


def factors(n: int, p: int) -> tuple[int, int] | None:
    """``(n1, n2)`` with ``n1 * n2 == n``, both multiples of ``p`` and as close to
    ``sqrt(n)`` as can be (``n1 <= n2``); ``None`` where ``p**2`` does not divide ``n``."""
    if p < 2 or n % (p * p):
        return None
    m = n // (p * p)
    best = max(d for d in range(1, math.isqrt(m) + 1) if m % d == 0)
    return best * p, (m // best) * p


def split_spec(x, axis: int, mesh) -> PartitionSpec | None:
    """The sharding to run a 1-D FFT of ``x`` along ``axis`` in, or ``None`` where the
    plan's route is taken: ``axis`` must be split over ``p`` devices with ``p**2``
    dividing its length, and the plan from ``x``'s layout would all-gather that axis
    (no other axis can take its split).

    ``x``'s own sharding where it is known. Where it is not (a numpy array or one on
    no mesh, placed there first; inside ``jit`` on an Auto mesh) the default layout
    (:func:`pfft.layout.default_layout`), as every transform assumes: for an array
    whose other axes cannot take the grid's split, the axis split over the whole grid.
    """
    if mesh is None or not mesh_shape_of(mesh):
        return None
    mesh_shape = mesh_shape_of(mesh)
    spec, x_mesh = (None, None) if isinstance(x, np.ndarray) else (spec_of(x), mesh_of(x))
    if spec is None or x_mesh is None:
        spec = default_layout(x.shape, (axis,), mesh_shape).spec
    elif x_mesh.shape != mesh.shape:
        return None
    entry = spec[axis] if axis < len(spec) else None
    p = math.prod(dict(mesh.shape)[m] for m in names_of(entry))
    if p < 2 or x.shape[axis] >= 2**31 or factors(x.shape[axis], p) is None:
        return None
    return spec if _plan_gathers(tuple(x.shape), spec, mesh_shape, tuple(mesh.axis_names), axis) \
        else None


@functools.lru_cache(maxsize=256)
def _plan_gathers(shape, spec, mesh_shape, axis_names, axis: int) -> bool:
    """Whether the plan of a 1-D transform along ``axis`` from ``spec`` all-gathers it
    (cached: eager calls in a loop do not replan)."""
    chain = build_chain(layout_from_spec(shape, spec, mesh_shape, axis_names), (axis,))
    return any(isinstance(st, Gather) and st.axis == axis for st in chain.stages)


def _twiddle(j1, k2, n: int, inverse: bool, dtype):
    """``exp(-+2 pi i j1*k2 / n)`` for integer index arrays, the exponent reduced
    modulo ``n`` exactly before it becomes an angle."""
    m = (j1 * k2) % n
    real = jnp.finfo(dtype).dtype
    angle = (2 * np.pi / n) * m.astype(real)
    return lax.complex(jnp.cos(angle), jnp.sin(angle) if inverse else -jnp.sin(angle))


def _six_step(block, names, p: int, n1: int, n2: int, inverse: bool, scale: float):
    """The transform of one device's block (last axis: its ``n/p`` points)."""
    batch = block.shape[:-1]
    fft = lax_fft.ifft if inverse else jnp.fft.fft     # lax_fft: scaled at every size
    name = names if len(names) > 1 else names[0]
    d = lax.axis_index(name)
    x = block.reshape(batch + (n2 // p, n1))                       # rows j2, all j1
    x = lax.all_to_all(x, name, x.ndim - 1, x.ndim - 2, tiled=True)  # (n2, n1/p)
    y = fft(x, axis=-2)
    j1 = d * (n1 // p) + jnp.arange(n1 // p, dtype=jnp.int32)
    k2 = jnp.arange(n2, dtype=jnp.int32)
    y = y * _twiddle(j1[None, :], k2[:, None], n1 * n2, inverse, y.dtype)
    y = lax.all_to_all(y, name, y.ndim - 2, y.ndim - 1, tiled=True)  # (n2/p, n1)
    z = fft(y, axis=-1)
    scale = scale * n1 * n2 if inverse else scale    # ifft's own 1/n2 and 1/n1 undone
    if scale != 1.0:
        z = z * jnp.asarray(scale, z.real.dtype)
    z = lax.all_to_all(z, name, z.ndim - 1, z.ndim - 2, tiled=True)  # (n2, n1/p): k2, k1
    z = jnp.swapaxes(z, -1, -2)                                      # (n1/p, n2): k1, k2
    return z.reshape(batch + (n1 * n2 // p,))


def split_axis_fft(x, axis: int, *, inverse: bool, scale: float, mesh,
                   spec: PartitionSpec, where: str = "fft"):
    """The complex FFT of ``x`` along ``axis`` in sharding ``spec`` (from
    :func:`split_spec`), times ``scale`` (the unnormalised transform, forward or
    inverse sign); the result in the same sharding.

    Other axes may be split too; they are carried along as batch axes. ``where``
    names the public function in error messages.
    """
    x, blocks = blocks_of(x, mesh, spec, where=where)
    names, p = blocks.split[axis], blocks.parts[axis]
    n1, n2 = factors(x.shape[axis], p)
    x = x.astype(complex_dtype(x.dtype))
    if is_tracer(x) and is_explicit(blocks.mesh):
        # shard_map takes Explicit inputs only in its specs: a no-op for x itself, but
        # under jvp it also places a tangent that came in another sharding
        x = place(x, NamedSharding(blocks.mesh, blocks.spec))

    def body(block):
        moved = jnp.moveaxis(block, axis, -1)
        out = _six_step(moved, names, p, n1, n2, inverse, scale)
        return jnp.moveaxis(out, -1, axis)

    return blocks.shard_map(body)(x)
