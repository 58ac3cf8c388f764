"""A plan's transform as one linear JAX primitive, with all of its rules in one place.

``transform_p`` applies a plan's :class:`~pfft.plan_core.Transform` (an immutable, hashable
description with the small interface below; the primitive never holds the plan
object itself, so jit's caches keep no plan alive) in one of its variants to one
device's block: inside ``shard_map`` for the XLA transport, on
each MPI rank's block for the MPI transport, on the whole array on one device.
Because the rules live here, at the plan level, they hold whatever
runs underneath (XLA's collectives or MPI, XLA's FFT or custom calls, none of which
need autodiff rules of their own):

- JVP: the transform is linear, so the tangent goes through the same variant.
- Transpose: the *transposed inverse plan*: the chain run the other way with the
  same sign and scaling (the DFT matrix is symmetric). For real plans the bins a
  real transform stores once stand for two, so the transposed real stage weights
  the interior bins, following ``jax.numpy.fft``'s own rules.
- Batching (``vmap``): the same plan with a leading batch axis.

The interface (implemented by :class:`pfft.plan_core.Transform`, for both transports)::

    t.is_real                    -> bool
    t.apply(block, variant)      -> traceable implementation on a local block
    t.out_type(aval, variant)    -> local shape and dtype of the result, and
                                    (the plan's mesh axes, those splitting the result)
    t.batched(size)              -> the same map with a leading batch axis
    t.effects                    -> JAX effects its collectives carry
"""
from __future__ import annotations

import contextlib
import math
import os
import warnings
from dataclasses import dataclass

import jax
import jax.extend.core as jex_core
from jax.interpreters import ad, batching, mlir

__all__ = ["Variant", "apply", "warn_if_differentiated_outside_mesh",
           "explain_mesh_context_errors", "caller_stacklevel", "MESH_CONTEXT_FIX"]

# what to do where JAX differentiates an Explicit-axes array outside jit and outside a
# mesh context (its error names only jit: "enter your `jit` into a mesh context")
MESH_CONTEXT_FIX = ("wrap the call in `with jax.set_mesh(mesh):` (mesh: the array's mesh, "
                    "e.g. pfft.make_mesh(8)), or jit it: `jax.jit(jax.grad(f))(x)`. Outside "
                    "jit, JAX differentiates arrays on a mesh with Explicit axes (pfft.make_mesh's "
                    "and jax.make_mesh's default) only inside a mesh context: it makes the "
                    "scalar that starts the backward pass on the mesh it finds there")


@dataclass(frozen=True)
class Variant:
    """Which linear map of a plan to apply.

    Attributes
    ----------
    reverse
        Run the chain backwards (from the plan's output layout to its input layout).
    inverse
        Use the inverse transform's sign (``+``); scaling is the plan's ``norm`` for
        that direction either way.
    weighted
        Real plans only: the Hermitian weights of a transposed real stage
        (interior bins halved before a complex-to-real transform, doubled after a
        real-to-complex one).
    """

    reverse: bool
    inverse: bool
    weighted: bool = False

    def transposed(self, is_real: bool) -> "Variant":
        return Variant(not self.reverse, self.inverse, is_real and not self.weighted)


FORWARD = Variant(reverse=False, inverse=False)
BACKWARD = Variant(reverse=True, inverse=True)

transform_p = jex_core.Primitive("pfft_transform")


def apply(x, transform, variant: Variant):
    """Apply ``transform``'s ``variant`` to ``x`` (differentiable, batchable, jittable)."""
    with explain_mesh_context_errors():
        return transform_p.bind(x, transform=transform, variant=variant)


def _differentiated_eagerly(x) -> bool:
    """Whether ``x`` is being differentiated for a VJP (``jax.grad``, ``jax.vjp``)
    outside ``jit``: a linearizing tracer whose innermost value (under any ``vmap``)
    is a concrete array rather than a ``jit`` trace's tracer."""
    linearized = False
    while isinstance(x, jax.core.Tracer):
        name = type(x).__name__
        if name in ("LinearizeTracer", "JVPTracer"):
            # JVPTracer: jax.jvp, or a VJP where JAX linearizes by JVP and partial
            # evaluation (its tangent is then a JaxprTracer)
            linearized |= (name == "LinearizeTracer"
                           or type(getattr(x, "tangent", None)).__name__ == "JaxprTracer")
            x = getattr(x, "primal", None)
        elif name == "BatchTracer":
            x = getattr(x, "val", None)
        else:
            return False                       # a jit trace, or a tracer pfft cannot see into
    return linearized and isinstance(x, jax.Array)


def _explicit_mesh_of(x):
    """The mesh of ``x``'s type where it has Explicit axes over several devices, else
    ``None``."""
    try:
        mesh = jax.typeof(x).sharding.mesh
    except AttributeError:                     # pragma: no cover - other jax versions
        return None
    types = getattr(mesh, "axis_types", ())
    if not any(t == jax.sharding.AxisType.Explicit for t in types) or _size(mesh) <= 1:
        return None
    return mesh


def _size(mesh) -> int:
    return math.prod(dict(mesh.shape).values())


def _in_mesh_context() -> bool:
    try:
        return not jax.sharding.get_abstract_mesh().empty
    except AttributeError:                     # pragma: no cover - other jax versions
        return True


def warn_if_differentiated_outside_mesh(x) -> None:
    """Warn where ``x`` (a plan's input) is an Explicit-axes array differentiated by
    ``jax.grad``/``jax.vjp`` outside ``jit`` and outside a mesh context: ``jax.grad``
    then fails in JAX's own code, after pfft's transform, with an error that does not
    say how to fix it (the warning comes first, pointing at the caller's line)."""
    if not _differentiated_eagerly(x) or _in_mesh_context():
        return
    mesh = _explicit_mesh_of(x)
    if mesh is None:
        return
    warnings.warn(f"pfft: differentiating (jax.grad, jax.vjp) an array on the Explicit-axes mesh "
                  f"{dict(mesh.shape)} outside jax.jit and outside a mesh context: jax.grad then "
                  f"fails in JAX as it starts the backward pass (\"Length of device assignment "
                  f"1 is not equal to the size of the mesh {_size(mesh)} ...\"). To differentiate, "
                  f"{MESH_CONTEXT_FIX}.", UserWarning, stacklevel=caller_stacklevel())


def caller_stacklevel() -> int:
    """The ``stacklevel`` of the first frame outside pfft (the code that called it), so
    that a warning points there and shows once per calling line."""
    import sys

    package = os.path.dirname(os.path.abspath(__file__))
    frame, level = sys._getframe(1), 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(package):
        frame, level = frame.f_back, level + 1
    return level


def _is_mesh_context_error(err: BaseException) -> bool:
    text = str(err)
    return "set_mesh" in text and ("mesh context" in text or "device assignment" in text)


@contextlib.contextmanager
def explain_mesh_context_errors():
    """Re-raise JAX's error for an Explicit-axes array used outside a mesh context
    ("... enter your `jit` into a mesh context via `jax.set_mesh`"), raised where pfft
    traces or applies a transform, as a ``ValueError`` that says how to fix it (JAX's
    error chained)."""
    try:
        yield
    except ValueError as err:
        if not _is_mesh_context_error(err) or str(err).startswith("pfft:"):
            raise
        raise ValueError(f"pfft: JAX refused to run a transform of an array on an Explicit-axes "
                         f"mesh outside a mesh context (its error is chained below). This "
                         f"happens when differentiating outside jax.jit: {MESH_CONTEXT_FIX}."
                         ) from err


def _impl(x, *, transform, variant):
    return transform.apply(x, variant)


def _abstract_eval(x, *, transform, variant):
    """The output block's type, and the transform's effects (mpi4jax's collectives
    carry an ordered effect: the primitive that inlines them must declare it too)."""
    return _output_type(x, transform, variant), frozenset(transform.effects)


def _output_type(x, transform, variant):
    shape, dtype, (mesh_axes, split) = transform.out_type(x, variant)
    mat = x.manual_axis_type
    if _checking_vma():
        # inside shard_map the result varies over the mesh axes that split the output,
        # whatever the input varied over (an all-gathered axis makes it invariant, a
        # scattered one varying)
        mat = mat.update(varying=(frozenset(mat.varying) - mesh_axes) | split)
    # else (a shard_map with check_vma=False) every block is untyped, the result too
    return x.update(shape=shape, dtype=dtype, weak_type=False, manual_axis_type=mat)


def _checking_vma() -> bool:
    """Whether the enclosing ``shard_map`` types what its blocks vary over (its
    ``check_vma``, a trace-time setting JAX keeps in its config)."""
    try:
        from jax._src import config
        return bool(config._check_vma.value)
    except (ImportError, AttributeError):  # pragma: no cover - other jax versions
        return True


def _transpose(ct, x, *, transform, variant):
    if type(ct) is ad.Zero:
        return (ad.Zero(x.aval),)
    return (apply(ct, transform, variant.transposed(transform.is_real)),)


def _batch(args, dims, *, transform, variant):
    (x,), (d,) = args, dims
    x = jax.numpy.moveaxis(x, d, 0)
    return apply(x, transform.batched(x.shape[0]), variant), 0


transform_p.def_impl(jax.jit(_impl, static_argnames=("transform", "variant")))
transform_p.def_effectful_abstract_eval(_abstract_eval)
mlir.register_lowering(transform_p, mlir.lower_fun(_impl, multiple_results=False))
ad.deflinear2(transform_p, _transpose)
batching.primitive_batchers[transform_p] = _batch
