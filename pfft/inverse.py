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
  :func:`pfft.device_put` puts arrays). So ``irfftn(rfftn(u))`` comes back in ``u``'s
  sharding for ``u`` in the default layout, and for any ``u`` with
  ``out_sharding=u.sharding`` (several input layouts can end in the same output
  layout: the spectrum alone cannot say which was ``u``'s). A padded spectrum
  (``spectrum="padded"``) needs ``s`` to say its real shape.
- **Where JAX hides it** (a traced array on a mesh with Auto axes, inside ``jit``),
  the input is taken to be what the forward plan that last made an output of its
  kind, shape, dtype, mesh and axes made (:class:`pfft.mesh_plan.ForwardRecord`): that
  plan runs backwards, and a padded spectrum comes back at its plan's real shape.
  Without such a record, the plan from the default layout.
"""
from __future__ import annotations

import jax
from jax.sharding import NamedSharding

from .arguments import complex_dtype, r2r_dtype, swapped_norm
from .autodiff import Variant
from .plan_core import PlanCore
from .grid import mesh_shape_of
from .inputs import layout_of, resize
from .layout import Layout, default_layout, layout_from_spec
from .mesh_plan import FORWARDS, get_plan
from .sharding import is_tracer, spec_of

__all__ = ["inverse"]

# the variants an inverse runs: a forward plan backwards, or a plan forwards with the
# inverse sign (an FFT's; a DCT/DST plan of the transposed type runs forwards)
_BACK = Variant(reverse=True, inverse=True)
_FROM_INPUT = Variant(reverse=False, inverse=True)
_TRANSPOSED_TYPE = {2: 3, 3: 2}


def inverse(x, s, axes, norm, mesh, *, kind: str = "c2c", kinds=None, orthogonalize=None,
            out_sharding=None, where: str = "ifftn") -> jax.Array:
    """The inverse transform of ``x``: numpy's ``ifftn`` (``kind="c2c"``), ``irfftn``
    (``kind="c2r"``), or scipy's ``idctn``/``idstn`` (``kind="c2c"`` with ``kinds``,
    the forward kind of every axis: ``"dct2"`` ...), by the plan this module's rule
    chooses.

    Parameters
    ----------
    x
        The checked input (:func:`pfft.inputs.prepare`), not yet resized.
    s, axes, norm
        numpy's; for ``irfftn`` ``s`` gives the real lengths (default: the input's,
        ``2 * (m - 1)`` on the last axis).
    mesh
        The mesh (``None``: one device).
    kinds, orthogonalize
        A real-to-real inverse's forward kinds and scipy's ``orthogonalize``.
    out_sharding
        Where the caller will put the result: the forward plan from that layout is
        the first choice where the input's layout is visible (it then costs no
        reshard).
    where
        The public function, for error messages.

    Returns
    -------
    jax.Array
        The result, where the chosen plan leaves it (the caller places it on
        ``out_sharding``).

    Raises
    ------
    ValueError
        An ``irfftn`` output length below 1.
    """
    if kind == "c2r":
        return _irfftn(x, s, axes, norm, mesh, out_sharding, where)
    if s is not None:
        x = resize(x, s, axes, mesh)
    layout = layout_of(x, mesh)
    origin = _recorded("c2c", x, mesh, axes, kinds)
    if kinds is None:
        cdtype = complex_dtype(x.dtype)

        def fft_plan(source):
            return get_plan(x.shape, cdtype, mesh, axes, norm, source)
        forward = _forward_plan(fft_plan, x, layout, origin, x.shape, axes, mesh, out_sharding)
        if forward is not None:
            return forward.run(x, _BACK)
        return fft_plan(layout).run(x, _FROM_INPUT)
    dtype = r2r_dtype(x.dtype)

    def r2r_plan(source, kinds=tuple(kinds), norm=norm):
        return get_plan(x.shape, dtype, mesh, axes, norm, source, kinds=kinds,
                        orthogonalize=orthogonalize)
    forward = _forward_plan(r2r_plan, x, layout, origin, x.shape, axes, mesh, out_sharding)
    if forward is not None:
        return forward.run(x, _BACK)
    # scipy's identity: idct(type t, norm) = dct(type 2 <-> 3, the swapped norm)
    transposed = tuple(k[:3] + str(_TRANSPOSED_TYPE.get(int(k[3]), int(k[3]))) for k in kinds)
    return r2r_plan(layout, transposed, swapped_norm(norm)).forward(x)


def _irfftn(x, s, axes, norm, mesh, out_sharding, where: str) -> jax.Array:
    """``irfftn``: the real shape from ``s`` (where the layout is hidden and the record
    holds a padded spectrum's plan, from that plan), the input cropped or padded to its
    spectrum unless it is a padded one, then the rule."""
    last = axes[-1]
    cdtype = complex_dtype(x.dtype)
    origin = _recorded("r2c", x, mesh, axes, None)
    if origin is not None and origin.spectrum == "padded" and (
            s is None or tuple(s) == tuple(origin.shape[a] for a in axes)):
        # a padded spectrum (any axis may be padded): its plan knows the real shape
        return get_plan(origin.shape, cdtype, mesh, axes, norm, origin.chain.in_layout,
                        kind="r2c", spectrum="padded").backward(x)
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

    def r2c_plan(source):
        return get_plan(real_shape, cdtype, mesh, axes, norm, source, kind="r2c",
                        spectrum=spectrum)
    forward = _forward_plan(r2c_plan, x, layout, origin, real_shape, axes, mesh, out_sharding)
    if forward is not None:
        return forward.backward(x)
    c2r = get_plan(spectrum_shape, cdtype, mesh, axes, norm, layout, kind="c2r", n=s[-1])
    return c2r.run(x, _FROM_INPUT)


def _recorded(kind: str, x, mesh, axes, kinds) -> PlanCore | None:
    """Where JAX hides where ``x`` is (a tracer without a visible sharding, on a mesh
    that splits arrays), the plan whose forward call last made such an output; else
    (and where none is recorded) ``None``."""
    if not (is_tracer(x) and spec_of(x) is None and mesh is not None and mesh_shape_of(mesh)):
        return None
    return FORWARDS.last(kind, x.shape, x.dtype, mesh, axes, kinds)


def _forward_plan(plan_from, x, layout: Layout | None, origin: PlanCore | None, shape, axes,
                  mesh, out_sharding) -> PlanCore | None:
    """The forward plan (``plan_from(its input layout)``) whose output ``x`` is, to run
    backwards; ``None`` where no candidate ends where ``x`` is.

    The candidates: the recorded plan's input layout (``origin``, only where ``x``'s
    layout is hidden), the layout ``out_sharding`` asks for, the default layout. Where
    ``x``'s layout is not known (hidden, or an array not on the mesh yet) the first
    candidate is taken, ``x`` assumed or placed where its plan ends; else the first
    that ends where ``x`` is, unless it started replicated over a mesh axis
    (backwards it would all-gather)."""
    sources = [origin.chain.in_layout if origin is not None else None,
               _layout_asked(out_sharding, shape, mesh),
               default_layout(shape, axes, mesh_shape_of(mesh))]
    for source in sources:
        if source is None:
            continue
        forward = plan_from(source)
        if layout is None or (layout == forward.chain.out_layout
                              and not forward.chain.in_layout.unused_mesh_axes):
            return forward
    return None


def _layout_asked(out_sharding, shape, mesh) -> Layout | None:
    """The layout ``out_sharding`` (a NamedSharding or PartitionSpec) gives an array of
    ``shape`` on ``mesh``, where it is one a plan can start from (else ``None``; the
    caller's placement reports a bad one)."""
    if out_sharding is None or mesh is None or not mesh_shape_of(mesh):
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
