"""numpy-compatible transforms on sharded arrays: ``fftn``, ``ifftn``, ``rfftn``,
``irfftn``, their 1-D and 2-D forms (``fft``, ``ifft``, ``rfft``, ``irfft``, ``hfft``,
``ihfft``, ``fft2``, ``ifft2``, ``rfft2``, ``irfft2``), ``device_put``.

Each function is a thin wrapper, as in ``jax.numpy.fft``: check the arguments with
numpy's meaning (:mod:`pfft.inputs`), fetch the cached plan for the input's shape,
dtype, mesh and layout and run it (an inverse: the plan :mod:`pfft.inverse` chooses),
and place the result where ``out_sharding`` asks.
"""
from __future__ import annotations

import warnings
from typing import NamedTuple, Sequence

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from . import split_fft
from .arguments import (NUMPY_REAL_INVERSE_RULES, as_int_tuple, check_call_options, check_norm,
                        complex_dtype, norm_scale, normalize_axes, swapped_norm)
from .grid import mesh_shape_of
from .inputs import as_array, keep_layout, prepare, prepare_one_axis, resize, start_layout
from .inverse import comes_back, inverse as run_inverse, inverse_real
from .layout import default_layout
from .mesh_plan import Plan, ReplicationWarning, get_plan, idle_mesh_axes_text
from .problem import Problem
from .sharding import check_mesh, place, place_output

__all__ = ["fftn", "ifftn", "rfftn", "irfftn", "fft", "ifft", "rfft", "irfft", "hfft", "ihfft",
           "fft2", "ifft2", "rfft2", "irfft2", "hfftn", "ihfftn", "hfft2", "ihfft2", "device_put"]


class _Call(NamedTuple):
    """One call of a public transform: its name (in errors), its direction, and
    scipy's ``overwrite_x`` (the plan's)."""

    where: str
    inverse: bool = False
    overwrite_x: bool = False


def _call(where: str, inverse: bool, out, overwrite_x, workers, plan) -> _Call:
    """The call of public function ``where``, numpy's ``out`` and scipy's keywords
    checked (:func:`pfft.arguments.check_call_options`)."""
    return _Call(where, inverse, check_call_options(where, out=out, overwrite_x=overwrite_x,
                                                    workers=workers, plan=plan))


def _forward_plan(x, axes, norm, mesh, kind: str = "c2c", overwrite_x: bool = False) -> Plan:
    """The plan a forward transform of ``x`` runs (from :func:`pfft.inputs.start_layout`)."""
    return get_plan(Problem(x.shape, complex_dtype(x.dtype), axes, norm, kind,
                            overwrite_x=overwrite_x,
                            in_layout=start_layout(x, axes, mesh)), mesh)


def _transform(x, s, axes, norm, mesh, out_sharding, call: _Call):
    """numpy's ``fftn`` or ``ifftn`` (``call.inverse``): the n-D complex transforms'
    body."""
    where, inverse = call.where, call.inverse
    x, s, axes, norm, mesh = prepare(x, s, axes, norm, mesh, where)
    if len(set(axes)) != len(axes):
        return _axis_by_axis("ifft" if inverse else "fft", x, s, axes, norm, mesh,
                             out_sharding, call)
    x = resize(x, s or tuple(x.shape[a] for a in axes), axes, mesh)
    spec = split_fft.split_spec(x, axes[0], mesh) if len(axes) == 1 else None
    if spec is not None:   # an axis no other axis can take the split of: done where it lies
        scale = norm_scale(norm, inverse, x.shape[axes[0]])
        y = split_fft.split_axis_fft(x, axes[0], inverse=inverse, scale=scale, mesh=mesh,
                                     spec=spec, where=where)
    elif inverse:
        y = run_inverse(x, Problem(x.shape, complex_dtype(x.dtype), axes, norm,
                                   overwrite_x=call.overwrite_x), mesh, out_sharding)
    else:
        y = _forward_plan(x, axes, norm, mesh, overwrite_x=call.overwrite_x).forward(x)
    return place_output(y, out_sharding, mesh, where)


def _axis_by_axis(kind: str, x, s, axes, norm, mesh, out_sharding, call: _Call):
    """numpy's n-D transform over ``axes`` that name an axis more than once: one 1-D
    transform per entry, in numpy's order (``fftn``/``ifftn``: last entry first;
    ``rfftn``: the real FFT of the last entry, then the others last first;
    ``irfftn``: the others first entry first, then the real inverse of the last),
    each entry's length from ``s`` (cooked: numpy reads it off the input before the
    first transform)."""
    if s is None:
        s = tuple(x.shape[a] for a in axes)
        if kind == "irfft":
            s = s[:-1] + (2 * (x.shape[axes[-1]] - 1),)
    one = {"fft": (_transform, False), "ifft": (_transform, True), "rfft": (_rfftn, False),
           "irfft": (_irfftn, True)}
    if kind == "rfft":
        order = [("rfft", len(axes) - 1)] + [("fft", i) for i in reversed(range(len(axes) - 1))]
    elif kind == "irfft":
        order = [("ifft", i) for i in range(len(axes) - 1)] + [("irfft", len(axes) - 1)]
    else:
        order = [(kind, i) for i in reversed(range(len(axes)))]
    for step, i in order:
        body, inverse = one[step]
        x = body(x, (s[i],), (axes[i],), norm, mesh, None, call._replace(inverse=inverse))
    return place_output(x, out_sharding, mesh, call.where)


_EXTRAS_DOC = """
    out
        numpy's ``out``: ``None`` only (a JAX array cannot be written into; the
        result is returned). Pass it by keyword: scipy's fifth positional argument
        is ``overwrite_x``.
    overwrite_x, workers, plan
        scipy's keywords: ``overwrite_x=True`` lets the transform write over ``x``
        where ``x`` is donated (``pfft.plan``'s ``overwrite_x``), ``workers`` has no
        effect (pfft's engine chooses its threads), ``plan`` must be ``None``."""


def fftn(x, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
         norm: str | None = None, out=None, *, overwrite_x: bool = False,
         workers: int | None = None, plan=None, mesh: Mesh | None = None,
         out_sharding: NamedSharding | PartitionSpec | None = None) -> jax.Array:
    """N-dimensional FFT of a (possibly sharded) array, with numpy's results.

    Parameters
    ----------
    x
        numpy array, single-device or sharded ``jax.Array`` (inside or outside ``jit``).
    s, axes, norm
        As in :func:`numpy.fft.fftn` (numpy 2): by default every axis is transformed
        (the last ``len(s)`` with ``s``, with numpy's ``DeprecationWarning``); ``-1``
        in ``s`` keeps an axis's length; an axis named twice is transformed twice;
        axes not in ``axes`` are batch axes. One int for each is scipy's form.
    mesh
        The device mesh; by default the mesh of ``x``'s sharding (single device if
        it has none). Inside ``jit`` pass it unless ``x`` has an Explicit-axes type.
    out_sharding
        Where to put the result. By default it stays in the pencil the plan ends in
        (no transposes back): for the default input pencil ``P('x', 'y', None)`` that is
        ``P(None, 'x', 'y')``.{extras}

    Returns
    -------
    jax.Array
        numpy's shape and axis order; complex64 or complex128.

    Examples
    --------
    >>> mesh = pfft.make_mesh(4)                                      # doctest: +SKIP
    >>> k = pfft.fftn(pfft.device_put(np.ones((8, 8, 8)), mesh))      # doctest: +SKIP
    """
    call = _call("fftn", False, out, overwrite_x, workers, plan)
    return _transform(x, s, axes, norm, mesh, out_sharding, call)


def ifftn(x, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
          norm: str | None = None, out=None, *, overwrite_x: bool = False,
          workers: int | None = None, plan=None, mesh: Mesh | None = None,
          out_sharding: NamedSharding | PartitionSpec | None = None) -> jax.Array:
    """Inverse N-dimensional FFT with numpy's results; see :func:`fftn`.

    Applied to the output of :func:`fftn`, it runs that plan backwards: the result
    comes back in the input's sharding for an input in the default layout, and for
    any with ``out_sharding`` its sharding (:mod:`pfft.inverse` has the rule).
    """
    call = _call("ifftn", True, out, overwrite_x, workers, plan)
    return _transform(x, s, axes, norm, mesh, out_sharding, call)


def rfftn(x, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
          norm: str | None = None, out=None, *, overwrite_x: bool = False,
          workers: int | None = None, plan=None, mesh: Mesh | None = None,
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
    s, axes, norm, mesh, out_sharding, out, overwrite_x, workers, plan
        As in :func:`fftn`.

    Returns
    -------
    jax.Array
        complex64 for float32 (and smaller) input, complex128 for float64.
    """
    call = _call("rfftn", False, out, overwrite_x, workers, plan)
    return _rfftn(x, s, axes, norm, mesh, out_sharding, call)


def _rfftn(x, s, axes, norm, mesh, out_sharding, call: _Call):
    """numpy's ``rfftn``: the real forward transforms' body."""
    where = call.where
    x, s, axes, norm, mesh = prepare(x, s, axes, norm, mesh, where)
    if np.issubdtype(x.dtype, np.complexfloating):
        raise TypeError(f"{where}: x must be real, got dtype {x.dtype} (use the complex "
                        f"transform for complex input)")
    if len(set(axes)) != len(axes):
        return _axis_by_axis("rfft", x, s, axes, norm, mesh, out_sharding, call)
    x = resize(x, s or tuple(x.shape[a] for a in axes), axes, mesh)
    y = _forward_plan(x, axes, norm, mesh, kind="r2c",
                      overwrite_x=call.overwrite_x).forward(x)
    return place_output(y, out_sharding, mesh, where)


def irfftn(x, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
           norm: str | None = None, out=None, *, overwrite_x: bool = False,
           workers: int | None = None, plan=None, mesh: Mesh | None = None,
           out_sharding: NamedSharding | PartitionSpec | None = None) -> jax.Array:
    """Inverse of :func:`rfftn`, with numpy's results.

    ``s`` gives the output lengths (default: the input's, with ``2 * (m - 1)`` on
    the last axis; ``-1`` is the input's length, as numpy reads it); the input is
    cropped or zero-padded to ``s`` on all but the last axis and to
    ``s[-1] // 2 + 1`` on the last, as numpy does. Applied to the output of
    :func:`rfftn` it comes back in the real input's sharding as :func:`ifftn` does;
    with ``s`` it also takes the padded spectrum of a ``spectrum="padded"`` plan
    (without, only inside ``jit`` on an Auto mesh: :mod:`pfft.inverse`). The other
    arguments as in :func:`fftn`.

    Returns
    -------
    jax.Array
        float32 for complex64 input, float64 for complex128.
    """
    call = _call("irfftn", True, out, overwrite_x, workers, plan)
    return _numpy_half(_irfftn(x, s, axes, norm, mesh, out_sharding, call), x, s, axes)


def _numpy_half(y, x, s=None, axes=(-1,)):
    """numpy's dtype for the real result of real half-precision input ``x``: float16
    where one axis is transformed (numpy's ``irfft`` and ``hfft``, and ``irfftn``/
    ``irfft2`` over one axis; computed in float32 and rounded once), else float32
    (numpy's complex FFTs of the other axes come first). scipy and ``jnp`` give
    float32 always, as :func:`hfftn` does."""
    x = as_array(x)
    if np.dtype(x.dtype) != np.float16:
        return y
    count = (len(as_int_tuple(axes, "axes", "")) if axes is not None
             else len(as_int_tuple(s, "s", "")) if s is not None else x.ndim)
    return y.astype(x.dtype) if count == 1 else y


def _irfftn(x, s, axes, norm, mesh, out_sharding, call: _Call):
    """numpy's ``irfftn``: the real inverse transforms' body."""
    where = call.where
    x, s, axes, norm, mesh = prepare(x, s, axes, norm, mesh, where, NUMPY_REAL_INVERSE_RULES)
    if len(set(axes)) != len(axes):
        return _axis_by_axis("irfft", x, s, axes, norm, mesh, out_sharding, call)
    y = inverse_real(x, s, axes, norm, mesh, out_sharding, where)
    return place_output(y, out_sharding, mesh, where)


def hfftn(x, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
          norm: str | None = None, out=None, *, overwrite_x: bool = False,
          workers: int | None = None, plan=None, mesh: Mesh | None = None,
          out_sharding: NamedSharding | PartitionSpec | None = None) -> jax.Array:
    """N-dimensional FFT of a Hermitian-symmetric signal given by its half
    (:func:`scipy.fft.hfftn`): a real result of shape ``s`` (default the input's,
    ``2 * (m - 1)`` on the last axis).

    As scipy computes it: :func:`irfftn` of ``conj(x)`` with the opposite ``norm``
    (``"backward"`` and ``"forward"`` swap, ``"ortho"`` stays). Arguments and
    sharding as in :func:`irfftn`.
    """
    call = _call("hfftn", True, out, overwrite_x, workers, plan)
    return _irfftn(_conj(x), s, axes, swapped_norm(check_norm(norm, "hfftn")), mesh,
                   out_sharding, call)


def ihfftn(x, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
           norm: str | None = None, out=None, *, overwrite_x: bool = False,
           workers: int | None = None, plan=None, mesh: Mesh | None = None,
           out_sharding: NamedSharding | PartitionSpec | None = None) -> jax.Array:
    """Inverse of :func:`hfftn` for a real array (:func:`scipy.fft.ihfftn`):
    ``conj(rfftn(x))`` with the opposite ``norm``. Arguments and sharding as in
    :func:`rfftn`."""
    call = _call("ihfftn", False, out, overwrite_x, workers, plan)
    return jnp.conj(_rfftn(x, s, axes, swapped_norm(check_norm(norm, "ihfftn")), mesh,
                           out_sharding, call))


def device_put(x, mesh: Mesh | None, *, axes: Sequence[int] | None = None) -> jax.Array:
    """Place ``x`` on ``mesh`` in the default layout (:func:`pfft.layout.default_layout`),
    where ``pfft.fftn`` plans for it to start: split over every mesh axis wherever some
    even layout is.

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
        Where no even layout splits ``x`` over every mesh axis: ``x`` is then
        replicated over the idle ones, and their devices would repeat each other's
        work. The warning names those mesh axes, ``x``'s shape, why and what to do.
    """
    x = as_array(x)
    axes = normalize_axes(axes, x.ndim, "device_put")
    check_mesh(mesh, "device_put")
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

def _one_axis(body, x, n, axis, norm, mesh, out_sharding, call: _Call):
    """A 1-D transform: ``body`` (one of the n-D transforms' bodies) over ``(axis,)``,
    then back into ``x``'s sharding (numpy's layout) where the result fits in it."""
    x, axis, n = prepare_one_axis(x, n, axis, call.where)
    check_norm(norm, call.where)
    y = body(x, None if n is None else (n,), (axis,), norm, mesh, out_sharding, call)
    if out_sharding is not None or (body is _irfftn
                                    and comes_back(x, y, (axis,), norm, mesh)):
        return y            # irfft(rfft(u), n) stays in u's sharding, where the inverse put it
    return keep_layout(y, x, mesh)


def _conj(x):
    x = as_array(x)
    return np.conj(x) if isinstance(x, np.ndarray) else jnp.conj(x)


_ONE_AXIS_DOC = """

    Parameters
    ----------
    a
        numpy array, single-device or sharded ``jax.Array`` (inside or outside ``jit``).
    n, axis, norm
        As in :func:`numpy.fft.fft`.
    out, overwrite_x, workers, plan
        numpy's ``out`` (``None`` only) and scipy's keywords, as in :func:`pfft.fftn`.
    mesh
        As in :func:`pfft.fftn`.
    out_sharding
        Where to put the result (a ``NamedSharding`` or ``PartitionSpec`` on ``mesh``);
        default ``a``'s own sharding where it can hold the result.

    Returns
    -------
    jax.Array
        numpy's shape and dtype.

    Raises
    ------
    numpy.exceptions.AxisError
        ``axis`` out of range (a ``ValueError`` and an ``IndexError``).
    ValueError
        ``n < 1``, a bad ``norm``, a 0-d array.
    TypeError
        A non-integer ``axis`` or ``n``, a non-numeric dtype, ``out`` given.
"""


def fft(a, n: int | None = None, axis: int = -1, norm: str | None = None, out=None, *,
        overwrite_x: bool = False, workers: int | None = None, plan=None,
        mesh: Mesh | None = None,
        out_sharding: NamedSharding | PartitionSpec | None = None) -> jax.Array:
    """1-D FFT of a (possibly sharded) array along ``axis``, with numpy's results.

    ``n`` crops or zero-pads the axis first, as :func:`numpy.fft.fft` does. Along a
    split axis the transform is an exchange that makes the axis whole, a local FFT
    and (by default) an exchange back: the result keeps ``a``'s sharding wherever
    that can hold it (JAX splits only evenly; an axis that ``n`` resizes to a length
    its devices do not divide stays where the plan leaves it). Along a whole axis it
    is a local FFT, no communication.
    """
    call = _call("fft", False, out, overwrite_x, workers, plan)
    return _one_axis(_transform, a, n, axis, norm, mesh, out_sharding, call)


def ifft(a, n: int | None = None, axis: int = -1, norm: str | None = None, out=None, *,
         overwrite_x: bool = False, workers: int | None = None, plan=None,
         mesh: Mesh | None = None,
         out_sharding: NamedSharding | PartitionSpec | None = None) -> jax.Array:
    """Inverse 1-D FFT with numpy's results (:func:`numpy.fft.ifft`); see :func:`fft`."""
    call = _call("ifft", True, out, overwrite_x, workers, plan)
    return _one_axis(_transform, a, n, axis, norm, mesh, out_sharding, call)


def rfft(a, n: int | None = None, axis: int = -1, norm: str | None = None, out=None, *,
         overwrite_x: bool = False, workers: int | None = None, plan=None,
         mesh: Mesh | None = None,
         out_sharding: NamedSharding | PartitionSpec | None = None) -> jax.Array:
    """1-D FFT of a real array (:func:`numpy.fft.rfft`): ``axis`` becomes ``n//2 + 1``
    points.

    Communication and sharding as in :func:`fft`: the result keeps ``a``'s sharding
    where it can hold it, which it cannot where ``axis`` itself was split (``n//2 + 1``
    points do not divide evenly): the halved axis is then left whole and the
    split moved to the axis the plan chose. Complex input is a ``TypeError``.
    """
    call = _call("rfft", False, out, overwrite_x, workers, plan)
    return _one_axis(_rfftn, a, n, axis, norm, mesh, out_sharding, call)


def irfft(a, n: int | None = None, axis: int = -1, norm: str | None = None, out=None, *,
          overwrite_x: bool = False, workers: int | None = None, plan=None,
          mesh: Mesh | None = None,
          out_sharding: NamedSharding | PartitionSpec | None = None) -> jax.Array:
    """Inverse of :func:`rfft` (:func:`numpy.fft.irfft`): ``n`` real points along
    ``axis`` (default ``2 * (m - 1)`` for ``m`` input points; pass ``n`` for odd
    lengths). Sharding as in :func:`fft`."""
    call = _call("irfft", True, out, overwrite_x, workers, plan)
    return _numpy_half(_one_axis(_irfftn, a, n, axis, norm, mesh, out_sharding, call), a)


def hfft(a, n: int | None = None, axis: int = -1, norm: str | None = None, out=None, *,
         overwrite_x: bool = False, workers: int | None = None, plan=None,
         mesh: Mesh | None = None,
         out_sharding: NamedSharding | PartitionSpec | None = None) -> jax.Array:
    """FFT of a Hermitian-symmetric signal given by its first half
    (:func:`numpy.fft.hfft`): a real result of ``n`` points (default ``2 * (m - 1)``).

    As numpy computes it: :func:`irfft` of ``conj(a)`` with the opposite ``norm``
    (``"backward"`` and ``"forward"`` swap, ``"ortho"`` stays). Sharding as in
    :func:`fft`.
    """
    call = _call("hfft", True, out, overwrite_x, workers, plan)
    y = _one_axis(_irfftn, _conj(a), n, axis, swapped_norm(check_norm(norm, "hfft")),
                  mesh, out_sharding, call)
    return _numpy_half(y, a)


def ihfft(a, n: int | None = None, axis: int = -1, norm: str | None = None, out=None, *,
          overwrite_x: bool = False, workers: int | None = None, plan=None,
          mesh: Mesh | None = None,
          out_sharding: NamedSharding | PartitionSpec | None = None) -> jax.Array:
    """Inverse of :func:`hfft` for a real array (:func:`numpy.fft.ihfft`):
    ``conj(rfft(a))`` with the opposite ``norm``; ``n//2 + 1`` points along ``axis``.
    Sharding as in :func:`rfft`."""
    call = _call("ihfft", False, out, overwrite_x, workers, plan)
    y = _one_axis(_rfftn, a, n, axis, swapped_norm(check_norm(norm, "ihfft")), mesh,
                  out_sharding, call)
    return jnp.conj(y)


for _f in (fft, ifft, rfft, irfft, hfft, ihfft):
    _f.__doc__ += _ONE_AXIS_DOC


def fft2(a, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1),
         norm: str | None = None, out=None, *, overwrite_x: bool = False,
         workers: int | None = None, plan=None, mesh: Mesh | None = None,
         out_sharding: NamedSharding | PartitionSpec | None = None) -> jax.Array:
    """2-D FFT (:func:`numpy.fft.fft2`): :func:`fftn` over ``axes`` (default the last
    two), with its arguments and layouts: the result is left where the plan ends
    unless ``out_sharding`` asks for another sharding."""
    call = _call("fft2", False, out, overwrite_x, workers, plan)
    return _transform(a, s, axes, norm, mesh, out_sharding, call)


def ifft2(a, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1),
          norm: str | None = None, out=None, *, overwrite_x: bool = False,
          workers: int | None = None, plan=None, mesh: Mesh | None = None,
          out_sharding: NamedSharding | PartitionSpec | None = None) -> jax.Array:
    """Inverse 2-D FFT (:func:`numpy.fft.ifft2`): :func:`ifftn` over ``axes``."""
    call = _call("ifft2", True, out, overwrite_x, workers, plan)
    return _transform(a, s, axes, norm, mesh, out_sharding, call)


def rfft2(a, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1),
          norm: str | None = None, out=None, *, overwrite_x: bool = False,
          workers: int | None = None, plan=None, mesh: Mesh | None = None,
          out_sharding: NamedSharding | PartitionSpec | None = None) -> jax.Array:
    """2-D FFT of a real array (:func:`numpy.fft.rfft2`): :func:`rfftn` over ``axes``."""
    call = _call("rfft2", False, out, overwrite_x, workers, plan)
    return _rfftn(a, s, axes, norm, mesh, out_sharding, call)


def irfft2(a, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1),
           norm: str | None = None, out=None, *, overwrite_x: bool = False,
           workers: int | None = None, plan=None, mesh: Mesh | None = None,
           out_sharding: NamedSharding | PartitionSpec | None = None) -> jax.Array:
    """Inverse of :func:`rfft2` (:func:`numpy.fft.irfft2`): :func:`irfftn` over ``axes``."""
    call = _call("irfft2", True, out, overwrite_x, workers, plan)
    return _numpy_half(_irfftn(a, s, axes, norm, mesh, out_sharding, call), a, s, axes)


def hfft2(x, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1),
          norm: str | None = None, out=None, *, overwrite_x: bool = False,
          workers: int | None = None, plan=None, mesh: Mesh | None = None,
          out_sharding: NamedSharding | PartitionSpec | None = None) -> jax.Array:
    """2-D FFT of a Hermitian-symmetric signal (:func:`scipy.fft.hfft2`):
    :func:`hfftn` over ``axes``."""
    call = _call("hfft2", True, out, overwrite_x, workers, plan)
    return _irfftn(_conj(x), s, axes, swapped_norm(check_norm(norm, "hfft2")), mesh,
                   out_sharding, call)


def ihfft2(x, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1),
           norm: str | None = None, out=None, *, overwrite_x: bool = False,
           workers: int | None = None, plan=None, mesh: Mesh | None = None,
           out_sharding: NamedSharding | PartitionSpec | None = None) -> jax.Array:
    """Inverse of :func:`hfft2` (:func:`scipy.fft.ihfft2`): :func:`ihfftn` over ``axes``."""
    call = _call("ihfft2", False, out, overwrite_x, workers, plan)
    return jnp.conj(_rfftn(x, s, axes, swapped_norm(check_norm(norm, "ihfft2")), mesh,
                           out_sharding, call))


fftn.__doc__ = fftn.__doc__.replace("{extras}", _EXTRAS_DOC)
