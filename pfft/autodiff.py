"""A plan's transform as one linear JAX primitive, with all of its rules in one place.

``transform_p`` applies a plan's :class:`~pfft.core.Transform` (an immutable, hashable
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

The interface (implemented by :class:`pfft.core.Transform`, for both transports)::

    t.is_real                    -> bool
    t.apply(block, variant)      -> traceable implementation on a local block
    t.out_type(aval, variant)    -> local shape and dtype of the result, and
                                    (the plan's mesh axes, those splitting the result)
    t.batched(size)              -> the same map with a leading batch axis
    t.effects                    -> JAX effects its collectives carry
"""
from __future__ import annotations

from dataclasses import dataclass

import jax
import jax.extend.core as jex_core
from jax.interpreters import ad, batching, mlir

__all__ = ["Variant", "apply"]


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
    return transform_p.bind(x, transform=transform, variant=variant)


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
