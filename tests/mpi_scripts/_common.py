"""Shared set-up for scripts run under ``mpirun`` by ``tests/test_mpi.py``.

Import this first: it configures JAX (float64, one CPU device, one thread) before
anything starts the backend.
"""
from __future__ import annotations

import os
import sys

os.environ.setdefault("MPI4JAX_NO_WARN_JAX_VERSION", "1")
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import numpy as np  # noqa: E402
from mpi4py import MPI  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from numerics import rel_err  # noqa: E402,F401  (tests/numerics.py, shared with pytest)

jax.config.update("jax_enable_x64", True)

COMM = MPI.COMM_WORLD
RANK, SIZE = COMM.Get_rank(), COMM.Get_size()
TOL = {np.dtype(np.complex64): 1e-6, np.dtype(np.complex128): 1e-12}
OK_MARKER = "PFFT_MPI_OK"


def grids(n: int) -> list[tuple[int, ...]]:
    """Every 1-D and 2-D grid of ``n`` ranks: ``(n,)``, then ``(a, n // a)``."""
    return [(n,)] + [(a, n // a) for a in range(1, n + 1) if n % a == 0]


def random_global(shape, dtype, seed: int = 0) -> np.ndarray:
    """The same random array on every rank."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    if np.issubdtype(np.dtype(dtype), np.complexfloating):
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def gather(block, slices, shape) -> np.ndarray:
    """The global array (``shape``) assembled on every rank from each rank's block.

    A block longer than its slices (a padded spectrum's) holds its points first:
    the rest must be zeros, and is cropped.
    """
    block = np.asarray(block)
    extent = tuple(s.stop - s.start for s in slices)
    if block.shape != extent:
        assert len(block.shape) == len(extent) and all(
            b >= e for b, e in zip(block.shape, extent)), (block.shape, slices)
        pad = np.ones(block.shape, bool)
        pad[tuple(slice(0, e) for e in extent)] = False
        check(not np.any(block[pad]), f"the padding of a {block.shape} block is not zero")
        block = block[tuple(slice(0, e) for e in extent)]
    out = np.zeros(shape, dtype=block.dtype)
    seen = np.zeros(shape, dtype=bool)
    for blk, sl in COMM.allgather((block, slices)):
        out[sl] = blk
        seen[sl] = True
    assert seen.all(), "the ranks' blocks do not cover the global array"
    return out


def block_of(global_array, slices, block_shape) -> np.ndarray:
    """This rank's block of ``global_array``, zero-padded at its end to ``block_shape``
    (a padded spectrum's block)."""
    part = global_array[tuple(slices)]
    return np.pad(part, [(0, b - n) for n, b in zip(part.shape, block_shape)])


def check(cond: bool, message: str) -> None:
    """Assert on every rank; a failure names the rank."""
    if not cond:
        raise AssertionError(f"rank {RANK}/{SIZE}: {message}")


def done(name: str) -> None:
    """Print the success marker once every rank got here."""
    COMM.Barrier()
    if RANK == 0:
        print(f"{OK_MARKER} {name} on {SIZE} ranks", flush=True)
    sys.stdout.flush()


__all__ = ["COMM", "RANK", "SIZE", "TOL", "OK_MARKER", "grids", "rel_err", "random_global",
           "gather", "check", "done"]
