"""The plan cache stays bounded and consistent under threads; loops never recompile."""
import gc
import threading
import tracemalloc
import warnings
import weakref

import jax
import numpy as np

import pfft
from pfft.autodiff import FORWARD


class _CompileCounter:
    """Counts XLA backend compilations (jax.monitoring events) while active."""

    EVENT = "/jax/core/compile/backend_compile_duration"

    def __init__(self):
        self.count = 0
        self.active = False
        jax.monitoring.register_event_duration_secs_listener(self._listen)

    def _listen(self, event, duration, **kwargs):
        if self.active and event == self.EVENT:
            self.count += 1


COMPILES = _CompileCounter()


def test_a_loop_over_the_same_transform_never_recompiles():
    mesh = pfft.make_mesh((2, 2))
    x = pfft.device_put(np.ones((16, 8, 12), np.float32), mesh)

    @jax.jit
    def step(a):
        k = pfft.rfftn(a, mesh=mesh)
        return pfft.irfftn(k * 0.5, s=a.shape, axes=(0, 1, 2), mesh=mesh)

    x = step(x)                                      # warm-up compiles once
    plan = pfft.plan(x.shape, x.dtype, mesh, kind="r2c")
    direct = plan.forward(x)                         # and the plan's own entry point
    COMPILES.count, COMPILES.active = 0, True
    try:
        for _ in range(20):
            x = step(x)
            direct = plan.forward(x)
        in_loop = COMPILES.count
        jax.jit(lambda a: a * 3)(x).block_until_ready()   # the counter does count
        counted = COMPILES.count - in_loop
    finally:
        COMPILES.active = False
    assert in_loop == 0 and counted == 1
    assert plan._jitted[FORWARD]._cache_size() == 1
    assert np.isfinite(np.asarray(direct)).all()


def test_eager_calls_compile_once():
    mesh = pfft.make_mesh((4,))
    x = np.ones((8, 8, 6), np.complex64)
    pfft.fftn(x, mesh=mesh)
    COMPILES.count, COMPILES.active = 0, True
    try:
        for _ in range(10):
            pfft.fftn(x, mesh=mesh)
    finally:
        COMPILES.active = False
    assert COMPILES.count == 0


def test_cache_is_bounded_and_memory_stays_flat():
    mesh = pfft.make_mesh((2, 4))
    old = pfft.plan_cache_info()["maxsize"]
    pfft.set_plan_cache_size(16)
    try:
        def plan_many(start, count):
            # most of these shapes leave devices idle: the warning each new plan gives
            # is kept by the warnings machinery (pytest records every one), memory that
            # is not the plans', so it is not issued here
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", pfft.ReplicationWarning)
                for i in range(start, start + count):
                    pfft.plan((8 + i % 50, 8 + i // 50, 4), np.complex64, mesh)
        plan_many(0, 300)
        tracemalloc.start()
        base = tracemalloc.get_traced_memory()[0]
        plan_many(300, 2000)
        grown = tracemalloc.get_traced_memory()[0] - base
        tracemalloc.stop()
        info = pfft.plan_cache_info()
        assert info["size"] == 16 and info["maxsize"] == 16
        assert grown < 1_000_000, f"planning 2000 shapes kept {grown} bytes"
    finally:
        pfft.set_plan_cache_size(old)


def test_an_evicted_plan_is_freed_after_it_ran():
    """The primitive carries the plan's immutable description (pfft.plan_core.Transform),
    not the plan: after a plan ran (eagerly, jitted, differentiated), jit's caches do
    not keep it alive once the plan cache lets it go."""
    mesh = pfft.make_mesh((2, 2))
    pfft.clear_plan_cache()
    plan = pfft.plan((8, 8, 6), np.float32, mesh, kind="r2c")
    x = pfft.device_put(np.ones((8, 8, 6), np.float32), mesh)
    plan.backward(plan.forward(x))
    jax.jit(lambda a: plan.backward(plan.forward(a) * 2))(x)
    jax.jit(jax.grad(lambda a: (plan.forward(a).real ** 2).sum()))(x)
    description = plan.transform
    ref = weakref.ref(plan)
    del plan
    pfft.clear_plan_cache()
    gc.collect()
    assert ref() is None, gc.get_referrers(ref())
    # equal descriptions are equal values (jit shares compiled code between them)
    again = pfft.plan((8, 8, 6), np.float32, mesh, kind="r2c")
    assert again.transform == description and hash(again.transform) == hash(description)
    assert again.transform is not description


def test_the_cache_is_thread_safe():
    mesh = pfft.make_mesh((2, 2))
    pfft.clear_plan_cache()
    shapes = [(8, 8, n) for n in range(2, 14)]
    results: dict[int, list] = {i: [] for i in range(8)}
    errors = []
    barrier = threading.Barrier(8)

    def worker(i):
        try:
            barrier.wait()
            for _ in range(5):
                for shape in shapes:
                    results[i].append(pfft.plan(shape, np.complex64, mesh))
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not errors
    # every thread got the very same plan object for each shape
    for i in range(8):
        assert [id(p) for p in results[i]] == [id(p) for p in results[0]]
    assert len({id(p) for p in results[0]}) == len(shapes)
    info = pfft.plan_cache_info()
    assert info["size"] == len(shapes)
    # and the plans run concurrently too
    x = np.ones((8, 8, 5), np.complex64)
    outs = [None] * 4

    def run(i):
        outs[i] = np.asarray(pfft.fftn(x * i, mesh=mesh))
    threads = [threading.Thread(target=run, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    for i in range(4):
        assert np.allclose(outs[i], np.fft.fftn(x * i), atol=1e-4)
