"""The MPI transport: ``mpi4jax`` collectives on the sub-communicators of a Cartesian grid.

One process per device; each mesh axis name of a plan's grid is one sub-communicator
(``cart.Sub``) of a :class:`pfft.mpi.ProcessGrid`, whose members are ordered by their
coordinate along that axis, so member ``j`` of the communicator of mesh axis ``"x"``
is the rank at coordinate ``j`` along ``"x"``, exactly as device ``j`` along a mesh
axis in ``shard_map``. The executor calls the same three functions as on the XLA
transport; only the data movement differs.

``mpi4jax`` operations carry an ordered effect (they run in program order on every
rank) and have no autodiff or batching rules: pfft never lets JAX differentiate or
batch through them, because they only run inside a plan's primitive
(:mod:`pfft.autodiff`), whose rules are the plan's own.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp

try:
    import mpi4jax
except ImportError as err:  # pragma: no cover - exercised only without mpi4jax
    raise ImportError(
        "pfft's MPI transport needs mpi4py and mpi4jax: `pip install mpich mpi4py` and then "
        "`pip install --no-build-isolation mpi4jax` (or `make install`)") from err

from ..interfaces import TransportCapabilities

__all__ = ["MPITransport"]


class MPITransport:
    """The collectives of one rank of a process grid, by mesh axis name.

    Parameters
    ----------
    comms
        For each mesh axis name, the sub-communicator of the ranks along that axis
        (ordered by coordinate); for each tuple of names (an axis split over several
        mesh axes, the first major), the communicator of the ranks along all of them.
    coords
        For each key of ``comms``, this rank's coordinate (its rank in that
        communicator).

    Examples
    --------
    >>> t = MPITransport({"x": sub_x}, {"x": 1})     # doctest: +SKIP
    >>> y = t.all_to_all(x, "x")                     # doctest: +SKIP
    """

    # MPI_Alltoall of a leading device axis only: no splits, shifts or swaps
    capabilities = TransportCapabilities()

    def __init__(self, comms: dict, coords: dict):
        if set(comms) != set(coords):
            raise ValueError(f"MPITransport: communicators for {sorted(map(str, comms))} but "
                             f"coordinates for {sorted(map(str, coords))}")
        self.comms = dict(comms)
        self.coords = {m: int(c) for m, c in coords.items()}

    def all_to_all(self, x: jax.Array, mesh_axis: str) -> jax.Array:
        """Send ``x[j]`` to member ``j`` of ``mesh_axis``; ``out[j]`` comes from member ``j``.

        The leading axis of ``x`` has the communicator's size (every chunk the same
        size: the executor pads to equal chunks, as ``MPI_Alltoall`` needs).
        """
        comm = self.comms[mesh_axis]
        if x.shape[0] != comm.Get_size():
            raise ValueError(f"all_to_all over {mesh_axis!r}: leading axis {x.shape[0]} is not "
                             f"the communicator size {comm.Get_size()}")
        return mpi4jax.alltoall(x, comm=comm)

    def all_gather(self, x: jax.Array, mesh_axis: str, axis: int) -> jax.Array:
        """Concatenate the blocks of the ranks along ``mesh_axis`` on array axis ``axis``."""
        comm = self.comms[mesh_axis]
        g = mpi4jax.allgather(x, comm=comm)                  # (p, *x.shape), member order
        g = jnp.moveaxis(g, 0, axis)                         # (..., p, x.shape[axis], ...)
        shape = x.shape[:axis] + (g.shape[axis] * x.shape[axis],) + x.shape[axis + 1:]
        return g.reshape(shape)

    def axis_index(self, mesh_axis: str) -> int:
        """This rank's coordinate along ``mesh_axis`` (a constant: one program per rank)."""
        return self.coords[mesh_axis]

    def effects(self):
        """The JAX effects this transport's collectives have (mpi4jax's ordered effect)."""
        return _effects_of(next(iter(self.comms.values()))) if self.comms else frozenset()


_EFFECTS = None


def _effects_of(comm) -> frozenset:
    """The effects an mpi4jax collective on ``comm`` declares, read from its jaxpr."""
    global _EFFECTS
    if _EFFECTS is None:
        size = comm.Get_size()
        spec = jax.ShapeDtypeStruct((size, 1), jnp.float32)
        _EFFECTS = frozenset(jax.make_jaxpr(lambda x: mpi4jax.alltoall(x, comm=comm))(spec).effects)
    return _EFFECTS
