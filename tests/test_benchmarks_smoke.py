"""`python -m benchmarks --quick` runs to completion and writes a sane CSV (no peers, no MPI)."""
import csv
import math
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_quick_suite(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "benchmarks", "--quick", "--no-progress",
                           "--out", str(tmp_path)], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=120)
    elapsed = time.perf_counter() - start
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert elapsed < 60, f"--quick took {elapsed:.0f} s"
    from benchmarks.suite import COLUMNS

    with open(tmp_path / "suite.csv", newline="") as f:
        reader = csv.DictReader(f)
        assert reader.fieldnames == COLUMNS
        rows = list(reader)
    impls = {r["impl"] for r in rows}
    assert {"jnp.fft 1 device", "pfft", "shard_map chain"} <= impls
    assert {r["kind"] for r in rows} == {"c2c", "r2c"}
    assert {r["study"] for r in rows} == {"sweep", "weak"}
    assert {r["grid"] for r in rows if r["impl"] == "pfft"} >= {"1", "2", "4", "2x2"}
    for r in rows:
        t, ratio, err = float(r["ms"]), float(r["ratio"]), float(r["rel_err"])
        assert 0 < t < 10_000 and math.isfinite(ratio) and ratio > 0, r
        assert err < 1e-5, r                                    # complex64 against float64
        assert float(r["model_ms"]) > 0 and float(r["peak_over_block"]) >= 1, r
    pencil = [r for r in rows if r["impl"] == "pfft" and r["grid"] == "2x2" and r["kind"] == "c2c"]
    assert pencil and int(pencil[0]["exchanges"]) == 2
    assert (tmp_path / "suite.md").read_text().count("|") > 50
    for png in ("ratios.png", "scaling.png", "model.png"):
        assert (tmp_path / png).stat().st_size > 1000
