"""scipy.fft-compatible real-to-real transforms on sharded arrays: ``dctn``, ``idctn``,
``dstn``, ``idstn`` and the 1-D ``dct``, ``idct``, ``dst``, ``idst``.

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

from .arguments import (SCIPY_RULES, check_orthogonalize, check_overwrite_x, check_workers,
                        r2r_dtype)
from .inputs import keep_layout, prepare, prepare_one_axis, resize, start_layout
from .inverse import inverse
from .mesh_plan import get_plan
from .problem import Problem
from .sharding import place_output

__all__ = ["dctn", "idctn", "dstn", "idstn", "dct", "idct", "dst", "idst"]

def _check_type(type, family: str, where: str) -> int:
    try:
        t = operator.index(type)
    except TypeError:
        raise TypeError(f"{where}: type must be an int (1, 2, 3 or 4), got {type!r}") from None
    if t not in (1, 2, 3, 4):
        raise ValueError(f"{where}: invalid {family.upper()} type {t}; scipy's types are 1, "
                         f"2, 3 and 4")
    return t


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
              "idstn": ("dst", True), "dct": ("dct", False), "idct": ("dct", True),
              "dst": ("dst", False), "idst": ("dst", True)}


def _function(where: str, type, overwrite_x, workers) -> _Function:
    """The transform ``where`` (``"dctn"`` ... ``"idstn"``) of scipy's ``type``, its
    ``overwrite_x`` and ``workers`` checked."""
    family, inverse = _FUNCTIONS[where]
    t = _check_type(type, family, where)
    check_workers(workers, where)
    return _Function(where, f"{family}{t}", inverse, check_overwrite_x(overwrite_x, where))


def _r2rn(x, fn: _Function, s, axes, norm, orthogonalize, mesh, out_sharding) -> jax.Array:
    """The four transforms' body: scipy's ``s`` and ``axes``, the cached plan (an
    inverse's from :mod:`pfft.inverse`), the result where ``out_sharding`` asks."""
    where = fn.where
    orth = check_orthogonalize(orthogonalize, where)
    x, s, axes, norm, mesh = prepare(x, s, axes, norm, mesh, where, SCIPY_RULES)
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


# -- scipy's 1-D forms: the n-D transforms over one axis --------------------------------

def _r2r1(x, fn: _Function, n, axis, norm, orthogonalize, mesh, out_sharding) -> jax.Array:
    """A 1-D transform: :func:`_r2rn` over ``(axis,)`` with ``s=(n,)``, then back into
    ``x``'s sharding where the result fits in it (as :func:`pfft.fft` does)."""
    x, axis, n = prepare_one_axis(x, n, axis, fn.where)
    y = _r2rn(x, fn, None if n is None else (n,), (axis,), norm, orthogonalize, mesh,
              out_sharding)
    return y if out_sharding is not None else keep_layout(y, x, mesh)


def dct(x, type: int = 2, n: int | None = None, axis: int = -1, norm: str | None = None,
        overwrite_x: bool = False, workers: int | None = None,
        orthogonalize: bool | None = None, *, mesh: Mesh | None = None,
        out_sharding: NamedSharding | PartitionSpec | None = None) -> jax.Array:
    return _r2r1(x, _function("dct", type, overwrite_x, workers), n, axis, norm,
                 orthogonalize, mesh, out_sharding)


def idct(x, type: int = 2, n: int | None = None, axis: int = -1, norm: str | None = None,
         overwrite_x: bool = False, workers: int | None = None,
         orthogonalize: bool | None = None, *, mesh: Mesh | None = None,
         out_sharding: NamedSharding | PartitionSpec | None = None) -> jax.Array:
    return _r2r1(x, _function("idct", type, overwrite_x, workers), n, axis, norm,
                 orthogonalize, mesh, out_sharding)


def dst(x, type: int = 2, n: int | None = None, axis: int = -1, norm: str | None = None,
        overwrite_x: bool = False, workers: int | None = None,
        orthogonalize: bool | None = None, *, mesh: Mesh | None = None,
        out_sharding: NamedSharding | PartitionSpec | None = None) -> jax.Array:
    return _r2r1(x, _function("dst", type, overwrite_x, workers), n, axis, norm,
                 orthogonalize, mesh, out_sharding)


def idst(x, type: int = 2, n: int | None = None, axis: int = -1, norm: str | None = None,
         overwrite_x: bool = False, workers: int | None = None,
         orthogonalize: bool | None = None, *, mesh: Mesh | None = None,
         out_sharding: NamedSharding | PartitionSpec | None = None) -> jax.Array:
    return _r2r1(x, _function("idst", type, overwrite_x, workers), n, axis, norm,
                 orthogonalize, mesh, out_sharding)


_PARAMS_1D = _PARAMS.replace("""    s
        Length of each transformed axis: the input is cropped or zero-padded to it
        first (``-1`` keeps an axis's length). Default: the input's.
    axes
        Axes to transform (default all; the last ``len(s)`` with ``s``).""", """    n
        Length of the transformed axis: the input is cropped or zero-padded to it
        first. Default: the input's.
    axis
        The axis to transform (default the last).""").replace(
    "By default it stays in the pencil the plan ends in.",
    "By default ``x``'s own sharding where it can hold the result.")

dct.__doc__ = """1-D discrete cosine transform along ``axis`` (:func:`scipy.fft.dct`):
    :func:`dctn` over one axis, distributed as :func:`pfft.fft` is (an exchange where
    ``axis`` is split, the result back in ``x``'s sharding), differentiable.
""" + _PARAMS_1D
idct.__doc__ = """Inverse of :func:`dct` (:func:`scipy.fft.idct`); see :func:`dct`.
""" + _PARAMS_1D
dst.__doc__ = """1-D discrete sine transform along ``axis`` (:func:`scipy.fft.dst`); see
    :func:`dct`.
""" + _PARAMS_1D
idst.__doc__ = """Inverse of :func:`dst` (:func:`scipy.fft.idst`); see :func:`dct`.
""" + _PARAMS_1D
