"""The inverse transforms' one rule: which plan ``ifftn``, ``irfftn`` and ``idctn``/``idstn``
(and the 1-D and 2-D forms, which call them) run.

An inverse runs a *forward plan backwards* where its input is where that plan leaves
its output: the round trip ``ifftn(fftn(u))`` then comes back in that plan's input
layout, with the same exchanges as the forward. Where its input is elsewhere it runs
a plan *from its input's layout* with the inverse sign (for ``idctn``/``idstn`` the
forward DCT/DST of the transposed type, scipy's identity), and its result is where
that plan ends. Which forward plan:

- **Where JAX shows the input's layout** (a concrete array, or a traced one on a mesh
  with Explicit axes) the choice is a function of the arguments alone, the same
  whatever ran before and in whichever thread: the plan from the layout
  ``out_sharding`` asks for, if there is one and it ends where the input is, else the
  plan from the default layout (:func:`pfft.layout.default_layout`, where
  :func:`pfft.device_put` puts arrays); neither where it slices its input over a mesh
  axis that input is replicated over (backwards, an all-gather). So
  ``irfftn(rfftn(u))`` comes back in ``u``'s sharding for ``u`` in the default layout
  (on every mesh: a mesh axis no even layout finds room for stays idle throughout,
  and an all-gather the forward needed is a slice backwards), and for any ``u`` with
  ``out_sharding=u.sharding`` (several input layouts can end in the same output
  layout: the spectrum alone cannot say which was ``u``'s). A padded spectrum
  (``spectrum="padded"``) needs ``s`` to say its real shape.
- **Where JAX hides it** (a traced array on a mesh with Auto axes, inside ``jit``),
  the input is taken to be what the forward plan that last made an output of its
  kind, shape, dtype, mesh and axes made (:class:`pfft.forward_record.ForwardRecord`): that
  plan runs backwards, and a padded spectrum comes back at its plan's real shape.
  Without such a record, the plan from the default layout.
"""
from __future__ import annotations

from dataclasses import replace

import jax
from jax.sharding import NamedSharding

from .arguments import check_norm, complex_dtype, swapped_norm
from .autodiff import Variant
from .plan_core import PlanCore
from .grid import mesh_shape_of
from .inputs import layout_of, resize
from .layout import Layout, default_layout, layout_from_spec
from .forward_record import FORWARDS
from .mesh_plan import get_plan
from .problem import Problem
from .sharding import is_tracer, mesh_of, spec_of
from .stages import Scatter

__all__ = ["inverse", "inverse_real", "comes_back"]

# the variants an inverse runs: a forward plan backwards, or a plan forwards with the
# inverse sign (an FFT's; a DCT/DST plan of the transposed type runs forwards)
_BACK = Variant(reverse=True, inverse=True)
_FROM_INPUT = Variant(reverse=False, inverse=True)
_TRANSPOSED_TYPE = {2: 3, 3: 2}


def inverse(x, problem: Problem, mesh, out_sharding=None) -> jax.Array:
    """The inverse transform of ``x``: numpy's ``ifftn``, or scipy's ``idctn``/``idstn``
    (``problem.kinds``: the forward kind of every axis, ``"dct2"`` ...), by the plan
    this module's rule chooses.

    Parameters
    ----------
    x
        The checked input (:func:`pfft.inputs.prepare`), resized to ``s``.
    problem
        The forward transform whose inverse this is, on ``x``'s shape: its dtype
        computed in, axes, norm, kinds and orthogonalize (no input layout).
    mesh
        The mesh (``None``: one device).
    out_sharding
        Where the caller will put the result: the forward plan from that layout is
        the first choice where the input's layout is visible (it then costs no
        reshard).

    Returns
    -------
    jax.Array
        The result, where the chosen plan leaves it (the caller places it on
        ``out_sharding``).
    """
    layout = layout_of(x, mesh)
    origin = _recorded("c2c", x, mesh, problem.axes, problem.kinds)
    forward = _forward_plan(problem, x, layout, origin, mesh, out_sharding)
    if forward is not None:
        return forward.run(x, _BACK)
    if problem.kinds is None:
        return get_plan(replace(problem, in_layout=layout), mesh).run(x, _FROM_INPUT)
    # scipy's identity: idct(type t, norm) = dct(type 2 <-> 3, the swapped norm)
    transposed = tuple(k[:3] + str(_TRANSPOSED_TYPE.get(int(k[3]), int(k[3])))
                       for k in problem.kinds)
    return get_plan(replace(problem, kinds=transposed, norm=swapped_norm(problem.norm),
                            in_layout=layout), mesh).forward(x)


def inverse_real(x, s, axes, norm, mesh, out_sharding, where: str) -> jax.Array:
    """numpy's ``irfftn`` of ``x`` by the plan this module's rule chooses: the real
    shape from ``s`` (default: the input's, ``2 * (m - 1)`` on the last axis; where
    the layout is hidden and the record holds a padded spectrum's plan, from that
    plan), the input cropped or padded to its spectrum unless it is a padded one.

    The arguments are :func:`inverse`'s, with numpy's ``s``, ``axes`` and ``norm``
    (``x`` checked, not yet resized) and ``where``, the public function, for errors.

    Raises
    ------
    ValueError
        An output length below 1.
    """
    last = axes[-1]
    cdtype = complex_dtype(x.dtype)
    origin = _recorded("r2c", x, mesh, axes, None)
    if origin is not None and origin.spectrum == "padded" and (
            s is None or tuple(s) == tuple(origin.shape[a] for a in axes)):
        # a padded spectrum (any axis may be padded): its plan knows the real shape
        padded = Problem(origin.shape, cdtype, axes, norm, "r2c", spectrum="padded",
                         in_layout=origin.chain.in_layout)
        return get_plan(padded, mesh).backward(x)
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
        x = resize(x, tuple(spectrum_shape[a] for a in axes), axes, mesh)
        layout = layout_of(x, mesh)
    spectrum = "numpy" if layout is None or layout.is_even() else "padded"
    if origin is not None and (origin.shape != real_shape or origin.spectrum != spectrum):
        origin = None                   # the last such spectrum was another plan's
    real = Problem(real_shape, cdtype, axes, norm, "r2c", spectrum=spectrum)
    forward = _forward_plan(real, x, layout, origin, mesh, out_sharding)
    if forward is not None:
        return forward.backward(x)
    c2r = Problem(spectrum_shape, cdtype, axes, norm, "c2r", n=s[-1], in_layout=layout)
    return get_plan(c2r, mesh).run(x, _FROM_INPUT)


def comes_back(x, y, axes, norm, mesh) -> bool:
    """Whether ``y``, :func:`inverse_real` of ``x`` over ``axes`` with ``norm`` and no
    ``out_sharding``, is a round trip's: ``x`` visibly where the forward plan from the
    default layout of ``y``'s shape leaves its spectrum, so that plan ran backwards
    and ``y`` is in that layout (the 1-D forms leave it there rather than in the
    spectrum's sharding: ``irfft(rfft(u), n)`` comes back in ``u``'s)."""
    mesh = mesh if mesh is not None else mesh_of(x)
    layout = layout_of(x, mesh)
    if layout is None:
        return False
    real = Problem(tuple(y.shape), complex_dtype(y.dtype), tuple(axes),
                   check_norm(norm, "irfft"), "r2c")
    forward = get_plan(real, mesh)
    return forward.chain.out_layout == layout and not _slices(forward)


def _recorded(kind: str, x, mesh, axes, kinds) -> PlanCore | None:
    """Where JAX hides where ``x`` is (a tracer without a visible sharding, on a mesh
    that splits arrays), the plan whose forward call last made such an output; else
    (and where none is recorded) ``None``."""
    if not (is_tracer(x) and spec_of(x) is None and mesh is not None and mesh_shape_of(mesh)):
        return None
    return FORWARDS.last(kind, x.shape, x.dtype, mesh, axes, kinds)


def _forward_plan(problem: Problem, x, layout: Layout | None, origin: PlanCore | None,
                  mesh, out_sharding) -> PlanCore | None:
    """The plan of ``problem`` (from one of the input layouts below) whose output ``x``
    is, to run backwards; ``None`` where no candidate ends where ``x`` is.

    The candidates: the recorded plan's input layout (``origin``, only where ``x``'s
    layout is hidden), the layout ``out_sharding`` asks for, the default layout. Where
    ``x``'s layout is not known (hidden, or an array not on the mesh yet) the first
    candidate is taken, ``x`` assumed or placed where its plan ends; else the first
    that ends where ``x`` is, unless it slices a mesh axis its input is replicated
    over (backwards it would all-gather)."""
    sources = [origin.chain.in_layout if origin is not None else None,
               _layout_asked(out_sharding, problem.shape, mesh),
               default_layout(problem.shape, problem.axes, mesh_shape_of(mesh))]
    for source in sources:
        if source is None:
            continue
        forward = get_plan(replace(problem, in_layout=source), mesh)
        if layout is None or (layout == forward.chain.out_layout and not _slices(forward)):
            return forward
    return None


def _slices(forward: PlanCore) -> bool:
    """Whether ``forward`` slices its input over a mesh axis it is replicated over (a
    :class:`~pfft.stages.Scatter`): backwards that is an all-gather. A mesh axis idle
    all along (one no even layout finds room for) stays idle backwards, gathering
    nothing."""
    return any(isinstance(st, Scatter) for st in forward.chain.stages)


def _layout_asked(out_sharding, shape, mesh) -> Layout | None:
    """The layout ``out_sharding`` (a NamedSharding or PartitionSpec) gives an array of
    ``shape`` on ``mesh``, where it is one a plan can start from (else ``None``; the
    caller's placement reports a bad one)."""
    if mesh is None or not mesh_shape_of(mesh) or not isinstance(
            out_sharding, (NamedSharding, jax.sharding.PartitionSpec)):
        return None
    spec = out_sharding
    if isinstance(out_sharding, NamedSharding):
        if out_sharding.mesh.shape != mesh.shape:
            return None
        spec = out_sharding.spec
    try:
        return layout_from_spec(shape, spec, mesh_shape_of(mesh), mesh.axis_names, even=True)
    except (ValueError, TypeError):
        return None


def _padded_layout(x, spectrum_shape, last: int, mesh) -> Layout | None:
    """The layout of a padded spectrum (``spectrum="padded"``), if ``x`` is one: only
    the halved axis is padded, to a multiple of the devices splitting it."""
    if tuple(x.shape) == tuple(spectrum_shape):
        return None
    try:
        layout = layout_of(x, mesh, spectrum_shape, even=False)
    except ValueError:
        return None
    if layout is None or layout.padded_shape != tuple(x.shape):
        return None
    return layout if all(layout.is_even(a) for a in range(x.ndim) if a != last) else None
