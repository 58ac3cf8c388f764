"""The suite runs with ``jax_enable_x64`` on (tests/conftest.py), but most users run
JAX's default, x64 off. These tests run a selection of single-precision tests of the
suite again in a subprocess with ``PFFT_TEST_X64=0``: transforms, shardings, compiled
collectives, gradients and the native kernels in complex64/float32, and dtype
promotion to the default complex dtype (complex64 there).
"""
import os
import re
import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent

# tests valid without x64: complex64/float32 data and tolerances (or dtype rules that
# follow JAX's default dtypes)
SELECTION = {
    "test_fftn.py": "(round_trip_returns_to_the_input_sharding and complex64) or "
                    "mesh_is_taken_from_the_input_sharding or out_sharding_is_honoured or "
                    "compiled_xla_engine_plan",
    "test_rfftn.py": "padded_spectrum_saves_an_all_to_all",
    "test_autodiff.py": "grad_matches_jax_numpy_on_one_device and float32",
    "test_errors.py": "numeric_dtypes_are_promoted",
    "test_engines.py": "cpu and complex64 and (every_axis_subset or odd_and_prime or "
                       "real_transforms_every_axis_subset or in_place)",
}


def _env() -> dict:
    env = dict(os.environ, PFFT_TEST_X64="0")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(TESTS), env.get("PYTHONPATH")]))
    return env


def test_conftest_turns_x64_off_when_asked():
    code = "import conftest, jax; print('x64', jax.config.jax_enable_x64)"
    proc = subprocess.run([sys.executable, "-c", code], cwd=TESTS, env=_env(),
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "x64 False" in proc.stdout


def test_single_precision_tests_pass_with_x64_off():
    files = [str(TESTS / name) for name in SELECTION]
    expr = " or ".join(f"({e})" for e in SELECTION.values())
    # one pytest run (one JAX start-up); the timeout only guards against a hang
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rA", *files, "-k", expr],
                          cwd=TESTS.parent, env=_env(), capture_output=True, text=True,
                          timeout=600)
    tail = proc.stdout[-6000:] + proc.stderr[-2000:]
    assert proc.returncode == 0, f"the selection failed with x64 off:\n{tail}"
    summary = proc.stdout.strip().splitlines()[-1]
    assert not re.search(r"failed|error|skipped", summary), summary
    passed = re.findall(r"^PASSED tests/(test_\w+\.py)::", proc.stdout, flags=re.M)
    for name in SELECTION:          # every file's selection ran, and passed
        assert passed.count(name) > 0, f"no test of {name} ran:\n{tail}"
