"""Gradients (grad, vjp, jvp, vmap) of MPI plans against jax.numpy.fft on the whole array.

Usage: ``mpirun -n N python gradients.py``. Every rank differentiates its own part of
a loss; the collective transposed plan must give each rank its block of the
single-process gradient of the whole loss.
"""
from _common import COMM, SIZE, block_of, check, done, gather, random_global, rel_err

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import pfft.mpi  # noqa: E402

GTOL = {np.dtype(np.complex64): 2e-6, np.dtype(np.complex128): 1e-12}


def same(got, want, tol, what):
    err = rel_err(got, want)
    check(err <= tol, f"{what}: rel err {err} > {tol}")


def check_c2c(grid, shape, dtype, norm):
    dtype = np.dtype(dtype)
    tol = GTOL[dtype]
    tag = f"c2c {shape} {dtype} {norm} {grid.dims}"
    plan = pfft.mpi.plan(shape, dtype, grid, norm=norm)
    xg = random_global(shape, dtype, 1)
    wg = random_global(plan.out_shape, np.float64, 2)
    ctg = random_global(plan.out_shape, dtype, 3)
    tg = random_global(shape, dtype, 4)
    x = jnp.asarray(xg[plan.local_in_slices])
    w = jnp.asarray(wg[plan.local_out_slices])

    def loss_local(x):
        return jnp.sum(jnp.abs(plan.forward(x)) ** 2 * w)

    def loss_global(x):
        return jnp.sum(jnp.abs(jnp.fft.fftn(x, norm=norm)) ** 2 * wg)

    ref = jax.grad(loss_global)(jnp.asarray(xg))
    got = jax.jit(jax.grad(loss_local))(x)
    same(gather(got, plan.local_in_slices, shape), ref, tol, f"{tag} jit(grad)")

    # vjp with a complex cotangent, jvp
    _, vjp = jax.vjp(plan.forward, x)
    (got,) = vjp(jnp.asarray(ctg[plan.local_out_slices]))
    _, vjp_ref = jax.vjp(lambda a: jnp.fft.fftn(a, norm=norm), jnp.asarray(xg))
    same(gather(got, plan.local_in_slices, shape), vjp_ref(jnp.asarray(ctg))[0], tol,
         f"{tag} vjp")
    y, ty = jax.jvp(plan.forward, (x,), (jnp.asarray(tg[plan.local_in_slices]),))
    same(gather(ty, plan.local_out_slices, plan.out_shape), np.fft.fftn(tg, norm=norm), tol,
         f"{tag} jvp")

    # the gradient through the inverse transform
    def loss_back(k):
        return jnp.sum(jnp.real(plan.backward(k)) * jnp.asarray(wg[plan.local_in_slices]))

    k = jnp.asarray(ctg[plan.local_out_slices])
    ref = jax.grad(lambda a: jnp.sum(jnp.real(jnp.fft.ifftn(a, norm=norm)) * wg))(jnp.asarray(ctg))
    got = jax.jit(jax.grad(loss_back))(k)
    same(gather(got, plan.local_out_slices, plan.out_shape), ref, tol, f"{tag} grad(backward)")

    # vmap: a batch of two blocks, and vmap of grad
    xs = jnp.stack([x, jnp.asarray(tg[plan.local_in_slices])])
    ys = jax.jit(jax.vmap(plan.forward))(xs)
    same(gather(ys[0], plan.local_out_slices, plan.out_shape), np.fft.fftn(xg, norm=norm), tol,
         f"{tag} vmap[0]")
    same(gather(ys[1], plan.local_out_slices, plan.out_shape), np.fft.fftn(tg, norm=norm), tol,
         f"{tag} vmap[1]")
    gs = jax.jit(jax.vmap(jax.grad(loss_local)))(xs)
    same(gather(gs[1], plan.local_in_slices, shape), jax.grad(loss_global)(jnp.asarray(tg)), tol,
         f"{tag} vmap(grad)")


def check_r2c(grid, shape, dtype, norm, spectrum):
    dtype = np.dtype(dtype)
    real = np.finfo(dtype).dtype
    tol = GTOL[dtype]
    tag = f"r2c {shape} {dtype} {norm} {spectrum} {grid.dims}"
    plan = pfft.mpi.plan(shape, real, grid, norm=norm, kind="r2c", spectrum=spectrum)
    spec = np.fft.rfftn(np.zeros(shape)).shape
    xg = random_global(shape, real, 5)
    ag = random_global(spec, dtype, 6)
    x = jnp.asarray(xg[plan.local_in_slices])
    a = jnp.asarray(block_of(ag, plan.local_out_slices, plan.local_out_shape))

    def loss_local(x):
        k = plan.forward(x)
        return jnp.sum(jnp.real(k) * jnp.real(a) + jnp.imag(k) * jnp.imag(a))

    def loss_global(x):
        k = jnp.fft.rfftn(x, norm=norm)
        return jnp.sum(jnp.real(k) * jnp.real(ag) + jnp.imag(k) * jnp.imag(ag))

    got = jax.jit(jax.grad(loss_local))(x)
    same(gather(got, plan.local_in_slices, shape), jax.grad(loss_global)(jnp.asarray(xg)), tol,
         f"{tag} grad(rfftn)")

    # the gradient through irfftn, with respect to the spectrum (zero in a padded
    # block's padding: gather checks it)
    cg = random_global(shape, real, 7)

    def back_local(k):
        return jnp.sum(plan.backward(k) * jnp.asarray(cg[plan.local_in_slices]))

    def back_global(k):
        return jnp.sum(jnp.fft.irfftn(k, s=shape, norm=norm) * cg)

    got = gather(jax.jit(jax.grad(back_local))(a), plan.local_out_slices, spec)
    same(got, jax.grad(back_global)(jnp.asarray(ag)), tol, f"{tag} grad(irfftn)")

    # vjp and jvp of rfftn
    _, vjp = jax.vjp(plan.forward, x)
    (got,) = vjp(a)
    _, vjp_ref = jax.vjp(lambda v: jnp.fft.rfftn(v, norm=norm), jnp.asarray(xg))
    same(gather(got, plan.local_in_slices, shape), vjp_ref(jnp.asarray(ag))[0], tol,
         f"{tag} vjp")
    _, ty = jax.jvp(plan.forward, (x,), (jnp.asarray(cg[plan.local_in_slices]),))
    same(gather(ty, plan.local_out_slices, spec), np.fft.rfftn(cg, norm=norm), tol,
         f"{tag} jvp")


def main():
    grids = [pfft.mpi.ProcessGrid(COMM)]
    if SIZE > 2:                         # two ranks: the default grid is already the slab
        grids.append(pfft.mpi.ProcessGrid(COMM, (SIZE,)))
    for i, grid in enumerate(grids):
        check_c2c(grid, (10, 6, 7), (np.complex128, np.complex64)[i], ("ortho", "backward")[i])
        check_r2c(grid, (6, 10, 8), np.complex128, ("forward", "backward")[i], "numpy")
        check_r2c(grid, (10, 6, 7), (np.complex64, np.complex128)[i], "ortho", "padded")
    done("autodiff")


if __name__ == "__main__":
    main()
