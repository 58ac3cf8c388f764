"""pfft.mpi.halo_exchange / halo_reduce against numpy, on every grid of the rank count.

Usage: ``mpirun -n N python halo.py``. The global array has integer values (as
floats), so every comparison is exact: the exchange against ``np.pad`` of the global
array (``mode="wrap"``, or zeros) cut to this rank's extended window; the reduction by
the dot-product test ``<E x, y> == <x, E^T y>`` summed over ranks; ``jax.grad`` of
``sum(halo_exchange(x) * w)`` against ``halo_reduce(w)``.
"""
from _common import COMM, RANK, SIZE, check, done, grids

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from mpi4py import MPI  # noqa: E402

import pfft.mpi  # noqa: E402

SHAPE = (8, 8, 12)         # divisible by every rank count along every split axis used


def integers(shape, seed):
    return np.random.default_rng(seed).integers(-9, 10, shape).astype(np.float64)


def block_slices(grid, split, shape):
    out = []
    for a, s in enumerate(split):
        if s is None:
            out.append(slice(0, shape[a]))
        else:
            nb = shape[a] // grid.dims[s]
            c = grid.coords[grid.names[s]]
            out.append(slice(c * nb, (c + 1) * nb))
    return tuple(out)


def reference(xg, sl, halo, periodic):
    """This rank's extended window of the padded global array."""
    padded = np.pad(xg, [(h, h) for h in halo], mode="wrap" if periodic else "constant")
    return padded[tuple(slice(s.start, s.stop + 2 * h) for s, h in zip(sl, halo))]


def check_one(grid, split, halo, periodic, seed):
    tag = f"grid {grid.dims} split {split} halo {halo} periodic={periodic}"
    kw = {} if split is None else {"split": split}
    split_ = split if split is not None else (0, 1 if len(grid.dims) > 1 else None, None)
    sl = block_slices(grid, split_, SHAPE)
    xg = integers(SHAPE, seed)
    x = jnp.asarray(xg[sl])

    # the exchange, eager and under jit
    got = pfft.mpi.halo_exchange(x, grid, halo, periodic, **kw)
    want = reference(xg, sl, halo, periodic)
    check(got.shape == want.shape, f"{tag}: shape {got.shape} != {want.shape}")
    check(np.array_equal(np.asarray(got), want), f"{tag}: exchange differs from numpy")
    if split is None and periodic:                   # inside a user's jit (once per grid)
        jitted = jax.jit(lambda b: pfft.mpi.halo_exchange(b, grid, halo, periodic, **kw))(x)
        check(np.array_equal(np.asarray(jitted), want), f"{tag}: jit(exchange) differs")

    # the reduction: <E x, y> == <x, E^T y>, summed over ranks
    y = jnp.asarray(integers(want.shape, seed + 1000 + RANK))
    r = pfft.mpi.halo_reduce(y, grid, halo, periodic, **kw)
    check(r.shape == x.shape, f"{tag}: reduce shape {r.shape} != {x.shape}")
    lhs = COMM.allreduce(float(np.vdot(np.asarray(got), np.asarray(y))), op=MPI.SUM)
    rhs = COMM.allreduce(float(np.vdot(np.asarray(x), np.asarray(r))), op=MPI.SUM)
    check(lhs == rhs, f"{tag}: <E x, y> = {lhs} != <x, E^T y> = {rhs}")

    # gradients: grad of the exchange is the reduction, and vice versa
    def loss(b):
        return jnp.sum(pfft.mpi.halo_exchange(b, grid, halo, periodic, **kw) * y)

    g = jax.jit(jax.grad(loss))(x)
    check(np.array_equal(np.asarray(g), np.asarray(r)), f"{tag}: grad(exchange) != reduce")
    _, vjp = jax.vjp(lambda c: pfft.mpi.halo_reduce(c, grid, halo, periodic, **kw), y)
    (gy,) = vjp(x)
    check(np.array_equal(np.asarray(gy), want), f"{tag}: vjp(reduce) != exchange")


def check_errors(grid):
    x = jnp.zeros((2, 8, 6)) if grid.dims[0] == 4 else jnp.zeros((4, 8, 6))
    for bad, word in [((1, 1), "one entry per array axis"), ((1, -1, 0), "non-negative"),
                      ((5, 0, 0), "exceeds the local block size")]:
        try:
            pfft.mpi.halo_exchange(x, grid, bad)
        except ValueError as err:
            check("halo" in str(err) and word in str(err), f"halo={bad}: message {err}")
        else:
            check(False, f"halo={bad}: no ValueError")
    try:
        pfft.mpi.halo_reduce(jnp.zeros((4, 8, 6)), grid, (2, 0, 0))
    except ValueError as err:
        check("3*halo" in str(err), f"reduce: message {err}")
    else:
        check(False, "halo_reduce with a too-short block: no ValueError")
    try:
        pfft.mpi.halo_exchange(x, grid, 1, split=(0, 0, None))
    except ValueError as err:
        check("split" in str(err), f"split: message {err}")
    else:
        check(False, "split using a grid dim twice: no ValueError")
    if SIZE > 1:                                     # uneven blocks along axis 0
        try:
            pfft.mpi.halo_exchange(jnp.zeros((2 + (RANK == 0), 8, 6)), grid, 1)
        except ValueError as err:
            check("uneven" in str(err), f"uneven: message {err}")
        else:
            check(False, "uneven blocks: no ValueError")


def main():
    seed = 0
    for dims in grids(SIZE):
        grid = pfft.mpi.ProcessGrid(COMM, dims)
        other = (None, 0, 1) if len(dims) == 2 else (None, None, 0)
        cases = [(None, (1, 2, 1), True), (None, (2, 1, 0), False), (other, (1, 1, 2), True),
                 (other, (0, 2, 3), False)]
        for split, halo, periodic in cases:
            seed += 1
            check_one(grid, split, halo, periodic, seed)
    check_errors(pfft.mpi.ProcessGrid(COMM, (SIZE,)))
    done("halo")


if __name__ == "__main__":
    main()
