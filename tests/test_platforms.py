"""The suite's platforms (tests/platforms.py): the CPU is JAX's default backend, with
its 8 simulated devices, in the test processes and the processes they start, while a
GPU whose JAX plugin is installed stays reachable as ``jax.devices("gpu")``."""
import os
import subprocess
import sys
from pathlib import Path

import jax
import pytest

from platforms import plugin_names, suite_platforms

TESTS = Path(__file__).resolve().parent


def test_the_cpu_comes_first_and_gpus_with_a_plugin_after_it():
    assert suite_platforms({}, set()) == "cpu"
    assert suite_platforms({}, {"xla_cuda12"}) == "cpu,cuda"
    assert suite_platforms({}, {"xla_cuda13", "xla_rocm7"}) == "cpu,cuda,rocm"
    assert suite_platforms({"JAX_PLATFORMS": "cuda"}, set()) == "cpu,cuda"
    assert suite_platforms({"JAX_PLATFORMS": "cpu"}, {"xla_cuda12"}) == "cpu"
    assert suite_platforms({"JAX_PLATFORMS": " gpu , cpu"}, set()) == "cpu,gpu"


def test_plugins_are_found_where_jax_looks_for_them(tmp_path):
    """A module under the ``jax_plugins`` namespace package on the path (what
    ``pip install jax[cuda12]`` installs) is found without being imported."""
    plugin = tmp_path / "jax_plugins" / "xla_cuda12"
    plugin.mkdir(parents=True)
    (plugin / "__init__.py").write_text("raise SystemExit('imported')\n")
    code = ("import platforms; "
            "print(platforms.suite_platforms({}, platforms.plugin_names()))")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(TESTS)])}
    env.pop("JAX_PLATFORMS")
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0 and proc.stdout.split() == ["cpu,cuda"], proc


def test_the_cpu_is_the_default_backend_here_and_in_child_processes():
    assert os.environ["JAX_PLATFORMS"].split(",")[0] == "cpu"
    assert jax.default_backend() == "cpu"
    assert len(jax.devices()) >= 8 and {d.platform for d in jax.devices()} == {"cpu"}
    code = "import jax; print(jax.default_backend(), len(jax.devices()))"
    env = {**os.environ, "XLA_FLAGS": "--xla_force_host_platform_device_count=4"}
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0 and proc.stdout.split() == ["cpu", "4"], proc


@pytest.mark.skipif(not any(g in n for n in plugin_names() for g in ("cuda", "rocm")),
                    reason="no GPU plugin for JAX installed")
def test_gpus_stay_reachable_beside_the_default_cpu():
    gpus = jax.devices("gpu")
    assert gpus and all(d.platform == "gpu" for d in gpus)
    assert jax.default_backend() == "cpu"
