"""`python -m benchmarks --quick` runs to completion and writes a sane CSV (no peers, no MPI);
the benchmarks of benchmarks/gpu.sh run on the CPU at a tiny size and print their tables.

Timings are checked for being positive and finite only: how fast anything runs on a
loaded machine is not a test's business (subprocess timeouts only guard against hangs)."""
import csv
import importlib.util
import math
import os
import re
import subprocess
import sys

import pytest

from benchmarks.common import STEADY_MALLOC
from pfft.transports import swap as swap_module

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_quick_suite(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
    # the timeout only guards against a hang: how long --quick takes is not asserted
    proc = subprocess.run([sys.executable, "-m", "benchmarks", "--quick", "--no-progress",
                           "--out", str(tmp_path)], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
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
        assert 0 < t and math.isfinite(t) and math.isfinite(ratio) and ratio > 0, r
        assert err < 1e-5, r                                    # complex64 against float64
        assert float(r["model_ms"]) > 0 and float(r["peak_over_block"]) >= 1, r
    pencil = [r for r in rows if r["impl"] == "pfft" and r["grid"] == "2x2" and r["kind"] == "c2c"]
    assert pencil and int(pencil[0]["exchanges"]) == 2
    assert (tmp_path / "suite.md").read_text().count("|") > 50
    for png in ("ratios.png", "scaling.png", "model.png"):
        assert (tmp_path / png).stat().st_size > 1000


def _env_without_simulated_devices(**extra):
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
    env.update(extra)
    return env


def _run_benchmark(module, *args, out, name=None):
    """Runs ``python -m benchmarks.<module> *args --out out`` on the machine's one CPU
    device (the benchmark asks for its own), checks it exited 0, and returns the
    process and the rows of ``out/<name>.csv`` (``name``: the module's, by default)."""
    proc = subprocess.run([sys.executable, "-m", f"benchmarks.{module}", *args,
                           "--out", str(out)], cwd=ROOT, env=_env_without_simulated_devices(),
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    with open(out / f"{name or module}.csv", newline="") as f:
        return proc, list(csv.DictReader(f))


def test_engines_table_on_cpu(tmp_path):
    """`python -m benchmarks.engines --platform cpu` (gpu.sh's benchmark, on the CPU at 16³):
    the three tables with their goals, and sane numbers in the CSV."""
    proc = subprocess.run([sys.executable, "-m", "benchmarks.engines", "--platform", "cpu",
                           "--sizes", "16", "--dtypes", "complex64", "--repeats", "2",
                           "--warmup", "1", "--out", str(tmp_path)], cwd=ROOT,
                          env=_env_without_simulated_devices(), capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    out = proc.stdout
    for title in ("Three-axis FFT on one device", "Strided axis-0 kernel",
                  "Achieved bandwidth against a device-to-device copy"):
        assert title in out, out
    assert "≤ 1.1× `jnp.fft.fftn`" in out and "≥ 1.5× faster" in out      # the goals
    assert "pfft 1x1, native (ms)" in out and "pfft 1x1, xla (ms)" in out
    assert "2 × (array bytes) / time" in out                  # the GB/s definition
    rows = [line for line in out.splitlines() if line.startswith("| 16³ | complex64 |")]
    assert len(rows) == 3, out                                 # one row in each table
    with open(tmp_path / "engines.csv", newline="") as f:
        (r,) = list(csv.DictReader(f))
    assert r["failed"] == "", r
    from pfft.engines import native
    cases = ["copy", "jnp_fftn", "pfft_xla", "jnp_fft0"]
    if native.available("cpu"):
        cases += ["pfft_native", "native_fftn", "native_fftn_inplace", "native_fft0",
                  "native_fft0_inplace"]
        assert 0 < float(r["native_fft0_ratio"]) < math.inf
        assert "**yes**" in rows[0] or "**no**" in rows[0]
    for case in cases:
        t, gbs = float(r[f"{case}_ms"]), float(r[f"{case}_gbs"])
        assert 0 < t and math.isfinite(t) and math.isfinite(gbs) and gbs > 0, (case, r)
        if case != "copy":
            assert float(r[f"{case}_err"]) < 1e-5, (case, r)   # complex64 against float64
    assert (tmp_path / "engines.md").read_text().count("|") > 60


def test_real_engines_table_on_cpu(tmp_path):
    """`python -m benchmarks.real_engines --platform cpu` (gpu.sh's real-transform
    benchmark) at 16³: every case ran, agrees with jnp.fft, and has a ratio."""
    proc, rows = _run_benchmark("real_engines", "--platform", "cpu", "--sizes", "16",
                                "--dtypes", "float32", "float64", "--repeats", "2",
                                "--warmup", "1", out=tmp_path, name="real_engines_cpu")
    assert "Real transforms and strided stages on one device" in proc.stdout
    assert [r["dtype"] for r in rows] == ["float32", "float64"]
    from benchmarks.real_engines import COLUMNS
    for r in rows:
        assert r["failed"] == "", r
        for key, _ in COLUMNS:
            assert 0 < float(r[f"{key}_ms"]) < math.inf, (key, r)
            if not key.startswith("jnp") and key != "auto_dctn":
                assert float(r[f"{key}_err"]) < (2e-5 if r["dtype"] == "float32" else 1e-12)
                assert 0 < float(r[f"{key}_ratio"]) < math.inf


def test_mpi_gpu_benchmark_on_cpu(tmp_path):
    """`mpirun -n 2 python -m benchmarks.mpi_gpu --platform cpu` (gpu.sh's MPI step) at 16³."""
    mpirun = os.path.join(os.path.dirname(sys.executable), "mpirun")
    if not all(importlib.util.find_spec(m) for m in ("mpi4py", "mpi4jax")) or \
            not os.path.exists(mpirun):
        pytest.skip("needs mpi4py, mpi4jax and mpirun next to the Python (`make install`)")
    proc = subprocess.run([mpirun, "-n", "2", sys.executable, "-m", "benchmarks.mpi_gpu",
                           "--platform", "cpu", "--size", "16", "--repeats", "2", "--warmup", "1",
                           "--out", str(tmp_path)], cwd=ROOT,
                          env=_env_without_simulated_devices(MPI4JAX_NO_WARN_JAX_VERSION="1",
                                                              OMP_NUM_THREADS="1"),
                          capture_output=True, text=True, timeout=180, start_new_session=True)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    with open(tmp_path / "mpi_cpu.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert {r["engine"] for r in rows} >= {"xla"}
    for r in rows:
        assert r["ranks"] == "2" and r["grid"] == "2x1", r
        assert float(r["rel_err"]) < 1e-5 and float(r["round_trip_err"]) < 1e-5, r
        assert 0 < float(r["mpi_ms"]) < math.inf and float(r["one_jnp_ms"]) > 0, r
    assert "| 16³ | complex64 | 2 | 2x1 |" in proc.stdout


def test_real_workloads_quick(tmp_path):
    """`python -m benchmarks.real_workloads --quick --plot` (issue 15's report at 32³ on
    2x2): every ratio of the table is positive and finite, pfft's spectrum matches
    numpy, the plot is drawn and `--from-csv` re-renders the same table."""
    proc = subprocess.run([sys.executable, "-m", "benchmarks.real_workloads", "--quick",
                           "--plot", "--out", str(tmp_path)], cwd=ROOT,
                          env=_env_without_simulated_devices(), capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    if sys.platform.startswith("linux"):  # started again under one malloc arena
        assert proc.stdout.splitlines()[0].endswith(
            "malloc steady (" + ":".join(STEADY_MALLOC) + ")")
    with open(tmp_path / "real_workloads.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert [(r["size"], r["dtype"], r["grid"]) for r in rows] == [("32", "float32", "2x2")]
    row = rows[0]
    assert int(row["exchanges"]) == 2 and float(row["rel_err"]) < 1e-6
    for key in ("rfftn", "irfftn", "padded_rfftn", "padded_irfftn", "round_trip", "step"):
        assert 0 < float(row[key]) and math.isfinite(float(row[key])), key
    for key in ("one_rfftn_faults", "rfftn_faults", "one_trip_faults", "trip_faults",
                "one_step_faults", "step_faults"):
        assert float(row[key]) >= 0 and float(row[key]).is_integer(), key
    for key in ("floor_rfftn", "floor_irfftn", "floor_padded_rfftn", "floor_padded_irfftn",
                "floor_round_trip"):   # DUCC's transform, where ducc0 is
        if importlib.util.find_spec("ducc0") is not None:
            assert 0 < float(row[key]) and math.isfinite(float(row[key])), key
        else:
            assert math.isnan(float(row[key])), key
    forward, backward = float(row["floor_rfftn"]), float(row["floor_irfftn"])
    if not math.isnan(forward):   # a round trip's floor weighs the two
        assert min(forward, backward) <= float(row["floor_round_trip"]) <= max(forward, backward)
    assert (tmp_path / "real_workloads.png").stat().st_size > 1000
    again = subprocess.run([sys.executable, "-m", "benchmarks.real_workloads", "--from-csv",
                            str(tmp_path / "real_workloads.csv"), "--out", str(tmp_path)],
                           cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr[-3000:]
    assert (tmp_path / "real_workloads.md").read_text().strip() in again.stdout


def test_fixed_costs_tiny(tmp_path):
    """`python -m benchmarks.fixed_costs` on 4 devices at 1 KiB: the permute exchange it
    times is checked equal to the all-to-all inside, and every time is positive."""
    _, rows = _run_benchmark("fixed_costs", "--devices", "4", "--kib", "1", "--repeats", "3",
                             out=tmp_path)
    assert len(rows) == 1 and int(rows[0]["devices"]) == 4
    keys = ("dispatch_us", "all_to_all_us", "permutes_us") + (
        ("swap_us",) if swap_module.AVAILABLE else ())
    for key in keys:
        assert 0 < float(rows[0][key]) < 1e7, key


def test_kernel_passes_tiny(tmp_path):
    """`python -m benchmarks.kernel_passes` at 16³: a row per pass and dtype, each pass
    of the pieces kernel next to DUCC's strided transform, hot and cold, every time
    positive."""
    proc, rows = _run_benchmark("kernel_passes", "--size", "16", "--dtypes", "float32",
                                "float64", "--repeats", "3", "--cold-mib", "1", out=tmp_path)
    assert [r["dtype"] for r in rows] == ["float32"] * 6 + ["float64"] * 6
    assert {r["pass_"].split(",")[0] for r in rows} == {
        "r2c axis 2", "c2c axis 1", "c2c axis 0", "c2r axis 2", "dct2 axis 2", "dct2 axis 0"}
    for r in rows:
        for key in ("pieces_min_ms", "pieces_median_ms", "pieces_cold_ms", "ducc_min_ms",
                    "ducc_median_ms", "ducc_cold_ms"):
            assert 0 < float(r[key]) < math.inf, (key, r)
    assert "**pieces / DUCC (min)**" in proc.stdout
    assert "**pieces / DUCC (cold)**" in proc.stdout


def test_user_layouts_tiny(tmp_path):
    """`python -m benchmarks.user_layouts` at 16³ on a 2x2 grid of the user's own axis
    names: a row per layout, axis type and way of calling, each spectrum equal to the
    one-device `jnp.fft.rfftn` to float32 rounding, the plan path only on Auto axes,
    and a plot drawn."""
    proc, rows = _run_benchmark("user_layouts", "--sizes", "16", "--dtypes", "float32",
                                "--grids", "2x2", "--repeats", "2", "--plot", out=tmp_path)
    from benchmarks.user_layouts import layouts
    want = [(t, lay, w) for lay in layouts((2, 2)) for t in ("auto", "explicit")
            for w in (("pfft.rfftn", "plan") if t == "auto" else ("pfft.rfftn",))]
    assert [(r["axis_type"], r["layout"], r["way"]) for r in rows] == want
    for r in rows:
        assert float(r["rel_err"]) < 1e-6, r
        for key in ("rfftn", "irfftn", "round_trip", "vs_own"):
            assert 0 < float(r[key]) < math.inf, (key, r)
        assert "all-to-all" in r["collectives"], r
    assert (tmp_path / "user_layouts.png").stat().st_size > 0
    assert "**rfftn**" in proc.stdout


def test_fuse_threshold_tiny(tmp_path):
    """`python -m benchmarks.fuse_threshold` at 16³ on a slab and a pencil: a row per
    transform, what "auto" chooses for a 4 KiB block (one all-to-all), times positive."""
    _, rows = _run_benchmark("fuse_threshold", "--sizes", "16", "--grids", "4", "2x2",
                             "--dtypes", "float32", "--repeats", "2", out=tmp_path)
    assert [(r["grid"], r["transform"]) for r in rows] == [
        ("4", "rfftn"), ("4", "irfftn"), ("2x2", "rfftn"), ("2x2", "irfftn")]
    assert rows[0]["auto"] == "4: all-to-all" and float(rows[0]["block_kib"]) == 4
    assert rows[2]["auto"] == "4: all-to-all"            # 2x2: the exchange over ('x', 'y')
    for r in rows:
        for key in ("shifts_ms", "all_to_all_ms", "ratio"):
            assert 0 < float(r[key]) < math.inf, (key, r)


@pytest.mark.parametrize("switch, plan", [("PFFT_NO_SWAPS", "r2c"),
                                          ("PFFT_NO_PASS_PAIRS", "r2c"),
                                          ("PFFT_NO_IN_PLACE", "c2c")])
def test_switches_tiny(tmp_path, switch, plan):
    """`python -m benchmarks.switches --plot` at 16³ on a slab and a pencil: a row per
    grid and precision, the forward plans' collectives named, both variants checked
    against each other, every time and ratio positive."""
    name = f"switches_{switch.lower()}" + ("" if plan == "r2c" else f"_{plan}")
    proc, rows = _run_benchmark("switches", "--switch", switch, "--plan", plan, "--sizes", "16",
                                "--grids", "4", "2x2", "--dtypes", "float64", "--repeats", "2",
                                "--plot", out=tmp_path, name=name)
    assert [(r["plan"], r["grid"], r["dtype"]) for r in rows] == [(plan, "4", "float64"),
                                                                   (plan, "2x2", "float64")]
    for r in rows:
        assert "all-to-all" in r["collectives"] or "collective-permute" in r["collectives"]
        assert r["same_bits"] in ("True", "False")
        for key in ("forward", "backward", "trips", "forward_ms", "forward_off_ms"):
            assert 0 < float(r[key]) < math.inf, (key, r)
    assert "**forward on / off**" in proc.stdout
    if sys.platform.startswith("linux"):  # started again under the steady malloc setting
        assert proc.stdout.splitlines()[0].endswith(
            "malloc steady (" + ":".join(STEADY_MALLOC) + ")")
    assert (tmp_path / f"{name}.png").stat().st_size > 1000


def test_fftshift_benchmark_tiny(tmp_path):
    """`python -m benchmarks.fftshift --plot` at 16³ on 2x2 and 1x4: pfft's shift equals
    numpy's, compiles to one collective permute, and every time (the permute floor and
    the in-loop figures too) is positive."""
    proc, rows = _run_benchmark("fftshift", "--sizes", "16", "--grids", "2x2", "1x4",
                                "--repeats", "2", "--plot", out=tmp_path)
    assert [(r["grid"], r["axes"]) for r in rows] == [
        ("2x2", "(0, 1)"), ("2x2", "all"), ("1x4", "(0,)"), ("1x4", "all")]
    for r in rows:
        assert r["exact"] == "True" and r["pfft_collectives"] == "1 collective-permute", r
        for key in ("fftn_ms", "fftshift_ms", "fftshift_over_fftn", "floor_ms",
                    "floor_over_fftn", "loop_shift_ms", "loop_fftn_ms", "loop_over_fftn"):
            assert 0 < float(r[key]) < math.inf, (key, r)
        assert "all-gather" not in r["jnp_collectives"], r
    assert (tmp_path / "fftshift.png").stat().st_size > 1000
    assert "**pfft.fftshift / fftn**" in proc.stdout
    assert "**in a loop: fftshift / fftn**" in proc.stdout


def test_r2r_benchmark_tiny(tmp_path):
    """`python -m benchmarks.r2r --quick --plot`: pfft.dctn at 16³ on 2x2 equals
    scipy.fft.dctn to round-off, and every time and ratio is a positive number."""
    proc = subprocess.run([sys.executable, "-m", "benchmarks.r2r", "--quick", "--plot",
                           "--out", str(tmp_path)], cwd=ROOT,
                          env=_env_without_simulated_devices(), capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    with open(tmp_path / "r2r.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert [(r["size"], r["dtype"], r["grid"]) for r in rows] == [("16", "float64", "2x2")]
    assert float(rows[0]["rel_err"]) < 1e-14                  # measured 4e-16
    for key in ("dctn_ms", "rfftn_ms", "scipy_ms", "jax_scipy_ms", "dctn_over_rfftn"):
        assert 0 < float(rows[0][key]) < math.inf, key
    assert (tmp_path / "r2r.png").stat().st_size > 1000
    assert "**dctn / rfftn**" in proc.stdout


def _mpirun_or_skip():
    """mpirun next to the Python, else skip (mpi4py and mpi4jax too)."""
    mpirun = os.path.join(os.path.dirname(sys.executable), "mpirun")
    if not all(importlib.util.find_spec(m) for m in ("mpi4py", "mpi4jax")) or \
            not os.path.exists(mpirun):
        pytest.skip("needs mpi4py, mpi4jax and mpirun next to the Python (`make install`)")
    return mpirun


def _mpi_vs_mpi4pyfft(mpirun, *args, **env):
    return subprocess.run([mpirun, "-n", "4", sys.executable, "-m", "benchmarks.mpi_vs_mpi4pyfft",
                           *args], cwd=ROOT,
                          env=_env_without_simulated_devices(MPI4JAX_NO_WARN_JAX_VERSION="1",
                                                              OMP_NUM_THREADS="1", **env),
                          capture_output=True, text=True, timeout=300, start_new_session=True)


@pytest.mark.parametrize("grid", ["2x2", "1x4"])
def test_mpi_vs_mpi4pyfft_dctn_tiny(grid):
    """`mpirun -n 4 python -m benchmarks.mpi_vs_mpi4pyfft --transform dctn` at 16³ (`make
    bench-mpi`'s second line): both libraries equal scipy.fft.dctn, every time is positive."""
    mpirun = _mpirun_or_skip()
    try:
        import mpi4py_fft  # noqa: F401
    except ImportError as e:
        pytest.skip(f"mpi4py-fft is bench-only ({e}; it builds against FFTW: apt-get install "
                    f"-y libfftw3-dev, then pip install mpi4py-fft)")
    proc = _mpi_vs_mpi4pyfft(mpirun, "--transform", "dctn", "--grid", grid, "--sizes", "16",
                             "--dtypes", "float64", "--repeats", "2", "--check-size", "8")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    out = proc.stdout
    check = re.search(r"# check 8\^3 float64 \S+: .* pfft\.mpi ([\d.e+-]+), mpi4py-fft ([\d.e+-]+)",
                      out)
    assert check and max(float(check[1]), float(check[2])) < 1e-14, out   # measured 4e-16
    row = next(line for line in out.splitlines() if line.startswith(f"| 16³ | float64 | {grid} |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    for cell in cells[3:7]:                         # pfft.mpi, mpi4py-fft, ratio, scipy
        assert 0 < float(cell) < math.inf, row
    assert max(float(e) for e in cells[7].split("/")) < 1e-14, row


def test_mpi_vs_mpi4pyfft_without_mpi4pyfft(tmp_path):
    """Without mpi4py-fft (as in CI) the benchmark says how to install it and exits 0, so
    `make bench-mpi` still runs."""
    mpirun = _mpirun_or_skip()
    (tmp_path / "mpi4py_fft.py").write_text("raise ImportError('mpi4py_fft hidden by the test')\n")
    proc = _mpi_vs_mpi4pyfft(mpirun, "--transform", "dctn", PYTHONPATH=str(tmp_path))
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "mpi4py-fft not installed: apt-get install -y libfftw3-dev" in proc.stdout
    assert "pip install mpi4py-fft" in proc.stdout


def test_split_fft_benchmark_tiny(tmp_path):
    """`python -m benchmarks.split_fft --plot` at 2^12 points on 4 and 2x4 devices: the
    six-step transform compiles to three all-to-alls, agrees with numpy, and every time
    is positive."""
    proc = subprocess.run([sys.executable, "-m", "benchmarks.split_fft", "--log2", "12",
                           "--grids", "4", "2x4", "--repeats", "2", "--plot",
                           "--out", str(tmp_path)], cwd=ROOT,
                          env=_env_without_simulated_devices(), capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    with open(tmp_path / "split_fft.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert [r["grid"] for r in rows] == ["4", "2x4"]
    for r in rows:
        assert r["pfft_collectives"] == "3 all-to-all", r
        assert float(r["error"]) <= 1e-6, r
        for key in ("one_ms", "pfft_ms", "jnp_ms", "pfft_over_one"):
            assert 0 < float(r[key]) < math.inf, (key, r)
    assert (tmp_path / "split_fft.png").stat().st_size > 1000
    assert "**pfft / 1 device**" in proc.stdout


def test_page_faults_tiny(tmp_path):
    """`python -m benchmarks.page_faults` at 16³ on two grids, with and without the
    huge-page switch (each in its own process): a row per setting and grid, times and
    ratios positive, fault counts whole and not negative."""
    proc, rows = _run_benchmark("page_faults", "--size", "16", "--dtype", "complex64",
                                "--grids", "2", "2x2", "--repeats", "2",
                                "--switch", "PFFT_NO_HUGEPAGE_ADVICE", out=tmp_path,
                                name="page_faults_16_complex64")
    assert [(r["setting"], r["grid"]) for r in rows] == [
        ("default", "2"), ("default", "2x2"),
        ("PFFT_NO_HUGEPAGE_ADVICE=1", "2"), ("PFFT_NO_HUGEPAGE_ADVICE=1", "2x2")]
    for r in rows:
        for key in ("one_ms", "pfft_ms", "ratio"):
            assert 0 < float(r[key]) < math.inf, (key, r)
        for key in ("one_faults", "pfft_faults"):
            assert int(r[key]) >= 0, (key, r)
    assert "**pfft / 1 dev**" in proc.stdout


def test_malloc_setting_without_restart(monkeypatch):
    """`--malloc default` keeps the process as it is, and so does `steady` where
    GLIBC_TUNABLES already holds the setting: no restart (os.execve would replace
    pytest), and the header names the setting."""
    from benchmarks import common

    def no_exec(*args):
        raise AssertionError(f"restarted: {args}")

    monkeypatch.setattr(common.os, "execve", no_exec)
    monkeypatch.setenv("GLIBC_TUNABLES", "glibc.malloc.tcache_count=0")
    assert common.apply_malloc("default", "benchmarks.x", []) == (
        "malloc default (glibc.malloc.tcache_count=0)")
    monkeypatch.setenv("GLIBC_TUNABLES",
                       ":".join(("glibc.malloc.tcache_count=0",) + common.STEADY_MALLOC))
    label = common.apply_malloc("steady", "benchmarks.x", [])
    assert label == ("malloc steady (" + ":".join(common.STEADY_MALLOC) + ")"
                     if sys.platform.startswith("linux")
                     else "malloc default (no glibc tunables here)")


def test_malloc_steady_restarts(monkeypatch):
    """`--malloc steady` without the setting starts the benchmark again (same module and
    arguments) with it in GLIBC_TUNABLES: the user's other tunables kept, a setting of
    the same name replaced."""
    from benchmarks import common
    if not sys.platform.startswith("linux"):
        pytest.skip("glibc tunables are Linux only")
    calls = []

    def fake_exec(path, argv, env):
        calls.append((path, argv, env["GLIBC_TUNABLES"]))
        raise SystemExit(0)

    monkeypatch.setattr(common.os, "execve", fake_exec)
    monkeypatch.setenv("GLIBC_TUNABLES",
                       "glibc.malloc.tcache_count=0:glibc.malloc.arena_max=4")
    with pytest.raises(SystemExit):
        common.apply_malloc("steady", "benchmarks.real_workloads", ["--quick"])
    assert calls == [(sys.executable, [sys.executable, "-m", "benchmarks.real_workloads",
                                       "--quick"],
                      ":".join(("glibc.malloc.tcache_count=0",) + common.STEADY_MALLOC))]
