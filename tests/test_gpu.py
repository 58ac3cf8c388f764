"""pfft's transforms on a GPU through each engine, against numpy and scipy in float64.

``engine="auto"`` runs ``lax.fft`` for transforms over the innermost axes and pfft's cuFFT
kernels for strided ones; ``engine="native"`` runs the kernels for every transform;
``engine="xla"`` runs ``lax.fft`` for every one. Each test runs with each on a one-GPU
mesh: every case of :mod:`transform_cases` (the cases the CPU suite runs on its grids:
fftn/ifftn, rfftn/irfftn of half spectra that are not Hermitian, numpy's 1-D and 2-D
functions, dctn/dstn; ``s``, ``axes``, every norm, odd and prime lengths, batch axes,
float32 and float64), fftshift, gradients and vmap; what one GPU of an 8-GPU plan runs
(:mod:`benchmarks.per_device`); and inverses of blocks of 2³¹ points against their exact
values (:mod:`benchmarks.huge_blocks`: where an FFT library's scaling counts elements
in 32 bits). Runs where JAX has a GPU and pfft's GPU kernels are loaded; elsewhere
every test skips with the reason.
"""
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import pfft
from conftest import TOL, random_array, rel_err, use_engine
from plan_steps import fft_steps
from pfft.engines import native
from transform_cases import CASES, TOL as TOL_CASES, check


def _gpus() -> list:
    try:
        return jax.devices("gpu")
    except RuntimeError:
        return []


GPUS = _gpus()
pytestmark = pytest.mark.skipif(
    not GPUS or not native.available("gpu"),
    reason="needs a GPU JAX can use and pfft's GPU kernels: "
           + ("JAX has no GPU here" if not GPUS else str(native.unavailable_reason("gpu"))))
REAL = {np.complex64: np.float32, np.complex128: np.float64}


@pytest.fixture(autouse=True)
def _gpu_is_the_default_device():
    """Arrays made without a place go to the GPU, as for a user whose JAX has one (the
    suite's default is the CPU): ``jax.grad`` seeds a scalar loss's cotangent on the
    default device, which must hold the loss."""
    if not GPUS:
        yield
        return
    with jax.default_device(GPUS[0]):
        yield


@pytest.fixture(params=["native", "xla", "auto"])
def engine(request, monkeypatch):
    """The GPU engine every transform of the test runs on (its plans are made anew),
    checked to be the one a plan on the GPU gets (:func:`conftest.use_engine`)."""
    use_engine(request.param, monkeypatch, GPUS[:1])
    yield request.param
    pfft.clear_plan_cache()


@pytest.fixture
def mesh():
    return pfft.make_mesh((1, 1), GPUS[:1])


def _put(x, mesh):
    return pfft.device_put(np.asarray(x), mesh)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_every_transform_matches_numpy(case, engine, mesh):
    """Each case of :mod:`transform_cases` on this GPU, through this engine, against
    numpy or scipy in float64: among them the inverse real transforms of half spectra
    that are not Hermitian, whose zero and Nyquist bins' imaginary parts numpy drops."""
    err = check(case, lambda x: _put(x, mesh))
    assert err <= TOL_CASES[np.dtype(case.dtype)], (case.id, err)


def test_fftshift_and_ifftshift(engine, mesh):
    x = np.random.default_rng(4).standard_normal((9, 8, 7))
    for axes in (None, 0, (1, 2)):
        np.testing.assert_array_equal(np.asarray(pfft.fftshift(_put(x, mesh), axes)),
                                      np.fft.fftshift(x, axes))
        np.testing.assert_array_equal(np.asarray(pfft.ifftshift(_put(x, mesh), axes)),
                                      np.fft.ifftshift(x, axes))


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_gradients_match_jnp(dtype, engine, mesh):
    rng = np.random.default_rng(5)
    x = random_array(rng, (8, 6, 10), REAL[dtype])

    def loss(rfftn):               # weights 1, 2, ... along the output's last axis
        def f(a):
            k = rfftn(a)
            return jnp.sum(jnp.abs(k * (jnp.arange(k.shape[-1]) + 1.0)) ** 2)
        return f

    for axes in (None, (0, 1)):
        g = jax.grad(loss(lambda a: pfft.rfftn(a, axes=axes)))(_put(x, mesh))
        want = jax.grad(loss(lambda a: jnp.fft.rfftn(a, axes=axes)))(jnp.asarray(x))
        assert rel_err(g, want) <= 10 * TOL[dtype], axes
    z = random_array(rng, (8, 6, 10), dtype)
    g = jax.grad(loss(lambda a: pfft.ifftn(a, axes=(0,))))(_put(z, mesh))
    want = jax.grad(loss(lambda a: jnp.fft.ifftn(a, axes=(0,))))(jnp.asarray(z))
    assert rel_err(g, want) <= 10 * TOL[dtype]


def test_vmap_over_a_batch(engine, mesh):
    x = random_array(np.random.default_rng(6), (3, 8, 6, 5), np.complex128)
    got = jax.vmap(pfft.fftn)(jax.device_put(x, GPUS[0]))
    assert rel_err(got, np.fft.fftn(x, axes=(1, 2, 3))) <= 1e-12
    got = jax.vmap(lambda a: pfft.rfftn(a, axes=(0, 1)))(jax.device_put(x.real, GPUS[0]))
    assert rel_err(got, np.fft.rfftn(x.real, axes=(1, 2))) <= 1e-12


def test_auto_routes_strided_transforms_to_the_kernels(engine, mesh):
    """On one GPU, "auto" runs a transform over the innermost axes with lax.fft and one
    over a leading axis with pfft's kernels; "native" runs both with the kernels and
    "xla" both with lax.fft (one engine for the whole plan: no per-stage list)."""
    full = pfft.plan((16, 12, 10), np.complex64, mesh)
    lead = pfft.plan((16, 12, 10), np.complex64, mesh, axes=(0,))
    assert full.engine.name == engine and lead.engine.name == engine
    if engine == "auto":
        assert full.fft_engines() == ["xla"] and lead.fft_engines() == ["native"]
        assert "by native" in str(lead)
    else:
        assert full.fft_engines() is None


def device_program_errors(device, engine_name: str, plan: str, kind: str, direction: str,
                          n: int = 32, devices: int = 8) -> dict:
    """Relative errors against numpy's block-level math in float64 of what one device of
    a ``devices``-device ``plan`` runs, on ``device``, its exchanges replaced by a copy
    (:mod:`benchmarks.per_device`): the argument kept, and donated."""
    from benchmarks import device_program, per_device
    engine = device_program.engines_for(device, [engine_name])[engine_name]
    if isinstance(engine, str):
        pytest.skip(engine)
    case = per_device.Case(n, devices, plan, kind, engine_name, direction)
    per_device._build(case, engine)
    assert not case.status, case.status
    rng = np.random.default_rng(17)
    block = random_array(rng, case.chain.in_layout.local_shape, np.complex128)
    block = (block.real if case.in_dtype.kind == "f" else block).astype(case.in_dtype)
    want = device_program.block_math(block, case.chain, case.variant.inverse)
    live = jax.device_put(np.bool_(True), device)
    errors = {}
    for donate in (False, True):
        run = jax.jit(device_program.program(case.core, variant=case.variant),
                      donate_argnums=0 if donate else ())
        with warnings.catch_warnings():     # a real transform's input: donated in vain
            warnings.simplefilter("ignore", UserWarning)
            got = run(jax.device_put(block, device), live)
        errors["donated" if donate else "kept"] = rel_err(got, want)
    return errors


@pytest.mark.parametrize("direction", ["forward", "backward"])
@pytest.mark.parametrize("kind", ["c2c", "r2c"])
@pytest.mark.parametrize("plan", ["slab", "pencil"])
def test_per_device_programs_match_numpy(plan, kind, direction, engine):
    """What one GPU of an 8-GPU slab or 2x4 pencil plan runs, on this GPU (its exchanges
    a stand-in copy), forward and backward, kept and donated, equal to numpy's
    block-level math."""
    errors = device_program_errors(GPUS[0], engine, plan, kind, direction)
    assert max(errors.values()) < 1e-5, errors


def test_inverses_of_blocks_of_2_31_points_are_exact(monkeypatch):
    """ifftn, ifftn over axis 2 alone and irfftn (of a half spectrum that is not
    Hermitian: a delta on the zero bin with a complex amplitude) of blocks of 2³¹
    points, through each engine and the public functions, every point against its exact
    value (:mod:`benchmarks.huge_blocks`): from 2³¹ output elements XLA's GPU FFT left
    an inverse unscaled (cuBLAS's ``scal`` counts elements in 32 bits), which no small
    block shows. One test, so that no two such blocks are made at once."""
    from benchmarks import huge_blocks
    from benchmarks.device_program import device_memory

    need = 56 * 2 ** 30                  # a 16 GiB block, its output, cuFFT's work area
    if device_memory(GPUS[0]) < need:
        pytest.skip(f"needs {need / 2 ** 30:.0f} GiB of GPU memory for XLA, has "
                    f"{device_memory(GPUS[0]) / 2 ** 30:.0f}")
    monkeypatch.delenv("PFFT_ENGINE", raising=False)        # "default": the default engine
    pfft_runners = [r for r in huge_blocks.RUNNERS if r not in huge_blocks.REFERENCE_RUNNERS]
    cases = huge_blocks.cases(("ifftn", "ifft axis 2", "irfftn"), runners=pfft_runners,
                              sources=("delta", "delta zero bin"))
    rows = huge_blocks.run(cases, GPUS[0], points=2 ** 31, progress=lambda s: None)
    assert len(rows) == 3 * len(pfft_runners)
    assert [r["status"] for r in rows] == ["ok"] * len(rows), huge_blocks.failures(rows)


@pytest.mark.parametrize("kind", ["c2c", "r2c", "dct", "mixed", "padded"])
def test_programs_hold_at_most_their_bound(kind, engine):
    """What the CPU suite bounds (:mod:`memory_bounds`): a one-GPU plan's programs
    within 3 blocks kept and 2 donated (DCTs/DSTs, which run through XLA's FFT on GPUs
    whatever the engine, within today's figure), with cuFFT's work area among the
    temporaries and reported."""
    from memory_bounds import bounds, check_within, make_plan

    plan = make_plan(kind, engine, pfft.make_mesh((1,), GPUS[:1]))
    report = plan.memory()
    for direction in (report.forward, report.backward):
        for program in direction.values():
            assert 0 <= program.work_area <= program.temporaries
    check_within(report, kind, *bounds(kind, engine, "one", through_xla=True))


@pytest.mark.parametrize("kind", ["c2c", "r2c"])
def test_overwrite_x_transforms_a_donated_input_in_its_buffer(kind):
    """With ``overwrite_x=True`` pfft's cuFFT kernel transforms a donated complex
    input in its buffer: one block and cuFFT's work area on one GPU (a real input
    cannot hold its spectrum: the same program as without). Values as numpy's."""
    from memory_bounds import KINDS, N, check_within

    dtype, options, _ = KINDS[kind]
    plan = pfft.plan((N,) * 3, dtype, pfft.make_mesh((1,), GPUS[:1]), engine="native",
                     overwrite_x=True, **options)
    report = plan.memory()
    work = max(p.work_area for d in (report.forward, report.backward) for p in d.values())
    block = report.forward["kept"].block
    check_within(report, kind, 3.0, 1.0 + work / block)
    x = random_array(np.random.default_rng(3), (N,) * 3, dtype)
    y = jax.jit(plan.forward, donate_argnums=0)(jax.device_put(x, plan.in_sharding))
    want = np.fft.fftn(x.astype(np.complex128)) if kind == "c2c" else np.fft.rfftn(
        x.astype(np.float64))
    assert rel_err(y, want) <= 1e-5


@pytest.mark.parametrize("grid,kind", [((1,), "r2c"), ((1,), "c2c"), ((1, 1), "r2c")])
def test_tune_times_each_fft_step_on_the_gpu_and_later_plans_take_it(grid, kind,
                                                                   monkeypatch):
    """``pfft.tune`` with ``engine="auto"`` times each FFT step of the plan's programs
    with pfft's cuFFT kernels and with ``lax.fft`` on the GPU and files the faster under
    the GPU's kind; a plan made afterwards (on a one-GPU slab or a 1x1 pencil: the same
    steps) runs exactly those engines, and gives numpy's values."""
    import json

    from pfft import wisdom

    monkeypatch.setenv("PFFT_ENGINE", "auto")
    pfft.forget_wisdom()
    dtype = np.float32 if kind == "r2c" else np.complex64
    shape = (64, 48, 32)
    try:
        pfft.tune(shape, dtype, GPUS[:1], kind=kind, repeats=3, progress=False)
        filed = wisdom.stage_entries()
        assert filed and all(json.loads(key)["device_kind"] == GPUS[0].device_kind
                             for key in filed)
        for entry in filed.values():
            assert entry["engine"] == min(entry["timings_s"], key=entry["timings_s"].get)
        plan = pfft.plan(shape, dtype, pfft.make_mesh(grid, GPUS[:1]), kind=kind)
        steps = fft_steps(plan, GPUS[0].device_kind)
        assert steps and all(key in filed for key, _ in steps)
        assert [name for _, name in steps] == [filed[key]["engine"] for key, _ in steps]
        x = random_array(np.random.default_rng(4), shape, dtype)
        want = np.fft.rfftn(x.astype(np.float64)) if kind == "r2c" else np.fft.fftn(
            x.astype(np.complex128))
        y = plan.forward(jax.device_put(x, plan.in_sharding))
        assert rel_err(y, want) <= 1e-5
        assert rel_err(plan.backward(y), x) <= 1e-5
    finally:
        pfft.forget_wisdom()
        pfft.clear_plan_cache()
