"""pfft's native FFT engine (XLA FFI kernels) against numpy.fft in float64.

Every axis subset of 1-4-D blocks, odd and prime sizes, real transforms, in place,
inside jit, under vmap and inside shard_map on 8 simulated devices. The CPU kernel
tests skip, with the reason, only where the library cannot be built (no C++
compiler, or ``PFFT_ALLOW_NO_KERNELS=1``); elsewhere a missing library fails them.
"""
import itertools
import math
import os
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import NamedSharding, PartitionSpec as P

import pfft
from conftest import TOL, random_array, rel_err
from kernel_build import ALLOW_ENV, cpu_kernels_expected, cxx_compiler, missing_kernels_reason
from pfft.engines import choice, native, native_pieces, xla
from pfft.engines.per_stage import PerStageEngine

DTYPES = [np.complex64, np.complex128]
REAL = {np.complex64: np.float32, np.complex128: np.float64}
SHAPES = [(17,), (6, 5), (3, 7, 4), (3, 4, 5, 2)]

needs_cpu_kernels = pytest.mark.skipif(
    not native.available("cpu") and not cpu_kernels_expected(),
    reason=missing_kernels_reason())
needs_gpu_kernels = pytest.mark.skipif(
    not native.available("gpu"),
    reason=f"native GPU engine unavailable: {native.unavailable_reason('gpu')}")


def _subsets(ndim):
    for k in range(1, ndim + 1):
        yield from itertools.combinations(range(ndim), k)


def _put(x, platform):
    return jax.device_put(x, jax.devices(platform)[0])


# the kernel tests run on each platform whose kernels are loaded (GPU: skipped without;
# CPU: skipped only where the kernels cannot be built)
on_each_platform = pytest.mark.parametrize("platform", [
    pytest.param("cpu", marks=needs_cpu_kernels),
    pytest.param("gpu", marks=needs_gpu_kernels)])


@on_each_platform
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_fft_every_axis_subset(shape, dtype, platform):
    rng = np.random.default_rng(len(shape))
    x = random_array(rng, shape, dtype)
    subsets = list(_subsets(len(shape)))

    @jax.jit
    def run(a):
        return [(native.fft(a, ax), native.fft(a, ax[::-1], inverse=True, scale=0.5))
                for ax in subsets]

    for ax, (fwd, inv) in zip(subsets, run(_put(x, platform))):
        assert fwd.dtype == dtype and fwd.shape == shape
        wide = x.astype(np.complex128)
        assert rel_err(fwd, np.fft.fftn(wide, axes=ax)) <= TOL[dtype], ax
        want = 0.5 * np.fft.ifftn(wide, axes=ax) * np.prod([shape[a] for a in ax])
        assert rel_err(inv, want) <= TOL[dtype], ax


@on_each_platform
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(1009,), (31, 37), (13, 1, 17), (2, 3, 5, 7), (4099, 16),
                                   (8191, 8)], ids=str)
def test_odd_and_prime_sizes(shape, dtype, platform):
    """Odd and prime lengths; 4099 and 8191 are primes whose cuFFT plans need a work
    area (the GPU kernels' working memory)."""
    x = random_array(np.random.default_rng(1), shape, dtype)
    got = native.fft(_put(x, platform), range(len(shape)))
    assert rel_err(got, np.fft.fftn(x.astype(np.complex128))) <= TOL[dtype]


@on_each_platform
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(16,), (9, 6), (5, 8, 7), (3, 4, 5, 6), (6, 3, 3), (5, 3, 2)],
                         ids=str)
def test_real_transforms_every_axis_subset(shape, dtype, platform):
    """Every axis subset; on GPUs (3, 4, 5, 6) over axis 2 gave cuFFT error 4 (launches
    one float apart), (6, 3, 3) and (5, 3, 2) put a halved middle axis's launches at
    offsets that are no multiple of 16 bytes (a pitched copy)."""
    rng = np.random.default_rng(2)
    x = random_array(rng, shape, REAL[dtype])
    subsets = list(_subsets(len(shape)))

    @jax.jit
    def run(a):
        out = []
        for ax in subsets:
            k = native.rfft(a, ax)
            n = shape[ax[-1]]
            back = native.irfft(k, ax, n, scale=1.0 / np.prod([shape[i] for i in ax]))
            out.append((k, back, native.rfft(a, ax, inverse=True)))
        return out

    for ax, (k, back, kconj) in zip(subsets, run(_put(x, platform))):
        want = np.fft.rfftn(x.astype(np.float64), axes=ax)
        assert k.dtype == dtype and k.shape == want.shape
        assert rel_err(k, want) <= TOL[dtype], ax
        assert rel_err(kconj, np.conj(want)) <= TOL[dtype], ax
        assert back.dtype == REAL[dtype] and back.shape == shape
        assert rel_err(back, x) <= TOL[dtype], ax


@on_each_platform
@pytest.mark.parametrize("n", [10, 11])
def test_irfft_crops_and_pads_like_numpy(n, platform):
    k = random_array(np.random.default_rng(3), (4, 8), np.complex128)
    for m in (n, None):
        got = native.irfft(_put(k, platform), 1, m, scale=1.0 / (m or 14))
        assert rel_err(got, np.fft.irfft(k, m, axis=1)) <= 1e-12
    got = native.irfft(_put(k, platform), 1, n, inverse=False)  # - sign: transform of conj(k)
    assert rel_err(got, n * np.fft.irfft(np.conj(k), n, axis=1)) <= 1e-12


@on_each_platform
@pytest.mark.parametrize("dtype", DTYPES)
def test_in_place_on_a_donated_buffer(dtype, platform):
    x = random_array(np.random.default_rng(4), (8, 6, 10), dtype)
    want = np.fft.fftn(x.astype(np.complex128), axes=(0, 2))
    f = jax.jit(lambda a: native.fft(a, (0, 2), inplace=True), donate_argnums=0)
    assert "output_to_operand_aliasing" in f.lower(_put(x, platform)).compile().as_text()
    xs = _put(x, platform) + 0        # an XLA-owned buffer (device_put may alias numpy's)
    ptr = xs.unsafe_buffer_pointer()
    got = f(xs)
    assert xs.is_deleted()
    assert got.unsafe_buffer_pointer() == ptr              # transformed where it lay
    assert rel_err(got, want) <= TOL[dtype]
    # not donated: XLA copies first, the input survives
    xs = _put(x, platform)
    got = jax.jit(lambda a: (native.fft(a, (0, 2), inplace=True), a))(xs)
    assert rel_err(got[0], want) <= TOL[dtype]
    np.testing.assert_array_equal(np.asarray(got[1]), x)


@on_each_platform
def test_vmap_and_grad(platform):
    x = random_array(np.random.default_rng(5), (3, 6, 5), np.complex128)
    got = jax.vmap(lambda a: native.fft(a, 0, inplace=True))(_put(x, platform))
    assert rel_err(got, np.fft.fft(x, axis=1)) <= 1e-12
    got = jax.vmap(lambda a: native.rfft(a, (0, 1)), in_axes=2, out_axes=2)(_put(x.real, platform))
    assert rel_err(got, np.fft.rfftn(x.real, axes=(0, 1))) <= 1e-12

    # a batch whose blocks each take one launch, while the batch needs a pitched copy
    # on GPUs: the working memory is sized for the batched block
    r = np.random.default_rng(12).standard_normal((4, 5, 3)).astype(np.float32)
    got = jax.vmap(lambda a: native.rfft(a, 0))(_put(r, platform))
    assert rel_err(got, np.fft.rfft(r.astype(np.float64), axis=1)) <= 1e-6
    back = jax.vmap(lambda a: native.irfft(a, 0, 5, scale=0.2))(got)
    assert rel_err(back, r) <= 1e-6

    def loss(fft):
        return lambda a: jnp.sum(jnp.abs(fft(a) * jnp.arange(5.0)) ** 2)

    g = jax.grad(loss(lambda a: native.fft(a, (0, 2), scale=0.25)))(_put(x, platform))
    want = jax.grad(loss(lambda a: 0.25 * jnp.fft.fftn(a, axes=(0, 2))))(_put(x, platform))
    assert rel_err(g, want) <= 1e-12


@needs_cpu_kernels
@pytest.mark.parametrize("axis_type", ["explicit", "auto"])
def test_inside_shard_map(axis_type):
    cpus = jax.devices("cpu")
    if len(cpus) < 8:
        pytest.skip("needs 8 simulated CPU devices (tests/conftest.py)")
    kind = jax.sharding.AxisType.Explicit if axis_type == "explicit" else jax.sharding.AxisType.Auto
    mesh = jax.make_mesh((8,), ("d",), axis_types=(kind,), devices=cpus[:8])
    x = random_array(np.random.default_rng(6), (16, 9, 7), np.complex64)
    xs = jax.device_put(x, NamedSharding(mesh, P("d")))

    def body(a):                                           # local block (2, 9, 7)
        k = native.fft(a, (1, 2), inplace=True)
        r = native.irfft(native.rfft(a.real, (1, 2)), (1, 2), 7, scale=1 / 63)
        return k, r

    f = jax.jit(jax.shard_map(body, mesh=mesh, in_specs=P("d"), out_specs=(P("d"), P("d"))))
    k, r = f(xs)
    assert rel_err(k, np.fft.fftn(x.astype(np.complex128), axes=(1, 2))) <= 1e-6
    assert rel_err(r, x.real) <= 1e-6
    # a gradient through shard_map (custom_vjp with the manual-axis result type)
    g = jax.jit(jax.grad(lambda a: jnp.sum(jnp.abs(f(a)[0]) ** 2)))(xs)
    assert rel_err(g, 2 * 63 * np.conj(x)) <= 1e-5        # Parseval; JAX's grad is conjugated


@on_each_platform
def test_native_engine_matches_the_xla_engine_on_trailing_axes(platform):
    x = random_array(np.random.default_rng(7), (4, 6, 10), np.complex128)
    xs = _put(x, platform)
    assert native.natural_scale(True, 60) == 1.0
    for inverse in (False, True):
        want = xla.fft_trailing(xs, 2, inverse) / xla.natural_scale(inverse, 60)
        assert rel_err(native.fft(xs, (-2, -1), inverse), want) <= 1e-12
    k = native.rfft(xs.real, (-2, -1))
    assert rel_err(k, xla.rfft_trailing(xs.real, 2)) <= 1e-12
    assert rel_err(native.irfft(k, (-2, -1), 10, scale=1 / 60), x.real) <= 1e-12


def test_cpu_kernels_are_built_where_they_can_be():
    """A machine with a C++ compiler must have built ``libpfft_cpu.so`` (``make
    kernels``): its absence is a failed build, not a reason to skip the kernel tests.
    ``PFFT_ALLOW_NO_KERNELS=1`` accepts running without them on purpose."""
    if not cpu_kernels_expected():
        pytest.skip(f"no C++ compiler, or {ALLOW_ENV}=1: the kernels are optional here")
    assert native.available("cpu"), (
        f"a C++ compiler is here ({cxx_compiler()}) but the native CPU engine is missing: "
        f"{native.unavailable_reason('cpu')}. Fix the build (`pip install "
        "--no-build-isolation -e .` or `make kernels`), or set "
        f"{ALLOW_ENV}=1 to test without it.")
    assert native_pieces.pieces_available("cpu")     # the fused exchange kernel too


def test_engine_choice_and_fallback(monkeypatch):
    cpu = jax.devices("cpu")[:1]

    def chosen(name):
        return choice.engine_for_plan(name, cpu).name
    assert chosen("xla") == "xla"
    with pytest.raises(ValueError, match="engine must be one of"):
        chosen("fftw")
    if native.available("cpu") or cpu_kernels_expected():
        assert chosen("native") == "native"
        assert chosen("auto") == "native"
    with pytest.warns(RuntimeWarning, match="cufft.*CPUs"):     # the GPU engine's name
        assert chosen("cufft") == chosen("auto")
    with pytest.warns(RuntimeWarning, match="cufft.*CPUs"):
        plan = pfft.plan((4, 4, 4), np.complex64, pfft.make_mesh((1, 1), cpu), engine="cufft")
    assert plan.engine.__class__ is choice.engine_for_plan("auto", cpu).__class__
    choice._choose.cache_clear()
    monkeypatch.setattr(native, "available", lambda platform=None: False)
    monkeypatch.setattr(native, "unavailable_reason", lambda platform=None: "not built")
    try:
        with pytest.warns(RuntimeWarning, match="not built"):
            assert chosen("native") == "xla"
        # "auto" on CPUs warns too (a slower engine without asking), once a process,
        # with the fix
        monkeypatch.setenv("PFFT_ENGINE", "auto")
        with pytest.warns(RuntimeWarning, match="not built.*PFFT_ENGINE=xla"):
            assert chosen(None) == "xla"
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert chosen(None) == "xla"
            assert chosen("xla") == "xla"
    finally:
        choice._choose.cache_clear()


def test_cpu_library_follows_the_cpu_features(monkeypatch):
    """x86-64 picks libpfft_cpu_v3.so with AVX2 & co, else the v2 baseline;
    a single-march libpfft_cpu.so (``make kernels MARCH=native``) comes first."""
    from pfft.engines import _cpu_features, _kernels

    v2 = frozenset(_cpu_features.X86_LEVELS[2])
    v3 = v2 | frozenset(_cpu_features.X86_LEVELS[3])
    assert _cpu_features.x86_level(frozenset()) == 1
    assert _cpu_features.x86_level(v2) == 2
    assert _cpu_features.x86_level(v3 - {"avx2"}) == 2
    assert _cpu_features.x86_level(v3) == 3
    assert _cpu_features.missing_for_level(3, v3 - {"fma"}) == ["fma"]
    monkeypatch.setattr(_cpu_features, "is_x86_64", lambda: True)
    assert _kernels.library_names("cpu", v3) == [
        "libpfft_cpu.so", "libpfft_cpu_v3.so", "libpfft_cpu_v2.so"]
    assert _kernels.library_names("cpu", v2) == ["libpfft_cpu.so", "libpfft_cpu_v2.so"]
    assert _kernels.library_names("cpu", frozenset()) == ["libpfft_cpu.so"]
    monkeypatch.setattr(_cpu_features, "is_x86_64", lambda: False)
    assert _kernels.library_names("cpu", v3) == ["libpfft_cpu.so"]
    flags = _cpu_features.cpu_flags()
    if flags is not None and "sse4_2" in flags:            # this machine's own
        assert _cpu_features.x86_level() >= 2


def test_show_config_names_the_engines_and_library(capsys):
    pfft.show_config()
    out = capsys.readouterr().out
    for needle in ("pfft 0.1.0", "jax ", "jaxlib ", "numpy ", "mpi4py ", "mpi4jax ",
                   "cpu: ", "native cpu (DUCC): ", "native cuda (cuFFT): ",
                   "xla (lax.fft): available", "kernel library: "):
        assert needle in out, (needle, out)
    ok, detail = native._kernels.load("cpu")
    assert f"kernel library: {detail}" in out if ok else "unavailable: " in out
    proc = subprocess.run([sys.executable, "-m", "pfft"], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0 and "native cpu (DUCC): " in proc.stdout, proc.stderr


def test_thread_variables_that_would_abort_ducc_are_read_as_unset():
    """DUCC asserts on a non-numeric thread count; an empty OMP_NUM_THREADS means
    "unset" (as OpenMP and numpy read it), a bad DUCC0_NUM_THREADS is reported."""
    check = native._kernels._check_thread_settings
    for omp in ("", " ", "auto", "-1"):
        env = {"OMP_NUM_THREADS": omp}
        assert check(env) == "" and env["DUCC0_NUM_THREADS"] == "0"
    for env in ({}, {"OMP_NUM_THREADS": " 3 "}, {"DUCC0_NUM_THREADS": "2", "OMP_NUM_THREADS": ""}):
        before = dict(env)
        assert check(env) == "" and env == before
    assert "DUCC0_NUM_THREADS='x'" in check({"DUCC0_NUM_THREADS": "x"})
    if not native.available():
        return
    # the process that failed: the first native transform under OMP_NUM_THREADS=""
    script = ("import numpy as np, jax.numpy as jnp\n"
              "from pfft.engines import native\n"
              "x = np.arange(24.0).reshape(2, 3, 4) + 1j\n"
              "y = np.asarray(native.fft(jnp.asarray(x, jnp.complex64), (0, 1, 2)))\n"
              "assert np.abs(y - np.fft.fftn(x)).max() < 1e-3 * np.abs(y).max(), y\n")
    env = {**os.environ, "OMP_NUM_THREADS": "", "JAX_PLATFORMS": "cpu"}
    env.pop("DUCC0_NUM_THREADS", None)
    proc = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]


@needs_gpu_kernels
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(16, 12, 10), (9, 7, 11)], ids=str)
def test_gpu_plans_on_the_cufft_engine(shape, dtype):
    """pfft's plans on one GPU with engine="cufft": fftn, ifftn, rfftn, irfftn and a
    gradient against numpy in float64 (the kernel tests above check single calls)."""
    mesh = pfft.make_mesh((1, 1), jax.devices("gpu")[:1])
    with jax.default_device(jax.devices("gpu")[0]):   # where jax.grad seeds the loss
        _check_gpu_plans(shape, dtype, mesh)


def _check_gpu_plans(shape, dtype, mesh):
    x = random_array(np.random.default_rng(8), shape, dtype)
    wide = x.astype(np.complex128)
    plan = pfft.plan(shape, dtype, mesh, engine="cufft")
    assert plan.engine.name == "native"
    k = plan.forward(pfft.device_put(x, mesh))
    assert rel_err(k, np.fft.fftn(wide)) <= TOL[dtype]
    assert rel_err(plan.backward(k), x) <= TOL[dtype]
    real = REAL[dtype]
    rplan = pfft.plan(shape, real, mesh, kind="r2c", engine="cufft")
    r = pfft.device_put(x.real.astype(real), mesh)
    kr = rplan.forward(r)
    assert rel_err(kr, np.fft.rfftn(wide.real)) <= TOL[dtype]
    assert rel_err(rplan.backward(kr), x.real) <= TOL[dtype]
    w = np.arange(shape[-1] // 2 + 1) + 1.0
    g = jax.grad(lambda a: jnp.sum(jnp.abs(rplan.forward(a) * w) ** 2))(r)
    want = jax.grad(lambda a: jnp.sum(jnp.abs(jnp.fft.rfftn(a) * w) ** 2))(
        _put(x.real.astype(real), "gpu"))
    assert rel_err(g, want) <= 10 * TOL[dtype]


@on_each_platform
@pytest.mark.parametrize("n", [8, 9])
def test_real_transform_gradients_match_jnp(n, platform):
    rng = np.random.default_rng(9)
    x = _put(rng.standard_normal((5, n)), platform)
    k = _put(random_array(rng, (5, n // 2 + 1), np.complex128), platform)
    wk = jnp.arange(n // 2 + 1.0) + 1j
    wx = jnp.arange(n * 5.0).reshape(5, n)

    def check(ours, theirs, arg):
        g = jax.grad(lambda a: jnp.sum(jnp.abs(ours(a)) ** 2))(arg)
        want = jax.grad(lambda a: jnp.sum(jnp.abs(theirs(a)) ** 2))(arg)
        assert rel_err(g, want) <= 1e-12

    check(lambda a: native.rfft(a, (0, 1), scale=0.5) * wk,
          lambda a: 0.5 * jnp.fft.rfftn(a, axes=(0, 1)) * wk, x)
    check(lambda a: native.irfft(a, (0, 1), n, scale=1 / (5 * n)) * wx,
          lambda a: jnp.fft.irfftn(a, (5, n), axes=(0, 1)) * wx, k)


@needs_gpu_kernels
def test_cufft_plan_cache_is_bounded_and_thread_safe():
    """The GPU kernel's plan cache is an LRU of bounded size, and concurrent
    transforms of many shapes from several threads give numpy's results."""
    import threading
    gpu = jax.devices("gpu")[0]
    old = native.cufft_plan_cache_info()["maxsize"]
    native.set_cufft_plan_cache_size(4)
    try:
        errors = []

        def work(seed):
            try:
                rng = np.random.default_rng(seed)
                for n in range(5, 17):
                    x = (rng.standard_normal((n, 6)) + 0j).astype(np.complex64)
                    got = np.asarray(native.fft(jax.device_put(x, gpu), (0,)))
                    assert np.allclose(got, np.fft.fft(x, axis=0), atol=1e-4)
            except Exception as e:  # pragma: no cover - reported below
                errors.append(e)
        threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=120)
        assert not errors
        info = native.cufft_plan_cache_info()
        assert info == {"size": 4, "maxsize": 4}
    finally:
        native.set_cufft_plan_cache_size(old)


def _make_kernel_check(target: str) -> str:
    """Build and run a CPU check of the GPU kernel's logic (``make -C kernels TARGET``)."""
    cxx = os.environ.get("CXX", "g++")
    if shutil.which(cxx) is None or shutil.which("make") is None:
        pytest.skip(f"no C++ compiler ({cxx}) or make to build the check")
    kernels = Path(__file__).resolve().parents[1] / "kernels"
    out = subprocess.run(["make", "-s", "-C", str(kernels), target], capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "all checks hold" in out.stdout
    return out.stdout


def test_cufft_plan_cache_logic_is_bounded_flat_and_thread_safe_on_cpu():
    """The LRU that holds the GPU kernel's cuFFT plans
    (kernels/common/lru_cache.h, the same header pfft_cuda.cu includes), compiled for
    the CPU: bound and LRU order, evicted plans alive while a call holds them, flat
    over 20000 keys, 8 threads with a changing bound, under ThreadSanitizer."""
    _make_kernel_check("lru-test")


def test_cufft_kernel_geometry_matches_direct_dfts_on_cpu():
    """The cuFFT plans and launches the GPU kernel makes for a transform over
    any axes (kernels/common/cufft_schedule.h, which pfft_cuda.cu executes), run on the
    CPU with a reference of cuFFT's plan-many layout and compared with direct DFTs:
    c2c, r2c, c2r, both signs, 1-5 dims, any axis order; no access outside a buffer,
    every output element written once per step, bad shapes refused."""
    out = _make_kernel_check("schedule-test")
    assert int(out.split("cufft_schedule: ")[1].split()[0]) >= 1500


def test_cufft_plan_cache_calls_need_the_gpu_kernels():
    if native.available("gpu"):
        pytest.skip("GPU kernels loaded: covered by the GPU test")
    with pytest.raises(RuntimeError, match="GPU kernels are not loaded"):
        native.cufft_plan_cache_info()
    with pytest.raises(ValueError, match="maxsize"):
        native.set_cufft_plan_cache_size(0)


def _chosen_call(eng, method: str, a, axes, *args, **kw):
    """What a program does with the per-stage engine: choose the engine of a transform
    (as :func:`pfft.program.resolve` asks), then call it. Returns the engine's name, the
    result and the factor still owed."""
    axes = tuple(x % a.ndim for x in axes)
    scale = kw.get("scale", 1.0)
    if method == "fft":
        points = math.prod(a.shape[x] for x in axes)
        real, scales_inverse, out = False, args[0], a.size
    elif method == "rfft":
        points = math.prod(a.shape[x] for x in axes)
        real, scales_inverse = True, False
        out = a.size // a.shape[axes[-1]] * (a.shape[axes[-1]] // 2 + 1)
    else:
        points = math.prod([a.shape[x] for x in axes[:-1]] + [args[0]])
        real, scales_inverse = True, True
        out = a.size // a.shape[axes[-1]] * args[0]
    chosen = eng.choose(axes, a.shape, real=real, scales_inverse=scales_inverse, scale=scale,
                        n=points, out_size=out, dtype=np.result_type(a.dtype, np.complex64))
    got, owed = getattr(chosen, method)(a, axes, *args, **kw)
    return chosen.name, got, owed


@needs_cpu_kernels
def test_per_stage_engine_routes_each_transform_and_matches_numpy():
    """The GPU's ``engine="auto"`` sends a transform over the innermost axes (the halved
    one last) to ``lax.fft`` where its ``1/n`` is the factor asked for or it scales
    nothing, one the
    native kernel does in one launch per plan (nothing before or after each run of
    axes) to the kernel, and any other (a middle axis) to ``lax.fft`` with its
    transposes; here the CPU kernels stand in for cuFFT. Each call gives numpy's values
    (float64) times its scale."""
    eng = PerStageEngine(1, "cpu")
    rng = np.random.default_rng(10)
    x = random_array(rng, (6, 5, 4), np.complex128)
    r = x.real.copy()
    k = np.fft.rfftn(r, axes=(1, 2))
    xx = jnp.asarray(x)
    rr = jnp.asarray(r)
    cases = [  # method, argument, axes, positional, keywords, want, engine
        ("fft", xx, (2,), (False,), {}, np.fft.fft(x, axis=2), "xla"),
        ("fft", xx, (0, 1, 2), (False,), dict(scale=0.5), 0.5 * np.fft.fftn(x), "xla"),
        ("fft", xx, (1, 2), (True,), dict(scale=1 / 20), np.fft.ifftn(x, axes=(1, 2)), "xla"),
        ("fft", xx, (2,), (True,), {}, 4 * np.fft.ifft(x, axis=2), "native"),
        ("fft", xx, (0,), (False,), {}, np.fft.fft(x, axis=0), "native"),
        ("fft", xx, (0, 2), (True,), dict(scale=1 / 24), np.fft.ifftn(x, axes=(0, 2)),
         "native"),
        ("fft", xx, (1,), (False,), dict(scale=2.0), 2 * np.fft.fft(x, axis=1), "xla"),
        ("fft", xx, (1,), (True,), {}, 5 * np.fft.ifft(x, axis=1), "xla"),
        ("rfft", rr, (1, 2), (), {}, k, "xla"),
        ("rfft", rr, (1, 2), (), dict(inverse=True, scale=2.0), 2 * np.conj(k), "xla"),
        ("rfft", rr, (2, 0), (), {}, np.fft.rfftn(r, axes=(2, 0)), "native"),
        ("rfft", rr, (2, 1), (), {}, np.fft.rfftn(r, axes=(2, 1)), "xla"),
        ("rfft", rr, (0, 1), (), dict(inverse=True), np.conj(np.fft.rfftn(r, axes=(0, 1))),
         "xla"),
    ]
    kk = jnp.asarray(k)
    k01 = np.fft.rfftn(r, axes=(0, 1))
    cases += [
        ("irfft", kk, (1, 2), (4,), dict(scale=1 / 20), r, "xla"),
        ("irfft", kk, (1, 2), (4,), dict(inverse=False, scale=1 / 20),
         np.fft.irfftn(np.conj(k), (5, 4), axes=(1, 2)), "xla"),
        ("irfft", kk, (1, 2), (4,), {}, 20 * r, "xla"),    # the kernel would loop
        ("irfft", jnp.asarray(np.fft.rfftn(r, axes=(0, 2))), (0, 2), (4,), {}, 24 * r,
         "native"),
        ("irfft", jnp.asarray(k01), (0, 1), (5,), dict(scale=0.5), 15 * r, "xla")]
    for method, arg, axes, args, kw, want, engine in cases:
        name, got, owed = _chosen_call(eng, method, arg, axes, *args, **kw)
        assert owed == 1.0      # every factor applied
        assert name == engine, (method, axes, kw, name)
        assert rel_err(got, want) <= 1e-12, (method, axes, kw)


@needs_cpu_kernels
@pytest.mark.parametrize("grid", [(1, 1), (4,), (2, 2)], ids=str)
def test_plans_on_the_per_stage_engine_match_numpy_and_say_which_engine_runs(grid,
                                                                             monkeypatch):
    """Plans on the per-stage engine (the CPU kernels standing in for cuFFT): fftn,
    ifftn, rfftn, irfftn and a gradient against numpy in float64; the printout names
    the engine of each FFT stage: lax.fft for the innermost axes (the first stage of
    every forward chain here) and a pencil's middle axis, the native kernel for the
    leading axis."""
    import sys
    cpu = jax.devices("cpu")
    monkeypatch.setattr(sys.modules["pfft.mesh_plan"], "engine_for_plan",
                        lambda *a: PerStageEngine(1, "cpu"))
    pfft.clear_plan_cache()
    try:
        mesh = pfft.make_mesh(grid, cpu[:math.prod(grid)])
        shape = (8, 12, 10)
        x = random_array(np.random.default_rng(11), shape, np.complex128)
        plan = pfft.plan(shape, np.complex128, mesh)
        assert isinstance(plan.engine, PerStageEngine)
        engines = plan.fft_engines()
        assert engines == {(1, 1): ["xla"], (4,): ["xla", "native"],
                           (2, 2): ["xla", "xla", "native"]}[grid]
        assert str(plan).count(", by ") == len(engines)
        traces = plan.trace_count
        k = plan.forward(pfft.device_put(x, mesh))
        assert rel_err(k, np.fft.fftn(x)) <= 1e-12
        assert rel_err(plan.backward(k), x) <= 1e-12
        assert plan.trace_count == traces + 2
        rplan = pfft.plan(shape, np.float64, mesh, kind="r2c")
        assert rplan.fft_engines()[0] == "xla"
        r = pfft.device_put(x.real, mesh)
        kr = rplan.forward(r)
        assert rel_err(kr, np.fft.rfftn(x.real)) <= 1e-12
        assert rel_err(rplan.backward(kr), x.real) <= 1e-12
        w = np.arange(shape[-1] // 2 + 1) + 1.0
        with jax.set_mesh(mesh):
            g = jax.grad(lambda a: jnp.sum(jnp.abs(rplan.forward(a) * w) ** 2))(r)
        want = jax.grad(lambda a: jnp.sum(jnp.abs(jnp.fft.rfftn(a) * w) ** 2))(
            jnp.asarray(x.real))
        assert rel_err(g, want) <= 1e-12
    finally:
        pfft.clear_plan_cache()


def _stand_in_gpu_library(monkeypatch, sizer: str, nbytes: int) -> list:
    """The GPU library reported loaded (for lowering to CUDA on a machine without it)
    and ``native.<sizer>`` answering ``nbytes``: the list of the arguments it is asked
    with. Skips without the CPU kernels."""
    if not native.available("cpu"):
        pytest.skip(f"needs the CPU kernels: {native.unavailable_reason('cpu')}")
    real_load = native._kernels.load
    monkeypatch.setattr(native._kernels, "load",
                        lambda p: (True, "stood in") if p == "cuda" else real_load(p))
    asked = []

    def workspace(*args):
        asked.append(args)
        return nbytes
    monkeypatch.setattr(native, sizer, workspace)
    return asked


def test_gpu_kernel_calls_declare_their_working_memory_as_an_output(monkeypatch):
    """The GPU kernels get their working memory (cuFFT's work area, the c2r input copy)
    as a second output of the custom call, sized by the library when the call is traced:
    lowered for CUDA here with the library's answer stood in, the call returns the
    transform and a uint8 buffer of that size (sized for the batched block under vmap),
    and the CPU lowering of the same function keeps its one output."""
    asked = _stand_in_gpu_library(monkeypatch, "gpu_workspace_bytes", 4096)
    x = jnp.ones((4, 6, 5), jnp.float32)
    f = jax.jit(lambda a: native.irfft(native.rfft(a, (0, 2)), (0, 2), 5))
    text = f.trace(x).lower(lowering_platforms=("cuda",)).as_text()
    for target, shapes in (("pfft_r2c", "(tensor<4x6x3xcomplex<f32>>, tensor<4096xui8>)"),
                           ("pfft_c2r", "(tensor<4x6x5xf32>, tensor<4096xui8>)")):
        line = next(ln for ln in text.splitlines() if f"@{target}(" in ln)
        assert line.endswith(shapes), line
    assert asked == [("pfft_r2c", (4, 6, 5), (4, 6, 3), (-3, -1), False),
                     ("pfft_c2r", (4, 6, 3), (4, 6, 5), (-3, -1), False)]
    # under vmap the library sizes the batched block, which one call transforms
    text = jax.jit(jax.vmap(lambda a: native.fft(a, 0))).trace(
        x.astype(jnp.complex128)).lower(lowering_platforms=("cuda",)).as_text()
    assert "-> (tensor<4x6x5xcomplex<f64>>, tensor<4096xui8>)" in text
    assert asked[-1] == ("pfft_c2c", (4, 6, 5), (4, 6, 5), (-2,), True)
    cpu_text = f.trace(x).lower(lowering_platforms=("cpu",)).as_text()
    assert "ui8" not in cpu_text and "@pfft_r2c(" in cpu_text
    np.testing.assert_allclose(np.asarray(f(x)), 20 * np.ones((4, 6, 5)), rtol=1e-6)


def test_calls_outside_jit_run_the_kernel_of_the_arrays_platform(monkeypatch):
    """With both libraries loaded (a GPU machine; the GPU one stood in here), a call on
    a concrete CPU array runs the CPU kernel, also under vmap and grad outside jit
    (``lax.platform_dependent`` alone would follow the default backend there)."""
    if not native.available("cpu"):
        pytest.skip(f"needs the CPU kernels: {native.unavailable_reason('cpu')}")
    real_load = native._kernels.load
    monkeypatch.setattr(native._kernels, "load",
                        lambda p: (True, "stood in") if p == "cuda" else real_load(p))
    monkeypatch.setattr(native, "gpu_workspace_bytes", lambda *a: 4096)
    x = random_array(np.random.default_rng(13), (2, 3, 4), np.complex128)
    xs = jax.device_put(x, jax.devices("cpu")[0])
    assert rel_err(native.fft(xs, (0, 1, 2)), np.fft.fftn(x)) <= 1e-12
    assert rel_err(jax.vmap(lambda a: native.fft(a, 0))(xs), np.fft.fft(x, axis=1)) <= 1e-12
    g = jax.grad(lambda a: jnp.sum(jnp.abs(native.rfft(a, (0, 1))) ** 2))(xs.real)
    want = jax.grad(lambda a: jnp.sum(jnp.abs(jnp.fft.rfftn(a, axes=(0, 1))) ** 2))(xs.real)
    assert rel_err(g, want) <= 1e-12


def _entry_ops(fn, x) -> list[str]:
    """The instructions of ``fn``'s compiled entry computation for ``x``: each op with
    its FFT type and lengths (numbers that only name instructions dropped)."""
    import re
    text = jax.jit(fn).lower(x).compile().as_text()
    entry = text[text.index("\nENTRY"):]
    ops = []
    for line in entry.splitlines()[1:]:
        m = re.search(r"= \S+ ([\w-]+)\(", line)
        if m:
            fft = re.search(r"fft_type=\w+, fft_length=\{[\d,]+\}", line)
            ops.append(m.group(1) + (f" {fft.group(0)}" if fft else ""))
    return ops


@needs_cpu_kernels
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_one_device_auto_programs_are_jnp_ffts_own(dtype, monkeypatch):
    """On one GPU ``engine="auto"`` is to run ``fftn``/``ifftn``/``rfftn``/``irfftn`` as
    ``jnp.fft`` does (below 2³¹ output elements): the per-stage engine (the CPU kernels
    standing in for cuFFT) compiles each to jnp.fft's own program, the same FFT
    instructions and nothing around them (no transposes, copies or multiplies), so its
    speed is jnp.fft's."""
    import sys
    monkeypatch.setattr(sys.modules["pfft.mesh_plan"], "engine_for_plan",
                        lambda *a: PerStageEngine(1, "cpu"))
    pfft.clear_plan_cache()
    try:
        shape = (16, 12, 10)
        cdtype = np.result_type(dtype, np.complex64)
        real = jnp.zeros(shape, dtype)
        comp = jnp.zeros(shape, cdtype)
        c2c = pfft.plan(shape, cdtype)
        r2c = pfft.plan(shape, dtype, kind="r2c")
        half = r2c.forward(real)
        pairs = [(c2c.forward, jnp.fft.fftn, comp), (c2c.backward, jnp.fft.ifftn, comp),
                 (r2c.forward, jnp.fft.rfftn, real),
                 (r2c.backward, lambda k: jnp.fft.irfftn(k, shape), half)]
        for ours, theirs, x in pairs:
            assert _entry_ops(ours, x) == _entry_ops(theirs, x)
            assert any("fft_type" in op for op in _entry_ops(ours, x))
    finally:
        pfft.clear_plan_cache()
