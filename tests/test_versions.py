"""The tested jax range (pfft/versions.py) agrees with what is installed and pinned:
pyproject.toml's lower bounds and CI's oldest end (.ci/oldest.txt) are its oldest
version, the README names both ends, and ``python -m pfft`` says where the running
jax lies."""
import re
import subprocess
import sys
from pathlib import Path

import jax
import pytest

from pfft.versions import TESTED_JAX, jax_is_tested, jax_range_text, release

ROOT = Path(__file__).resolve().parents[1]


def test_release_numbers_compare_as_versions():
    assert release("0.12.0.1") == (0, 12, 0, 1)
    assert release("0.13.0.dev20270101") == (0, 13, 0)
    assert release("0.9.2") < release("0.10.2") < release("0.12.0") < release("0.12.0.1")
    assert jax_is_tested(TESTED_JAX[0]) and jax_is_tested(TESTED_JAX[1])
    assert not jax_is_tested("0.9.2") and not jax_is_tested("1.0")
    with pytest.raises(ValueError, match="not a version"):
        release("latest")


def test_the_oldest_tested_jax_is_the_lower_bound_and_the_ci_pin():
    pyproject = (ROOT / "pyproject.toml").read_text()
    bounds = re.findall(r'"jax>=([\d.]+)"', pyproject)
    assert bounds and set(bounds) == {TESTED_JAX[0]}, bounds
    pins = dict(re.findall(r"^(jax|jaxlib)==([\d.]+)$", (ROOT / ".ci" / "oldest.txt")
                           .read_text(), flags=re.M))
    assert pins == {"jax": TESTED_JAX[0], "jaxlib": TESTED_JAX[0]}, pins
    readme = (ROOT / "README.md").read_text()
    assert f"jax {TESTED_JAX[0]}" in readme and f"jax {TESTED_JAX[1]}" in readme


def test_show_config_says_where_the_running_jax_lies():
    line = jax_range_text(jax.__version__)
    assert line.startswith(f"jax {jax.__version__}: ")
    assert ("inside" in line) == jax_is_tested(jax.__version__)
    assert "OUTSIDE" in jax_range_text("0.9.0")
    proc = subprocess.run([sys.executable, "-m", "pfft"], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0 and line in proc.stdout.splitlines(), proc
