"""Moving arrays between the host and a mesh, also across processes (``jax.distributed``).

Under ``jax.distributed`` a global array's blocks live in several processes and no
process can read the whole of it, nor place a whole host array itself.
:func:`from_host` places a host array that every process holds (the same values) on
a sharding, each process putting only its own devices' blocks; :func:`to_host` brings
a global array's value to every host: a replicated array's own copy, or the blocks
of all processes gathered. In one process both are ``jax.device_put`` and
``numpy.asarray``.
"""
from __future__ import annotations

import jax
import numpy as np
from jax.sharding import Sharding

__all__ = ["from_host", "to_host"]


def from_host(a, sharding: Sharding) -> jax.Array:
    """``a`` (a host array, the same in every process) as a global array of
    ``sharding``: each process puts only the blocks of its own devices.

    Parameters
    ----------
    a
        numpy array (or anything ``numpy.asarray`` takes), the whole global value.
    sharding
        Where to put it, e.g. ``plan.in_sharding``; may span several processes.
    """
    a = np.asarray(a)
    return jax.make_array_from_callback(a.shape, sharding, lambda index: a[index])


def to_host(x) -> np.ndarray:
    """The value of ``x`` as a numpy array on this host, also where other processes
    hold some of its blocks.

    A replicated array gives this process's own copy; otherwise the blocks of every
    process are gathered (``jax.experimental.multihost_utils.process_allgather``): a
    collective, so every process must call it for the same array, and it moves the
    whole array to every host — bring spectra, scalars and slices, not fields.
    """
    if isinstance(x, jax.Array) and not x.is_fully_addressable:
        if x.is_fully_replicated:
            return np.asarray(x.addressable_data(0))
        from jax.experimental import multihost_utils

        return np.asarray(multihost_utils.process_allgather(x, tiled=True))
    return np.asarray(x)
