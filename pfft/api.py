"""numpy-compatible transforms on sharded arrays: ``fftn``, ``ifftn``, ``rfftn``,
``irfftn``, their 1-D and 2-D forms (``fft``, ``ifft``, ``rfft``, ``irfft``, ``hfft``,
``ihfft``, ``fft2``, ``ifft2``, ``rfft2``, ``irfft2``), ``device_put``.

Each function is a thin wrapper, as in ``jax.numpy.fft``: check the arguments with
numpy's meaning (:mod:`pfft.inputs`), fetch the cached plan for the input's shape,
dtype, mesh and layout and run it (an inverse: the plan :mod:`pfft.inverse` chooses),
and place the result where ``out_sharding`` asks.
"""
from __future__ import annotations

import math
import warnings
from typing import Sequence

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from . import split_fft
from .arguments import (check_axis, check_length, check_norm, complex_dtype, norm_scale,
                        normalize_axes, swapped_norm)
from .grid import mesh_shape_of
from .inputs import as_array, prepare, resize, start_layout
from .inverse import inverse as run_inverse, inverse_real
from .layout import default_layout, names_of
from .mesh_plan import Plan, ReplicationWarning, get_plan, idle_mesh_axes_text
from .problem import Problem
from .sharding import mesh_of, place, place_output, spec_of

__all__ = ["fftn", "ifftn", "rfftn", "irfftn", "fft", "ifft", "rfft", "irfft", "hfft", "ihfft",
           "fft2", "ifft2", "rfft2", "irfft2", "device_put"]


def _forward_plan(x, axes, norm, mesh, kind: str = "c2c") -> Plan:
    """The plan a forward transform of ``x`` runs (from :func:`pfft.inputs.start_layout`)."""
    return get_plan(Problem(x.shape, complex_dtype(x.dtype), axes, norm, kind,
                            in_layout=start_layout(x, axes, mesh)), mesh)


def _transform(x, s, axes, norm, mesh, out_sharding, inverse: bool, where: str):
    x, s, axes, norm, mesh = prepare(x, s, axes, norm, mesh, where)
    x = resize(x, s or tuple(x.shape[a] for a in axes), axes, mesh)
    spec = split_fft.split_spec(x, axes[0], mesh) if len(axes) == 1 else None
    if spec is not None:   # an axis no other axis can take the split of: done where it lies
        scale = norm_scale(norm, inverse, x.shape[axes[0]])
        y = split_fft.split_axis_fft(x, axes[0], inverse=inverse, scale=scale, mesh=mesh,
                                     spec=spec, where=where)
    elif inverse:
        y = run_inverse(x, Problem(x.shape, complex_dtype(x.dtype), axes, norm), mesh,
                        out_sharding)
    else:
        y = _forward_plan(x, axes, norm, mesh).forward(x)
    return place_output(y, out_sharding, mesh, where)


def fftn(x, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
         norm: str | None = "backward", *, mesh: Mesh | None = None,
         out_sharding: NamedSharding | PartitionSpec | None = None) -> jax.Array:
    """N-dimensional FFT of a (possibly sharded) array, with numpy's results.

    Parameters
    ----------
    x
        numpy array, single-device or sharded ``jax.Array`` (inside or outside ``jit``).
    s, axes, norm
        As in :func:`numpy.fft.fftn`: by default every axis is transformed (the last
        ``len(s)`` with ``s``); axes not in ``axes`` are batch axes.
    mesh
        The device mesh; by default the mesh of ``x``'s sharding (single device if
        it has none). Inside ``jit`` pass it unless ``x`` has an Explicit-axes type.
    out_sharding
        Where to put the result. By default it stays in the pencil the plan ends in
        (no transposes back): for the default input pencil ``P('x', 'y', None)`` that is
        ``P(None, 'x', 'y')``.

    Returns
    -------
    jax.Array
        numpy's shape and axis order; complex64 or complex128.

    Examples
    --------
    >>> mesh = pfft.make_mesh(4)                                      # doctest: +SKIP
    >>> k = pfft.fftn(pfft.device_put(np.ones((8, 8, 8)), mesh))      # doctest: +SKIP
    """
    return _transform(x, s, axes, norm, mesh, out_sharding, False, "fftn")


def ifftn(x, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
          norm: str | None = "backward", *, mesh: Mesh | None = None,
          out_sharding: NamedSharding | PartitionSpec | None = None) -> jax.Array:
    """Inverse N-dimensional FFT with numpy's results; see :func:`fftn`.

    Applied to the output of :func:`fftn`, it runs that plan backwards: the result
    comes back in the input's sharding for an input in the default layout, and for
    any with ``out_sharding`` its sharding (:mod:`pfft.inverse` has the rule).
    """
    return _transform(x, s, axes, norm, mesh, out_sharding, True, "ifftn")


def rfftn(x, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
          norm: str | None = "backward", *, mesh: Mesh | None = None,
          out_sharding: NamedSharding | PartitionSpec | None = None) -> jax.Array:
    """N-dimensional FFT of a real (possibly sharded) array, with numpy's results.

    The last of ``axes`` is halved to ``n//2 + 1`` points. The result has numpy's
    shape and is evenly sharded, the halved axis whole: on a pencil grid two
    exchanges where the grid divides the other axes by both its sizes (the output is
    split over both mesh axes at once: ``P(None, ('x', 'y'), None)``, or
    ``P(('y', 'x'), None, None)`` where ``'x'`` is the smaller), else three; on a
    slab one. See also ``pfft.plan(..., kind="r2c", spectrum="padded")``.

    Parameters
    ----------
    x
        Real array (numpy, single-device or sharded ``jax.Array``).
    s, axes, norm, mesh, out_sharding
        As in :func:`fftn`.

    Returns
    -------
    jax.Array
        complex64 for float32 (and smaller) input, complex128 for float64.
    """
    return _rfftn(x, s, axes, norm, mesh, out_sharding, "rfftn")


def _rfftn(x, s, axes, norm, mesh, out_sharding, where: str):
    x, s, axes, norm, mesh = prepare(x, s, axes, norm, mesh, where)
    if np.issubdtype(x.dtype, np.complexfloating):
        raise TypeError(f"{where}: x must be real, got dtype {x.dtype} (use the complex "
                        f"transform for complex input)")
    x = resize(x, s or tuple(x.shape[a] for a in axes), axes, mesh)
    y = _forward_plan(x, axes, norm, mesh, kind="r2c").forward(x)
    return place_output(y, out_sharding, mesh, where)


def irfftn(x, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
           norm: str | None = "backward", *, mesh: Mesh | None = None,
           out_sharding: NamedSharding | PartitionSpec | None = None) -> jax.Array:
    """Inverse of :func:`rfftn`, with numpy's results.

    ``s`` gives the output lengths (default: the input's, with ``2 * (m - 1)`` on
    the last axis); the input is cropped or zero-padded to ``s`` on all but the
    last axis and to ``s[-1] // 2 + 1`` on the last, as numpy does. Applied to the
    output of :func:`rfftn` it comes back in the real input's sharding as
    :func:`ifftn` does; with ``s`` it also takes the padded spectrum of a
    ``spectrum="padded"`` plan (without, only inside ``jit`` on an Auto mesh:
    :mod:`pfft.inverse`).

    Returns
    -------
    jax.Array
        float32 for complex64 input, float64 for complex128.
    """
    return _irfftn(x, s, axes, norm, mesh, out_sharding, "irfftn")


def _irfftn(x, s, axes, norm, mesh, out_sharding, where: str):
    x, s, axes, norm, mesh = prepare(x, s, axes, norm, mesh, where)
    y = inverse_real(x, s, axes, norm, mesh, out_sharding, where)
    return place_output(y, out_sharding, mesh, where)


def device_put(x, mesh: Mesh | None, *, axes: Sequence[int] | None = None) -> jax.Array:
    """Place ``x`` on ``mesh`` in the input pencil that ``pfft.fftn`` plans for it.

    Parameters
    ----------
    x
        Array-like.
    mesh
        A 1-D or 2-D mesh (``None``: the default device).
    axes
        The axes that will be transformed (default: all, as in the transforms).

    Warns
    -----
    ReplicationWarning
        Where a mesh axis splits no dimension of ``x`` (none has a length its devices
        can share out evenly): ``x`` is then replicated over it, and its devices
        would repeat each other's work. The warning names the mesh axis, ``x``'s
        shape and what to do.
    """
    x = as_array(x)
    axes = normalize_axes(axes, x.ndim, "device_put")
    if mesh is None:
        return jax.device_put(x)
    mesh_shape = mesh_shape_of(mesh)
    layout = default_layout(x.shape, axes, mesh_shape)
    idle = layout.unused_mesh_axes
    if idle and x.size:
        warnings.warn(f"pfft.device_put: {idle_mesh_axes_text(x.shape, mesh_shape, idle)}",
                      ReplicationWarning, stacklevel=2)
    return place(x, layout.sharding(mesh))


# -- numpy's 1-D and 2-D functions: the n-D transforms over one or two axes -----------

def _keep_layout(x, mesh, out_shape) -> NamedSharding | None:
    """``x``'s sharding on ``mesh`` where it is known and can hold an array of
    ``out_shape`` (JAX splits axes evenly only); else ``None``."""
    spec, x_mesh = spec_of(x), mesh_of(x)
    if mesh is None or not mesh_shape_of(mesh) or spec is None or x_mesh is None \
            or x_mesh.shape != mesh.shape:
        return None
    sizes = dict(mesh.shape)
    for a, n in enumerate(out_shape):
        entry = names_of(spec[a] if a < len(spec) else None)
        if n % math.prod(sizes[m] for m in entry):
            return None
    return NamedSharding(mesh, spec)


def _one_axis(nd, x, n, axis, norm, mesh, out_sharding, where: str):
    """A 1-D transform: ``nd`` (one of the n-D transforms' bodies) over ``(axis,)``,
    then back into ``x``'s sharding (numpy's layout) where the result fits in it."""
    x = as_array(x)
    if x.ndim == 0:
        raise ValueError(f"{where}: cannot transform a 0-d array")
    axis = check_axis(axis, x.ndim, where)
    n = check_length(n, where, optional=True)
    check_norm(norm, where)
    y = nd(x, None if n is None else (n,), (axis,), norm, mesh, out_sharding, where)
    if out_sharding is None:
        target = _keep_layout(x, mesh if mesh is not None else mesh_of(x), y.shape)
        if target is not None:
            y = place(y, target)
    return y


def _c2c(inverse: bool):
    def nd(x, s, axes, norm, mesh, out_sharding, where):
        return _transform(x, s, axes, norm, mesh, out_sharding, inverse, where)
    return nd


def _conj(x):
    x = as_array(x)
    return np.conj(x) if isinstance(x, np.ndarray) else jnp.conj(x)


def fft(a, n: int | None = None, axis: int = -1, norm: str | None = None, *,
        mesh: Mesh | None = None,
        out_sharding: NamedSharding | PartitionSpec | None = None) -> jax.Array:
    """1-D FFT of a (possibly sharded) array along ``axis``, with numpy's results.

    ``n`` crops or zero-pads the axis first, as :func:`numpy.fft.fft` does. Along a
    split axis the transform is an exchange that makes the axis whole, a local FFT
    and (by default) an exchange back: the result keeps ``a``'s sharding wherever
    that can hold it (JAX splits only evenly; an axis that ``n`` resizes to a length
    its devices do not divide stays where the plan leaves it). Along a whole axis it
    is a local FFT, no communication.

    Parameters
    ----------
    a
        numpy array, single-device or sharded ``jax.Array`` (inside or outside ``jit``).
    n, axis, norm
        As in :func:`numpy.fft.fft`.
    mesh
        As in :func:`pfft.fftn`.
    out_sharding
        Where to put the result (a ``NamedSharding`` or ``PartitionSpec`` on ``mesh``);
        default ``a``'s own sharding (see above).

    Returns
    -------
    jax.Array
        numpy's shape; complex64 or complex128.

    Raises
    ------
    numpy.exceptions.AxisError
        ``axis`` out of range (a ``ValueError`` and an ``IndexError``).
    ValueError
        ``n < 1``, a bad ``norm``, a 0-d array.
    TypeError
        A non-integer ``axis`` or ``n``, a non-numeric dtype.
    """
    return _one_axis(_c2c(False), a, n, axis, norm, mesh, out_sharding, "fft")


def ifft(a, n: int | None = None, axis: int = -1, norm: str | None = None, *,
         mesh: Mesh | None = None,
         out_sharding: NamedSharding | PartitionSpec | None = None) -> jax.Array:
    """Inverse 1-D FFT with numpy's results (:func:`numpy.fft.ifft`); see :func:`fft`."""
    return _one_axis(_c2c(True), a, n, axis, norm, mesh, out_sharding, "ifft")


def rfft(a, n: int | None = None, axis: int = -1, norm: str | None = None, *,
         mesh: Mesh | None = None,
         out_sharding: NamedSharding | PartitionSpec | None = None) -> jax.Array:
    """1-D FFT of a real array (:func:`numpy.fft.rfft`): ``axis`` becomes ``n//2 + 1``
    points.

    Communication and sharding as in :func:`fft`: the result keeps ``a``'s sharding
    where it can hold it, which it cannot where ``axis`` itself was split (``n//2 + 1``
    points do not divide evenly): the halved axis is then left whole and the
    split moved to the axis the plan chose. Complex input is a ``TypeError``.
    """
    return _one_axis(_rfftn, a, n, axis, norm, mesh, out_sharding, "rfft")


def irfft(a, n: int | None = None, axis: int = -1, norm: str | None = None, *,
          mesh: Mesh | None = None,
          out_sharding: NamedSharding | PartitionSpec | None = None) -> jax.Array:
    """Inverse of :func:`rfft` (:func:`numpy.fft.irfft`): ``n`` real points along
    ``axis`` (default ``2 * (m - 1)`` for ``m`` input points; pass ``n`` for odd
    lengths). Sharding as in :func:`fft`."""
    return _one_axis(_irfftn, a, n, axis, norm, mesh, out_sharding, "irfft")


def hfft(a, n: int | None = None, axis: int = -1, norm: str | None = None, *,
         mesh: Mesh | None = None,
         out_sharding: NamedSharding | PartitionSpec | None = None) -> jax.Array:
    """FFT of a Hermitian-symmetric signal given by its first half
    (:func:`numpy.fft.hfft`): a real result of ``n`` points (default ``2 * (m - 1)``).

    As numpy computes it: :func:`irfft` of ``conj(a)`` with the opposite ``norm``
    (``"backward"`` and ``"forward"`` swap, ``"ortho"`` stays). Sharding as in
    :func:`fft`.
    """
    return _one_axis(_irfftn, _conj(a), n, axis, swapped_norm(check_norm(norm, "hfft")), mesh,
                     out_sharding, "hfft")


def ihfft(a, n: int | None = None, axis: int = -1, norm: str | None = None, *,
          mesh: Mesh | None = None,
          out_sharding: NamedSharding | PartitionSpec | None = None) -> jax.Array:
    """Inverse of :func:`hfft` for a real array (:func:`numpy.fft.ihfft`):
    ``conj(rfft(a))`` with the opposite ``norm``; ``n//2 + 1`` points along ``axis``.
    Sharding as in :func:`rfft`."""
    y = _one_axis(_rfftn, a, n, axis, swapped_norm(check_norm(norm, "ihfft")), mesh, out_sharding, "ihfft")
    return jnp.conj(y)


def fft2(a, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1),
         norm: str | None = None, *, mesh: Mesh | None = None,
         out_sharding: NamedSharding | PartitionSpec | None = None) -> jax.Array:
    """2-D FFT (:func:`numpy.fft.fft2`): :func:`fftn` over ``axes`` (default the last
    two), with its layouts: the result is left where the plan ends unless
    ``out_sharding`` asks for another sharding."""
    return _transform(a, s, axes, norm, mesh, out_sharding, False, "fft2")


def ifft2(a, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1),
          norm: str | None = None, *, mesh: Mesh | None = None,
          out_sharding: NamedSharding | PartitionSpec | None = None) -> jax.Array:
    """Inverse 2-D FFT (:func:`numpy.fft.ifft2`): :func:`ifftn` over ``axes``."""
    return _transform(a, s, axes, norm, mesh, out_sharding, True, "ifft2")


def rfft2(a, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1),
          norm: str | None = None, *, mesh: Mesh | None = None,
          out_sharding: NamedSharding | PartitionSpec | None = None) -> jax.Array:
    """2-D FFT of a real array (:func:`numpy.fft.rfft2`): :func:`rfftn` over ``axes``."""
    return _rfftn(a, s, axes, norm, mesh, out_sharding, "rfft2")


def irfft2(a, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1),
           norm: str | None = None, *, mesh: Mesh | None = None,
           out_sharding: NamedSharding | PartitionSpec | None = None) -> jax.Array:
    """Inverse of :func:`rfft2` (:func:`numpy.fft.irfft2`): :func:`irfftn` over ``axes``."""
    return _irfftn(a, s, axes, norm, mesh, out_sharding, "irfft2")
