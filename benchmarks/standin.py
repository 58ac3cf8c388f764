"""A stand-in transport: one device runs what a device of a ``p``-device plan runs.

:class:`CopyTransport` has the interface of :mod:`pfft.transports.xla` (``all_to_all``,
``all_gather``, ``axis_index`` and the capability flags the executor reads), but it
moves nothing between devices: its ``all_to_all`` returns what the real collective
returns in shape and dtype, at the cost of one copy of the same bytes. So
:func:`pfft.executor.run_chain` with it runs, on one device, a device's block through
its local transforms and each exchange's local work (the packing and unpacking) exactly
as a plan over ``p`` devices does, with the transfer itself replaced by that copy.

The copy is a reversal of the exchange's leading (device) axis inside a ``lax.cond``
on a flag the program takes as an argument (always true): XLA can neither drop it (a
plain copy of a value is removed) nor fuse it into the pack before or the unpack after
it, as it cannot fuse anything into an all-to-all (``optimization_barrier`` does not
stop that fusion: XLA removes barriers before it fuses). The condition costs a read of
the flag per exchange (on a GPU, a wait for the work before it: microseconds, which
show only in blocks of a few MiB). Where the executor hands over a block to be cut
along one axis and stacked along another (the strided engines' ``split``/``merge``
form), the stand-in packs and unpacks with the two transposes that put the chunks'
axis first and back, as XLA does around an all-to-all whose split axis is not the
outermost.

What a device computes with it is then a fixed function of its own block:
:func:`block_math` is that function in numpy (float64), the reference the benchmark
checks each engine against.

>>> t = CopyTransport((("x", 2), ("y", 4)))
>>> t.size(("x", "y"))
8
>>> def program(block, live):                          # doctest: +SKIP
...     with t.running(live):
...         return run_chain(block, chain, inverse=False, scale=1.0, transport=t)
"""
from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass, field

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from pfft.planner import Chain
from pfft.stages import Exchange, LocalFFT, RealFFT

__all__ = ["CopyTransport", "transfer", "block_math"]


def transfer(x: jax.Array, live: jax.Array) -> jax.Array:
    """The stand-in for the transfer of an all-to-all: ``x`` with its leading axis
    reversed where ``live`` (a traced boolean; always true), as one copy that XLA
    cannot remove or fuse with its neighbours. The other branch makes zeros (a branch
    returning ``x`` itself would make XLA place the result in ``x``'s buffer, and the
    reversal cost a second copy back into it)."""
    return lax.cond(live, lambda a: lax.rev(a, (0,)), jnp.zeros_like, x)


@dataclass(frozen=True)
class CopyTransport:
    """The XLA transport's interface on one device, every transfer one copy.

    Parameters
    ----------
    grid
        The plan's ``(mesh axis name, size)`` pairs: the sizes the collectives would
        have.

    Collectives are traced inside :meth:`running`, which gives them the flag their
    copies depend on and lists them.
    """

    grid: tuple[tuple[str, int], ...]
    _state: dict = field(default_factory=dict, compare=False, hash=False, repr=False)

    # the flags pfft.executor and pfft.pieces read: the all-to-all may cut and stack
    # any axes (as the XLA transport's); no shifts or swaps, so never the pieces path
    SPLITS = True
    SHIFTS = False
    SWAPS = False
    GATHER_IS_INVARIANT = False

    def size(self, mesh_axis) -> int:
        """Devices along ``mesh_axis`` (a name or a tuple of names)."""
        names = (mesh_axis,) if isinstance(mesh_axis, str) else tuple(mesh_axis)
        sizes = dict(self.grid)
        unknown = [m for m in names if m not in sizes]
        if unknown:
            raise ValueError(f"mesh axes {unknown} are not in the grid {sizes}")
        return math.prod(sizes[m] for m in names)

    @contextlib.contextmanager
    def running(self, live: jax.Array):
        """Trace collectives whose copies depend on ``live`` (a traced boolean argument
        of the program, passed true). Yields the list of ``(shape, dtype)`` of every
        transfer traced inside, in order: the array that goes into the collective,
        padding included."""
        transfers = []
        self._state.update(live=live, transfers=transfers)
        try:
            yield transfers
        finally:
            self._state.clear()

    def _transfer(self, x: jax.Array) -> jax.Array:
        if "live" not in self._state:
            raise RuntimeError("CopyTransport: trace collectives inside `running(live)`")
        self._state["transfers"].append((tuple(x.shape), np.dtype(x.dtype)))
        return transfer(x, self._state["live"])

    def all_to_all(self, x: jax.Array, mesh_axis, *, split: int | None = None,
                   merge: int | None = None) -> jax.Array:
        """What :func:`pfft.transports.xla.all_to_all` returns, in shape and dtype.

        Without ``split`` the leading axis (one entry per device) is reversed. With
        ``split=a, merge=b`` axis ``a`` is cut into ``p`` chunks (the pack: the chunks'
        axis moved first), the chunks reversed, and stacked along axis ``b`` (the
        unpack).
        """
        p = self.size(mesh_axis)
        if split is None:
            if x.shape[0] != p:
                raise ValueError(f"all_to_all over {p} devices of a block whose leading "
                                 f"axis has {x.shape[0]} entries")
            return self._transfer(x)
        shape = tuple(x.shape)
        if shape[split] % p:
            raise ValueError(f"all_to_all over {p} devices cannot cut axis {split} of "
                             f"{shape} evenly")
        y = x.reshape(shape[:split] + (p, shape[split] // p) + shape[split + 1:])
        y = self._transfer(jnp.moveaxis(y, split, 0))
        y = jnp.moveaxis(y, 0, merge)               # the chunks' axis just before merge's
        out = list(y.shape[:merge]) + [p * y.shape[merge + 1]] + list(y.shape[merge + 2:])
        return y.reshape(out)

    def all_gather(self, x: jax.Array, mesh_axis, axis: int) -> jax.Array:
        """What :func:`pfft.transports.xla.all_gather` returns in shape: ``p`` copies of
        ``x`` laid end to end along ``axis``."""
        return jnp.concatenate([x] * self.size(mesh_axis), axis=axis)

    def axis_index(self, mesh_axis) -> jax.Array:
        """Device 0's place along ``mesh_axis``."""
        self.size(mesh_axis)
        return jnp.int32(0)


def block_math(x: np.ndarray, chain: Chain) -> np.ndarray:
    """What one device computes from its block ``x`` running the forward ``chain`` over
    a :class:`CopyTransport`, in numpy (float64 or complex128).

    Local stages are ``numpy.fft``'s transforms; an exchange cuts the scattered axis into
    ``p`` chunks (zero-padded to equal lengths), stacks them along the gathered axis in
    reverse order (the stand-in's reversal) and crops the gathered axis to the length
    the plan gives it.

    Raises
    ------
    ValueError
        For a stage a forward slab or pencil chain does not have.
    """
    y = np.asarray(x, dtype=np.result_type(x.dtype, np.float64))
    shape = list(chain.in_layout.shape)
    for st in chain.stages:
        if isinstance(st, LocalFFT):
            y = np.fft.fftn(y, axes=st.axes)
        elif isinstance(st, RealFFT) and st.to_complex:
            y = np.fft.rfftn(y, axes=st.axes)
            shape[st.axis] = st.half
        elif isinstance(st, Exchange):
            p, s, g = st.size, st.scatter, st.gather
            chunk = -(-y.shape[s] // p)
            pad = [(0, 0)] * y.ndim
            pad[s] = (0, chunk * p - y.shape[s])
            pieces = np.split(np.pad(y, pad), p, axis=s)
            y = np.concatenate(pieces[::-1], axis=g)
            y = np.take(y, np.arange(shape[g] // st.gather_keep), axis=g)
        else:
            raise ValueError(f"block_math: no forward slab or pencil chain has {st}")
    return y
