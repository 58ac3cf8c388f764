"""Shared benchmark helpers: simulated devices, timing by median of repeated runs."""
from __future__ import annotations

import os
import statistics
import time


def simulate_cpu_devices(n: int) -> None:
    """Ask XLA for ``n`` CPU devices; must run before JAX starts its backend."""
    flags = os.environ.get("XLA_FLAGS", "")
    if "xla_force_host_platform_device_count" not in flags:
        os.environ["XLA_FLAGS"] = f"{flags} --xla_force_host_platform_device_count={n}".strip()


def median_time(fn, *args, repeats: int = 7, warmup: int = 1) -> float:
    """Median wall time of ``fn(*args)`` in seconds, after ``warmup`` calls."""
    for _ in range(warmup):
        fn(*args).block_until_ready()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn(*args).block_until_ready()
        times.append(time.perf_counter() - start)
    return statistics.median(times)
