"""The memory a plan's compiled programs hold on a device (:meth:`pfft.Plan.memory`:
XLA's ``memory_analysis()`` of the forward and backward programs, argument + output +
temporaries, a donated argument aliased to the output counted once), in blocks of the
device's forward input: every kind, grid and engine within its bound
(:mod:`memory_bounds`: 3 blocks kept and 2 donated on one device, XLA:CPU's
all-to-all floor on meshes, measured here).
"""
import math

import jax
import numpy as np
import pytest
import scipy.fft

import pfft
from benchmarks.memory import jax_program, measure_floor
from conftest import random_array, rel_err
from memory_bounds import (GOAL_DONATED, GOAL_KEPT, GRIDS, KINDS, N, SLACK, bounds,
                           check_within, make_plan)
from pfft.memory import program_memory


def _plan(kind: str, engine: str, grid: str):
    if engine == "native" and not pfft.engines.native.available("cpu"):
        pytest.skip(f"native CPU engine: {pfft.engines.native.unavailable_reason('cpu')}")
    return make_plan(kind, engine, pfft.make_mesh(GRIDS[grid]))


@pytest.fixture(scope="module")
def floors() -> dict[int, tuple[float, float]]:
    """Blocks a bare tiled all-to-all over ``p`` devices holds, kept and donated
    (:func:`benchmarks.memory.measure_floor`, the docs' floor rows)."""
    rows = {p: measure_floor(p, 64) for p in (2, 4, 8)}
    return {p: (r["kept_blocks"], r["donated_blocks"]) for p, r in rows.items()}


def test_xla_cpu_all_to_all_floor(floors):
    """XLA:CPU's all-to-all alone holds its argument, its output, the ``p`` slices it
    cuts (the device's own one aliased) and the ``p`` blocks it receives: 4 - 1/p
    blocks kept, 3 donated; the mesh bounds below are this floor."""
    for p, (kept, donated) in floors.items():
        assert kept == pytest.approx(4 - 1 / p, abs=SLACK), (p, kept)
        assert donated == pytest.approx(3.0, abs=SLACK), (p, donated)


@pytest.mark.parametrize("kind, grid", [("c2c", "slab"), ("r2c", "slab"), ("c2c", "pencil")])
def test_the_xla_engine_holds_what_jnp_fft_and_all_to_all_hold_by_hand(kind, grid):
    """The xla engine's mesh programs hold no more than the same transform written by
    hand from ``jnp.fft`` and ``lax.all_to_all`` in a ``shard_map``
    (:func:`benchmarks.memory.jax_program`): XLA's FFT runs out of place and its
    all-to-all copies, so both hold more than the collective's floor (the backward's
    first transform reads a transposed copy of its input): the ``OVER`` figures of
    those programs are XLA's own."""
    report = _plan(kind, "xla", grid).memory()
    for inverse, direction in ((False, report.forward), (True, report.backward)):
        fn, arg, block = jax_program(kind, inverse, N, GRIDS[grid])
        kept, donated = (program_memory(fn, arg, donate=d, block=block).blocks
                         for d in (False, True))
        assert direction["kept"].blocks <= kept + SLACK, (kind, inverse, kept)
        assert direction["donated"].blocks <= donated + SLACK, (kind, inverse, donated)
        if inverse:                       # above the collective's floor, by hand too
            assert kept > bounds(kind, "native", grid, through_xla=False)[0] + 0.5


def test_memory_reads_the_compiled_programs():
    """``plan.memory()`` is XLA's accounting of the programs ``plan.forward`` and
    ``plan.backward`` compile to (checked against ``memory_analysis`` directly), does
    not count as a trace, and prints a table."""
    plan = _plan("c2c", "native", "pencil")
    x = jax.ShapeDtypeStruct((N,) * 3, plan.in_dtype, sharding=plan.in_sharding)
    m = jax.jit(plan.forward, donate_argnums=0).lower(x).compile().memory_analysis()
    traced = plan.trace_count
    report = plan.memory()
    donated = report.forward["donated"]
    assert plan.trace_count == traced
    assert (donated.argument, donated.output, donated.temporaries, donated.aliased) == (
        m.argument_size_in_bytes, m.output_size_in_bytes, m.temp_size_in_bytes,
        m.alias_size_in_bytes)
    block = math.prod(plan.in_sharding.shard_shape(x.shape)) * np.dtype(plan.in_dtype).itemsize
    assert donated.block == block and donated.aliased == block
    assert donated.blocks == pytest.approx(donated.total / block)
    assert report.peak == max(p.total for d in (report.forward, report.backward)
                              for p in d.values())
    assert plan.memory() is report                      # compiled once
    text = str(report)
    assert text.count("\n") == 4 and "donated" in text and "kept" in text


@pytest.mark.parametrize("engine", ["native", "xla"])
@pytest.mark.parametrize("grid", GRIDS)
@pytest.mark.parametrize("kind", KINDS)
def test_programs_hold_at_most_their_bound(kind, grid, engine):
    check_within(_plan(kind, engine, grid).memory(), kind,
                 *bounds(kind, engine, grid, through_xla=False))


@pytest.mark.parametrize("engine", ["native", "xla"])
@pytest.mark.parametrize("grid", ["one", "pencil"])
def test_donating_changes_no_value_and_leaves_a_kept_argument_alone(grid, engine):
    """A transform in place writes only buffers the program made or the caller
    donated: a caller who keeps its array finds it unchanged; a donated one gives the
    same spectrum."""
    for kind in ("c2c", "dct"):
        plan = _plan(kind, engine, grid)
        x = random_array(np.random.default_rng(5), (N,) * 3, plan.in_dtype)
        xs = jax.device_put(x, plan.in_sharding)
        k = jax.jit(plan.forward)(xs)
        assert rel_err(xs, x) == 0.0
        want = (np.fft.fftn(x.astype(np.complex128)) if kind == "c2c"
                else scipy.fft.dctn(x.astype(np.float64), type=2))
        assert rel_err(k, want) <= 1e-5
        donated = jax.jit(plan.forward, donate_argnums=0)(jax.device_put(x, plan.in_sharding))
        assert rel_err(donated, k) == 0.0


def test_work_area_is_read_from_pfft_kernels_workspace_results():
    """The FFT work area reported is the largest workspace result (``u8[n]``) of one
    of pfft's kernel calls in the compiled program (cuFFT's, on GPUs), not other
    byte buffers."""
    from pfft.memory import work_area_bytes

    hlo = "\n".join([
        '  %a = (c64[8,64,64]{2,1,0}, u8[4096]{0}) custom-call(%p), '
        'custom_call_target="pfft_cuda_c2c", api_version=API_VERSION_TYPED_FFI',
        '  %b = (c64[64,8,64]{2,1,0}, u8[65536]{0}) custom-call(%a), '
        'custom_call_target="pfft_cuda_c2c", operand_layout_constraints={u8[999999]{0}}',
        '  %c = u8[1048576]{0} custom-call(%b), custom_call_target="other_library"',
        '  %d = u8[2097152]{0} fusion(%c), kind=kLoop',
    ])
    assert work_area_bytes(hlo) == 65536
    assert work_area_bytes("ENTRY %main { ROOT %x = c64[4]{0} parameter(0) }") == 0


@pytest.mark.parametrize("grid", GRIDS)
@pytest.mark.parametrize("kind", ["c2c", "dct", "mixed"])
def test_overwrite_x_transforms_a_donated_input_in_its_buffer(kind, grid):
    """With ``overwrite_x=True`` the first transform writes over its input: donated,
    a one-device plan holds 1 block (its input's buffer is its output's; 2 where a
    later transform runs out of place), a mesh plan its collective's floor; kept, XLA copies the input first (the same blocks as
    without, and the caller's array unchanged). The values are numpy's either way."""
    dtype, options, _ = KINDS[kind]
    if not pfft.engines.native.available("cpu"):
        pytest.skip(f"native CPU engine: {pfft.engines.native.unavailable_reason('cpu')}")
    mesh = pfft.make_mesh(GRIDS[grid])
    plan = pfft.plan((N,) * 3, dtype, mesh, engine="native", overwrite_x=True, **options)
    assert plan is not pfft.plan((N,) * 3, dtype, mesh, engine="native", **options)
    # a mixed plan's DCT of complex data runs in the pieces kernel, out of place
    kept_bound, donated_bound = ((GOAL_KEPT, 1.0 if kind != "mixed" else GOAL_DONATED)
                                 if grid == "one"
                                 else bounds(kind, "native", grid, through_xla=False))
    check_within(plan.memory(), kind, kept_bound, donated_bound)
    x = random_array(np.random.default_rng(7), (N,) * 3, plan.in_dtype)
    want = {"c2c": lambda a: np.fft.fftn(a.astype(np.complex128)),
            "dct": lambda a: scipy.fft.dctn(a.astype(np.float64), type=2),
            "mixed": lambda a: scipy.fft.dct(np.fft.fftn(a.astype(np.complex128), axes=(0, 1)),
                                             type=2, axis=2)}[kind](x)
    xs = jax.device_put(x, plan.in_sharding)
    assert rel_err(jax.jit(plan.forward)(xs), want) <= 1e-5
    assert rel_err(xs, x) == 0.0
    donated = jax.jit(plan.forward, donate_argnums=0)(jax.device_put(x, plan.in_sharding))
    assert rel_err(donated, want) <= 1e-5
    back = jax.jit(plan.backward, donate_argnums=0)(donated)
    assert rel_err(back, x) <= 1e-5
