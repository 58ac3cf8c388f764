"""Every documented benchmark command runs: each entry point of `python -m benchmarks` (and
the modules benchmarks/gpu.sh runs) at a tiny size, its CSV sane, and the docs' tables
are what `python -m benchmarks report` renders from the committed data.

Timings are checked for being positive and finite only: how fast anything runs on a
loaded machine is not a test's business (subprocess timeouts only guard against hangs)."""
import csv
import filecmp
import importlib.util
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys

import pytest

from benchmarks.common import STEADY_MALLOC

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_quick_transforms(tmp_path):
    """`python -m benchmarks transforms --quick`: one device, pfft and the chain on four
    grids and weak scaling, with the model and memory columns, the run's JSON, the tables
    and the plots."""
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
    # the timeout only guards against a hang: how long --quick takes is not asserted
    proc = subprocess.run([sys.executable, "-m", "benchmarks", "transforms", "--quick",
                           "--no-progress", "--out", str(tmp_path)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    from benchmarks.suite_rows import COLUMNS

    with open(tmp_path / "transforms.csv", newline="") as f:
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
    info = json.loads((tmp_path / "transforms.json").read_text())
    assert info["command"] == f"python -m benchmarks transforms --quick --no-progress --out {tmp_path}"
    assert info["date"] and info["machine"] and info["jax"] and info["pfft"]
    assert (tmp_path / "transforms.md").read_text().count("|") > 50
    for png in ("ratios", "scaling", "model"):
        assert (tmp_path / f"transforms_{png}.png").stat().st_size > 1000


def _env_without_simulated_devices(**extra):
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
    env.update(extra)
    return env


def _run_benchmark(topic, *args, out, name=None):
    """Runs ``python -m benchmarks <topic> *args --out out`` (``benchmarks.<topic>`` where
    ``topic`` names a module: ``per_device``) on the machine's one CPU device (the
    benchmark asks for its own), checks it exited 0, and returns the process and the
    rows of ``out/<name>.csv`` (``name``: the topic's, by default)."""
    command = ["-m", f"benchmarks.{topic}"] if "_" in topic else ["-m", "benchmarks", topic]
    proc = subprocess.run([sys.executable, *command, *args,
                           "--out", str(out)], cwd=ROOT, env=_env_without_simulated_devices(),
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    with open(out / f"{name or topic}.csv", newline="") as f:
        return proc, list(csv.DictReader(f))


def test_engines_table_on_cpu(tmp_path):
    """`python -m benchmarks gpu engines --platform cpu` (gpu.sh's `benchmarks.engines`, on
    the CPU at 16³): the three tables with their targets, and sane numbers in the CSV."""
    proc = subprocess.run([sys.executable, "-m", "benchmarks", "gpu", "engines", "--platform", "cpu",
                           "--sizes", "16", "--dtypes", "complex64", "--repeats", "2",
                           "--warmup", "1", "--out", str(tmp_path)], cwd=ROOT,
                          env=_env_without_simulated_devices(), capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    out = proc.stdout
    for title in ("Three-axis FFT on one device", "Strided axis-0 kernel",
                  "Achieved bandwidth against a device-to-device copy"):
        assert title in out, out
    assert "≤ 1.1× `jnp.fft.fftn`" in out and "≥ 1.5× faster" in out      # the targets
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
    benchmark) at 16³: every case ran, agrees with jnp.fft, and has a ratio; the
    "auto, tuned" cases only where auto chooses an engine per FFT step (GPUs), so not
    here, where the table leaves their columns out."""
    proc, rows = _run_benchmark("real_engines", "--platform", "cpu", "--sizes", "16",
                                "--dtypes", "float32", "float64", "--repeats", "2",
                                "--warmup", "1", out=tmp_path, name="real_engines_cpu")
    assert "Real transforms and strided stages on one device" in proc.stdout
    assert "| auto, tuned |" not in proc.stdout                 # no such column
    assert [r["dtype"] for r in rows] == ["float32", "float64"]
    from benchmarks.real_engines import COLUMNS
    for r in rows:
        assert r["failed"] == "", r
        for key, _ in COLUMNS:
            if key.startswith("tuned_"):          # CPU "auto" runs one engine throughout
                assert not r.get(f"{key}_ms"), (key, r)
                continue
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
    """`python -m benchmarks real --quick --plot` (rfftn, irfftn, round trips and an RK4
    step against one device, at 32³ on 2x2): every ratio of the table is positive and
    finite, pfft's spectrum matches numpy, the plot is drawn and `--from-csv` re-renders
    the same table."""
    proc = subprocess.run([sys.executable, "-m", "benchmarks", "real", "--quick",
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
    assert json.loads((tmp_path / "real_workloads.json").read_text())["command"].startswith(
        "python -m benchmarks real --quick")
    again = subprocess.run([sys.executable, "-m", "benchmarks", "real", "--from-csv",
                            str(tmp_path / "real_workloads.csv"), "--out", str(tmp_path)],
                           cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr[-3000:]
    assert (tmp_path / "real_workloads.md").read_text().strip() in again.stdout


def test_user_layouts_tiny(tmp_path):
    """`python -m benchmarks real --layouts` at 16³ on a 2x2 grid of the user's own axis
    names: a row per layout, axis type and way of calling, each spectrum equal to the
    one-device `jnp.fft.rfftn` to float32 rounding, the plan path only on Auto axes,
    and a plot drawn."""
    proc, rows = _run_benchmark("real", "--layouts", "--sizes", "16", "--dtypes", "float32",
                                "--grids", "2x2", "--repeats", "2", "--plot", out=tmp_path,
                                name="user_layouts")
    from benchmarks.real_workloads import layouts
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


def test_r2r_benchmark_tiny(tmp_path):
    """`python -m benchmarks r2r --quick --plot`: pfft.dctn at 16³ on 2x2 equals
    scipy.fft.dctn to round-off, and every time and ratio is a positive number."""
    proc = subprocess.run([sys.executable, "-m", "benchmarks", "r2r", "--quick", "--plot",
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


def test_memory_benchmark_tiny(tmp_path):
    """`python -m benchmarks memory` at 16³ on one device and the slab of 8, c2c and r2c,
    through pfft and with JAX alone, with the bare all-to-all over 2: the blocks a
    device holds, the table, and the largest grid from them."""
    proc, rows = _run_benchmark("memory", "--n", "16", "--grids", "1", "8", "--cases", "c2c",
                                "r2c", "--engines", "auto", "jax", "--floor", "2",
                                out=tmp_path, name="memory")
    assert [(r["case"], r["grid"], r["engine"], r["direction"]) for r in rows] == [
        (c, g, e, d) for c in ("c2c", "r2c") for g in ("1", "8") for e in ("auto", "jax")
        for d in ("forward", "backward")] + [("all-to-all", "2", "", "")]
    for r in rows:
        kept, donated = float(r["kept_blocks"]), float(r["donated_blocks"])
        assert 2 <= donated <= kept < 8, r          # input and output, at least
        if r["case"] == "r2c":
            assert kept == donated, r               # sizes differ: nothing to alias
    one = {(r["case"], r["engine"], r["direction"]): float(r["kept_blocks"])
           for r in rows if r["grid"] == "1"}
    # jnp.fft on one device holds its input and its output (16² x 9 complex bins)
    assert one["c2c", "jax", "forward"] == pytest.approx(2.0, abs=0.01)
    assert one["r2c", "jax", "forward"] == pytest.approx(1 + 2 * 9 / 16, abs=0.01)
    floor = rows[-1]
    assert abs(float(floor["kept_blocks"]) - 3.5) < 0.01            # 1 + 1 + 1.5 (p = 2)
    assert abs(float(floor["donated_blocks"]) - 3.0) < 0.01
    text = (tmp_path / "memory.md").read_text()
    assert "The floor" in text and "Measured by `python -m benchmarks memory --n 16" in text
    assert "| JAX alone forward | JAX alone backward |" in text
    assert json.loads((tmp_path / "memory.json").read_text())["date"]
    from benchmarks import largest_grid

    assert largest_grid.largest_n(2.0, 1, 8, 16 * 1000 ** 3) == 1000
    assert largest_grid.largest_n(3.0, 8, 8, 1e9 * 3) == 1000
    shutil.copy(os.path.join(ROOT, "docs", "data", "per_device_gpu.csv"), tmp_path)
    assert largest_grid.report(str(tmp_path), str(tmp_path)) == [str(tmp_path / "largest_grid.md")]
    table = (tmp_path / "largest_grid.md").read_text()
    assert table.count("\n| 256 |") == 2 and "| 1 | one device (CPU, 16³) |" in table
    blocks = largest_grid.pfft_blocks(*(largest_grid._read(str(tmp_path / name)) for name in
                                        ("per_device_gpu.csv", "memory.csv")))
    assert set(blocks) == {(k, p) for k in ("c2c", "r2c") for p in largest_grid.GPU_COUNTS}
    assert all(b["kept"] <= largest_grid.JAXDECOMP_BLOCKS[k] for (k, _), b in blocks.items())


def _mpirun_or_skip():
    """mpirun next to the Python, else skip (mpi4py and mpi4jax too)."""
    mpirun = os.path.join(os.path.dirname(sys.executable), "mpirun")
    if not all(importlib.util.find_spec(m) for m in ("mpi4py", "mpi4jax")) or \
            not os.path.exists(mpirun):
        pytest.skip("needs mpi4py, mpi4jax and mpirun next to the Python (`make install`)")
    return mpirun


def _mpi_benchmark(mpirun, *args, ranks=4, **env):
    return subprocess.run([mpirun, "-n", str(ranks), sys.executable, "-m", "benchmarks", "mpi",
                           *args], cwd=ROOT,
                          env=_env_without_simulated_devices(MPI4JAX_NO_WARN_JAX_VERSION="1",
                                                              OMP_NUM_THREADS="1", **env),
                          capture_output=True, text=True, timeout=300, start_new_session=True)


@pytest.mark.parametrize("grid", ["2x2", "1x4"])
def test_mpi_vs_mpi4pyfft_dctn_tiny(grid):
    """`mpirun -n 4 python -m benchmarks mpi --transform dctn` at 16³ (`make bench-mpi`'s
    second line): both libraries equal scipy.fft.dctn, every time is positive."""
    mpirun = _mpirun_or_skip()
    try:
        import mpi4py_fft  # noqa: F401
    except ImportError as e:
        pytest.skip(f"mpi4py-fft is bench-only ({e}; it builds against FFTW: apt-get install "
                    f"-y libfftw3-dev, then pip install mpi4py-fft)")
    proc = _mpi_benchmark(mpirun, "--transform", "dctn", "--grid", grid, "--sizes", "16",
                          "--dtypes", "float64", "--repeats", "2", "--check-size", "8",
                          "--out", "")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    out = proc.stdout
    check = re.search(r"# check 8\^3 float64 \S+: .* pfft\.mpi ([\d.e+-]+), mpi4py-fft ([\d.e+-]+)",
                      out)
    assert check and max(float(check[1]), float(check[2])) < 1e-14, out   # measured 4e-16
    row = next(line for line in out.splitlines()
               if line.startswith(f"| `dctn` | 16³ | float64 | 4 ({grid}) |"))
    cells = [c.strip().strip("*") for c in row.strip("|").split("|")]
    for cell in cells[4:7] + [cells[7].split()[0]]:   # pfft.mpi, mpi4py-fft, ratio, scipy
        assert 0 < float(cell) < math.inf, row
    assert max(float(e) for e in cells[8].split("/")) < 1e-14, row


def test_mpi_vs_mpi4pyfft_without_mpi4pyfft(tmp_path):
    """Without mpi4py-fft (as in CI) the benchmark says how to install it and exits 0, so
    `make bench-mpi` still runs."""
    mpirun = _mpirun_or_skip()
    (tmp_path / "mpi4py_fft.py").write_text("raise ImportError('mpi4py_fft hidden by the test')\n")
    proc = _mpi_benchmark(mpirun, "--transform", "dctn", PYTHONPATH=str(tmp_path))
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "mpi4py-fft not installed: apt-get install -y libfftw3-dev" in proc.stdout
    assert "pip install mpi4py-fft" in proc.stdout


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


def test_malloc_steady_restarts_the_topic_it_was_started_as(monkeypatch):
    """Started as `python -m benchmarks real`, the restart under the steady setting runs
    `python -m benchmarks real` again with the same arguments, and the recorded command
    is that one."""
    from benchmarks import common
    if not sys.platform.startswith("linux"):
        pytest.skip("glibc tunables are Linux only")
    calls = []

    def fake_exec(path, argv, env):
        calls.append(argv)
        raise SystemExit(0)

    monkeypatch.setattr(common.os, "execve", fake_exec)
    monkeypatch.setattr(common, "LAUNCH", ("-m", "benchmarks", "real"))
    monkeypatch.delenv("GLIBC_TUNABLES", raising=False)
    with pytest.raises(SystemExit):
        common.apply_malloc("steady", "benchmarks.real_workloads", ["--quick"])
    assert calls == [[sys.executable, "-m", "benchmarks", "real", "--quick"]]
    assert common.command("benchmarks.real_workloads", ["--sizes", "64"]) == (
        "python -m benchmarks real --sizes 64")


def test_topics_are_listed_and_a_wrong_one_is_named():
    """`python -m benchmarks` lists its topics; an unknown topic, or `gpu` without the
    program to run, exits saying what it takes."""
    run = [sys.executable, "-m", "benchmarks"]
    listing = subprocess.run(run, cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert listing.returncode == 0
    for topic in ("transforms", "peers", "real", "r2r", "memory", "mpi", "apps", "gpu",
                  "model", "report"):
        assert re.search(rf"^ {{4}}{topic} ", listing.stdout, re.M), topic
    wrong = subprocess.run(run + ["fastest"], cwd=ROOT, capture_output=True, text=True,
                           timeout=60)
    assert wrong.returncode != 0 and "no topic 'fastest'" in wrong.stderr
    bare = subprocess.run(run + ["gpu"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert bare.returncode != 0
    assert "engines, huge_blocks, mpi_gpu, per_device, real_engines" in bare.stderr
    assert "chunk_copies" not in bare.stderr


def test_docs_tables_and_figures_are_rendered_from_the_committed_data(tmp_path):
    """`python -m benchmarks report` on a copy of docs/data writes every table the pages
    include exactly as committed (none is edited by hand), and every figure it names."""
    data, figures = tmp_path / "data", tmp_path / "figures"
    shutil.copytree(os.path.join(ROOT, "docs", "data"), data)
    for table in data.glob("*.md"):
        table.unlink()
    proc = subprocess.run([sys.executable, "-m", "benchmarks", "report", "--data", str(data),
                           "--figures", str(figures)], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    from benchmarks.__main__ import figures_drawn
    committed = {p for p in os.listdir(os.path.join(ROOT, "docs", "data")) if p.endswith(".md")}
    rendered = {p.name for p in data.glob("*.md")}
    assert rendered == committed
    for name in rendered:
        assert filecmp.cmp(data / name, os.path.join(ROOT, "docs", "data", name), shallow=False), \
            f"docs/data/{name} differs from what `python -m benchmarks report` renders"
    assert {p.name for p in figures.glob("*.png")} == set(figures_drawn())


def test_mpi_scaling_tiny():
    """`mpirun -n 2 python -m benchmarks mpi --scaling` at 16³: a strong and a weak JSON
    row with pfft.mpi's time and its error against numpy."""
    mpirun = _mpirun_or_skip()
    proc = _mpi_benchmark(mpirun, "--scaling", "--sizes", "16", "--weak-base", "8",
                          "--repeats", "2", ranks=2)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    rows = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    assert [(r["study"], r["shape"], r["ranks"]) for r in rows] == [
        ("mpi-strong", [16, 16, 16], 2), ("mpi-weak", [16, 8, 8], 2)]
    for r in rows:
        assert 0 < r["ms"] < math.inf and r["rel_err"] < 1e-5, r


def test_per_device_benchmark_tiny(tmp_path):
    """`python -m benchmarks.per_device --platform cpu` at 16³ over 4 and 8 devices: a row
    per grid, plan, kind and engine with the CSV's columns; each result equal at every
    point to its exact value for a block of point sources, and to numpy's block-level
    math for a pseudo-random block; one size per exchange, the bytes of each transfer traced;
    times, copies and memory sane; the floor (the device's own FFT of the block plus a
    copy of each exchange's bytes) positive, and the local work over it in the table."""
    proc, rows = _run_benchmark("per_device", "--platform", "cpu", "--sizes", "16",
                                "--devices", "4", "8", "--repeats", "2", out=tmp_path,
                                name="per_device_cpu")
    from benchmarks.per_device import COLUMNS
    from pfft.engines import native
    assert list(rows[0]) == COLUMNS
    assert [(r["devices"], r["plan"], r["kind"], r["engine"]) for r in rows] == [
        (p, plan, kind, engine) for p in ("4", "8") for plan in ("slab", "pencil")
        for kind in ("c2c", "r2c") for engine in ("native", "xla", "auto")]
    ok = [r for r in rows if r["status"] == "ok"]
    assert len(ok) == (24 if native.available("cpu") else 8), [r["status"] for r in rows]
    for r in ok:
        assert r["platform"] == "cpu" and r["command"].startswith("python -m benchmarks.per_device")
        assert r["grid"] == {("slab", "4"): "4", ("slab", "8"): "8", ("pencil", "4"): "2x2",
                             ("pencil", "8"): "2x4"}[r["plan"], r["devices"]]
        assert int(r["exchanges"]) == (1 if r["plan"] == "slab" else 2), r
        assert len(r["exchange_mib"].split(";")) == int(r["exchanges"]), r
        ms, copies, local = float(r["ms"]), float(r["copies_ms"]), float(r["local_ms"])
        assert 0 < copies and 0 < float(r["copy_ms"]) and math.isfinite(ms), r
        assert local == pytest.approx(ms - copies), r
        # each engine against the exact values and numpy, 4x the largest errors
        # measured (exact: 2.5e-7, the largest over the largest value; numpy: 1.2e-7)
        assert float(r["exact_err"]) < 1e-6 and float(r["numpy_err"]) < 5e-7, r
        # at least the input and the output; donating the input never costs more
        assert 2 <= float(r["donated_blocks"]) <= float(r["kept_blocks"]) < 8, r
        # a c2c exchange moves the whole complex64 block (16³/p points), padding aside
        if r["kind"] == "c2c":
            assert sum(float(v) for v in r["exchange_mib"].split(";")) >= \
                float(r["exchanges"]) * float(r["block_mib"]) * (1 - 1e-9), r
        if r["engine"] == "auto":   # lax.fft for the innermost axes first, native for the
            engines = r["fft_engines"].split(", ")      # leading ones; a middle axis: XLA
            assert engines[0] == "xla" and "native" in engines, r
            # one entry per FFT stage that runs: a slab's 2-D FFT is one
            assert len(engines) == (2 if r["plan"] == "slab" else 3), r
    # the local work's floor: the device's own FFT of a block of the same size (measured
    # once per configuration, shared by its engines) plus one copy of each exchange's
    # bytes (the block copy scaled to them: for c2c one copy of the block per exchange)
    assert {"fft_ms", "floor_ms", "local_over_floor"} <= set(COLUMNS)
    for r in ok:
        fft, floor = float(r["fft_ms"]), float(r["floor_ms"])
        assert 0 < fft < floor < math.inf, r
        moved = sum(float(v) for v in r["exchange_mib"].split(";")) / float(r["block_mib"])
        assert floor == pytest.approx(fft + float(r["copy_ms"]) * moved, rel=1e-5), r  # %.6g
        if r["kind"] == "c2c":
            assert moved == pytest.approx(int(r["exchanges"]), rel=1e-5), r
        assert float(r["local_over_floor"]) == pytest.approx(float(r["local_ms"]) / floor), r
        assert {s["fft_ms"] for s in ok if (s["devices"], s["plan"], s["kind"]) ==
                (r["devices"], r["plan"], r["kind"])} == {r["fft_ms"]}, r
    text = (tmp_path / "per_device_cpu.md").read_text()
    assert "| floor (ms) | local / floor | worst stage (local / floor) |" in text
    assert "**Goal: local work within 1.05× its floor**" in text and "At 16³ on 4: " in text
    assert "| 16³ | 8 | pencil 2x4 | r2c | forward | xla |" in proc.stdout
    assert text.count("| 16³ |") == 24
    assert {r["direction"] for r in rows} == {"forward"}
    _assert_stage_columns(ok, text)


def _resolved_steps(r: dict) -> tuple:
    """The steps of the program a per-device CSV row ran, resolved again here: its
    case's plan core built as the benchmark builds it (``per_device._build``)."""
    import jax
    from benchmarks import device_program, per_device
    engine = device_program.engines_for(jax.devices("cpu")[0], [r["engine"]])[r["engine"]]
    c = per_device.Case(int(r["n"]), int(r["devices"]), r["plan"], r["kind"], r["engine"],
                        r["direction"])
    per_device._build(c, engine)
    return c.core.transform.program(c.variant).steps


def _assert_stage_columns(ok: list[dict], table: str) -> None:
    """Each timed row's per-step columns: one description, time and floor per step of
    the program it ran, the descriptions the resolved steps' own, every floor and every
    time positive (an exchange's: see below), and the worst stage the step most over its
    floor exactly where one is over 1.05x, as the table shows it; over the rows, the
    steps' times beside the whole programs'."""
    from pfft.program import AllToAll
    alone_over_whole = []
    for r in ok:
        steps = _resolved_steps(r)
        names = r["stages"].split(";")
        times = [float(v) for v in r["stage_ms"].split(";")]
        floors = [float(v) for v in r["stage_floor_ms"].split(";")]
        assert len(names) == len(times) == len(floors) == len(steps), r
        assert names == [str(step) for step in steps], r
        assert all(0 < f < math.inf for f in floors), r
        for step, t in zip(steps, times):
            if isinstance(step, AllToAll):
                # an exchange's local time is the step less its stand-in copy, timed
                # apart: where XLA folds the pack into that copy it is 0 within the
                # timing's noise (measured at 16³: -6 to +1.5 µs beside copies of 6 to
                # 22 µs), so what is asserted is that the step itself took a positive
                # time: its local time above minus its copy, at most the row's copies
                assert -float(r["copies_ms"]) < t < math.inf, (step, r)
            else:
                assert 0 < t < math.inf, (step, r)
        alone_over_whole.append((sum(times) + float(r["copies_ms"])) / float(r["ms"]))
        # the worst stage, worked out here: the first step of the largest time over floor
        ratios = [(t / f if t > 0 else -math.inf) for t, f in zip(times, floors)]
        k = max(range(len(ratios)), key=lambda i: (ratios[i], -i))
        if ratios[k] > 1.05:
            assert r["worst_stage"].startswith(f"{k + 1}: {names[k]} "), (k, r)
            assert float(r["worst_stage"].rsplit(" ", 1)[1].rstrip("x")) == pytest.approx(
                ratios[k], abs=0.006), r
        else:
            assert r["worst_stage"] == "", r
        line = next(t for t in table.splitlines() if t.startswith(
            f"| {r['n']}³ | {r['devices']} | {r['plan']} {r['grid']} | {r['kind']} | "
            f"{r['direction']} | {r['engine']} |"))
        assert f"| {r['worst_stage'] or 'none'} |" in line, (line, r)
    # the steps alone (with their stand-in copies) against the whole program: each step
    # pays its own call (about 5 µs on a CPU, most of a 16³ step) where the program pays
    # one and fuses the steps, so the steps add up to more than the program. One row's
    # ratio is one call's noise on a shared machine (measured with both tests side by
    # side, as -n 2 runs them: 0.16x to 107x), the median over the rows is not (1.8x to
    # 3.3x in 6 runs): at most 1x, the steps were timed too short (not waited for, or
    # in other units); past 6x, too long
    assert 1 < statistics.median(alone_over_whole) < 6, sorted(alone_over_whole)


def test_per_device_backward_programs(tmp_path):
    """`--directions backward`: the plan's inverse on one device of 8 (the complex
    spectrum in, ifftn / irfftn's block-level math out), each result equal to numpy's in
    float64 and, at every point, to the exact value for a block of point sources (two
    of them on the zero and last bins of the halved axis: not Hermitian); its
    exchanges carry the bytes the forward's carry; its memory is counted in blocks of
    its own input, which the model's memory table converts to blocks of the forward
    input (a real plan's spectrum is a larger block than its real input)."""
    proc, rows = _run_benchmark("per_device", "--platform", "cpu", "--sizes", "16",
                                "--devices", "8", "--engines", "native", "xla", "--repeats",
                                "2", "--directions", "backward", "forward", out=tmp_path,
                                name="per_device_cpu")
    from benchmarks import model_report
    from pfft.engines import native
    ok = [r for r in rows if r["status"] == "ok"]
    assert len(ok) == (16 if native.available("cpu") else 8), [r["status"] for r in rows]
    # the one size's forward first, then its backward
    assert [r["direction"] for r in rows] == ["forward"] * 8 + ["backward"] * 8
    by = {(r["plan"], r["kind"], r["direction"], r["engine"]): r for r in ok}
    for (plan, kind, direction, engine), r in by.items():
        assert float(r["exact_err"]) < 1e-6 and float(r["numpy_err"]) < 5e-7, r
        assert 1 <= float(r["donated_blocks"]) <= float(r["kept_blocks"]) < 8, r
        if direction == "backward":
            fwd = by[plan, kind, "forward", engine]
            assert r["exchange_mib"] == fwd["exchange_mib"], (r, fwd)
            # the spectrum in: the real plan's block holds 16 x 16 x 9 complex points
            # where the forward's held 16³ real ones (over 8 devices)
            assert float(r["block_mib"]) == pytest.approx(
                float(fwd["block_mib"]) * (2 * 9 / 16 if kind == "r2c" else 1)), r
    assert "| 16³ | 8 | slab 8 | c2c | backward | xla |" in proc.stdout
    _assert_stage_columns(ok, (tmp_path / "per_device_cpu.md").read_text())
    table = model_report._memory_rows(
        model_report.load_per_device(str(tmp_path / "per_device_cpu.csv")), 76 * 2 ** 30)
    real = next(t for t in table if t["plan"] == "slab 8" and t["kind"] == "r2c")
    fewest = {}
    for r in ok:
        if (r["plan"], r["kind"]) == ("slab", "r2c"):
            blocks = float(r["kept_blocks"]) * (2 * 9 / 16 if r["direction"] == "backward"
                                                else 1)
            fewest[r["direction"]] = min(fewest.get(r["direction"], math.inf), blocks)
    assert real["blocks"].startswith(f"{max(fewest.values()):.2f} ("), (real, fewest)


def test_floor_verdict_and_older_csvs():
    """The local work against its floor: the goal's verdict per plan, kind and direction
    at 1024³ on 8 (engine auto where measured, else the least local work), the count
    over every configuration and the farthest; a CSV from before the floor (the recorded
    H100 run's) renders "–" in its columns and no verdict."""
    from benchmarks import model_report

    def row(n, p, plan, grid, kind, engine, local, floor, direction="forward"):
        return dict(n=n, devices=p, plan=plan, grid=grid, kind=kind, engine=engine,
                    direction=direction, status="ok", local_ms=local, floor_ms=floor,
                    local_over_floor=local / floor)
    rows = [row(1024, 8, "slab", "8", "c2c", "auto", 3.24, 3.24),
            row(1024, 8, "slab", "8", "c2c", "native", 3.0, 3.24),      # not the default
            row(1024, 8, "pencil", "2x4", "c2c", "auto", 4.70, 4.20),
            row(1024, 8, "pencil", "2x4", "r2c", "xla", 2.5, 2.0),       # no auto: least
            row(1024, 8, "pencil", "2x4", "r2c", "native", 2.2, 2.0),
            row(512, 64, "slab", "64", "c2c", "auto", 0.3, 0.2)]
    text = model_report.floor_verdict(rows)
    assert "At 1024³ on 8: slab 8 c2c forward (auto): 3.24 / 3.24 ms = **1.00×** (met)" in text
    assert "pencil 2x4 c2c forward (auto): 4.7 / 4.2 ms = **1.12×** (not met)" in text
    assert "pencil 2x4 r2c forward (native): 2.2 / 2 ms = **1.10×** (not met)" in text
    assert "1 of 4 within 1.05×; the farthest 1.50× (512³ on 64, slab c2c forward, auto)" in text
    old = model_report.load_per_device(os.path.join(ROOT, "docs", "data", "per_device_gpu.csv"))
    assert "floor_ms" not in old[0] and model_report.floor_verdict(old) == ""
    table = model_report.measured_table(old)
    assert "| local / copy | floor (ms) | local / floor |" in table
    first = next(line for line in table.splitlines() if line.startswith("| 1024³ | 4 |"))
    assert " | – | – | " in first, first


def test_worst_stage_rule_on_made_up_numbers():
    """The worst stage: the step of the largest local time over its floor, counted from
    1 and named by its description, where that ratio is over 1.05 (at 1.05: none); the
    first of equal ratios; a step not measured (NaN: a failure's mark in the CSV) or
    whose time is not positive left out; not one figure per step an error. The table
    shows it, "none" where every step was timed and none is over, "–" where not every
    step was timed (a failure) or the CSV has no steps (an older run)."""
    from benchmarks import floors, model_report
    nan = math.nan
    names = ["fft axis 2 (local), by xla", "all_to_all over 'x' (4): packed",
             "transpose (2, 1, 0)"]
    assert floors.worst_stage(names, [1.0, 3.0, 2.0], [1.0, 2.0, 1.0]) == \
        "3: transpose (2, 1, 0) 2.00x"
    assert floors.worst_stage(names, [1.0, 1.04, 0.5], [1.0, 1.0, 1.0]) == ""
    assert floors.worst_stage(names, [1.05, 1.0, 1.0], [1.0, 1.0, 1.0]) == ""
    assert floors.worst_stage(names, [1.2, 1.2, 1.0], [1.0, 1.0, 1.0]) == \
        "1: fft axis 2 (local), by xla 1.20x"
    assert floors.worst_stage(names, [nan, -0.5, 1.1], [1.0, 0.1, 1.0]) == \
        "3: transpose (2, 1, 0) 1.10x"
    assert floors.worst_stage(names, [nan, nan, nan], [1.0, 1.0, 1.0]) == ""
    with pytest.raises(ValueError):
        floors.worst_stage(names, [1.0], [1.0, 1.0, 1.0])
    figures = floors.stage_figures("0.5;OOM;2")
    assert figures[0] == 0.5 and math.isnan(figures[1]) and figures[2] == 2.0
    assert floors.stage_figures("") == []

    def row(engine, **stages):
        return dict(n=32, devices=4, plan="slab", grid="4", kind="c2c", direction="forward",
                    engine=engine, status="ok", ms=1.0, local_ms=0.8, **stages)
    timed = dict(stages=";".join(names[:2]), stage_ms="0.5;0.4", stage_floor_ms="0.5;0.5")
    rows = [row("native", worst_stage="2: all_to_all over 'x' (4): packed 1.30x", **timed),
            row("xla", worst_stage="", **timed),
            row("auto", worst_stage="", **dict(timed, stage_ms="0.5;OOM")),
            row("older")]
    cells = [line.split(" | ")[-3] for line in model_report.measured_table(rows).splitlines()
             if line.startswith("| 32³ |")]
    assert cells == ["2: all_to_all over 'x' (4): packed 1.30x", "none", "–", "–"]


def test_per_device_step_that_fails_marks_its_own_figure(monkeypatch):
    """A step whose time fails (an out-of-memory, made up here) has "OOM" in its place
    in ``stage_ms``, one whose floor fails "error" in ``stage_floor_ms``; the case, the
    other steps' figures and the whole program's stand, and neither is a failure of
    the run."""
    import jax
    from benchmarks import per_device, stage_times
    from pfft.program import AllToAll, Reorder

    time_step, floor_of = stage_times._step_ms, stage_times.step_floor

    def out_of_memory(st, *args):
        if isinstance(st.step, AllToAll):
            raise RuntimeError("RESOURCE_EXHAUSTED: Out of memory allocating 8 bytes")
        return time_step(st, *args)

    def no_floor(step, *args):
        if isinstance(step, Reorder):
            raise ValueError("no floor")
        return floor_of(step, *args)
    monkeypatch.setattr(stage_times, "_step_ms", out_of_memory)
    monkeypatch.setattr(stage_times, "step_floor", no_floor)
    done = per_device.run(per_device.cases([16], [4], ["slab"], ["c2c"], ["xla"]),
                          jax.devices("cpu")[0], repeats=1, progress=lambda s: None)
    (row,) = per_device.rows(done, {})
    kinds = [type(st.step) for st in done[0].stages]
    assert row["status"] == "ok" and float(row["local_ms"]) > 0, row
    assert AllToAll in kinds and Reorder in kinds, kinds    # xla's slab: both
    times, floors = row["stage_ms"].split(";"), row["stage_floor_ms"].split(";")
    assert [t == "OOM" for t in times] == [k is AllToAll for k in kinds], row
    assert [f == "error" for f in floors] == [k is Reorder for k in kinds], row
    assert all(float(t) > 0 for t in times if t != "OOM"), row
    assert all(float(f) > 0 for f in floors if f != "error"), row
    assert per_device.failures(done) == []


def test_per_device_stand_in_never_takes_the_pieces_path():
    """The stand-in transport neither shifts nor swaps, so a native CPU engine (which
    could write pieces) runs the all-to-all path the GPU program runs."""
    import jax
    from benchmarks.per_device import CopyTransport
    from pfft import pieces
    from pfft.engines import native
    from pfft.engines.choice import engine_for_plan
    if not native.available("cpu"):
        pytest.skip("native CPU kernels not built")
    engine = engine_for_plan("native", jax.devices("cpu")[:1], fuse=True)
    transport = CopyTransport((("x", 4),))
    assert transport.capabilities.splits
    assert not (transport.capabilities.shifts or transport.capabilities.swaps)
    assert not pieces.enabled(engine, transport)


def test_model_per_device_arithmetic():
    """The model's figures worked by hand: (1 - 1/p) of each exchange's block at 370 GB/s
    on NVLink inside a node of 8 and 48 GB/s over InfiniBand, whichever side is slower;
    local work and exchanges in series, and their overlap as modelled; the largest N³
    that fits."""
    from benchmarks import model
    mib = 2 ** 20
    slab = model.per_device_prediction(dict(grid="8", exchange_groups="0",
                                            exchange_mib="1024", local_ms=3.0))
    comm = (1 - 1 / 8) * 1024 * mib / 370e9
    assert slab["exchange_s"] == [pytest.approx(comm)] and comm == pytest.approx(2.539e-3, 1e-3)
    assert slab["serial_s"] == pytest.approx(3e-3 + comm)
    assert slab["overlap_s"] == pytest.approx(3e-3 + comm / 4)       # local work the longer
    assert set(slab) == {"local_s", "exchange_s", "comm_s", "serial_s", "overlap_s"}
    pencil = model.per_device_prediction(dict(grid="2x4", exchange_groups="1;0",
                                              exchange_mib="1024;1024", local_ms=1.0))
    assert pencil["exchange_s"] == pytest.approx([0.75 * 1024 * mib / 370e9,
                                                  0.5 * 1024 * mib / 370e9])
    assert pencil["overlap_s"] == pytest.approx(pencil["comm_s"] + 1e-3 / 4)
    # 256 GPUs, 16x16: 'y' spans two nodes (8 of its 16 devices off-node), 'x' 16 nodes
    wide = model.per_device_prediction(dict(grid="16x16", exchange_groups="1;0+1",
                                            exchange_mib="64;64", local_ms=0.5))
    assert wide["exchange_s"] == pytest.approx([
        64 * mib * max(7 / 16 / 370e9, 8 / 16 / 48e9),
        64 * mib * max(7 / 256 / 370e9, 248 / 256 / 48e9)])
    tiny = model.per_device_prediction(dict(grid="8", exchange_groups="0", exchange_mib="1",
                                            local_ms=-0.001))      # within the noise
    assert tiny["local_s"] == 0 and tiny["serial_s"] == tiny["comm_s"]
    assert model.H100_NCCL.group_bandwidth((2, 4), (0, 1)) == pytest.approx(370e9)
    assert model.SYSTEMS["8xH100 NVLink"].axis_bandwidth((2, 4), 1) == pytest.approx(450e9)
    assert round(model.predict(256, (2, 2), 8, mem_bw=10e9, a2a_bw=5e9)["total_s"] * 1e3, 1) \
        == 30.2                                                     # the old API, unchanged
    assert model.overlapped(4.0, 2.0, chunks=4) == 4.5
    with pytest.raises(ValueError):
        model.overlapped(1.0, 1.0, chunks=0)
    n = model.largest_n(4.0, 8, 8, 80e9, step=8)
    assert n % 8 == 0 and 4 * 8 * n ** 3 / 8 <= 80e9 < 4 * 8 * (n + 8) ** 3 / 8
    with pytest.raises(ValueError):
        model.per_device_prediction(dict(grid="8", exchange_groups="0;0", exchange_mib="1",
                                         local_ms=1.0))


def _per_device_csv(path, local_ms):
    """A per-device CSV with the rows the anchors need (figures chosen, not measured):
    native and xla rows."""
    from benchmarks.per_device import COLUMNS
    cases = [(1024, 8, "slab", "8", "0", "8", "1024"),
             (1024, 8, "pencil", "2x4", "1;0", "4;2", "1024;1024"),
             (2048, 256, "slab", "256", "0", "256", "256"),
             (1024, 4, "slab", "4", "0", "4", "2048")]
    columns = COLUMNS
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=columns, extrasaction="ignore")
        writer.writeheader()
        for n, p, plan, grid, groups, sizes, mib in cases:
            for engine, extra in (("native", 0.0), ("xla", 1.0)):
                local = local_ms + extra
                writer.writerow({k: "" for k in columns} | dict(
                    platform="gpu", device="Test GPU 80GB",
                    device_memory_gib="75.6",
                    date="2026-01-02", jax="0.0", command="python -m benchmarks.per_device "
                    "--platform gpu", n=n, devices=p, plan=plan, grid=grid, kind="c2c",
                    engine=engine, block_mib=8 * n ** 3 / p / 2 ** 20,
                    exchanges=len(groups.split(";")),
                    exchange_groups=groups, exchange_sizes=sizes, exchange_mib=mib,
                    ms=local + 0.5, copy_ms=0.4, copies_ms=0.5, local_ms=local,
                    local_over_copy=local / 0.4, kept_blocks=4.0,
                    donated_blocks=3.0, exact_err=1e-7, numpy_err=1e-7, status="ok"))


def test_model_per_device_report(tmp_path):
    """`python -m benchmarks.model --per-device CSV --markdown MD --plot PNG`: the header
    names the CSV's machine, date and command; pfft today (the least local work plus the
    modelled exchange) and overlapped beside the published figures; the goal's verdict
    worked out; without a CSV, the published figures beside the modelled floors."""
    _per_device_csv(tmp_path / "pd.csv", local_ms=3.0)
    proc = subprocess.run([sys.executable, "-m", "benchmarks.model", "--per-device",
                           str(tmp_path / "pd.csv"), "--markdown", str(tmp_path / "m.md"),
                           "--plot", str(tmp_path / "m.png")], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    text = (tmp_path / "m.md").read_text()
    assert text.strip() == proc.stdout.strip()
    assert text.startswith("*Measured on Test GPU 80GB (75.6 GiB for XLA), jax 0.0, 2026-01-02: "
                           "`python -m benchmarks.per_device --platform gpu`.")
    today, comm = 3.0 + 7 / 8 * 2 ** 30 / 370e9 * 1e3, 7 / 8 * 2 ** 30 / 370e9 * 1e3
    lap = 3.0 + comm / 4                 # the local work the longer, 1/4 of the exchange
    assert (f"| cuFFTMp | 1024³ | 8 | 4.5 | {today:.2f} | slab 8, native | {lap:.2f} | "
            f"{today / 4.5:.2f} |") in text
    assert f"Predicted today: {today:.2f} ms (slab 8, native" in text
    assert "in series): **not met**" in text
    assert f"{lap:.2f} ms (slab, native): **met**" in text
    assert "one GPU cannot show whether XLA" in text
    assert "| 1024³ | 8 | slab 8 | c2c | forward | xla | 1024 |" in text
    for header in ("(ms, measured)", "(ms, modelled)", "(blocks, measured)",
                   "pfft today (ms): local measured",
                   "overlapped: local work beside all-to-alls, modelled (ms)"):
        assert header in text, header
    assert (tmp_path / "m.png").stat().st_size > 1000
    from benchmarks import model_report
    assert len(model_report.load_per_device(str(tmp_path / "pd.csv"))) == 8
    assert "4.00 (native) / 3.00 (native)" in model_report.per_device_report(
        str(tmp_path / "pd.csv"))
    bare = subprocess.run([sys.executable, "-m", "benchmarks.model", "--markdown",
                           str(tmp_path / "none.md")], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert bare.returncode == 0, bare.stderr[-3000:]
    none = (tmp_path / "none.md").read_text()
    assert "Not measured on a GPU yet" in none
    assert "| one-exchange (slab) floor | 1024³ | 8 | 2.5 | 2.54 |" in none
    assert "| two-exchange (pencil) floor | 1024³ | 8 | 5.1 | 3.63 |" in none
    table = subprocess.run([sys.executable, "-m", "benchmarks.model"], cwd=ROOT,
                           capture_output=True, text=True, timeout=120)
    assert table.returncode == 0 and table.stdout.startswith("| system | GPUs | grid |")


def test_per_device_marks_what_does_not_fit_or_is_late(monkeypatch):
    """A program whose compiled memory exceeds the device's is marked and not run, one
    whose input and output alone exceed it is not even compiled, and past the time
    budget nothing more starts; none of these counts as a failure."""
    import jax
    from benchmarks import per_device

    device = jax.devices("cpu")[0]
    block = 4 * 16 * 16 * 8                                  # 16³ complex64 over 4
    monkeypatch.setattr(per_device, "_device_memory", lambda d: 3 * block)
    fit = per_device.run(per_device.cases([16], [4], ["slab"], ["c2c"], ["xla"]), device,
                         progress=lambda s: None)
    assert fit[0].status.startswith("does not fit: needs") and "ms" not in fit[0].result
    assert fit[0].result["kept_blocks"] > 3
    monkeypatch.setattr(per_device, "_device_memory", lambda d: block)
    tiny = per_device.run(per_device.cases([16], [4], ["slab"], ["c2c"], ["xla"]), device,
                          progress=lambda s: None)
    assert tiny[0].status.startswith("does not fit: 2 blocks")
    late = per_device.run(per_device.cases([16, 32], [4]), device, budget_s=0,
                          progress=lambda s: None)
    assert {c.status for c in late} == {"not run: past the 0 s budget"}
    assert per_device.failures(fit + tiny + late) == []


def test_exact_values_of_point_sources_are_numpys_block_math():
    """benchmarks.exact, the per-device programs' exact values: point sources carried
    through a chain as sums of outer products equal numpy's block-level math of the
    dense block (forward and backward, slab and pencil, complex and real, chunks the
    exchanges pad: 12³ over 8), to 1e-14 of the largest value (measured: 1e-15); the
    complex-to-real step is numpy's irfft of any half spectrum, Hermitian or not."""
    import jax
    import numpy as np
    from benchmarks import device_program, exact, per_device

    rng = np.random.default_rng(0)
    for n in (8, 9):                                   # even and odd, cropped and padded
        for m in (3, 5, 7):
            f = rng.standard_normal(m) + 1j * rng.standard_normal(m)
            assert np.allclose(exact.hermitian_operator(f, n).real, np.fft.irfft(f, n),
                               rtol=0, atol=1e-15)
    engine = device_program.engines_for(jax.devices("cpu")[0], ["xla"])["xla"]
    checked = 0
    for n, p in ((16, 4), (12, 8)):
        for plan in ("slab", "pencil"):
            for kind in ("c2c", "r2c"):
                for direction in ("forward", "backward"):
                    c = per_device.Case(n, p, plan, kind, "xla", direction)
                    per_device._build(c, engine)
                    if c.status:                        # 12³ is no slab over 8
                        continue
                    inverse = c.variant.inverse
                    halved = exact.halved_axis(c.chain, inverse)
                    places, amps, block = exact.point_sources(
                        c.chain.in_layout.local_shape, c.in_dtype.kind == "f", halved)
                    dense = block.dense()
                    assert np.array_equal(dense[tuple(places.T)], amps)
                    if halved is not None:              # the bins numpy's inverse cuts
                        assert {places[0, halved], places[1, halved]} == {
                            0, dense.shape[halved] - 1}
                    want = device_program.block_math(
                        dense.real if c.in_dtype.kind == "f" else dense, c.chain, inverse)
                    got = exact.through_chain(block, c.chain, inverse)
                    assert got.shape == want.shape and got.real == (inverse and kind == "r2c")
                    assert np.abs(got.dense() - want).max() <= 1e-14 * np.abs(want).max()
                    checked += 1
    assert checked == 12


def test_per_device_check_finds_a_wrong_exchange(monkeypatch):
    """The per-device checks can fail: with the stand-in exchange's reversal of chunks
    left out (a program whose exchanges put chunks in the wrong places), the output
    for point sources is off its exact value and that for a random block off numpy's
    block-level math, and both count as failures."""
    import jax
    from benchmarks import device_program, per_device

    monkeypatch.setattr(device_program, "transfer", lambda x, live: x + 0)
    done = per_device.run(per_device.cases([16], [4], ["slab"], ["c2c"], ["xla"]),
                          jax.devices("cpu")[0], repeats=1, progress=lambda s: None)
    r = done[0].result
    assert r["exact_err"] > 0.1 and r["numpy_err"] > 0.1, r
    assert [f.split(":")[1].split()[0] for f in per_device.failures(done)] == [
        "exact_err", "numpy_err"]


def test_huge_blocks_on_cpu_at_2_15_points(tmp_path):
    """`python -m benchmarks.huge_blocks --platform cpu --points 32768` (gpu.sh's huge
    step, PLATFORM=cpu): every transform of every input through every runner, each
    output at every point within 4x the largest error measured (1.8e-7 of the largest
    value) of its exact value, and at 64 points in float64; the table and the run's
    JSON written."""
    proc, rows = _run_benchmark("huge_blocks", "--platform", "cpu", "--points", "32768",
                                out=tmp_path, name="huge_blocks_cpu")
    from benchmarks import huge_blocks
    from pfft.engines import native
    assert [(r["op"], r["source"], r["runner"]) for r in rows] == [
        (c.op, c.source, c.runner) for c in huge_blocks.cases()]
    assert len(rows) == 12 * len(huge_blocks.RUNNERS)       # 12 transforms of inputs
    native_rows = [r for r in rows if r["runner"] == "native"]
    if not native.available("cpu"):       # the kernels' absence is the suite's to report
        assert {r["status"] for r in native_rows} == {"skipped: native cpu engine unavailable"}
        rows = [r for r in rows if r["runner"] != "native"]
    for r in rows:
        assert r["status"] == "ok", r
        assert r["points"] == "32768" and r["shape"] in ("64x64x8", "32x32x32"), r
        assert float(r["max_err"]) < 8e-7 and float(r["sample_err"]) < 8e-7, r
        assert 0 < float(r["ms"]) < math.inf, r
    assert {r["engine"] for r in rows if r["runner"] == "xla"} == {"xla"}
    assert "| ifft axis 2 | delta | xla | xla | 64x64x8 |" in proc.stdout
    info = json.loads((tmp_path / "huge_blocks_cpu.json").read_text())
    assert info["command"].startswith("python -m benchmarks.huge_blocks --platform cpu")


def test_huge_blocks_find_unscaled_inverses_and_a_leaky_c2r(monkeypatch):
    """The huge-block checks can fail, on the defects they are for: an inverse left
    unscaled (the whole 1/N, or the 1/n of axis 2 alone) and a complex-to-real
    transform that keeps the imaginary part of the zero bin are WRONG, by their factor,
    and fail the run; the transforms left alone pass."""
    import jax
    import jax.numpy as jnp
    import numpy as np
    from benchmarks import huge_blocks

    honest = huge_blocks._transform

    def broken(case, shape, mesh, device):
        fn, sharding, engine = honest(case, shape, mesh, device)
        if case.op == "ifftn":
            return (lambda x: fn(x) * math.prod(shape)), sharding, engine
        if case.op == "ifft axis 2":
            return (lambda x: fn(x) * shape[2]), sharding, engine
        if case.op == "irfftn":      # the zero bin's imaginary parts kept, not dropped
            def leaky(x):
                line = jnp.fft.ifftn(x[..., 0], axes=(0, 1)).imag / shape[2]
                return fn(x) + line[..., None].astype(np.float32)
            return leaky, sharding, engine
        return fn, sharding, engine

    monkeypatch.setattr(huge_blocks, "_transform", broken)
    cases = huge_blocks.cases(runners=["xla"])
    rows = huge_blocks.run(cases, jax.devices("cpu")[0], points=2 ** 15,
                           progress=lambda s: None)
    status = {(r["op"], r["source"]): r["status"] for r in rows}
    wrong = {k for k, v in status.items() if v == "WRONG"}
    assert wrong == {("ifftn", "delta"), ("ifftn", "wave"), ("ifft axis 2", "delta"),
                     ("ifft axis 2", "wave"), ("irfftn", "delta zero bin")}, status
    assert {v for k, v in status.items() if k not in wrong} == {"ok"}, status
    err = {(r["op"], r["source"]): r["max_err"] for r in rows}
    assert err["ifftn", "delta"] == pytest.approx(2 ** 15 - 1, rel=1e-5)
    assert err["ifft axis 2", "delta"] == pytest.approx(8 - 1, rel=1e-5)
    assert len(huge_blocks.failures(rows)) == 5


def _gpu_sh_with_a_python_that_never_finishes(tmp_path, steps, **env):
    """Runs benchmarks/gpu.sh (PLATFORM=cpu) with ``STEPS=steps``, ``env`` and a stand-in
    Python that sleeps a minute; returns the process and its output folder."""
    stalls = tmp_path / "python"
    stalls.write_text("#!/bin/sh\nsleep 60\n")
    stalls.chmod(0o755)
    out = tmp_path / steps.replace(" ", "_")
    proc = subprocess.run(["bash", os.path.join(ROOT, "benchmarks", "gpu.sh"), str(stalls)],
                          env=dict(os.environ, PLATFORM="cpu", STEPS=steps, OUT=str(out), **env),
                          capture_output=True, text=True, timeout=50)
    return proc, out


def test_gpu_sh_ends_within_its_time_limit_with_its_results(tmp_path):
    """`TIME_LIMIT=3 benchmarks/gpu.sh`: the command running when the limit is spent is
    stopped and reported, the next one is not run, a step that would start after it is
    named as not started, the archive still packs the logs written, and the run exits 1
    within seconds (not the stand-in Python's minute)."""
    proc, out = _gpu_sh_with_a_python_that_never_finishes(
        tmp_path, "bench huge archive", TIME_LIMIT="3", STEP_MIN_S="1")
    log = proc.stdout
    assert proc.returncode == 1, log + proc.stderr
    # the limit left to it: 3 s or less, as the steps before it took a second or not
    assert re.search(r"engines stopped at its limit of [123]s \(see engines\.log\)", log), log
    assert "real_engines not run: TIME_LIMIT=3 s spent" in log, log
    assert "=== huge: not started" in log and "benchmarks.huge_blocks" not in log, log
    assert "not started for lack of time (TIME_LIMIT=3 s): huge" in log, log
    listed = subprocess.run(["tar", "tzf", str(out / "gpu_results.tar.gz")],
                            capture_output=True, text=True, check=True).stdout.split()
    assert {"./engines.log", "./gpu_sh.log"} <= set(listed), listed


def test_gpu_sh_runs_its_steps_in_the_order_named(tmp_path):
    """The measuring steps run in the order STEPS names them, so that under a time limit
    what matters most comes first: with "huge bench" the huge step runs (and is stopped
    at the limit) and the bench step is the one left out; an unknown step name stops
    the run before any step."""
    proc, _ = _gpu_sh_with_a_python_that_never_finishes(
        tmp_path, "huge bench", TIME_LIMIT="3", STEP_MIN_S="1")
    log = proc.stdout
    assert proc.returncode == 1, log + proc.stderr
    assert re.search(r"huge_blocks stopped at its limit of [123]s", log), log
    assert "=== bench: not started" in log and "benchmarks.engines" not in log, log
    proc, _ = _gpu_sh_with_a_python_that_never_finishes(tmp_path, "bench tests")
    assert proc.returncode == 1 and "no step tests" in proc.stdout, proc.stdout
    assert "=== bench" not in proc.stdout, proc.stdout


# -- the one timing harness (benchmarks/common.py) ----------------------------------------
class _Clock:
    """A clock that advances only when a candidate runs: each call of a candidate adds
    its cost, so the harness's figures are known exactly."""

    def __init__(self):
        self.now = 0.0
        self.log = []

    def __call__(self):
        return self.now

    def candidate(self, name, costs):
        """A candidate whose k-th call costs ``costs[k % len(costs)]``."""
        count = [0]

        def call():
            self.now += costs[count[0] % len(costs)]
            count[0] += 1
            self.log.append(name)
            return name
        return call


def test_harness_alternates_candidates_and_takes_the_median_of_the_repeats():
    """`timings` warms each candidate up, then runs them alternately, each the same
    number of times (one call each per repeat, in the order given); `compare` gives
    the median of each one's repeats, not of its warm-up calls."""
    from benchmarks import common
    clock = _Clock()
    a = clock.candidate("a", [100.0, 1.0, 5.0, 3.0, 2.0, 4.0])   # the first: the warm-up
    b = clock.candidate("b", [7.0, 10.0, 30.0, 20.0, 50.0, 40.0])
    times = common.timings([a, b], repeats=5, warmup=1, clock=clock)
    assert clock.log == ["a", "b"] + ["a", "b"] * 5               # warm-ups, then alternated
    assert times == [[1.0, 5.0, 3.0, 2.0, 4.0], [10.0, 30.0, 20.0, 50.0, 40.0]]
    clock.log.clear()
    assert common.compare(clock.candidate("a", [9.0, 1.0, 5.0, 3.0, 2.0, 4.0]),
                          clock.candidate("b", [9.0, 10.0, 30.0, 20.0, 60.0]),
                          repeats=4, warmup=1, clock=clock) == [2.5, 25.0]
    assert clock.log.count("a") == clock.log.count("b") == 5
    clock.log.clear()
    (t,) = common.compare(clock.candidate("c", [2.0]), repeats=3, warmup=0, calls=4,
                          clock=clock)
    assert t == 2.0 and clock.log == ["c"] * 12                   # 4 calls a repeat, mean


def test_harness_budget_batches_barriers_and_reductions():
    """More repeats for fast candidates within a budget (from one timed round after the
    warm-up), batches of back-to-back calls for short ones, and the MPI wrapper's
    barrier before each call and reduction of each time (the slowest rank's)."""
    from benchmarks import common
    clock = _Clock()
    fast, slow = clock.candidate("fast", [0.01]), clock.candidate("slow", [0.02])
    times = common.timings([fast, slow], repeats=3, budget=1.0, clock=clock)
    assert [len(t) for t in times] == [33, 33]                  # 1 s / 0.03 s a round
    assert times[0] == pytest.approx([0.01] * 33) and times[1] == pytest.approx([0.02] * 33)
    assert clock.log.count("fast") == clock.log.count("slow") == 1 + 1 + 33
    clock.log.clear()
    capped = common.timings([clock.candidate("x", [1e-6])], repeats=3, budget=1.0,
                            max_repeats=7, warmup=0, clock=clock)
    assert len(capped[0]) == 7
    clock.log.clear()
    short, long = clock.candidate("short", [0.5e-3]), clock.candidate("long", [0.1])
    times = common.timings([short, long], repeats=2, warmup=0, batch_s=2e-3, clock=clock)
    # one timed call each, then 4 calls a repeat for the short one, 1 for the long one
    assert clock.log.count("short") == 1 + 2 * 4 and clock.log.count("long") == 1 + 2
    assert times == [pytest.approx([0.5e-3] * 2), pytest.approx([0.1] * 2)]
    events, clock = [], _Clock()
    times = common.timings([clock.candidate("y", [1.0])], repeats=2, warmup=0, clock=clock,
                           before=lambda: events.append("barrier"),
                           reduce=lambda t: events.append(t) or 3 * t)
    assert events == ["barrier", 1.0, "barrier", 1.0] and times == [[3.0, 3.0]]


def test_harness_waits_for_device_results():
    """The harness waits for each timed call's JAX result (`block`) and times host
    calls (numpy, None) as they return; `median_time`, `paired_medians` and
    `faults_per_call` are views of it."""
    import jax.numpy as jnp
    import numpy as np
    from benchmarks import common
    waited = []

    class Result:
        def block_until_ready(self):
            waited.append(1)
            return self

    (t,) = common.compare(lambda: Result(), repeats=3, warmup=2)
    assert len(waited) == 5 and t >= 0
    assert common.block(None) is None
    assert common.median_time(lambda x: jnp.sin(x), jnp.ones(8), repeats=3) > 0
    a, b = common.paired_medians(np.sin, np.ones(8), jnp.cos, jnp.ones(8), repeats=3,
                                 budget=0.0)
    assert a > 0 and b > 0
    assert common.faults_per_call(lambda x: np.ones(1 << 16) + x, 1.0, calls=3) >= 0


def test_no_benchmark_has_a_timing_loop_of_its_own():
    """Every benchmark times through benchmarks/common.py's harness: no other module reads
    `time.perf_counter` or waits for results in a loop of its own."""
    offenders = []
    for folder, _, files in os.walk(os.path.join(ROOT, "benchmarks")):
        for name in files:
            path = os.path.join(folder, name)
            if not name.endswith(".py") or path.endswith(os.path.join("benchmarks", "common.py")):
                continue
            text = open(path).read()
            offenders += [f"{path}: {word}" for word in ("perf_counter", "process_time",
                                                         ".block_until_ready()") if word in text]
    assert offenders == []


def test_rendering_is_apart_from_running():
    """`python -m benchmarks report`'s modules (the suite's tables and figures, the
    model's report) import without JAX or pfft, the suite's and the model's running
    modules hold no rendering, and no module of the split is over 500 lines."""
    code = ("import sys; import benchmarks.suite_report, benchmarks.suite_plots, "
            "benchmarks.suite_rows, benchmarks.model_report, benchmarks.model; "
            "assert not {'jax', 'pfft'} & set(sys.modules), sorted(sys.modules)")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    from benchmarks.__main__ import REPORTERS
    assert "suite_report" in REPORTERS and "model_report" in REPORTERS
    assert "suite" not in REPORTERS and "model" not in REPORTERS
    for name in ("suite", "suite_report", "suite_plots", "suite_peers", "suite_rows", "model",
                 "cost_model", "model_report", "per_device", "device_program"):
        with open(os.path.join(ROOT, "benchmarks", f"{name}.py")) as f:
            text = f.read()
        assert text.count("\n") <= 500, name
        if name in ("suite", "model", "cost_model", "per_device"):
            assert "def report(" not in text and "savefig" not in text, name


def test_memory_benchmark_overwrite_x_tiny(tmp_path):
    """`python -m benchmarks memory --overwrite-n`: ``overwrite_x`` against the default
    on one device, both inputs; donated, the overwriting plan holds one block (its
    input's buffer is its output's) where the default holds two; the table renders."""
    _run_benchmark("memory", "--n", "16", "--grids", "1", "--cases", "c2c", "--engines",
                   "native", "--floor", "--overwrite-n", "16", "--overwrite-grids", "1",
                   "--repeats", "1", out=tmp_path, name="memory")
    with open(tmp_path / "memory_overwrite.csv", newline="") as f:
        rows = {(r["case"], r["overwrite_x"], r["input"]): r for r in csv.DictReader(f)}
    assert len(rows) == 8
    for case in ("c2c", "dct"):
        assert float(rows[case, "False", "donated"]["blocks"]) == pytest.approx(2.0, abs=0.01)
        assert float(rows[case, "True", "donated"]["blocks"]) == pytest.approx(1.0, abs=0.01)
        assert float(rows[case, "True", "kept"]["blocks"]) == pytest.approx(2.0, abs=0.01)
        assert all(float(r["ms"]) > 0 for r in rows.values())
    assert "overwrite_x, donated: blocks" in (tmp_path / "memory_overwrite.md").read_text()
