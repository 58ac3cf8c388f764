"""pfft.mpi's smaller public functions, on every grid of the ranks.

Usage: ``mpirun -n N python api.py``. ``mpi_layout`` against the rules its docstring
states (and the layout every plan starts from); the MPI plan cache (hits, misses,
size, ``clear_plan_cache``); ``MPIPlan.zeros_output`` (the block ``forward`` returns and
``backward`` takes); ``install_excepthook`` (installed once, by ``ProcessGrid`` unless
``abort_on_exception=False``; on one rank a no-op that lets the program go on).
"""
import sys

from _common import COMM, SIZE, check, done, grids

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import pfft.mpi  # noqa: E402

# (shape, axes, grid pairs) -> split: divisible first, else any axis at least as long as
# the grid axis (uneven blocks), else replicated; a batch axis the grid divides beats
# a transformed axis it does not
LAYOUTS = [
    (((10, 6, 7), (0, 1, 2), (("x", 2), ("y", 2))), ("x", "y", None)),
    (((9, 5, 7), (0, 1, 2), (("x", 2), ("y", 4))), ("x", "y", None)),
    (((6, 9, 8), (0, 1, 2), (("x", 4),)), ("x", None, None)),
    (((2, 3, 8), (0, 1, 2), (("x", 4),)), (None, None, None)),
    (((4, 9, 9, 8), (1, 2, 3), (("x", 2), ("y", 2))), ("x", "y", None, None)),
    (((12, 7, 5), (0, 2), (("x", 3), ("y", 2))), ("x", "y", None)),
]


def check_mpi_layout():
    for (shape, axes, grid), split in LAYOUTS:
        lay = pfft.mpi.mpi_layout(shape, axes, grid)
        check(isinstance(lay, pfft.Layout), f"mpi_layout returned {type(lay).__name__}")
        check(lay.shape == shape and lay.split == split and lay.mesh_shape == grid,
              f"mpi_layout{shape, axes, grid}: split {lay.split}, want {split}")


def check_plan_cache(grid):
    pfft.mpi.clear_plan_cache()
    info = pfft.mpi.plan_cache_info()
    check(info["size"] == 0, f"cleared cache holds {info['size']} plans")
    first = pfft.mpi.plan((8, 8, 6), "complex64", grid)
    after = pfft.mpi.plan_cache_info()
    check((after["misses"], after["hits"], after["size"]) ==
          (info["misses"] + 1, info["hits"], 1), f"new plan: {info} -> {after}")
    again = pfft.mpi.plan((8, 8, 6), "complex64", grid)
    hit = pfft.mpi.plan_cache_info()
    check(again is first, "the same arguments gave another plan")
    check((hit["misses"], hit["hits"], hit["size"]) == (after["misses"], after["hits"] + 1, 1),
          f"cached plan: {after} -> {hit}")
    other = pfft.mpi.plan((8, 8, 6), "complex64", grid, norm="ortho")
    two = pfft.mpi.plan_cache_info()
    check(other is not first and two["size"] == 2 and two["misses"] == hit["misses"] + 1,
          f"another norm: {hit} -> {two}")
    check(two["maxsize"] >= 2, f"maxsize {two['maxsize']}")
    pfft.mpi.clear_plan_cache()
    check(pfft.mpi.plan_cache_info()["size"] == 0, "clear_plan_cache left plans")
    fresh = pfft.mpi.plan((8, 8, 6), "complex64", grid)
    check(fresh is not first, "a plan survived clear_plan_cache")
    check(pfft.mpi.plan_cache_info()["misses"] == two["misses"] + 1, "no miss after clear")


def check_zeros_output(grid):
    cases = [((10, 6, 7), "complex64", "c2c", "numpy", np.complex64),
             ((10, 6, 7), "float64", "r2c", "numpy", np.complex128),
             ((8, 6, 10), "float32", "r2c", "padded", np.complex64)]
    for shape, dtype, kind, spectrum, out_dtype in cases:
        plan = pfft.mpi.plan(shape, dtype, grid, kind=kind, spectrum=spectrum)
        tag = f"zeros_output {shape} {dtype} {kind} {spectrum} {grid.dims}"
        z = plan.zeros_output()
        check(z.shape == plan.local_out_shape and z.dtype == out_dtype, f"{tag}: {z.shape} {z.dtype}")
        check(not np.any(np.asarray(z)), f"{tag}: not zeros")
        k = jax.jit(plan.forward)(jnp.ones(plan.local_in_shape, plan.in_dtype))
        check(k.shape == z.shape and k.dtype == z.dtype, f"{tag}: forward gives {k.shape} {k.dtype}")
        back = jax.jit(plan.backward)(z)
        check(back.shape == plan.local_in_shape and back.dtype == plan.in_dtype
              and not np.any(np.asarray(back)), f"{tag}: backward of zeros {back.shape} {back.dtype}")


def check_excepthook(grid_dims):
    before = sys.excepthook
    pfft.mpi.ProcessGrid(COMM, grid_dims, abort_on_exception=False)
    check(sys.excepthook is before, "abort_on_exception=False installed a hook")
    pfft.mpi.install_excepthook()
    hook = sys.excepthook
    check(hook is not before, "install_excepthook installed nothing")
    pfft.mpi.install_excepthook()
    pfft.mpi.ProcessGrid(COMM, grid_dims)
    check(sys.excepthook is hook, "the hook was installed twice")
    if SIZE == 1:       # one rank: the previous hook reports it, nothing is aborted
        hook(RuntimeError, RuntimeError("pfft.mpi api.py: a reported, survived error"), None)
    sys.excepthook = before
    pfft.mpi.ProcessGrid(COMM, grid_dims)             # the default installs it
    check(sys.excepthook is not before, "ProcessGrid did not install the hook")
    sys.excepthook = before


check_excepthook(grids(SIZE)[0])       # first: every ProcessGrid below installs the hook
check_mpi_layout()
for dims in grids(SIZE):
    grid = pfft.mpi.ProcessGrid(COMM, dims)
    plan = pfft.mpi.plan((10, 6, 7), "complex128", grid)
    check(plan.chain.in_layout == pfft.mpi.mpi_layout((10, 6, 7), (0, 1, 2), grid.mesh_shape),
          f"{dims}: plan starts from {plan.chain.in_layout}")
    check_plan_cache(grid)
    check_zeros_output(grid)
done("api")
