"""Argument rules shared by every entry point (``pfft.fftn`` and friends, ``pfft.plan``,
``pfft.mpi.plan``, ``pfft.tune``): one place for numpy's meaning of ``axes``, ``s``,
``norm`` and dtypes, and for the plan options both transports accept.

A leaf module: it imports nothing else from pfft, so any module may use it.
"""
from __future__ import annotations

import math
import operator
from typing import NamedTuple

import jax
import numpy as np

__all__ = ["NORMS", "SPECTRA", "PLAN_KINDS", "check_norm", "swapped_norm", "complex_dtype",
           "normalize_axes",
           "cook_nd", "AxesRules", "NUMPY_RULES", "NUMPY_REAL_INVERSE_RULES", "SCIPY_RULES",
           "as_int_tuple", "casts_without_loss", "norm_scale", "check_plan_options",
           "check_shape", "check_cast",
           "check_dealiasing", "check_tune", "TUNE_MODES", "R2R_KINDS", "AXIS_KINDS",
           "check_kinds", "check_plan_kinds", "r2r_dtype", "check_workers", "check_call_options",
           "caller_stacklevel"]

NORMS = ("backward", "ortho", "forward")
SPECTRA = ("numpy", "padded")
PLAN_KINDS = ("c2c", "r2c")
TUNE_MODES = (None, "wisdom", "measure")


def check_norm(norm, where: str) -> str:
    """numpy's ``norm``: ``None`` is ``"backward"``."""
    if norm is None:
        return "backward"
    if norm not in NORMS:
        raise ValueError(f"{where}: norm must be one of {NORMS} (or None), got {norm!r}")
    return norm


def swapped_norm(norm: str) -> str:
    """The norm that scales the opposite direction as ``norm`` scales this one
    (``"backward"`` and ``"forward"`` swap, ``"ortho"`` stays): numpy's ``hfft`` and
    ``ihfft`` run the other direction's transform with it, and an inverse DCT/DST is
    the forward one of the transposed type with it (scipy's identity)."""
    return {"backward": "forward", "forward": "backward"}.get(norm, norm)


def norm_scale(norm: str, inverse: bool, n: int) -> float:
    """numpy's scaling of a transform of ``n`` points."""
    if norm == "ortho":
        return 1.0 / math.sqrt(n)
    return 1.0 / n if (norm == "forward") != inverse else 1.0


def complex_dtype(dtype, where: str = "pfft") -> np.dtype:
    """The complex dtype a transform of ``dtype`` computes in (numpy's promotion).

    float32/float16/bfloat16 give complex64, float64 complex128, integers and bools
    the default complex dtype (complex128 with ``jax_enable_x64``, else complex64).
    Long doubles (float128, complex256) have no JAX type: a ``TypeError`` naming
    ``where`` (the function called).
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
        raise TypeError(f"{where}: cannot transform an array of dtype {dtype}; "
                        f"numeric (bool, int, float or complex) dtypes are accepted")
    if out not in (np.complex64, np.complex128) or (dtype.kind == "f" and dtype.itemsize > 8):
        raise TypeError(f"{where}: dtype {dtype} has no JAX type (JAX computes in at most "
                        f"64-bit floats); cast the array to float64 or complex128 first")
    return np.dtype(jax.dtypes.canonicalize_dtype(out))


def check_cast(have, want, where: str) -> None:
    """A plan's input must cast to its dtype without loss (JAX's type lattice, under
    every dtype-promotion mode: the cast is explicit, so ``strict`` allows it):
    complex128 into a complex64 plan is refused, float32 into one is fine."""
    if not casts_without_loss(have, want):
        raise TypeError(f"{where}: plan input must be {np.dtype(want)} (or cast to it without "
                        f"loss), got an array of dtype {np.dtype(have)}")


def casts_without_loss(have, want) -> bool:
    """Whether ``have`` casts to ``want`` without loss in JAX's standard type lattice
    (``want`` is where the two promote to), whatever ``jax_numpy_dtype_promotion``
    is: pfft's casts are explicit, never an implicit promotion."""
    import jax.numpy as jnp

    with jax.numpy_dtype_promotion("standard"):
        return jnp.promote_types(have, want) == np.dtype(want)


def normalize_axes(axes, ndim: int, where: str, s=None, *,
                   unique: bool = True) -> tuple[int, ...]:
    """numpy's ``axes`` rules: the default is every axis (the last ``len(s)`` with ``s``);
    one int is one axis (scipy's form). ``unique=False`` lets an axis repeat, as
    numpy's n-D FFTs do (each repetition is one more 1-D transform along it)."""
    if axes is None:
        count = len(s) if s is not None else ndim
        if count > ndim:
            raise np.exceptions.AxisError(f"{where}: s has {count} entries but the array has "
                                          f"only {ndim} axes")
        if count == 0:
            raise ValueError(f"{where}: cannot transform a 0-d array")
        return tuple(range(ndim - count, ndim))
    axes = as_int_tuple(axes, "axes", where)
    if not axes:
        raise ValueError(f"{where}: axes must name at least one axis")
    out = [check_axis(a, ndim, where) for a in axes]
    if unique and len(set(out)) != len(out):
        raise ValueError(f"{where}: repeated axes in {axes!r} (all axes must be unique)")
    return tuple(out)


def as_int_tuple(value, name: str, where: str) -> tuple:
    """``value`` as a tuple of ints: a sequence of ints, or one int (scipy's form for
    one axis). ``None`` entries pass through (numpy's deprecated ``s`` entries)."""
    if isinstance(value, (str, bytes)):
        raise TypeError(f"{where}: {name} must be a sequence of ints, got {value!r}")
    try:
        return (operator.index(value),)
    except TypeError:
        pass
    try:
        return tuple(None if v is None else operator.index(v) for v in value)
    except TypeError:
        raise TypeError(f"{where}: {name} must be a sequence of ints, got {value!r}") from None


#: the text numpy 2 warns with (pfft's warnings contain these words, so that code
#: filtering numpy's warnings filters pfft's)
S_WITHOUT_AXES = "`axes` should not be `None` if `s` is not `None`"
NONE_IN_S = "array containing `None` values to `s`"


def caller_stacklevel() -> int:
    """The ``stacklevel`` that points a warning raised by the caller of this function
    at the first frame outside pfft: the user's call, however deep pfft's own
    frames are."""
    import sys

    frame, level = sys._getframe(2), 2
    while frame is not None and frame.f_globals.get("__name__", "").startswith("pfft."):
        frame, level = frame.f_back, level + 1
    return level


class AxesRules(NamedTuple):
    """How an n-D transform reads ``s`` and ``axes`` (:func:`cook_nd`).

    Attributes
    ----------
    real_inverse
        A ``None`` entry of ``s`` on the last axis is ``2 * (m - 1)`` (``irfftn``).
    repeats
        An axis may be named more than once (numpy's n-D FFTs transform along it once
        per entry); else a ``ValueError``, as scipy raises.
    numpy
        numpy 2's forms: ``s`` without ``axes`` and ``None`` in ``s`` warn as numpy
        warns (``DeprecationWarning``). ``False``: scipy's reading, no warnings, and
        ``None`` in ``s`` is a ``TypeError``.
    """

    real_inverse: bool = False
    repeats: bool = True
    numpy: bool = True


#: numpy's n-D FFTs, numpy's ``irfftn`` (and ``hfftn``), scipy's DCTs and DSTs
NUMPY_RULES = AxesRules()
NUMPY_REAL_INVERSE_RULES = AxesRules(real_inverse=True)
SCIPY_RULES = AxesRules(repeats=False, numpy=False)


def cook_nd(s, axes, shape, where: str, rules: AxesRules = NUMPY_RULES):
    """numpy 2's ``s`` and ``axes`` of an n-D transform of an array of ``shape``
    (scipy's where ``rules`` say so: :class:`AxesRules`).

    ``axes``: every axis by default, the last ``len(s)`` where only ``s`` is given
    (deprecated in numpy 2: a ``DeprecationWarning`` as numpy's); an axis may repeat
    where ``rules.repeats``. ``s``: ``-1`` is the axis's length, ``None`` (a
    ``DeprecationWarning``, as numpy's) the length of the 1-D transform's default
    ``n``: the axis's, or ``2 * (m - 1)`` on the last axis of a real inverse. One int
    is one entry (scipy's form).

    Returns
    -------
    s, axes
        ``s`` as a tuple of positive ints, or ``None`` where not given; ``axes`` in
        ``[0, ndim)``.

    Raises
    ------
    ValueError
        ``s`` and ``axes`` of different lengths, a length below 1 (numpy's text), an
        axis out of range (``numpy.exceptions.AxisError``, also an ``IndexError``), a
        repeated axis where the rules refuse it.
    TypeError
        Non-integer entries.
    """
    import warnings

    ndim = len(shape)
    if s is not None:
        s = as_int_tuple(s, "s", where)
        if not rules.numpy and None in s:
            raise TypeError(f"{where}: s must be a sequence of ints, got {s!r}")
        if axes is None and rules.numpy:
            warnings.warn(f"{where}: {S_WITHOUT_AXES} (deprecated in numpy 2.0, as numpy "
                          f"warns): s applies to the last {len(s)} axes; pass axes to say "
                          f"which", DeprecationWarning, stacklevel=caller_stacklevel())
    axes = normalize_axes(axes, ndim, where, s, unique=not rules.repeats)
    if s is None:
        return None, axes
    if len(s) != len(axes):
        raise ValueError(f"{where}: s {s} and axes {axes} have different lengths")
    if None in s:
        warnings.warn(f"{where}: passing an {NONE_IN_S} is deprecated in numpy 2.0, as "
                      f"numpy warns: a None entry is the axis's default length; pass -1 "
                      f"for it", DeprecationWarning, stacklevel=caller_stacklevel())
    out = []
    for i, (n, a) in enumerate(zip(s, axes)):
        if n is None:
            last_of_real = rules.real_inverse and i == len(s) - 1
            n = 2 * (shape[a] - 1) if last_of_real else shape[a]
        elif n == -1:
            n = shape[a]
        if n < 1:
            raise ValueError(f"{where}: Invalid number of FFT data points ({n}) specified "
                             f"along axis {a} (s={s}; -1 keeps the axis's length)")
        out.append(n)
    return tuple(out), axes


def check_axis(axis, ndim: int, where: str) -> int:
    """One axis of an ``ndim``-d array, numpy's way: an int in ``[-ndim, ndim)``,
    returned in ``[0, ndim)``. Out of range is numpy's ``AxisError``: a ``ValueError``
    (as ``jnp.fft`` raises) and an ``IndexError`` (as ``numpy.fft`` raises)."""
    try:
        axis = operator.index(axis)
    except TypeError:
        raise TypeError(f"{where}: an axis must be an int, got {axis!r}") from None
    if not -ndim <= axis < ndim:
        raise np.exceptions.AxisError(f"{where}: axis {axis} is out of range for an array "
                                      f"of {ndim} dimensions")
    return axis % ndim


def check_length(n, where: str, *, optional: bool = False) -> int | None:
    """A number of points, numpy's way: a positive int (or ``None`` where
    ``optional``)."""
    if n is None and optional:
        return None
    try:
        n = operator.index(n)
    except TypeError:
        what = "an int or None" if optional else "an int"
        raise TypeError(f"{where}: n must be {what}, got {n!r}") from None
    if n < 1:
        raise ValueError(f"{where}: Invalid number of FFT data points ({n}) specified (numpy's "
                         f"words; n must be at least 1)")
    return n


def check_shape(shape, where: str) -> tuple[int, ...]:
    """A plan's global shape: a non-empty sequence of positive ints."""
    try:
        shape = tuple(operator.index(n) for n in shape)
    except TypeError:
        raise TypeError(f"{where}: shape must be a sequence of ints, got {shape!r}") from None
    if not shape or any(n < 1 for n in shape):
        raise ValueError(f"{where}: shape must have at least one axis and positive sizes, "
                         f"got {shape}")
    return shape


def check_plan_options(kind: str, spectrum: str, where: str) -> None:
    """``kind`` and ``spectrum`` of a plan (the same on every transport)."""
    if kind not in PLAN_KINDS:
        raise ValueError(f"{where}: kind must be 'c2c' or 'r2c', got {kind!r}")
    if spectrum not in SPECTRA:
        raise ValueError(f"{where}: spectrum must be one of {SPECTRA}, got {spectrum!r}")
    if spectrum == "padded" and kind != "r2c":
        raise ValueError(f"{where}: spectrum='padded' is for kind='r2c' (a complex "
                         f"transform's output is never padded)")


def check_dealiasing(padding, shape, axes, where: str):
    """A plan's dealiasing factor ``padding`` (its public name: the physical grid is the
    spectral one padded by it): the finer grid's shape and the spectral lengths kept.

    Returns ``(shape, dealiased)`` where ``shape`` is the physical (finer) grid and
    ``dealiased`` the ``(axis, N)`` pairs whose spectrum is truncated to ``N``.
    """
    try:
        padding = float(padding)
    except (TypeError, ValueError):
        raise TypeError(f"{where}: padding must be a number >= 1, got {padding!r}") from None
    if not padding >= 1.0 or not math.isfinite(padding):
        raise ValueError(f"{where}: padding must be a finite number >= 1, got {padding!r}")
    if padding == 1.0:
        return tuple(shape), ()
    fine = tuple(math.ceil(padding * n - 1e-9) if a in axes else n for a, n in enumerate(shape))
    return fine, tuple((a, shape[a]) for a in axes if fine[a] != shape[a])


def check_overwrite_x(overwrite_x, where: str) -> bool:
    """A plan's ``overwrite_x``: whether its transforms may work in their input's
    buffer (a bool)."""
    if not isinstance(overwrite_x, (bool, np.bool_)):
        raise TypeError(f"{where}: overwrite_x must be a bool, got {overwrite_x!r}")
    return bool(overwrite_x)


def check_fuse_exchanges(fuse, where: str) -> bool | str:
    """A plan's ``fuse_exchanges``: ``"auto"`` (by block size), ``True`` or ``False``."""
    if isinstance(fuse, str) and fuse.lower() == "auto":
        return "auto"
    if isinstance(fuse, (bool, np.bool_)):
        return bool(fuse)
    raise ValueError(f"{where}: fuse_exchanges must be 'auto', True or False, got {fuse!r}")


def check_tune(tune, where: str, in_sharding=None) -> None:
    """A plan's ``tune``: ``None``, ``"wisdom"`` or ``"measure"``; tuning chooses the
    grid, so it cannot be combined with a given ``in_sharding``."""
    if tune not in TUNE_MODES:
        raise ValueError(f"{where}: tune must be None, 'wisdom' or 'measure', got {tune!r}")
    if tune is not None and in_sharding is not None:
        raise ValueError(f"{where}: tune chooses the grid, so it cannot honour in_sharding")


# -- per-axis transform kinds (real-to-real and mixed plans) -------------------------

R2R_KINDS = tuple(f"{f}{t}" for f in ("dct", "dst") for t in (1, 2, 3, 4))
AXIS_KINDS = ("fft", "rfft") + R2R_KINDS


def check_kinds(kinds, axes, kind: str, where: str):
    """A plan's ``kinds``: one of :data:`AXIS_KINDS` per axis of ``axes``.

    Returns ``(kinds, kind)``: the kinds as a tuple (``None`` where every axis is
    ``"fft"``: a plain complex plan) and the plan's kind (``"r2c"`` where an axis is
    ``"rfft"``, the halved axis; at most one may be).
    """
    if kinds is None:
        return None, kind
    if isinstance(kinds, str):
        raise TypeError(f"{where}: kinds must be a sequence of strings, one per transformed "
                        f"axis, got the string {kinds!r}")
    try:
        kinds = tuple(kinds)
    except TypeError:
        raise TypeError(f"{where}: kinds must be a sequence of strings, got {kinds!r}") from None
    if len(kinds) != len(axes):
        raise ValueError(f"{where}: kinds {kinds} must give one kind per transformed axis "
                         f"{tuple(axes)}")
    bad = [k for k in kinds if not isinstance(k, str) or k not in AXIS_KINDS]
    if bad:
        raise ValueError(f"{where}: unknown kinds {bad}; each is one of {AXIS_KINDS}")
    if kinds.count("rfft") > 1:
        raise ValueError(f"{where}: at most one axis can be 'rfft' (the halved axis), got "
                         f"{kinds}")
    if "rfft" in kinds:
        if kind not in ("c2c", "r2c"):
            raise ValueError(f"{where}: kinds with 'rfft' make a real plan; kind must be "
                             f"'c2c' or 'r2c', got {kind!r}")
        kind = "r2c"
    elif kind == "r2c":
        raise ValueError(f"{where}: kind='r2c' with kinds: mark the halved axis 'rfft'")
    if all(k == "fft" for k in kinds):
        return None, kind
    return kinds, kind


def check_plan_kinds(shape, axes, kind: str, kinds, orthogonalize, where: str):
    """A plan's ``kinds`` and ``orthogonalize``, the same way for every entry point
    (:func:`pfft.plan` and :func:`pfft.mpi.plan`).

    ``shape`` and ``axes`` are checked first (as :func:`check_shape` and
    :func:`normalize_axes`), so that their errors come before those of ``kinds``;
    ``kinds`` then as :func:`check_kinds`. ``tune`` is checked by :func:`check_tune`.

    Returns
    -------
    kinds, kind, orthogonalize
        The kinds as a tuple (``None`` for a plain FFT plan), the plan's kind
        (``"r2c"`` where an axis is ``"rfft"``), and ``orthogonalize`` as ``None`` or a
        bool (``None`` for a plan without kinds: part of the cache key only where it
        means something).

    Raises
    ------
    TypeError
        ``kinds`` not a sequence of strings, ``orthogonalize`` not ``None`` or a bool.
    ValueError
        A bad shape or axes, unknown kinds, one per axis not given, more than one
        ``"rfft"``, or ``kind="r2c"`` without an ``"rfft"`` axis.
    """
    axes = normalize_axes(axes, len(check_shape(shape, where)), where)
    kinds, kind = check_kinds(kinds, axes, kind, where)
    orthogonalize = check_orthogonalize(orthogonalize, where)
    return kinds, kind, None if kinds is None else orthogonalize


def check_orthogonalize(orthogonalize, where: str) -> bool | None:
    """scipy's ``orthogonalize``: ``None`` (follow ``norm``) or a bool, returned as
    ``None`` or a Python bool.

    Raises
    ------
    TypeError
        Anything else.
    """
    if orthogonalize is not None and not isinstance(orthogonalize, (bool, np.bool_)):
        raise TypeError(f"{where}: orthogonalize must be None, True or False, got "
                        f"{orthogonalize!r}")
    return None if orthogonalize is None else bool(orthogonalize)


def r2r_dtype(dtype) -> np.dtype:
    """The real dtype a real-to-real transform of real ``dtype`` computes in (float32
    for float32 and narrower floats, float64 for float64, the default float for
    integers and bools); complex dtypes as :func:`complex_dtype`."""
    out = complex_dtype(dtype)
    if np.issubdtype(np.dtype(dtype), np.complexfloating):
        return out
    return np.dtype(np.finfo(out).dtype)


# -- numpy's and scipy's keywords that say how, not what ------------------------------

def check_workers(workers, where: str) -> None:
    """scipy's ``workers``: accepted, no effect (pfft's engine chooses its threads);
    an int or ``None``, and not 0 (scipy's error)."""
    if workers is None:
        return
    try:
        w = operator.index(workers)
    except TypeError:
        raise TypeError(f"{where}: workers must be an int or None, got {workers!r}") from None
    if w == 0:
        raise ValueError(f"{where}: workers must not be 0 (None, or a positive or negative "
                         f"count as in scipy)")


def check_call_options(where: str, *, out=None, overwrite_x=False, workers=None,
                       plan=None) -> bool:
    """The keywords numpy's and scipy's FFTs take beside the transform's own: numpy's
    ``out`` (``None`` only: a JAX array cannot be written into), scipy's
    ``overwrite_x`` (returned, a bool), ``workers`` (:func:`check_workers`) and
    ``plan`` (``None`` only, as in scipy).

    Raises
    ------
    TypeError
        ``out`` given, a non-bool ``overwrite_x``, a non-int ``workers``.
    NotImplementedError
        ``plan`` given (scipy raises the same).
    """
    if out is not None:
        raise TypeError(f"{where}: out={type(out).__name__} cannot be written: JAX arrays "
                        f"are immutable, so pfft returns the result (out=None only). scipy's "
                        f"fifth positional argument is overwrite_x: pass it by keyword")
    check_workers(workers, where)
    if plan is not None:
        raise NotImplementedError(f"{where}: plan={plan!r}: scipy's precomputed plans are "
                                  f"not taken; pfft caches its own plans (pfft.plan(...) "
                                  f"makes one to call directly)")
    return check_overwrite_x(overwrite_x, where)
