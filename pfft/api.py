"""numpy-compatible transforms on sharded arrays: ``fftn``, ``ifftn``, ``device_put``.

Each function is a thin wrapper: check the arguments with numpy's meaning, fetch the
cached plan for the input's shape, dtype, mesh and layout, and run it.
"""
from __future__ import annotations

import operator
from typing import Sequence

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from .grid import grid_axes
from .layout import default_layout, layout_from_spec
from .plan import NORMS, Plan, get_plan
from .sharding import is_tracer, mesh_of, place, spec_of

__all__ = ["fftn", "ifftn", "device_put", "complex_dtype", "normalize_axes", "check_norm"]


def check_norm(norm, where: str) -> str:
    if norm is None:
        return "backward"
    if norm not in NORMS:
        raise ValueError(f"{where}: norm must be one of {NORMS} (or None), got {norm!r}")
    return norm


def complex_dtype(dtype) -> np.dtype:
    """The complex dtype a transform of ``dtype`` computes in (numpy's promotion).

    float32/float16/bfloat16 give complex64, float64 complex128, integers and bools
    the default complex dtype (complex128 with ``jax_enable_x64``, else complex64).
    """
    dtype = np.dtype(dtype)
    if np.issubdtype(dtype, np.complexfloating):
        out = dtype
    elif dtype == np.float64:
        out = np.dtype(np.complex128)
    elif np.issubdtype(dtype, np.floating) or dtype.name == "bfloat16":
        out = np.dtype(np.complex64)
    elif np.issubdtype(dtype, np.integer) or dtype == np.bool_:
        out = np.dtype(np.complex128)
    else:
        raise TypeError(f"pfft: cannot transform an array of dtype {dtype}; "
                        f"numeric (bool, int, float or complex) dtypes are accepted")
    if out not in (np.complex64, np.complex128):
        raise TypeError(f"pfft: unsupported dtype {dtype}")
    return np.dtype(jax.dtypes.canonicalize_dtype(out))


def normalize_axes(axes, ndim: int, where: str, s=None) -> tuple[int, ...]:
    """numpy's ``axes`` rules; the default is the last three axes (or ``len(s)``)."""
    if axes is None:
        count = len(s) if s is not None else min(3, ndim)
        if count > ndim:
            raise ValueError(f"{where}: s has {count} entries but the array has only "
                             f"{ndim} axes")
        if count == 0:
            raise ValueError(f"{where}: cannot transform a 0-d array")
        return tuple(range(ndim - count, ndim))
    try:
        axes = tuple(operator.index(a) for a in axes)
    except TypeError:
        raise TypeError(f"{where}: axes must be a sequence of ints, got {axes!r}") from None
    if not axes:
        raise ValueError(f"{where}: axes must name at least one axis")
    out = []
    for a in axes:
        if not -ndim <= a < ndim:
            raise ValueError(f"{where}: axis {a} is out of range for an array of "
                             f"{ndim} dimensions")
        out.append(a % ndim)
    if len(set(out)) != len(out):
        raise ValueError(f"{where}: repeated axes in {axes!r}")
    return tuple(out)


def _normalize_s(s, axes, shape, where: str) -> tuple[int, ...]:
    if s is None:
        return tuple(shape[a] for a in axes)
    try:
        s = tuple(operator.index(n) for n in s)
    except TypeError:
        raise TypeError(f"{where}: s must be a sequence of ints, got {s!r}") from None
    if len(s) != len(axes):
        raise ValueError(f"{where}: s {s} and axes {axes} have different lengths")
    if any(n < 1 for n in s):
        raise ValueError(f"{where}: s entries must be positive, got {s}")
    return s


def _as_array(x):
    if isinstance(x, (jax.Array, np.ndarray)) or is_tracer(x):
        return x
    return np.asarray(x)


def _resize(x, s, axes, mesh):
    """Crop or zero-pad ``x`` to ``s`` along ``axes`` (numpy's ``s`` semantics)."""
    if all(x.shape[a] == n for a, n in zip(axes, s)):
        return x
    if isinstance(x, np.ndarray):
        index = [slice(None)] * x.ndim
        pad = [(0, 0)] * x.ndim
        for a, n in zip(axes, s):
            index[a] = slice(0, min(n, x.shape[a]))
            pad[a] = (0, max(0, n - x.shape[a]))
        return np.pad(x[tuple(index)], pad)
    spec = spec_of(x)
    if mesh is not None and spec is not None and grid_axes(mesh):
        # JAX cannot crop a split axis unevenly: make the resized axes whole first
        entries = [spec[a] if a < len(spec) else None for a in range(x.ndim)]
        for a in axes:
            entries[a] = None
        x = place(x, NamedSharding(mesh, PartitionSpec(*entries)))
    for a, n in zip(axes, s):
        if x.shape[a] >= n:
            x = jax.lax.slice_in_dim(x, 0, n, axis=a)
        else:
            pad = [(0, 0)] * x.ndim
            pad[a] = (0, n - x.shape[a])
            x = jnp.pad(x, pad)
    return x


def _plan_for(x, axes, norm, mesh) -> Plan:
    grid = grid_axes(mesh)
    layout = None
    if mesh is not None and grid:
        spec = spec_of(x)
        x_mesh = mesh_of(x)
        if spec is not None and x_mesh is not None and x_mesh.shape == mesh.shape:
            layout = layout_from_spec(x.shape, spec, grid)
    if layout is None:
        layout = default_layout(x.shape, axes, grid)
    return get_plan(x.shape, complex_dtype(x.dtype), mesh, axes, norm, layout)


def _transform(x, s, axes, norm, mesh, out_sharding, inverse: bool, where: str):
    x = _as_array(x)
    norm = check_norm(norm, where)
    if x.ndim == 0:
        raise ValueError(f"{where}: cannot transform a 0-d array")
    if axes is None and s is not None and len(s) > x.ndim:
        raise ValueError(f"{where}: s has {len(s)} entries but the array has {x.ndim} axes")
    axes = normalize_axes(axes, x.ndim, where, s)
    s = _normalize_s(s, axes, x.shape, where)
    complex_dtype(x.dtype)                               # reject bad dtypes early
    if mesh is None:
        mesh = mesh_of(x)
    elif not isinstance(mesh, (Mesh, jax.sharding.AbstractMesh)):
        raise TypeError(f"{where}: mesh must be a jax.sharding.Mesh, got {type(mesh).__name__}")
    grid_axes(mesh)                                      # at most two distributed axes
    x = _resize(x, s, axes, mesh)
    plan = _plan_for(x, axes, norm, mesh)
    y = plan._inverse_from_input(x) if inverse else plan.forward(x)
    if out_sharding is not None:
        if not isinstance(out_sharding, NamedSharding):
            if mesh is None:
                raise ValueError(f"{where}: out_sharding as a PartitionSpec needs a mesh")
            out_sharding = NamedSharding(mesh, out_sharding)
        if mesh is not None and out_sharding.mesh.shape != mesh.shape:
            raise ValueError(f"{where}: out_sharding is on a mesh {dict(out_sharding.mesh.shape)} "
                             f"other than the input's {dict(mesh.shape)}")
        y = place(y, out_sharding)
    return y


def fftn(x, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
         norm: str | None = "backward", *, mesh: Mesh | None = None,
         out_sharding: NamedSharding | PartitionSpec | None = None) -> jax.Array:
    """N-dimensional FFT of a (possibly sharded) array, with numpy's results.

    Parameters
    ----------
    x
        numpy array, single-device or sharded ``jax.Array`` (inside or outside ``jit``).
    s, axes, norm
        As in :func:`numpy.fft.fftn`, except that ``axes`` defaults to the last three
        axes; other axes are batch axes.
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

    Applied to the output of :func:`fftn`, the result comes back in the input's
    sharding.
    """
    return _transform(x, s, axes, norm, mesh, out_sharding, True, "ifftn")


def device_put(x, mesh: Mesh | None, *, axes: Sequence[int] | None = None) -> jax.Array:
    """Place ``x`` on ``mesh`` in the input pencil that ``pfft.fftn`` plans for it.

    Parameters
    ----------
    x
        Array-like.
    mesh
        A 1-D or 2-D mesh (``None``: the default device).
    axes
        The axes that will be transformed (default: the last three).
    """
    x = _as_array(x)
    axes = normalize_axes(axes, x.ndim, "device_put")
    if mesh is None:
        return jax.device_put(x)
    layout = default_layout(x.shape, axes, grid_axes(mesh))
    return place(x, layout.sharding(mesh))
