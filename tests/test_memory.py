"""The memory a plan's compiled program holds on a device, read through the public API
(``jax.jit(plan.forward).lower(x).compile().memory_analysis()``), and what donation
changes: the values never (a caller's array is never written), the blocks held.

The figures are in blocks of the program's input (a real transform's input is real:
its complex spectrum is two such blocks). An all-to-all out of place holds its
input and its output, and a transform out of place the same, so about three blocks
kept (the argument, one in flight, the result) is the floor a chain of them can
reach; the bounds below are what the programs hold today on the CPU (64³ over 8
devices), so that a change that holds more fails here.
"""
import jax
import numpy as np
import pytest

import pfft
from conftest import random_array, rel_err

N = 64
GRIDS = {"slab": (8,), "pencil": (2, 4)}
# (kind, engine) -> the most blocks a forward or backward program may hold, kept and
# donated, on either grid
# (a few KiB of constants and flags ride on top of the blocks)
BOUNDS = {("c2c", "native"): (4.02, 3.02), ("c2c", "xla"): (4.9, 3.77),
          ("r2c", "native"): (4.12, 4.12), ("r2c", "xla"): (4.9, 4.9)}


def blocks_held(fn, arg, donate: bool) -> float:
    """Arguments, outputs and temporaries of ``jit(fn)`` on ``arg`` (a donated argument
    aliased to an output counted once), in blocks of the argument."""
    m = jax.jit(fn, donate_argnums=0 if donate else ()).lower(arg).compile().memory_analysis()
    used = m.argument_size_in_bytes + m.output_size_in_bytes + m.temp_size_in_bytes
    if donate:
        used -= m.alias_size_in_bytes
    return used / m.argument_size_in_bytes


def _plan(grid: str, kind: str, engine: str):
    dtype = np.complex64 if kind == "c2c" else np.float32
    if engine == "native" and not pfft.engines.native.available("cpu"):
        pytest.skip(f"native CPU engine: {pfft.engines.native.unavailable_reason('cpu')}")
    return pfft.plan((N,) * 3, dtype, pfft.make_mesh(GRIDS[grid]), kind=kind, engine=engine)


@pytest.mark.parametrize("engine", ["native", "xla"])
@pytest.mark.parametrize("kind", ["c2c", "r2c"])
@pytest.mark.parametrize("grid", GRIDS)
def test_programs_hold_at_most_their_blocks(grid, kind, engine):
    plan = _plan(grid, kind, engine)
    x = jax.ShapeDtypeStruct((N,) * 3, plan.in_dtype, sharding=plan.in_sharding)
    k = jax.ShapeDtypeStruct(jax.eval_shape(plan.forward, x).shape, plan.out_dtype,
                             sharding=plan.out_sharding)
    kept_bound, donated_bound = BOUNDS[kind, engine]
    for fn, arg in ((plan.forward, x), (plan.backward, k)):
        kept, donated = blocks_held(fn, arg, False), blocks_held(fn, arg, True)
        assert 2.0 <= kept <= kept_bound, (fn.__name__, kept)
        assert donated <= min(kept + 0.01, donated_bound), (fn.__name__, kept, donated)


@pytest.mark.parametrize("engine", ["native", "xla"])
@pytest.mark.parametrize("grid", GRIDS)
def test_donating_changes_no_value_and_leaves_a_kept_argument_alone(grid, engine):
    """The first transform runs in the buffer of any block the chain made, never in
    the argument's: a caller who keeps its array finds it unchanged; a donated one
    gives the same spectrum."""
    plan = _plan(grid, "c2c", engine)
    x = random_array(np.random.default_rng(5), (N,) * 3, np.complex64)
    xs = jax.device_put(x, plan.in_sharding)
    k = jax.jit(plan.forward)(xs)
    assert rel_err(xs, x) == 0.0
    assert rel_err(k, np.fft.fftn(x.astype(np.complex128))) <= 1e-6
    donated = jax.jit(plan.forward, donate_argnums=0)(jax.device_put(x, plan.in_sharding))
    assert rel_err(donated, k) == 0.0
