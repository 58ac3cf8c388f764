"""numpy-compatible transforms on sharded arrays: ``fftn``, ``ifftn``, ``rfftn``,
``irfftn``, their 1-D and 2-D forms (``fft``, ``ifft``, ``rfft``, ``irfft``, ``hfft``,
``ihfft``, ``fft2``, ``ifft2``, ``rfft2``, ``irfft2``), ``device_put``.

Each function is a thin wrapper: check the arguments with numpy's meaning, fetch the
cached plan for the input's shape, dtype, mesh and layout, and run it.
"""
from __future__ import annotations

import math
from typing import Sequence

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from . import split_fft
from .arguments import (check_axis, check_length, check_norm, complex_dtype, norm_scale,
                        normalize_axes, normalize_s)
from .autodiff import Variant
from .grid import grid_axes
from .layout import Layout, default_layout, layout_from_spec, names_of, split_entry
from .plan import ORIGINS, Plan, get_plan
from .sharding import devices_of, is_tracer, mesh_of, place, place_output, spec_of

__all__ = ["fftn", "ifftn", "rfftn", "irfftn", "fft", "ifft", "rfft", "irfft", "hfft", "ihfft",
           "fft2", "ifft2", "rfft2", "irfft2", "device_put"]


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


def _layout_of(x, mesh, shape=None, *, even: bool = True) -> Layout | None:
    """The layout ``x`` is in on ``mesh``, if it is known (a concrete array, or a
    tracer with an Explicit-axes type) and pfft can start from it; ``shape``: the
    logical shape when ``x`` holds a padded spectrum (``even=False``)."""
    grid = grid_axes(mesh)
    if mesh is None or not grid:
        return None
    spec, x_mesh = spec_of(x), mesh_of(x)
    if spec is None or x_mesh is None or x_mesh.shape != mesh.shape:
        return None
    return layout_from_spec(shape or x.shape, spec, grid, mesh.axis_names, even=even)


def _plan_for(x, axes, norm, mesh, kind: str = "c2c") -> Plan:
    layout = _layout_of(x, mesh) or default_layout(x.shape, axes, grid_axes(mesh))
    return get_plan(x.shape, complex_dtype(x.dtype), mesh, axes, norm, layout, kind=kind)


def _runs_back(forward: Plan, layout: Layout | None) -> bool:
    """Whether an inverse given an input in ``layout`` runs ``forward`` backwards: it
    must be where that plan leaves its output (``None``: unseen under ``jit`` on an Auto
    mesh, assumed so), and the plan must not have started replicated over a mesh axis
    (backwards it would all-gather)."""
    return layout is None or (layout == forward.chain.out_layout
                              and not forward.chain.in_layout.unused_mesh_axes)


def _inverse_plan_for(x, axes, norm, mesh) -> tuple[Plan, Variant]:
    """The plan and variant running ``ifftn`` on ``x``: a forward plan backwards when
    ``x`` is in (or, unseen under ``jit`` on an Auto mesh, assumed to be in) the
    layout that plan leaves its output in, unless it started replicated over a mesh
    axis (backwards it would all-gather); else a plan starting from ``x``'s layout.

    The forward plan is the one whose call last produced such an output (so
    ``ifftn(fftn(u))`` is in ``u``'s sharding whatever it was), else the one from the
    default layout."""
    cdtype = complex_dtype(x.dtype)
    grid = grid_axes(mesh)
    layout = _layout_of(x, mesh)
    origin = None if layout is None else ORIGINS.lookup("c2c", x.shape, x.dtype, mesh, axes,
                                                        spec_of(x))
    source = origin.chain.in_layout if origin is not None else default_layout(x.shape, axes, grid)
    forward = get_plan(x.shape, cdtype, mesh, axes, norm, source)
    if _runs_back(forward, layout):
        return forward, Variant(reverse=True, inverse=True)
    plan = get_plan(x.shape, cdtype, mesh, axes, norm, layout)
    return plan, Variant(reverse=False, inverse=True)


def _prepare(x, s, axes, norm, mesh, where: str):
    """Check the arguments as numpy does; the array, ``s``, ``axes``, norm and mesh."""
    x = _as_array(x)
    norm = check_norm(norm, where)
    if x.ndim == 0:
        raise ValueError(f"{where}: cannot transform a 0-d array")
    if axes is None and s is not None and len(s) > x.ndim:
        raise ValueError(f"{where}: s has {len(s)} entries but the array has {x.ndim} axes")
    axes = normalize_axes(axes, x.ndim, where, s)
    s = normalize_s(s, axes, x.shape, where) if s is not None else None
    complex_dtype(x.dtype)                               # reject bad dtypes early
    lengths = s or tuple(x.shape[a] for a in axes)
    for a, n in zip(axes, lengths):
        if n < 1:
            raise ValueError(f"{where}: invalid number of data points ({n}) along axis {a} "
                             f"of an array of shape {tuple(x.shape)}; pass s to zero-pad")
    if mesh is None:
        mesh = mesh_of(x)
    elif not isinstance(mesh, (Mesh, jax.sharding.AbstractMesh)):
        raise TypeError(f"{where}: mesh must be a jax.sharding.Mesh, got {type(mesh).__name__}")
    else:
        _check_same_devices(x, mesh, where)
    return x, s, axes, norm, mesh


def _check_same_devices(x, mesh, where: str) -> None:
    """An array sharded over several devices must be on ``mesh``'s devices."""
    x_mesh = None if is_tracer(x) else mesh_of(x)
    if x_mesh is None or x_mesh.size == 1:
        return                                           # numpy or one device: placed on mesh
    have, want = devices_of(x_mesh), devices_of(mesh)
    if have is not None and want is not None and have != want:
        raise ValueError(
            f"{where}: x is sharded over devices {sorted(d.id for d in have)} but mesh= holds "
            f"devices {sorted(d.id for d in want)}; move it first (pfft.device_put(x, mesh)) "
            f"or leave mesh= out to use x's own mesh")


def _transform(x, s, axes, norm, mesh, out_sharding, inverse: bool, where: str):
    x, s, axes, norm, mesh = _prepare(x, s, axes, norm, mesh, where)
    given = x
    resized_from = (ORIGINS.source("c2c", x.shape, x.dtype, mesh, axes, spec_of(x))
                    if inverse else None)
    x = _resize(x, s or tuple(x.shape[a] for a in axes), axes, mesh)
    spec = split_fft.split_spec(x, axes[0], mesh) if len(axes) == 1 else None
    if spec is not None:   # an axis no other axis can take the split of: done where it lies
        scale = norm_scale(norm, inverse, x.shape[axes[0]])
        y = split_fft.split_axis_fft(x, axes[0], inverse=inverse, scale=scale, mesh=mesh,
                                     spec=spec, where=where)
        return place_output(y, out_sharding, mesh, where)
    if inverse:
        plan, variant = _inverse_plan_for(x, axes, norm, mesh)
        y = _back_to_source(plan._call(x, variant), resized_from, out_sharding, mesh)
    else:
        y = _plan_for(x, axes, norm, mesh).forward(x)
        _record_source("c2c", y, given, x, mesh, axes)
    return place_output(y, out_sharding, mesh, where)


def _record_source(kind: str, y, given, resized, mesh, axes, kinds=None) -> None:
    """A forward call that resized its input (``s``) notes where the input was, so
    that the inverse resizing back returns there (:func:`_back_to_source`)."""
    if tuple(resized.shape) != tuple(given.shape):
        ORIGINS.record_source(kind, y, mesh, axes, given.shape, spec_of(given), kinds)


def _back_to_source(y, source, out_sharding, mesh):
    """``y``, placed in the sharding of the array its input spectrum was made from when
    the forward call resized it and ``y`` has that array's shape again: the round
    trip ``ifftn(fftn(u, s=big), s=u.shape)`` keeps ``u``'s type (a loop carry)."""
    if source is None or out_sharding is not None or tuple(y.shape) != source[0]:
        return y
    return place(y, NamedSharding(mesh, source[1]))


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

    Applied to the output of :func:`fftn`, the result comes back in the input's
    sharding.
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
    x, s, axes, norm, mesh = _prepare(x, s, axes, norm, mesh, where)
    if np.issubdtype(x.dtype, np.complexfloating):
        raise TypeError(f"{where}: x must be real, got dtype {x.dtype} (use the complex "
                        f"transform for complex input)")
    given = x
    x = _resize(x, s or tuple(x.shape[a] for a in axes), axes, mesh)
    y = _plan_for(x, axes, norm, mesh, kind="r2c").forward(x)
    _record_source("r2c", y, given, x, mesh, axes)
    return place_output(y, out_sharding, mesh, where)


def irfftn(x, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
           norm: str | None = "backward", *, mesh: Mesh | None = None,
           out_sharding: NamedSharding | PartitionSpec | None = None) -> jax.Array:
    """Inverse of :func:`rfftn`, with numpy's results.

    ``s`` gives the output lengths (default: the input's, with ``2 * (m - 1)`` on
    the last axis); the input is cropped or zero-padded to ``s`` on all but the
    last axis and to ``s[-1] // 2 + 1`` on the last, as numpy does. Applied to the
    output of :func:`rfftn` it comes back in the real input's sharding; it also
    takes the padded spectrum of a ``spectrum="padded"`` plan.

    Returns
    -------
    jax.Array
        float32 for complex64 input, float64 for complex128.
    """
    return _irfftn(x, s, axes, norm, mesh, out_sharding, "irfftn")


def _irfftn(x, s, axes, norm, mesh, out_sharding, where: str):
    x, s, axes, norm, mesh = _prepare(x, s, axes, norm, mesh, where)
    last = axes[-1]
    cdtype = complex_dtype(x.dtype)
    grid = grid_axes(mesh)
    # the real plan whose forward call last made a spectrum of this shape and sharding
    origin = ORIGINS.lookup("r2c", x.shape, x.dtype, mesh, axes, spec_of(x))
    resized_from = ORIGINS.source("r2c", x.shape, x.dtype, mesh, axes, spec_of(x))
    if origin is not None and origin.spectrum == "padded" and (
            s is None or tuple(s) == tuple(origin.shape[a] for a in axes)):
        # a padded spectrum (any axis may be padded): its plan knows the real shape
        plan = get_plan(origin.shape, cdtype, mesh, axes, norm, origin.chain.in_layout,
                        kind="r2c", spectrum="padded")
        return place_output(plan.backward(x), out_sharding, mesh, where)
    if s is None:
        s = tuple(x.shape[a] for a in axes[:-1]) + (2 * (x.shape[last] - 1),)
    if s[-1] < 1:
        raise ValueError(f"{where}: invalid number of output points {s[-1]} along axis "
                         f"{last} (the input has {x.shape[last]}); pass s")
    real_shape = list(x.shape)
    for a, n in zip(axes, s):
        real_shape[a] = n
    real_shape = tuple(real_shape)
    spectrum_shape = real_shape[:last] + (s[-1] // 2 + 1,) + real_shape[last + 1:]

    layout = _padded_layout(x, spectrum_shape, last, mesh)
    if layout is None:
        x = _resize(x, tuple(spectrum_shape[a] for a in axes), axes, mesh)
        layout = _layout_of(x, mesh)
    spectrum = "numpy" if layout is None or layout.is_even() else "padded"
    source = (origin.chain.in_layout if origin is not None and origin.shape == real_shape
              and origin.spectrum == spectrum else default_layout(real_shape, axes, grid))
    r2c = get_plan(real_shape, cdtype, mesh, axes, norm, source, kind="r2c", spectrum=spectrum)
    if _runs_back(r2c, layout):
        y = r2c.backward(x)
    else:
        c2r = get_plan(spectrum_shape, cdtype, mesh, axes, norm, layout, kind="c2r", n=s[-1])
        y = c2r._call(x, Variant(reverse=False, inverse=True))
    return place_output(_back_to_source(y, resized_from, out_sharding, mesh), out_sharding,
                      mesh, where)


def _padded_layout(x, spectrum_shape, last: int, mesh) -> Layout | None:
    """The layout of a padded spectrum (``spectrum="padded"``), if ``x`` is one: only
    the halved axis is padded, to a multiple of the devices splitting it."""
    if tuple(x.shape) == tuple(spectrum_shape):
        return None
    try:
        layout = _layout_of(x, mesh, spectrum_shape, even=False)
    except ValueError:
        return None
    if layout is None or layout.padded_shape != tuple(x.shape):
        return None
    return layout if all(layout.is_even(a) for a in range(x.ndim) if a != last) else None


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
    """
    x = _as_array(x)
    axes = normalize_axes(axes, x.ndim, "device_put")
    if mesh is None:
        return jax.device_put(x)
    layout = default_layout(x.shape, axes, grid_axes(mesh))
    return place(x, layout.sharding(mesh))


# -- numpy's 1-D and 2-D functions: the n-D transforms over one or two axes -----------

def _swap_norm(norm, where: str) -> str:
    """numpy's ``hfft``/``ihfft`` run the opposite direction's transform: its norm."""
    norm = check_norm(norm, where)
    return {"backward": "forward", "forward": "backward"}.get(norm, norm)


def _keep_layout(x, mesh, out_shape) -> NamedSharding | None:
    """``x``'s sharding on ``mesh`` where it is known and can hold an array of
    ``out_shape`` (JAX splits axes evenly only); else ``None``."""
    spec, x_mesh = spec_of(x), mesh_of(x)
    if mesh is None or not grid_axes(mesh) or spec is None or x_mesh is None \
            or x_mesh.shape != mesh.shape:
        return None
    sizes = dict(mesh.shape)
    for a, n in enumerate(out_shape):
        entry = names_of(spec[a] if a < len(spec) else None)
        if n % math.prod(sizes[m] for m in entry):
            return None
    return NamedSharding(mesh, spec)


def _one_axis(nd, x, n, axis, norm, mesh, out_sharding, where: str, *, real_in=False):
    """A 1-D transform: ``nd`` (one of the n-D transforms' bodies) over ``(axis,)``,
    then back into ``x``'s sharding (numpy's layout) where the result fits in it."""
    x = _as_array(x)
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
    x = _as_array(x)
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
    return _one_axis(_irfftn, _conj(a), n, axis, _swap_norm(norm, "hfft"), mesh,
                     out_sharding, "hfft")


def ihfft(a, n: int | None = None, axis: int = -1, norm: str | None = None, *,
          mesh: Mesh | None = None,
          out_sharding: NamedSharding | PartitionSpec | None = None) -> jax.Array:
    """Inverse of :func:`hfft` for a real array (:func:`numpy.fft.ihfft`):
    ``conj(rfft(a))`` with the opposite ``norm``; ``n//2 + 1`` points along ``axis``.
    Sharding as in :func:`rfft`."""
    y = _one_axis(_rfftn, a, n, axis, _swap_norm(norm, "ihfft"), mesh, out_sharding, "ihfft")
    return jnp.conj(y)


def _two(nd, x, s, axes, norm, mesh, out_sharding, where: str):
    """A 2-D transform: the n-D one over ``axes`` (``None``: as in ``fftn``, as numpy)."""
    return nd(x, s, axes, norm, mesh, out_sharding, where)


def fft2(a, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1),
         norm: str | None = None, *, mesh: Mesh | None = None,
         out_sharding: NamedSharding | PartitionSpec | None = None) -> jax.Array:
    """2-D FFT (:func:`numpy.fft.fft2`): :func:`fftn` over ``axes`` (default the last
    two), with its layouts: the result is left where the plan ends unless
    ``out_sharding`` asks for another sharding."""
    return _two(_c2c(False), a, s, axes, norm, mesh, out_sharding, "fft2")


def ifft2(a, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1),
          norm: str | None = None, *, mesh: Mesh | None = None,
          out_sharding: NamedSharding | PartitionSpec | None = None) -> jax.Array:
    """Inverse 2-D FFT (:func:`numpy.fft.ifft2`): :func:`ifftn` over ``axes``."""
    return _two(_c2c(True), a, s, axes, norm, mesh, out_sharding, "ifft2")


def rfft2(a, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1),
          norm: str | None = None, *, mesh: Mesh | None = None,
          out_sharding: NamedSharding | PartitionSpec | None = None) -> jax.Array:
    """2-D FFT of a real array (:func:`numpy.fft.rfft2`): :func:`rfftn` over ``axes``."""
    return _two(_rfftn, a, s, axes, norm, mesh, out_sharding, "rfft2")


def irfft2(a, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1),
           norm: str | None = None, *, mesh: Mesh | None = None,
           out_sharding: NamedSharding | PartitionSpec | None = None) -> jax.Array:
    """Inverse of :func:`rfft2` (:func:`numpy.fft.irfft2`): :func:`irfftn` over ``axes``."""
    return _two(_irfftn, a, s, axes, norm, mesh, out_sharding, "irfft2")
