"""Real-to-real (DCT/DST) and mixed-kind plans over MPI, against scipy.fft.

Usage: ``mpirun -n N python r2r.py``. On every rank, in float64:

- ``pfft.mpi.plan(..., kinds=(f"{family}{t}",) * d)`` (``dctn``/``dstn`` types 1-4)
  with every norm and ``orthogonalize`` on even and uneven shapes (balanced blocks,
  padded by the plan: the padding must not leak into a transform), this rank's block
  of the forward against ``scipy.fft.dctn``/``dstn`` of the global array and the
  backward against the input;
- mixed ``("fft", "rfft", "dst1")`` plans (and one with a padded spectrum) forward
  and backward against numpy and scipy axis by axis;
- the per-kind wavenumbers of this rank's output block against
  :func:`pfft.r2rfreq` (``fftfreq``, ``rfftfreq`` on the others), and
  ``k2`` from them;
- the gradient of a weighted sum of squares of a mixed and of an all-r2r plan's
  forward against ``pfft.plan`` on this rank's one device (the whole array).
"""
from _common import COMM, RANK, SIZE, check, done, gather, grids, random_global, rel_err

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import scipy.fft as sf  # noqa: E402

import pfft  # noqa: E402
import pfft.mpi  # noqa: E402
from pfft.frequencies import r2r_frequencies  # noqa: E402

# measured on the development box: <= 1.1e-15 (transforms), <= 6e-16 (gradients)
TOL = 1e-13
NORMS = ("backward", "ortho", "forward")
ORTHS = (None, True, False)
KINDS = tuple(f"{f}{t}" for f in ("dct", "dst") for t in (1, 2, 3, 4))
# even over 2 and 4 ranks, uneven everywhere (odd sizes: 9 over 4 is 3, 2, 2, 2), and
# a batch axis in front with the transform on the others
SHAPES = [((8, 12, 4), None), ((9, 7, 5), None), ((3, 9, 6, 7), (1, 3))]
SCIPY = {("dct", False): sf.dctn, ("dct", True): sf.idctn, ("dst", False): sf.dstn,
         ("dst", True): sf.idstn}
worst = {"transform": 0.0, "gradient": 0.0}


def close(got, want, tol, what, key="transform"):
    err = rel_err(got, want)
    worst[key] = max(worst[key], err)
    check(err <= tol, f"{what}: rel err {err:.2e} > {tol:.0e}")


def is_uneven(plan) -> bool:
    """Some block of this plan is padded: a split axis the grid does not divide."""
    return not (plan.chain.in_layout.is_even() and plan.chain.out_layout.is_even())


def check_r2rn(grid, kind, shape, axes, norm, orth, seed):
    family, t = kind[:3], int(kind[3])
    x = random_global(shape, np.float64, seed)
    ax = tuple(range(len(shape))) if axes is None else axes
    tag = f"{kind} {shape} axes={axes} {norm} orthogonalize={orth} on {grid.dims}"
    plan = pfft.mpi.plan(shape, np.float64, grid, axes=axes, norm=norm,
                         kinds=(kind,) * len(ax), orthogonalize=orth)
    check(plan.in_dtype == plan.out_dtype == np.float64, f"{tag}: dtypes {plan.in_dtype} "
                                                         f"{plan.out_dtype}")
    y = plan.forward(jnp.asarray(x[plan.local_in_slices]))
    check(y.shape == plan.local_out_shape and y.dtype == np.float64, f"{tag}: {y.shape} {y.dtype}")
    want = SCIPY[family, False](x, t, axes=ax, norm=norm, orthogonalize=orth)
    close(y, want[plan.local_out_slices], TOL, f"{tag} forward")
    back = plan.backward(y)
    close(back, x[plan.local_in_slices], TOL, f"{tag} backward")
    # the inverse is scipy's inverse, also on other data than a forward's output
    z = random_global(plan.out_shape, np.float64, seed + 1)
    back = plan.backward(jnp.asarray(z[plan.local_out_slices]))
    close(back, SCIPY[family, True](z, t, axes=ax, norm=norm, orthogonalize=orth)
          [plan.local_in_slices], TOL, f"{tag} inverse")
    return is_uneven(plan)


def mixed_reference(x, axes, kinds, norm):
    """numpy/scipy axis by axis: the r2r axes, then the halved one, then the FFTs."""
    by = dict(zip(axes, kinds))
    y = x
    for a in axes:
        if by[a] in KINDS:
            y = SCIPY[by[a][:3], False](y, int(by[a][3]), axes=(a,), norm=norm)
    for a in axes:
        if by[a] == "rfft":
            y = np.fft.rfft(y, axis=a, norm=norm)
    ffts = tuple(a for a in axes if by[a] == "fft")
    return np.fft.fftn(y, axes=ffts, norm=norm) if ffts else y


def check_mixed(grid, shape, kinds, norm, seed, spectrum="numpy"):
    axes = tuple(range(len(shape)))
    tag = f"mixed {kinds} {shape} {norm} {spectrum} on {grid.dims}"
    plan = pfft.mpi.plan(shape, np.float64, grid, norm=norm, kinds=kinds, spectrum=spectrum)
    check(plan.kind == "r2c" and plan.kinds == kinds, f"{tag}: {plan.kind} {plan.kinds}")
    x = random_global(shape, np.float64, seed)
    k = plan.forward(jnp.asarray(x[plan.local_in_slices]))
    check(k.shape == plan.local_out_shape and k.dtype == np.complex128, f"{tag}: {k.shape} "
                                                                        f"{k.dtype}")
    want = mixed_reference(x, axes, kinds, norm)
    if spectrum == "numpy":
        close(k, want[plan.local_out_slices], TOL, f"{tag} forward")
    else:                   # this rank's part first, zeros after (gather checks them)
        close(gather(k, plan.local_out_slices, want.shape), want, TOL, f"{tag} forward")
    back = plan.backward(k)
    check(back.dtype == np.float64, f"{tag}: backward dtype {back.dtype}")
    close(back, x[plan.local_in_slices], TOL, f"{tag} backward")
    check_wavenumbers(plan, tag)
    return plan, is_uneven(plan)


def check_wavenumbers(plan, tag):
    """This rank's block of each axis's values: Fourier, halved or r2r modes."""
    real = plan.chain.real_stage
    for angular in (False, True):
        ks = plan.wavenumbers(0.25, angular=angular)
        check(len(ks) == len(plan.axes), f"{tag}: {len(ks)} wavenumber arrays")
        for a, k in zip(sorted(plan.axes), ks):
            kind = plan.kinds[plan.axes.index(a)]
            n = plan.shape[a]
            if kind in KINDS:
                freq = r2r_frequencies(kind, n, 0.25)
            elif real is not None and a == real.axis:
                freq = np.fft.rfftfreq(n, 0.25)
            else:
                freq = np.fft.fftfreq(n, 0.25)
            if angular:
                freq = 2 * np.pi * freq
            part = freq[plan.local_out_slices[a]]
            part = np.pad(part, (0, plan.local_out_shape[a] - part.size))
            want = np.ones([1] * a + [part.size] + [1] * (len(plan.shape) - a - 1))
            want = want * part.reshape(want.shape)
            check(k.shape == want.shape and np.array_equal(np.asarray(k), want),
                  f"{tag}: wavenumbers of axis {a} ({kind}, angular={angular}): "
                  f"{np.ravel(k)} vs {np.ravel(want)}")
    k2 = plan.k2(0.25)
    want = sum(np.asarray(k) ** 2 for k in plan.wavenumbers(0.25)) * np.ones(plan.local_out_shape)
    close(k2, want, 1e-15, f"{tag}: k2")


def check_gradient(grid, shape, kinds, norm, orth, seed):
    """jax.grad of sum(w |forward(x)|^2) over this rank's block: this rank's block of
    the single-process gradient of the whole sum (the transposed plan runs collectively)."""
    tag = f"grad {kinds} {shape} {norm} orthogonalize={orth} on {grid.dims}"
    mp = pfft.mpi.plan(shape, np.float64, grid, norm=norm, kinds=kinds, orthogonalize=orth)
    xp = pfft.plan(shape, np.float64, None, norm=norm, kinds=kinds, orthogonalize=orth)
    x = random_global(shape, np.float64, seed)
    w = random_global(xp.out_shape, np.float64, seed + 1) ** 2
    wl = jnp.asarray(w[mp.local_out_slices])

    def loss_mpi(a):
        return jnp.sum(jnp.abs(mp.forward(a)) ** 2 * wl)

    def loss_one(a):
        return jnp.sum(jnp.abs(xp.forward(a)) ** 2 * w)

    want = np.asarray(jax.grad(loss_one)(jnp.asarray(x)))
    got = jax.jit(jax.grad(loss_mpi))(jnp.asarray(x[mp.local_in_slices]))
    check(got.shape == mp.local_in_shape, f"{tag}: {got.shape}")
    close(got, want[mp.local_in_slices], TOL, tag, "gradient")
    # the whole loss: the ranks' shares add up to the single-process value
    total = COMM.allreduce(float(jax.jit(loss_mpi)(jnp.asarray(x[mp.local_in_slices]))))
    close(total, float(loss_one(jnp.asarray(x))), TOL, f"{tag}: loss", "gradient")


def main():
    uneven = 0
    count = 0
    all_grids = grids(SIZE)
    default = pfft.mpi.ProcessGrid(COMM)
    for g, dims in enumerate(all_grids):
        grid = default if tuple(dims) == default.dims else pfft.mpi.ProcessGrid(COMM, dims)
        # every kind on the default grid; two on each other grid
        kinds = KINDS if grid is default else KINDS[g % 4::4]
        for i, kind in enumerate(kinds):
            j = i + g
            shape, axes = SHAPES[j % len(SHAPES)]
            uneven += check_r2rn(grid, kind, shape, axes, NORMS[j % 3], ORTHS[(j // 3) % 3],
                                 seed=10 * j)
            count += 1
    for shape in ((8, 12, 6), (9, 7, 5)):
        _, u = check_mixed(default, shape, ("fft", "rfft", "dst1"), "ortho", seed=3)
        uneven += u
        count += 1
    _, u = check_mixed(default, (7, 6, 9), ("dct2", "fft", "rfft"), "backward", seed=4,
                       spectrum="padded")
    uneven += u
    check_gradient(default, (9, 7, 5), ("fft", "rfft", "dst1"), "backward", None, seed=5)
    check_gradient(default, (6, 5, 7), ("dct1", "dst2", "dct4"), "ortho", False, seed=6)
    if SIZE > 1:
        check(uneven > 0, "no case had uneven blocks")
    # the cache key holds kinds and orthogonalize
    a = pfft.mpi.plan((8, 12, 6), np.float64, default, kinds=("dct2",) * 3, norm="ortho")
    check(pfft.mpi.plan((8, 12, 6), "float64", default, kinds=["dct2"] * 3, norm="ortho") is a,
          "an equal plan with kinds is not cached")
    check(pfft.mpi.plan((8, 12, 6), np.float64, default, kinds=("dct2",) * 3, norm="ortho",
                        orthogonalize=False) is not a, "orthogonalize is not in the cache key")
    check(pfft.mpi.plan((8, 12, 6), np.float64, default, kinds=("dst2",) * 3,
                        norm="ortho") is not a, "kinds are not in the cache key")
    check(pfft.mpi.plan((8, 12, 6), np.complex128, default, kinds=("fft",) * 3) is
          pfft.mpi.plan((8, 12, 6), np.complex128, default), "all-fft kinds: not the FFT plan")
    shown = pfft.mpi.plan((9, 7, 5), np.float64, default, kinds=("fft", "rfft", "dst1"),
                          norm="ortho")
    if RANK == 0:
        print(shown)
        print(f"worst rel err: transforms {worst['transform']:.2e}, "
              f"gradients {worst['gradient']:.2e}; {uneven} uneven cases")
    done(f"r2r ({count} plans)")


if __name__ == "__main__":
    main()
