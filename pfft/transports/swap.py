"""``swap``: XLA's tuple all-to-all, one collective that trades whole arrays.

Each of the ``p`` devices along a mesh axis passes ``p`` arrays of one shape; array
``j`` goes to device ``j``, and result ``j`` is the array device ``j`` passed for this
one. XLA has the operation (HLO ``all-to-all`` without a split dimension: XLA:CPU
rewrites every ``lax.all_to_all`` into it, between a slicing and a concatenating copy
of the block), but JAX's ``lax.all_to_all`` only reaches it through those copies. A
chain whose FFTs already write the pieces (:mod:`pfft.pieces`) needs neither copy, and
one collective instead of the ``p - 1`` collective permutes of cyclic shifts: on the
2-core machine each collective costs about 0.26 ms of fixed time among 8 simulated
devices (docs/performance.md, "Fixed costs").

The op is emitted as ``mhlo.all_to_all`` without ``split_dimension`` (StableHLO's op
always splits). Where this JAX has no MHLO dialect or lowering hook,
``AVAILABLE`` is False and chains shift pieces instead.
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np

__all__ = ["AVAILABLE", "swap", "replica_groups"]

try:
    import jax
    import jax.numpy as jnp
    from jax.extend import core as _core
    from jax.interpreters import ad, batching
    from jax._src.interpreters import mlir as _mlir
    from jax._src.lib.mlir import ir as _ir
    from jax._src.lib.mlir.dialects import mhlo as _mhlo
    _mhlo.AllToAllOp, _mhlo.ChannelHandle  # noqa: B018 - both must exist
    AVAILABLE = True
except (ImportError, AttributeError):  # pragma: no cover - other JAX versions
    AVAILABLE = False


def _names(mesh_axis) -> tuple[str, ...]:
    return (mesh_axis,) if isinstance(mesh_axis, str) else tuple(mesh_axis)


def replica_groups(axis_names: Sequence[str], axis_sizes: Sequence[int],
                   mesh_axis) -> list[list[int]]:
    """The devices (flat places in a mesh of ``axis_names``/``axis_sizes``) that swap
    together over ``mesh_axis``: one group per place along the other mesh axes, each
    in ``lax.axis_index(mesh_axis)`` order (a tuple's first name major)."""
    names = _names(mesh_axis)
    unknown = [m for m in names if m not in axis_names]
    if unknown or len(set(names)) != len(names):
        raise ValueError(f"swap: mesh axes {names} are not distinct axes of {tuple(axis_names)}")
    ids = np.arange(math.prod(axis_sizes)).reshape(tuple(axis_sizes))
    inner = [list(axis_names).index(m) for m in names]
    outer = [a for a in range(len(axis_names)) if a not in inner]
    size = math.prod(axis_sizes[a] for a in inner)
    return ids.transpose(outer + inner).reshape(-1, size).tolist()


if AVAILABLE:
    _swap_p = _core.Primitive("pfft_swap")
    _swap_p.multiple_results = True

    def _abstract(*avals, mesh_axis):
        if len({(a.shape, a.dtype) for a in avals}) > 1:
            raise TypeError("swap: every array must have one shape and dtype, got "
                            f"{[(a.shape, str(a.dtype)) for a in avals]}")
        return list(avals)

    def _lower(ctx, *xs, mesh_axis):
        mesh = getattr(ctx.module_context.axis_context, "mesh", None)
        if mesh is None:
            raise ValueError(f"swap over {mesh_axis}: call it inside jax.shard_map over "
                             "a mesh with those axes")
        groups = replica_groups(mesh.axis_names, tuple(mesh.axis_sizes), mesh_axis)
        if len(groups[0]) != len(xs):
            raise ValueError(f"swap over {mesh_axis} ({len(groups[0])} devices) "
                             f"got {len(xs)} arrays")
        if len(xs) == 1:               # one device: nothing moves (XLA:CPU would crash)
            return list(xs)
        op = _mhlo.AllToAllOp(
            list(xs), _ir.DenseIntElementsAttr.get(np.asarray(groups, np.int64)),
            channel_handle=_mhlo.ChannelHandle.get(_mlir.COLLECTIVE_CHANNEL_ID,
                                                   _mlir.DEVICE_TO_DEVICE_TYPE),
            results=[x.type for x in xs])
        return op.results

    def _batch(args, dims, *, mesh_axis):
        # every array moves whole, so a batch axis anywhere moves with it; unbatched
        # arrays are broadcast, as all arrays of a swap share one shape
        size = next(a.shape[d] for a, d in zip(args, dims) if d is not None)
        args = [jnp.broadcast_to(a, (size,) + a.shape) if d is None else jnp.moveaxis(a, d, 0)
                for a, d in zip(args, dims)]
        return _swap_p.bind(*args, mesh_axis=mesh_axis), [0] * len(args)

    def _transpose(cts, *args, mesh_axis):
        # a swap is its own inverse: what came from device j goes back to it
        cts = [ad.instantiate_zeros(c) for c in cts]
        return _swap_p.bind(*cts, mesh_axis=mesh_axis)

    _swap_p.def_impl(lambda *xs, mesh_axis: jax.jit(
        lambda *a: _swap_p.bind(*a, mesh_axis=mesh_axis))(*xs))
    _swap_p.def_abstract_eval(_abstract)
    _mlir.register_lowering(_swap_p, _lower)
    batching.primitive_batchers[_swap_p] = _batch
    ad.deflinear2(_swap_p, _transpose)


def swap(arrays: Sequence, mesh_axis) -> list:
    """Trade ``arrays`` over ``mesh_axis`` (a name or a tuple of names), inside
    ``shard_map``: ``arrays[j]`` goes to device ``j`` (``lax.axis_index`` numbering)
    and ``result[j]`` is what device ``j`` sent here. One collective, one copy.

    >>> out = swap([a0, a1], "x")      # doctest: +SKIP
    >>> # on device 1 along "x": out[0] is device 0's a1, out[1] this device's a1
    """
    if not AVAILABLE:  # pragma: no cover - other JAX versions
        raise RuntimeError("swap needs JAX's MHLO dialect (pfft.transports.swap.AVAILABLE)")
    return list(_swap_p.bind(*arrays, mesh_axis=_names(mesh_axis)))
