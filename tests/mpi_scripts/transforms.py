"""fftn/ifftn and rfftn/irfftn over MPI against numpy (float64), on every grid of the ranks.

Usage: ``mpirun -n N python transforms.py``. Each rank transforms its block; the
gathered result must match numpy on the whole array.
"""
from _common import (COMM, RANK, SIZE, TOL, check, done, gather, grids, random_global,
                     rel_err)

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import pfft.mpi  # noqa: E402

NORMS = ("backward", "ortho", "forward")
# divisible, uneven (10 over 4 ranks: 3, 3, 2, 2) and with a batch axis in front
CASES = [((8, 8, 6), None), ((10, 6, 7), None), ((3, 10, 5, 9), (1, 2, 3)),
         ((6, 5, 10), (0, 2))]


def check_c2c(grid, shape, axes, dtype, norm, seed):
    plan = pfft.mpi.plan(shape, dtype, grid, axes=axes, norm=norm)
    x = random_global(shape, dtype, seed)
    k = jax.jit(plan.forward)(jnp.asarray(x[plan.local_in_slices]))
    check(k.shape == plan.local_out_shape and k.dtype == dtype, f"{k.shape} {k.dtype}")
    ax = plan.axes
    want = np.fft.fftn(x.astype(np.complex128), axes=ax, norm=norm)
    err = rel_err(gather(k, plan.local_out_slices, plan.out_shape), want)
    check(err <= TOL[np.dtype(dtype)], f"fftn {shape} {axes} {dtype} {norm} {grid}: err {err}")
    back = plan.backward(k)
    err = rel_err(gather(back, plan.local_in_slices, plan.in_shape), x)
    check(err <= TOL[np.dtype(dtype)], f"ifftn {shape} {axes} {dtype} {norm} {grid}: err {err}")


def check_r2c(grid, shape, axes, dtype, norm, spectrum, seed):
    real = np.finfo(dtype).dtype
    plan = pfft.mpi.plan(shape, real, grid, axes=axes, norm=norm, kind="r2c", spectrum=spectrum)
    x = random_global(shape, real, seed)
    k = jax.jit(plan.forward)(jnp.asarray(x[plan.local_in_slices]))
    check(k.shape == plan.local_out_shape and k.dtype == dtype, f"{k.shape} {k.dtype}")
    ax = plan.axes
    want = np.fft.rfftn(x.astype(np.float64), axes=ax, norm=norm)
    got = gather(k, plan.local_out_slices, want.shape)   # a padded block's zeros checked
    err = rel_err(got, want)
    tag = f"rfftn {shape} {axes} {dtype} {norm} {spectrum} {grid}"
    check(err <= TOL[np.dtype(dtype)], f"{tag}: err {err}")
    back = jax.jit(plan.backward)(k)
    check(back.dtype == real, f"{tag}: irfftn dtype {back.dtype}")
    err = rel_err(gather(back, plan.local_in_slices, plan.in_shape), x)
    check(err <= TOL[np.dtype(dtype)], f"i{tag}: err {err}")


def check_plan_object(grid):
    """Cached, prints its chain, does not retrace in a loop, refuses wrong blocks."""
    plan = pfft.mpi.plan((10, 6, 7), np.complex64, grid, norm="ortho")
    check(pfft.mpi.plan((10, 6, 7), "complex64", grid, norm="ortho") is plan, "not cached")
    if RANK == 0:
        print(plan)
    x = plan.zeros_input()
    check(x.shape == plan.local_in_shape and x.dtype == np.complex64, f"{x.shape} {x.dtype}")
    plan.forward(x)
    traced = plan.trace_count
    for _ in range(3):
        x = plan.backward(plan.forward(x))
    check(plan.trace_count == traced, f"retraced: {traced} -> {plan.trace_count}")
    # a time-stepping loop inside jit (the collectives' ordered effect inside fori_loop)
    xg = random_global(plan.shape, np.complex64, 9)
    x = jnp.asarray(xg[plan.local_in_slices])
    step = jax.jit(lambda a: jax.lax.fori_loop(
        0, 3, lambda i, b: plan.backward(plan.forward(b) * 0.5), a))
    err = rel_err(gather(step(x), plan.local_in_slices, plan.in_shape), xg / 8)
    check(err <= 1e-6, f"fori_loop: err {err}")
    try:
        plan.forward(jnp.zeros((1, 1, 1), np.complex64))
        check(False, "a wrong block shape was accepted")
    except ValueError as err:
        check("expects a block of shape" in str(err), str(err))
    r2c = pfft.mpi.plan((10, 6, 7), "float32", grid, kind="r2c")
    try:
        r2c.forward(jnp.zeros(r2c.local_in_shape, np.complex64))
        check(False, "a complex block was accepted by a real plan")
    except TypeError as err:
        check("must be float32" in str(err), str(err))
    # the same dtype rule as pfft.plan: no lossy cast (complex128 into complex64)
    c2c = pfft.mpi.plan((10, 6, 7), "complex64", grid)
    try:
        c2c.forward(jnp.zeros(c2c.local_in_shape, np.complex128))
        check(False, "a complex128 block was cast to complex64 without a word")
    except TypeError as err:
        check("complex64" in str(err) and "complex128" in str(err), str(err))


def main():
    count = 0
    for g, dims in enumerate(grids(SIZE)):
        grid = pfft.mpi.ProcessGrid(COMM, dims)
        # a 2-D grid with a size-one axis is a slab over the other mesh axis name
        cases = CASES[1:3] if len(dims) == 2 and 1 in dims and SIZE > 1 else CASES
        for c, (shape, axes) in enumerate(cases):
            i = g + c
            dtype = (np.complex64, np.complex128)[i % 2]
            check_c2c(grid, shape, axes, dtype, NORMS[i % 3], seed=i)
            spectrum = ("numpy", "padded")[(i // 2) % 2]
            check_r2c(grid, shape, axes, (np.complex128, np.complex64)[i % 2], NORMS[(i + 1) % 3],
                      spectrum, seed=100 + i)
            count += 2
    # the other dtype, on the default grid, both spectra
    grid = pfft.mpi.ProcessGrid(COMM)
    for dtype in (np.complex64, np.complex128):
        check_c2c(grid, (10, 6, 7), None, dtype, "ortho", seed=7)
        for spectrum in ("numpy", "padded"):
            check_r2c(grid, (10, 6, 8), None, dtype, "backward", spectrum, seed=8)
    check_plan_object(grid)
    done(f"transforms ({count} grid/shape cases)")


if __name__ == "__main__":
    main()
