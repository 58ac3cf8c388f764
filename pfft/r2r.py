"""scipy.fft-compatible real-to-real transforms on sharded arrays: ``dctn``, ``idctn``,
``dstn``, ``idstn``.

Each is a thin wrapper, as :mod:`pfft.api`'s transforms are: check the arguments with
scipy's meaning, fetch the cached plan (every transformed axis of one kind,
``kinds=("dct2", ...)``) for the input's shape, dtype, mesh and layout and run it (an
inverse: the plan :mod:`pfft.inverse` chooses).
The conventions (which type is which boundary condition, the wavenumbers) are in
``docs/r2r.md``; the transforms themselves in :mod:`pfft.engines.r2r`.
"""
from __future__ import annotations

import operator
from dataclasses import replace
from typing import NamedTuple, Sequence

import jax
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from .arguments import check_orthogonalize, check_overwrite_x, normalize_axes, r2r_dtype
from .inputs import as_array, prepare, resize, start_layout
from .inverse import inverse
from .mesh_plan import get_plan
from .problem import Problem
from .sharding import place_output

__all__ = ["dctn", "idctn", "dstn", "idstn"]

def _check_type(type, family: str, where: str) -> int:
    try:
        t = operator.index(type)
    except TypeError:
        raise TypeError(f"{where}: type must be an int (1, 2, 3 or 4), got {type!r}") from None
    if t not in (1, 2, 3, 4):
        raise ValueError(f"{where}: invalid {family.upper()} type {t}; scipy's types are 1, "
                         f"2, 3 and 4")
    return t


def _check_workers(workers, where: str) -> None:
    """scipy's ``workers`` is accepted and has no effect (pfft's engine chooses its
    threads)."""
    if workers is not None:
        try:
            w = operator.index(workers)
        except TypeError:
            raise TypeError(f"{where}: workers must be an int or None, got {workers!r}") from None
        if w == 0:
            raise ValueError(f"{where}: workers must not be 0")


def _scalar_to_tuple(value):
    """scipy's ``s=5``/``axes=1``: one int for a single axis."""
    if value is None or isinstance(value, (str, bytes)):
        return value
    try:
        return (operator.index(value),)
    except TypeError:
        return value


class _Function(NamedTuple):
    """One of the four transforms: its name (in errors), every axis's kind (scipy's
    family and type: ``"dct2"``), whether it is the inverse, and scipy's
    ``overwrite_x``."""

    where: str
    kind: str
    inverse: bool
    overwrite_x: bool


#: each transform's family and direction, by its name
_FUNCTIONS = {"dctn": ("dct", False), "idctn": ("dct", True), "dstn": ("dst", False),
              "idstn": ("dst", True)}


def _function(where: str, type, overwrite_x, workers) -> _Function:
    """The transform ``where`` (``"dctn"`` ... ``"idstn"``) of scipy's ``type``, its
    ``overwrite_x`` and ``workers`` checked."""
    family, inverse = _FUNCTIONS[where]
    t = _check_type(type, family, where)
    _check_workers(workers, where)
    return _Function(where, f"{family}{t}", inverse, check_overwrite_x(overwrite_x, where))


def _r2rn(x, fn: _Function, s, axes, norm, orthogonalize, mesh, out_sharding) -> jax.Array:
    """The four transforms' body: scipy's ``s`` and ``axes``, the cached plan (an
    inverse's from :mod:`pfft.inverse`), the result where ``out_sharding`` asks."""
    where = fn.where
    orth = check_orthogonalize(orthogonalize, where)
    x = as_array(x)
    s, axes = _scalar_to_tuple(s), _scalar_to_tuple(axes)   # scipy takes one int for each
    if s is not None and x.ndim:
        # scipy's -1 in s: keep that axis's length
        try:
            s = tuple(operator.index(n) for n in s)
        except TypeError:
            raise TypeError(f"{where}: s must be a sequence of ints, got {s!r}") from None
        if axes is None and len(s) > x.ndim:
            raise ValueError(f"{where}: s has {len(s)} entries but the array has {x.ndim} axes")
        along = normalize_axes(axes, x.ndim, where, s)
        if len(along) == len(s):
            s = tuple(x.shape[a] if n == -1 else n for a, n in zip(along, s))
    x, s, axes, norm, mesh = prepare(x, s, axes, norm, mesh, where)
    x = resize(x, s or tuple(x.shape[a] for a in axes), axes, mesh)
    problem = Problem(x.shape, r2r_dtype(x.dtype), axes, norm, kinds=(fn.kind,) * len(axes),
                      orthogonalize=orth, overwrite_x=fn.overwrite_x)
    if fn.inverse:
        y = inverse(x, problem, mesh, out_sharding)
    else:
        y = get_plan(replace(problem, in_layout=start_layout(x, axes, mesh)), mesh).forward(x)
    return place_output(y, out_sharding, mesh, where)


_PARAMS = """
    Parameters
    ----------
    x
        numpy array, single-device or sharded ``jax.Array`` (inside or outside ``jit``);
        real (float32 stays float32, float64 float64, integers become the default
        float) or complex (real and imaginary parts transformed alike, as scipy does).
    type
        1, 2, 3 or 4 (scipy's definitions).
    s
        Length of each transformed axis: the input is cropped or zero-padded to it
        first (``-1`` keeps an axis's length). Default: the input's.
    axes
        Axes to transform (default all; the last ``len(s)`` with ``s``).
    norm
        ``"backward"`` (default), ``"ortho"`` or ``"forward"``, as in scipy, with
        ``N = 2(n - 1)`` (DCT-I), ``2(n + 1)`` (DST-I) or ``2n`` per axis.
    overwrite_x
        ``True``: the transform may write over ``x`` where ``x`` is donated
        (``jax.jit(..., donate_argnums=...)``), a block of memory less; a kept ``x``
        is copied first and left as it was (:func:`pfft.plan`'s ``overwrite_x``).
    workers
        Accepted for scipy's signature; no effect (pfft's engine chooses its
        threads). ``workers=0`` is an error, as in scipy.
    orthogonalize
        scipy's: weight the end points so that the ``"ortho"`` transform is an
        orthogonal matrix (default: ``norm == "ortho"``).
    mesh
        The device mesh; by default ``x``'s (single device if it has none). Inside
        ``jit`` pass it unless ``x`` has an Explicit-axes type.
    out_sharding
        Where to put the result (a ``NamedSharding``, or a ``PartitionSpec`` on
        ``mesh``). By default it stays in the pencil the plan ends in.

    Returns
    -------
    jax.Array
        scipy's shape and values; the dtype of the (real or complex) input's
        precision.

    Raises
    ------
    ValueError
        A type other than 1-4, a bad ``norm``, ``s`` or ``axes``, a 0-d array, a
        length below 1 or a DCT-I of one point (also a ``RuntimeError`` there, as
        scipy raises).
    TypeError
        A non-integer ``type``, ``s`` or ``axes``, a non-numeric dtype.
"""


def _doc(summary: str) -> str:
    return summary + "\n" + _PARAMS


def dctn(x, type: int = 2, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
         norm: str | None = None, overwrite_x: bool = False, workers: int | None = None, *,
         orthogonalize: bool | None = None, mesh: Mesh | None = None,
         out_sharding: NamedSharding | PartitionSpec | None = None) -> jax.Array:
    return _r2rn(x, _function("dctn", type, overwrite_x, workers), s, axes, norm,
                 orthogonalize, mesh, out_sharding)


def idctn(x, type: int = 2, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
          norm: str | None = None, overwrite_x: bool = False, workers: int | None = None, *,
          orthogonalize: bool | None = None, mesh: Mesh | None = None,
          out_sharding: NamedSharding | PartitionSpec | None = None) -> jax.Array:
    return _r2rn(x, _function("idctn", type, overwrite_x, workers), s, axes, norm,
                 orthogonalize, mesh, out_sharding)


def dstn(x, type: int = 2, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
         norm: str | None = None, overwrite_x: bool = False, workers: int | None = None, *,
         orthogonalize: bool | None = None, mesh: Mesh | None = None,
         out_sharding: NamedSharding | PartitionSpec | None = None) -> jax.Array:
    return _r2rn(x, _function("dstn", type, overwrite_x, workers), s, axes, norm,
                 orthogonalize, mesh, out_sharding)


def idstn(x, type: int = 2, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
          norm: str | None = None, overwrite_x: bool = False, workers: int | None = None, *,
          orthogonalize: bool | None = None, mesh: Mesh | None = None,
          out_sharding: NamedSharding | PartitionSpec | None = None) -> jax.Array:
    return _r2rn(x, _function("idstn", type, overwrite_x, workers), s, axes, norm,
                 orthogonalize, mesh, out_sharding)


dctn.__doc__ = _doc(
    """N-dimensional discrete cosine transform of a (possibly sharded) array, with
    :func:`scipy.fft.dctn`'s results.

    Distributed like :func:`pfft.fftn`: each axis is transformed where it is whole,
    all-to-alls move the grid's split between axes, no all-gather. Differentiable
    (``grad``, ``vjp``, ``jvp``, ``vmap``): a gradient is one transposed transform in
    the same sharding. Round trip: :func:`idctn` of the result comes back in ``x``'s
    sharding (for ``x`` in the default layout, else with ``out_sharding``: the rule
    of :func:`pfft.ifftn`).

    Examples
    --------
    >>> mesh = pfft.make_mesh(4)                                          # doctest: +SKIP
    >>> y = pfft.dctn(pfft.device_put(np.ones((8, 8, 8)), mesh), norm="ortho")  # doctest: +SKIP
    """)
idctn.__doc__ = _doc(
    """Inverse of :func:`dctn` (:func:`scipy.fft.idctn`): scipy's ``idctn`` with the same
    ``type``, ``norm`` and ``orthogonalize`` (an inverse DCT-II is a scaled DCT-III).""")
dstn.__doc__ = _doc(
    """N-dimensional discrete sine transform (:func:`scipy.fft.dstn`); see :func:`dctn`.""")
idstn.__doc__ = _doc(
    """Inverse of :func:`dstn` (:func:`scipy.fft.idstn`); see :func:`idctn`.""")
