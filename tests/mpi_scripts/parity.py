"""One plan core: ``pfft.mpi.plan`` behaves as ``pfft.plan`` does.

Usage: ``mpirun -n N python parity.py``. On every grid of the ranks, against
``pfft.plan`` on this rank's one device (the whole array: the reference):

- the same arguments (``inspect.signature``, but for the mesh and the grid);
- the same errors (type and text after the entry point's name) for bad arguments
  (``kinds`` and ``orthogonalize`` included) and lossy casts;
- the same dtypes (computed in, in and out) for every input dtype and kind, and for
  real-to-real and mixed ``kinds``;
- balanced blocks, checked against the rule written out here (the first ``n % p``
  ranks one point more), covering the array;
- the same features with the same values: dealiasing (``padding``), wavenumbers,
  ``k2``, ``vmap``, and ``tune`` (measure, then wisdom gives the same grid; each
  rank's FFT steps timed and filed where the engine chooses per step).
"""
from _common import COMM, RANK, SIZE, check, done, gather, grids, random_global, rel_err

import inspect  # noqa: E402

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import scipy.fft  # noqa: E402

import pfft  # noqa: E402
import pfft.mpi  # noqa: E402

ENTRY = {"plan": pfft.plan, "pfft.mpi.plan": pfft.mpi.plan}


def check_signatures():
    xla = inspect.signature(pfft.plan).parameters
    mpi = inspect.signature(pfft.mpi.plan).parameters
    only_xla = set(xla) - set(mpi)
    only_mpi = set(mpi) - set(xla)
    check(only_xla == {"mesh"} and only_mpi == {"grid"},
          f"arguments differ: only pfft.plan {only_xla}, only pfft.mpi.plan {only_mpi}")
    for name in set(xla) & set(mpi):
        check(xla[name].default == mpi[name].default,
              f"default of {name}: {xla[name].default!r} vs {mpi[name].default!r}")


def _error(fn):
    """(type, text without the entry point's name) of what ``fn()`` raises, or None."""
    try:
        fn()
    except (TypeError, ValueError) as err:
        text = str(err)
        for where in ("pfft.mpi.plan: ", "plan: ", "MPI plan: "):
            text = text.removeprefix(where)
        return type(err).__name__, text
    return None


BAD = [((8, 8, 8), "complex64", dict(norm="nope")),
       ((8, 8, 8), "complex64", dict(kind="c2r")),
       ((8, 8, 8), "complex64", dict(spectrum="padded")),
       ((8, 8, 8), "float32", dict(kind="r2c", spectrum="half")),
       ((8, 8, 8), "complex64", dict(padding=0.5)),
       ((8, 8, 8), "complex64", dict(padding="lots")),
       ((8, 8, 8), "complex64", dict(axes=(0, 0))),
       ((8, 8, 8), "complex64", dict(axes=(3,))),
       ((8, 8, 8), "complex64", dict(axes=())),
       ((8, 0, 8), "complex64", {}),
       ((), "complex64", {}),
       ((8, 8, 8), "U3", {}),
       ((8, 8, 8), "not a dtype", {}),
       ((8, 8, 8), "complex64", dict(tune="always")),
       # real-to-real and mixed kinds: one check for both entry points
       ((8, 8, 6), "float64", dict(kinds=("dct2",))),
       ((8, 8, 6), "float64", dict(axes=(0, 2), kinds=("dct2",) * 3)),
       ((8, 8, 6), "float64", dict(kinds=("dct5", "fft", "fft"))),
       ((8, 8, 6), "float64", dict(kinds=(2, "fft", "fft"))),
       ((8, 8, 6), "float64", dict(kinds=("rfft", "rfft", "fft"))),
       ((8, 8, 6), "float64", dict(kinds="dct2")),
       ((8, 8, 6), "float64", dict(kinds=5)),
       ((8, 8, 6), "float64", dict(kinds=("fft", "fft", "dct2"), kind="r2c")),
       ((8, 8, 6), "float64", dict(kinds=("fft", "fft", "dct2"), padding=1.5)),
       ((8, 8, 6), "float64", dict(kinds=("fft", "fft", "dct2"), tune="always")),
       ((8, 8, 6), "float64", dict(kinds=("dct2",) * 3, orthogonalize=1)),
       ((8, 8, 6), "float64", dict(kinds=("dct2",) * 3, spectrum="padded")),
       ((8, 1, 6), "float64", dict(kinds=("dct1",) * 3)),
       ((8, 8, 6), "U3", dict(kinds=("dct2",) * 3))]


def check_errors(grid):
    for shape, dtype, kw in BAD:
        xla = _error(lambda: pfft.plan(shape, dtype, None, **kw))
        mpi = _error(lambda: pfft.mpi.plan(shape, dtype, grid, **kw))
        check(xla is not None and xla == mpi, f"{shape} {dtype} {kw}: {xla} vs {mpi}")
    # lossy casts into a plan: refused alike
    for dtype, kind, given in (("complex64", "c2c", np.complex128),
                               ("float32", "r2c", np.float64),
                               ("float32", "r2c", np.complex64)):
        xp = pfft.plan((8, 6, 4), dtype, None, kind=kind)
        mp = pfft.mpi.plan((8, 6, 4), dtype, grid, kind=kind)
        xla = _error(lambda: xp.forward(jnp.zeros(xp.in_shape, given)))
        mpi = _error(lambda: mp.forward(jnp.zeros(mp.local_in_shape, given)))
        check(xla is not None and xla == mpi, f"cast {given} into {dtype}: {xla} vs {mpi}")


def check_in_sharding(grid):
    """A given input layout: the same errors, and numpy's values from blocks cut that
    way (balanced where uneven: MPI blocks may be, JAX arrays may not)."""
    from jax.sharding import PartitionSpec as P

    names = grid.names
    # pfft.plan on this rank's one device, on a mesh with the grid's axis names
    mesh = pfft.make_mesh((1,) * len(names), jax.devices()[:1], axis_names=names)
    bad = [(P("nope"), {}), (P(names[0], names[0]), {}), ("x", {}),
           (P(*names), dict(tune="wisdom")), (P(None, None, None, names[0]), {})]
    for spec, kw in bad:
        xla = _error(lambda: pfft.plan((8, 8, 8), "complex64", mesh, in_sharding=spec, **kw))
        mpi = _error(lambda: pfft.mpi.plan((8, 8, 8), "complex64", grid, in_sharding=spec, **kw))
        check(mpi is not None and xla == mpi,
              f"in_sharding {spec} {kw}: {xla} vs {mpi}")
    specs = [P(None, *names), P(names[-1], None, None), P(None, None, names[0])]
    if len(grid.mesh_shape) == 2:                 # an axis split over both grid axes at once
        specs += [P(None, tuple(names), None), P(None, None, tuple(reversed(names)))]
    for spec in specs:
        plan = pfft.mpi.plan((9, 10, 7), "complex128", grid, in_sharding=spec)
        layout = plan.chain.in_layout
        for a, entry in enumerate(layout.split):
            if isinstance(entry, tuple):    # major first, as ranks are numbered
                (m, _), (n, q) = [(e, dict(grid.mesh_shape)[e]) for e in entry]
                want = balanced(layout.shape[a], layout.parts(a),
                                grid.coords[m] * q + grid.coords[n])
            elif entry is not None:
                want = balanced(layout.shape[a], dict(grid.mesh_shape)[entry], grid.coords[entry])
            if entry is not None:
                check(plan.local_in_slices[a] == want, f"in_sharding {spec}: axis {a} "
                                                       f"{plan.local_in_slices[a]} vs {want}")
        x = random_global((9, 10, 7), np.complex128, 8)
        k = plan.forward(jnp.asarray(x[plan.local_in_slices]))
        err = rel_err(gather(k, plan.local_out_slices, x.shape), np.fft.fftn(x))
        check(err <= 1e-12, f"in_sharding {spec} on {grid.dims}: err {err}")
    # a real transform whose halved axis is split: two exchanges (the planner's search
    # moves that split onto the other split axis first on a pencil), numpy's values
    spec = P(None, *names) if len(names) == 2 else P(None, None, names[0])
    plan = pfft.mpi.plan((8, 12, 10), "float64", grid, kind="r2c", in_sharding=spec)
    sizes = dict(grid.mesh_shape)
    # split halved axis: two; else a slab (one) or a single rank (none)
    want_exchanges = 2 if sizes.get(names[-1], 1) > 1 else 1 if SIZE > 1 else 0
    check(plan.chain.exchanges == want_exchanges,
          f"r2c in_sharding {spec} on {grid.dims}: {plan.chain.exchanges} exchanges")
    x = random_global((8, 12, 10), np.float64, 9)
    k = plan.forward(jnp.asarray(x[plan.local_in_slices]))
    want = np.fft.rfftn(x)
    err = rel_err(gather(k, plan.local_out_slices, want.shape), want)
    check(err <= 1e-12, f"r2c in_sharding {spec} on {grid.dims}: err {err}")
    back = plan.backward(k)
    err = rel_err(gather(back, plan.local_in_slices, x.shape), x)
    check(err <= 1e-12, f"r2c in_sharding {spec} on {grid.dims}: round trip err {err}")


def check_dtypes(grid):
    for dtype in ("float32", "float64", "complex64", "complex128", "int32", "bool"):
        for kind in ("c2c", "r2c"):
            if kind == "r2c" and "complex" in dtype:
                continue
            xp = pfft.plan((8, 6, 4), dtype, None, kind=kind)
            mp = pfft.mpi.plan((8, 6, 4), dtype, grid, kind=kind)
            got = (mp.dtype, mp.in_dtype, mp.out_dtype, mp.real_dtype)
            want = (xp.dtype, xp.in_dtype, xp.out_dtype, xp.real_dtype)
            check(got == want, f"{dtype} {kind}: dtypes {got} vs pfft.plan's {want}")
        # plans with kinds: real-to-real keeps real data real, mixed ones compute complex
        for kinds in (("dct2", "dst1", "dct4"), ("fft", "rfft", "dst3"), ("dct1", "fft", "fft")):
            if "rfft" in kinds and "complex" in dtype:
                continue
            xp = pfft.plan((8, 6, 4), dtype, None, kinds=kinds)
            mp = pfft.mpi.plan((8, 6, 4), dtype, grid, kinds=kinds)
            got = (mp.dtype, mp.in_dtype, mp.out_dtype, mp.real_dtype, mp.kind, mp.kinds)
            want = (xp.dtype, xp.in_dtype, xp.out_dtype, xp.real_dtype, xp.kind, xp.kinds)
            check(got == want, f"{dtype} {kinds}: {got} vs pfft.plan's {want}")


def balanced(n: int, p: int, j: int) -> slice:
    """mpi4py-fft's cut, written out: the first n % p blocks one point longer."""
    sizes = [n // p + (i < n % p) for i in range(p)]
    return slice(sum(sizes[:j]), sum(sizes[:j + 1]))


def check_balanced_blocks(grid):
    for shape in ((9, 10, 7), (5, 3, 8), (7, 9, 11)):
        plan = pfft.mpi.plan(shape, "complex128", grid)
        for layout, slices in ((plan.chain.in_layout, plan.local_in_slices),
                               (plan.chain.out_layout, plan.local_out_slices)):
            for a, entry in enumerate(layout.split):
                if entry is None:
                    want = slice(0, layout.shape[a])
                else:
                    want = balanced(layout.shape[a], dict(grid.mesh_shape)[entry], grid.coords[entry])
                check(slices[a] == want, f"{shape} axis {a} on {grid.dims}: block {slices[a]}, "
                                         f"balanced {want}")
        x = random_global(shape, np.complex128, 3)
        k = plan.forward(jnp.asarray(x[plan.local_in_slices]))
        err = rel_err(gather(k, plan.local_out_slices, shape), np.fft.fftn(x))
        check(err <= 1e-12, f"balanced {shape} on {grid.dims}: err {err}")


def check_features(grid):
    # dealiasing: the same spectrum as pfft.plan's, block by block
    for kind, dtype in (("c2c", "complex128"), ("r2c", "float64")):
        xp = pfft.plan((8, 6, 10), dtype, None, kind=kind, padding=1.5, norm="ortho")
        mp = pfft.mpi.plan((8, 6, 10), dtype, grid, kind=kind, padding=1.5, norm="ortho")
        check(mp.in_shape == xp.in_shape and mp.spectral_shape == xp.spectral_shape,
              f"padding: shapes {mp.in_shape} {mp.spectral_shape} vs {xp.in_shape} "
              f"{xp.spectral_shape}")
        x = random_global(xp.in_shape, dtype, 4)
        want = np.asarray(xp.forward(x))
        k = mp.forward(jnp.asarray(x[mp.local_in_slices]))
        err = rel_err(gather(k, mp.local_out_slices, want.shape), want)
        check(err <= 1e-12, f"padding {kind} on {grid.dims}: err {err}")
        back = mp.backward(k)
        err = rel_err(gather(back, mp.local_in_slices, xp.in_shape), np.asarray(xp.backward(want)))
        check(err <= 1e-12, f"padding {kind} backward on {grid.dims}: err {err}")
        # wavenumbers and k2: the same values, this rank's block of them
        for got, ref in zip(mp.wavenumbers(0.5, angular=True), xp.wavenumbers(0.5, angular=True)):
            a = int(np.argmax(ref.shape))
            sl = [slice(0, 1)] * ref.ndim
            sl[a] = mp.local_out_slices[a]
            check(np.array_equal(np.asarray(got), np.asarray(ref)[tuple(sl)]),
                  f"wavenumbers axis {a} on {grid.dims}")
        err = rel_err(gather(mp.k2(), mp.local_out_slices, want.shape), np.asarray(xp.k2()))
        check(err <= 1e-15, f"k2 on {grid.dims}: err {err}")
    # vmap over a batch of blocks: the plan with a leading axis
    plan = pfft.mpi.plan((6, 10, 4), "complex128", grid)
    xs = random_global((3, 6, 10, 4), np.complex128, 5)
    ks = jax.vmap(plan.forward)(jnp.stack([jnp.asarray(x[plan.local_in_slices]) for x in xs]))
    for x, k in zip(xs, ks):
        err = rel_err(gather(k, plan.local_out_slices, x.shape), np.fft.fftn(x))
        check(err <= 1e-12, f"vmap on {grid.dims}: err {err}")


def check_tune_mixed(grid):
    """A mixed plan: its own wisdom key, the tuned grid reused, scipy's numbers (run on
    2 ranks only: the candidate loop is the one check_tune covers)."""
    kinds = ("dct2", "fft", "rfft")
    mixed = pfft.mpi.plan((8, 12, 6), "float64", grid, kinds=kinds, tune="measure")
    check(pfft.mpi.plan((8, 12, 6), "float64", grid, kinds=kinds, tune="wisdom") is mixed,
          "tune='wisdom' did not give the tuned mixed plan")
    entries = [key for key in pfft.wisdom.entries() if '"transport": "mpi"' in key]
    check(len(entries) == 2 and any('"kinds": ["dct2", "fft", "rfft"]' in k for k in entries),
          f"wisdom: {entries}")
    x = random_global((8, 12, 6), np.float64, 7)
    k = mixed.forward(jnp.asarray(x[mixed.local_in_slices]))
    want = np.fft.rfftn(scipy.fft.dct(x, type=2, axis=0), axes=(1, 2))
    err = rel_err(gather(k, mixed.local_out_slices, want.shape), want)
    check(err <= 1e-12, f"tuned mixed plan: err {err}")


def check_tune_stages(grid):
    """With an engine that chooses per FFT step (``engine="auto"`` on GPUs; here the
    CPU kernels and lax.fft), ``pfft.mpi.tune`` times each rank's own steps and files
    the faster: the plan it returns runs them, with numpy's numbers."""
    from pfft.engines import choice
    from pfft.mpi import rank_plan
    from plan_steps import fft_steps

    made = rank_plan.engine_for_plan
    rank_plan.engine_for_plan = lambda name, devices, fuse="auto": choice.per_stage_engine(
        devices, "cpu")
    pfft.forget_wisdom()
    try:
        plan = pfft.mpi.tune((8, 12, 6), "complex64", grid, repeats=1, progress=False)
        filed = pfft.wisdom.stage_entries()
        steps = fft_steps(plan, jax.local_devices()[0].device_kind)
        check(bool(steps) and all(key in filed for key, _ in steps),
              f"steps {steps} not all filed in {list(filed)}")
        check([name for _, name in steps] == [filed[key]["engine"] for key, _ in steps],
              f"the tuned plan runs {steps}, wisdom says {filed}")
        x = random_global((8, 12, 6), np.complex64, 8)
        k = plan.forward(jnp.asarray(x[plan.local_in_slices]))
        err = rel_err(gather(k, plan.local_out_slices, x.shape), np.fft.fftn(x))
        check(err <= 1e-5, f"stage-tuned plan: err {err}")
    finally:
        rank_plan.engine_for_plan = made
        pfft.forget_wisdom()


def check_tune(grid):
    pfft.forget_wisdom()
    measured = pfft.mpi.plan((8, 12, 6), "float32", grid, kind="r2c", tune="measure")
    dims = measured.grid.dims
    check(dims in [tuple(g) for g in pfft.tuning.candidate_grids(SIZE)] or dims == grid.dims,
          f"tune chose {dims}")
    again = pfft.mpi.plan((8, 12, 6), "float32", grid, kind="r2c", tune="wisdom")
    check(again is measured, "tune='wisdom' did not give the tuned plan")
    entries = [key for key in pfft.wisdom.entries() if '"transport": "mpi"' in key]
    check(len(entries) == 1, f"wisdom: {list(pfft.wisdom.entries())}")
    x = random_global((8, 12, 6), np.float32, 6)
    k = again.forward(jnp.asarray(x[again.local_in_slices]))
    err = rel_err(gather(k, again.local_out_slices, (8, 12, 4)), np.fft.rfftn(x))
    check(err <= 1e-6, f"tuned plan: err {err}")
    if SIZE == 2:
        check_tune_mixed(grid)
        check_tune_stages(grid)
    # no wisdom: the grid given
    pfft.forget_wisdom()
    plain = pfft.mpi.plan((8, 12, 6), "float32", grid, kind="r2c", tune="wisdom")
    check(plain.grid is grid, "tune='wisdom' without wisdom changed the grid")


def main():
    check_signatures()
    for dims in grids(SIZE):
        grid = pfft.mpi.ProcessGrid(COMM, dims)
        check_errors(grid)
        check_in_sharding(grid)
        check_dtypes(grid)
        check_balanced_blocks(grid)
        check_features(grid)
    check_tune(pfft.mpi.ProcessGrid(COMM))
    shown = pfft.mpi.plan((9, 10, 7), "complex128", pfft.mpi.ProcessGrid(COMM))
    if RANK == 0:
        print(shown)
    done("parity with pfft.plan")


if __name__ == "__main__":
    main()
