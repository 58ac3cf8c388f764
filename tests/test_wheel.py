"""``pip install .`` gives the fast engine: pfft's sdist and wheel, checked,
and the wheel installed into a fresh virtual environment and used there.

The sdist and the wheel are built from this checkout with ``python -m build
--no-isolation`` (offline: the build requirements are this Python's). The wheel shares
the CMake build folder ``build/<wheel tag>`` with the editable install ``make test``
made, so it does not recompile. The sdist is checked for what an offline build of it
needs: CMake configures its kernels, and every header they include is inside it.

The fresh venv sees this Python's packages through a ``.pth`` line (no downloads), but
not its editable pfft: the wheel's pfft is the one imported there. Skips only where no
C++ compiler could build the kernels; a failed build fails.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import zipfile
from pathlib import Path

import pytest

from kernel_build import cxx_compiler, run_checked
from pfft.engines import _cpu_features

ROOT = Path(__file__).resolve().parents[1]
X86 = _cpu_features.is_x86_64()

pytestmark = pytest.mark.skipif(cxx_compiler() is None,
                                reason="no C++ compiler: the wheel's kernels cannot be built")


def _run(cmd, timeout=900, **kw) -> subprocess.CompletedProcess:
    return run_checked(cmd, timeout, **kw)


@pytest.fixture(scope="module")
def dists(tmp_path_factory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("dist")
    _run([sys.executable, "-m", "build", "--no-isolation", "--sdist", "--wheel",
          "--outdir", out, ROOT])
    sdist, = out.glob("pfft-*.tar.gz")
    wheel, = out.glob("pfft-*.whl")
    return {"sdist": sdist, "wheel": wheel}


@pytest.fixture(scope="module")
def wheel_libs(dists, tmp_path_factory) -> dict[str, Path]:
    where = tmp_path_factory.mktemp("wheel")
    with zipfile.ZipFile(dists["wheel"]) as z:
        names = [n for n in z.namelist() if n.endswith(".so")]
        z.extractall(where, names)
    return {Path(n).name: where / n for n in names}


def test_sdist_builds_offline(dists, tmp_path):
    """The sdist holds the kernels' sources, vendored DUCC and licences, no build
    output; CMake configures it (no download step) and every header is inside it."""
    with tarfile.open(dists["sdist"]) as tar:
        names = tar.getnames()
        tar.extractall(tmp_path, filter="data")
    top = tmp_path / names[0].split("/")[0]
    for need in ("pyproject.toml", "LICENSE", "kernels/CMakeLists.txt", "kernels/cpu/pfft_cpu.cc",
                 "third_party/ducc0/LICENSE", "third_party/ducc0/LICENSE.BSD-3-Clause",
                 "third_party/ducc0/README.md", "third_party/ducc0/src/ducc0/fft/fft.h"):
        assert (top / need).is_file(), f"the sdist lacks {need}"
    assert not [n for n in names if "/kernels/build/" in n or "/build/cp" in n or n.endswith(".so")]
    cmake = shutil.which("cmake") or Path(sys.executable).with_name("cmake")
    _run([cmake, "-S", top / "kernels", "-B", tmp_path / "cmake",
          f"-DPython_EXECUTABLE={sys.executable}", "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON"],
         timeout=300)
    # the CPU kernels' commands (the GPU engine's too where nvcc and cuFFT are here)
    commands = [c for c in json.loads((tmp_path / "cmake" / "compile_commands.json").read_text())
                if not c["file"].endswith(".cu")]
    assert {Path(c["file"]).name for c in commands} >= {"pfft_cpu.cc", "pfft_pieces.cc",
                                                         "threading.cc", "string_utils.cc"}
    for c in commands:          # preprocess only: every #include resolves from the sdist
        args = re.sub(r"\s-o\s+\S+", " -o /dev/null", c["command"]).replace(" -c ", " -E ")
        _run(["sh", "-c", args], cwd=c["directory"], timeout=300)
        assert f"-I{top}/kernels/../third_party/ducc0/src" in c["command"], c["command"]
        assert str(ROOT / "third_party") not in c["command"], c["command"]


def test_wheel_libraries_are_portable(dists, wheel_libs):
    """No rpath into a build folder; the baseline is x86-64-v2 code (no -march=native,
    no AVX instructions), the AVX2 variant x86-64-v3. Where the build found nvcc and an
    installed cuFFT, the GPU engine too, finding cuFFT beside pfft in site-packages."""
    assert re.search(r"-cp\d+-cp\d+-linux_", dists["wheel"].name), dists["wheel"].name
    expected = {"libpfft_cpu_v2.so", "libpfft_cpu_v3.so"} if X86 else {"libpfft_cpu.so"}
    assert set(wheel_libs) - {"libpfft_cuda.so"} == expected
    for name, lib in wheel_libs.items():
        dynamic = _run(["readelf", "-d", lib]).stdout
        for paths in re.findall(r"\((?:RPATH|RUNPATH)\).*\[(.*)\]", dynamic):
            assert all(p.startswith("$ORIGIN") for p in paths.split(":")), (name, paths)
        if name == "libpfft_cuda.so":
            assert "$ORIGIN/../../nvidia/cu13/lib" in dynamic, dynamic
            continue
        flags = _run(["readelf", "-p", ".GCC.command.line", lib]).stdout
        assert "-march=native" not in flags and "-mtune=native" not in flags, (name, flags)
        if X86:
            level = name[-5:-3]
            assert f"-march=x86-64-{level}" in flags, (name, flags)
    if X86 and shutil.which("objdump"):
        code = _run(["objdump", "-d", "--no-show-raw-insn", wheel_libs["libpfft_cpu_v2.so"]]).stdout
        assert not re.search(r"%[yz]mm\d", code), "AVX registers in the x86-64-v2 library"
        code = _run(["objdump", "-d", "--no-show-raw-insn", wheel_libs["libpfft_cpu_v3.so"]]).stdout
        assert re.search(r"%ymm\d", code), "the x86-64-v3 library has no AVX code"


CHILD = r"""
import io, json
import numpy as np, jax, pfft
from pfft.engines import _kernels, choice
x = np.random.default_rng(0).standard_normal((64, 64, 64, 2)).astype(np.float32)
x = x[..., 0] + 1j * x[..., 1]
mesh = pfft.make_mesh(4)
plan = pfft.plan(x.shape, x.dtype, mesh)
k = np.asarray(pfft.fftn(pfft.device_put(x, mesh)))
ref = np.fft.fftn(x.astype(np.complex128))
report = io.StringIO()
pfft.show_config(report)
print(json.dumps(dict(
    pfft=pfft.__file__, devices=len(jax.devices()), plan_engine=plan.engine.name,
    auto=choice.engine_for_plan("auto", jax.devices("cpu")[:1]).name, load=_kernels.load("cpu"),
    err=float(np.linalg.norm(k - ref) / np.linalg.norm(ref)), config=report.getvalue())))
"""


def test_wheel_in_a_fresh_venv_runs_the_native_engine(dists, tmp_path):
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", venv], timeout=120)
    python = venv / "bin" / "python"
    site = Path(_run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"])
                .stdout.strip())
    # this Python's dependencies, not its pfft: a .pth line adds a folder without
    # running the .pth files (the editable install's finder) inside it
    ours = {sysconfig.get_paths()[k] for k in ("purelib", "platlib")}
    (site / "deps.pth").write_text("\n".join(sorted(ours)) + "\n")
    _run([sys.executable, "-m", "pip", "--python", python, "install", "-q", "--no-deps",
          "--no-index", dists["wheel"]], timeout=300)
    env = {k: v for k, v in os.environ.items()
           if k not in ("PFFT_KERNELS_DIR", "PFFT_ENGINE", "PYTHONPATH")}
    # 4 simulated CPU devices, also where a GPU would be JAX's default
    env.update(XLA_FLAGS="--xla_force_host_platform_device_count=4", JAX_PLATFORMS="cpu")
    out = _run([python, "-c", CHILD],
               cwd=tmp_path, env=env, timeout=600).stdout
    got = json.loads(out.strip().splitlines()[-1])
    assert Path(got["pfft"]).is_relative_to(site), got["pfft"]
    assert got["devices"] == 4
    assert got["plan_engine"] == "native" and got["auto"] == "native"
    ok, lib = got["load"]
    lib = Path(lib)
    level = _cpu_features.x86_level() if X86 else None
    assert ok and lib.parent == site / "pfft" / "_lib", got["load"]
    assert lib.name == (f"libpfft_cpu_v{min(level, 3)}.so" if X86 else "libpfft_cpu.so")
    assert got["err"] < 1e-5, got["err"]
    assert f"kernel library: {lib}" in got["config"], got["config"]
    assert f"native cpu (DUCC): available, {lib}" in got["config"], got["config"]


@pytest.mark.skipif(not X86 or shutil.which("aarch64-linux-gnu-g++") is None,
                    reason="no aarch64 cross compiler here (Debian: g++-aarch64-linux-gnu)")
def test_cpu_kernels_cross_compile_for_aarch64(wheel_libs, tmp_path):
    """The CPU kernels build for 64-bit Arm (no x86-only code without a fallback) and
    export the same FFI handlers as the x86-64 libraries of the wheel."""
    _run(["make", "-C", ROOT / "kernels", "cpu-aarch64", f"PYTHON={sys.executable}",
          f"BUILD={tmp_path}"], timeout=1200)
    lib = tmp_path / "aarch64" / "libpfft_cpu.so"
    header = lib.read_bytes()[:20]
    assert header[:4] == b"\x7fELF" and int.from_bytes(header[18:20], "little") == 183  # EM_AARCH64

    def exported(nm, path):
        lines = _run([nm, "-D", "--defined-only", path]).stdout.splitlines()
        return {line.split()[-1] for line in lines if line.strip()}
    arm = exported("aarch64-linux-gnu-nm", lib)
    assert arm == exported("nm", wheel_libs["libpfft_cpu_v2.so"]), arm
    assert {"PfftC2C", "PfftR2C", "PfftC2R", "PfftR2R", "PfftPieces"} <= arm
    flags = _run(["readelf", "-p", ".GCC.command.line", lib]).stdout
    assert "-march=native" not in flags, flags
