"""What the public transforms do with their input before choosing a plan.

numpy's (and scipy's) argument rules applied to the array (:func:`prepare`), numpy's
``s`` (:func:`resize`: crop or zero-pad, on a sharded array too), and the layout an
array is in on a mesh where JAX shows it (:func:`layout_of`), and so the layout a
forward transform starts from (:func:`start_layout`). Shared by
:mod:`pfft.api`, :mod:`pfft.r2r` and :mod:`pfft.inverse`.
"""
from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import NamedSharding, PartitionSpec

from .arguments import (NUMPY_RULES, AxesRules, check_axis, check_length, check_norm,
                        complex_dtype, cook_nd)
from .grid import mesh_shape_of
from .layout import Layout, default_layout, layout_from_spec, names_of, split_entry
from .sharding import check_mesh, is_tracer, mesh_of, place, spec_of

__all__ = ["as_array", "prepare", "prepare_one_axis", "resize", "layout_of", "start_layout",
           "keep_layout"]


def as_array(x):
    """``x`` as it is where it is an array (numpy, JAX, or a tracer), else ``np.asarray(x)``."""
    if isinstance(x, (jax.Array, np.ndarray)) or is_tracer(x):
        return x
    return np.asarray(x)


def resize(x, s, axes, mesh):
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
    if mesh is not None and spec is not None and mesh_shape_of(mesh):
        # JAX cannot crop a split axis unevenly: make the resized axes whole first,
        # moving their mesh axes onto an axis that keeps its length (an all-to-all)
        # where one divides evenly
        entries = [names_of(spec[a] if a < len(spec) else None) for a in range(x.ndim)]
        sizes = dict(mesh.shape)
        for a in axes:
            if not entries[a] or x.shape[a] == s[axes.index(a)]:
                continue
            p = math.prod(sizes[m] for m in entries[a])
            kept = [b for b in range(x.ndim) if (b not in axes or
                    x.shape[b] == s[axes.index(b)]) and not entries[b] and x.shape[b] % p == 0]
            if kept:
                entries[min(kept, key=lambda b: abs(a - b))] = entries[a]
            entries[a] = ()
        x = place(x, NamedSharding(mesh, PartitionSpec(*(split_entry(e) for e in entries))))
    for a, n in zip(axes, s):
        if x.shape[a] >= n:
            x = jax.lax.slice_in_dim(x, 0, n, axis=a)
        else:
            pad = [(0, 0)] * x.ndim
            pad[a] = (0, n - x.shape[a])
            x = jnp.pad(x, pad)
    return x


def layout_of(x, mesh, shape=None, *, even: bool = True) -> Layout | None:
    """The layout ``x`` is in on ``mesh``, if it is known (a concrete array, or a
    tracer with an Explicit-axes type) and pfft can start from it; ``shape``: the
    logical shape when ``x`` holds a padded spectrum (``even=False``)."""
    mesh_shape = mesh_shape_of(mesh)
    if mesh is None or not mesh_shape:
        return None
    spec, x_mesh = spec_of(x), mesh_of(x)
    if spec is None or x_mesh is None or x_mesh.shape != mesh.shape:
        return None
    return layout_from_spec(shape or x.shape, spec, mesh_shape, mesh.axis_names, even=even)


def start_layout(x, axes, mesh) -> Layout:
    """The layout a forward transform of ``x`` over ``axes`` starts from: ``x``'s own
    where JAX shows it, else the default one (where :func:`pfft.device_put` puts
    arrays; ``x`` is placed there)."""
    return layout_of(x, mesh) or default_layout(x.shape, axes, mesh_shape_of(mesh))


def prepare(x, s, axes, norm, mesh, where: str, rules: AxesRules = NUMPY_RULES):
    """Check the arguments as numpy does; the array, ``s``, ``axes``, norm and mesh.

    ``s`` and ``axes`` as :func:`pfft.arguments.cook_nd` reads them by ``rules``
    (numpy's by default: an axis may repeat, the caller then transforms along it once
    per entry)."""
    x = as_array(x)
    norm = check_norm(norm, where)
    if x.ndim == 0:
        raise ValueError(f"{where}: cannot transform a 0-d array")
    s, axes = cook_nd(s, axes, x.shape, where, rules)
    complex_dtype(x.dtype, where)                        # reject bad dtypes early
    if s is None:
        for a in axes:
            if x.shape[a] < 1:
                raise ValueError(f"{where}: Invalid number of FFT data points (0) along axis "
                                 f"{a} of an array of shape {tuple(x.shape)}; pass s to "
                                 f"zero-pad")
    check_mesh(mesh, where, x)
    if mesh is None:
        mesh = mesh_of(x)
    return x, s, axes, norm, mesh


def prepare_one_axis(x, n, axis, where: str):
    """A 1-D transform's array, ``axis`` and ``n``, checked as numpy's and scipy's 1-D
    functions check them: not a 0-d array, ``axis`` in range (numpy's ``AxisError``),
    ``n`` a positive int or ``None``."""
    x = as_array(x)
    if x.ndim == 0:
        raise ValueError(f"{where}: cannot transform a 0-d array")
    axis = check_axis(axis, x.ndim, where)
    return x, axis, check_length(n, where, optional=True)


def keep_layout(y, x, mesh):
    """``y`` (a 1-D transform of ``x``) placed in ``x``'s sharding on ``mesh`` where
    that is known and can hold ``y``'s shape (JAX splits axes evenly only), as
    numpy's 1-D functions leave every other axis where it was; else ``y`` as it is."""
    mesh = mesh if mesh is not None else mesh_of(x)
    spec, x_mesh = spec_of(x), mesh_of(x)
    if mesh is None or not mesh_shape_of(mesh) or spec is None or x_mesh is None \
            or x_mesh.shape != mesh.shape:
        return y
    sizes = dict(mesh.shape)
    for a, n in enumerate(y.shape):
        entry = names_of(spec[a] if a < len(spec) else None)
        if n % math.prod(sizes[m] for m in entry):
            return y
    return place(y, NamedSharding(mesh, spec))
