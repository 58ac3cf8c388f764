"""Which JAX platforms the suite runs on (conftest sets ``JAX_PLATFORMS`` from this
before JAX starts).

The CPU comes first, so it is JAX's default backend: ``jax.devices()``,
``jax.make_mesh`` and ``pfft.make_mesh`` give the 8 simulated CPU devices the tests
are written for, on a GPU machine too. A GPU platform whose JAX plugin is installed
comes after it, so the GPU tests still find their devices with
``jax.devices("gpu")``. JAX skips a listed ``cuda`` where the machine shows no NVIDIA
device, but fails on a platform it has no plugin for, hence the check. The variable
is inherited by the processes the tests start, which then default to the CPU too.
"""
from __future__ import annotations

import importlib.metadata
import importlib.util
import pkgutil
from typing import Mapping

GPU_PLATFORMS = ("cuda", "rocm")


def plugin_names() -> set[str]:
    """The JAX plugins installed (module names under ``jax_plugins`` and entry points
    of that group: where JAX itself looks), without importing them."""
    names = set()
    spec = importlib.util.find_spec("jax_plugins")
    if spec is not None and spec.submodule_search_locations:
        names |= {m.name for m in pkgutil.iter_modules(spec.submodule_search_locations)}
    names |= {ep.name for ep in importlib.metadata.entry_points(group="jax_plugins")}
    return names


def suite_platforms(environ: Mapping[str, str], plugins: set[str]) -> str:
    """``JAX_PLATFORMS`` for the suite: ``cpu`` first, then the platforms the caller
    asked for in ``environ`` (``JAX_PLATFORMS``), else those of the GPU ``plugins``."""
    given = [p.strip() for p in environ.get("JAX_PLATFORMS", "").split(",") if p.strip()]
    wanted = given or [g for g in GPU_PLATFORMS if any(g in name for name in plugins)]
    return ",".join(["cpu"] + [p for p in wanted if p != "cpu"])
