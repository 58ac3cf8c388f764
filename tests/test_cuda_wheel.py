"""The CUDA wheel a GPU user is handed (``make wheel-cuda``, ``kernels/cuda/wheel.py``)
and the loader's choice of its GPU library for each jax CUDA plugin.

The choice (:func:`pfft.engines._kernels.cuda_library_choice`) is checked everywhere.
The wheel is checked where it can be built, which needs nvcc 13 but no GPU: its
libraries (the CPU kernels, ``libpfft_cuda13.so``, ``libpfft_cuda12.so``), their
``readelf -d`` NEEDED entries (cuFFT of their CUDA major, CUDA 12's runtime, the C/C++
runtime, nothing else) and rpaths (into the nvidia wheels beside pfft in
site-packages), the manylinux tag of its name and ``WHEEL`` file, its ``RECORD``, that
each library loads and finds cuFFT by its rpath in a site-packages laid out as pip lays
it, and, installed into a fresh venv, which library pfft picks for each set of plugins
(``python -m pfft`` saying so).

The wheel is ``$PFFT_CUDA_WHEEL`` (``make test`` builds it first where nvcc is), else
built here as ``make wheel-cuda`` builds it (about 4 minutes on 2 cores the first time:
its CPU kernels compile in a CMake folder of its own, ``build/cuda-wheel/cpu-<wheel
tag>``, against the oldest supported jax's FFI headers; seconds after that). Where
there is no nvcc 13 the wheel's tests skip and say so; a failed build fails.
"""
from __future__ import annotations

import base64
import hashlib
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from kernel_build import run_checked
from pfft.engines import _kernels

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("cuda_wheel", ROOT / "kernels" / "cuda" / "wheel.py")
cuda_wheel = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cuda_wheel)

V = "0.12.0"
# the jax CUDA plugins installed -> the GPU libraries tried, in order
CASES = {
    "cuda13 only": ({13: V, 12: None}, ["libpfft_cuda13.so"]),
    "cuda12 only": ({13: None, 12: V}, ["libpfft_cuda12.so"]),
    "neither": ({13: None, 12: None}, []),
    "both": ({13: V, 12: V}, ["libpfft_cuda13.so", "libpfft_cuda12.so"]),
}
# what each library may need: cuFFT of its major (CUDA 12's: also the runtime), and the
# C/C++ runtime
C_RUNTIME = {"libstdc++.so.6", "libgcc_s.so.1", "libc.so.6", "libm.so.6", "libdl.so.2",
             "libpthread.so.0", "librt.so.1", "ld-linux-x86-64.so.2"}
NEEDS = {13: {"libcufft.so.12"}, 12: {"libcufft.so.11", "libcudart.so.12"}}
RPATHS = {13: ["$ORIGIN/../../nvidia/cu13/lib"],
          12: ["$ORIGIN/../../nvidia/cufft/lib", "$ORIGIN/../../nvidia/cuda_runtime/lib"]}


# -- the loader's choice: everywhere ---------------------------------------------------

@pytest.mark.parametrize("case", CASES)
def test_loader_choice_for_each_plugin(case):
    plugins, tried = CASES[case]
    choice = _kernels.cuda_library_choice(plugins)
    assert [name for name, chosen, _ in choice if chosen] == tried
    assert {name for name, _, _ in choice} == {"libpfft_cuda13.so", "libpfft_cuda12.so"}
    # a source build's libpfft_cuda.so comes first, whatever the plugins
    assert _kernels.library_names("cuda", plugins=plugins) == ["libpfft_cuda.so"] + tried
    for name, chosen, why in choice:
        major = int(name[len("libpfft_cuda"):-3])
        dist = f"jax-cuda{major}-plugin"
        assert why.startswith(f"{dist} {V} installed" if chosen else f"{dist} not installed"), why
    if case == "both":
        assert "jax-cuda12-plugin 0.12.0" in choice[0][2], choice
        assert "tried where libpfft_cuda13.so does not load" in choice[1][2], choice


def test_installed_plugins_are_read_from_their_metadata(tmp_path, monkeypatch):
    """Distribution metadata, the plugin's or its PJRT part's, else the module alone
    (version "unknown"). Distribution names of the test's own, so that plugins really
    installed here do not count."""
    monkeypatch.setattr(_kernels, "CUDA_PLUGINS", {
        m: (f"pfft-test-cuda{m}-plugin", f"pfft-test-cuda{m}-pjrt") for m in (13, 12)})
    for dist, version in (("pfft_test_cuda13_pjrt", "0.12.1"),
                          ("pfft_test_cuda12_plugin", "0.11.2")):
        info = tmp_path / f"{dist}-{version}.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist.replace('_', '-')}\n"
                                       f"Version: {version}\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    found = _kernels.installed_cuda_plugins()
    assert found == {13: "0.12.1", 12: "0.11.2"}, found
    shutil.rmtree(tmp_path / "pfft_test_cuda12_plugin-0.11.2.dist-info")
    (tmp_path / "jax_cuda12_plugin").mkdir()
    (tmp_path / "jax_cuda12_plugin" / "__init__.py").write_text("raise ImportError('imported')\n")
    found = _kernels.installed_cuda_plugins()
    assert found[13] == "0.12.1" and found[12] == "unknown", found


def test_report_says_which_library_loaded_and_why_not_the_others(tmp_path, monkeypatch):
    for name in ("libpfft_cuda13.so", "libpfft_cuda12.so"):
        (tmp_path / name).write_bytes(b"")
    monkeypatch.setattr(_kernels, "search_dirs", lambda: [tmp_path])
    cu13 = str(tmp_path / "libpfft_cuda13.so")
    report = _kernels.cuda_library_report({13: V, 12: None}, (True, cu13))
    assert report == ("libpfft_cuda13.so: loaded (jax-cuda13-plugin 0.12.0 installed); "
                      "libpfft_cuda12.so: not loaded: jax-cuda12-plugin not installed"), report
    report = _kernels.cuda_library_report({13: None, 12: V},
                                          (True, str(tmp_path / "libpfft_cuda12.so")))
    assert report.startswith("libpfft_cuda12.so: loaded (jax-cuda12-plugin 0.12.0 installed); "
                             "libpfft_cuda13.so: not loaded: jax-cuda13-plugin not"), report
    report = _kernels.cuda_library_report({13: V, 12: V}, (True, cu13))
    assert report.startswith("libpfft_cuda13.so: loaded (jax-cuda13-plugin 0.12.0 installed; ")
    assert "libpfft_cuda12.so: not loaded: libpfft_cuda13.so came first" in report, report
    report = _kernels.cuda_library_report({13: V, 12: None}, (False, "no CUDA backend in this JAX"))
    assert report.startswith("libpfft_cuda13.so: not loaded: no CUDA backend in this JAX "
                             "(chosen: jax-cuda13-plugin 0.12.0 installed)"), report
    # no plugin: the load fails, saying what to install
    monkeypatch.setattr(_kernels, "installed_cuda_plugins", lambda: {13: None, 12: None})
    monkeypatch.setattr(_kernels, "_not_built_note", lambda: "")
    path, why = _kernels._find("cuda")
    assert path is None and "no jax CUDA plugin" in why and "pfft[cuda13]" in why, why
    monkeypatch.setattr(_kernels, "search_dirs", lambda: [tmp_path / "none"])
    assert _kernels.cuda_library_report({13: V, 12: None}, (False, "x")) == "none in this install"


def test_a_handler_jax_refuses_makes_the_engine_unavailable_not_an_error(monkeypatch):
    """A library built against a newer jax's XLA FFI than the running jax's is refused
    at registration (a wheel's libraries are built against the oldest supported jax's
    headers so that this does not happen): pfft reports the engine unavailable."""
    if not _kernels.load("cpu")[0]:
        pytest.skip(f"no CPU kernels here: {_kernels.load('cpu')[1]}")
    import jax

    def refuse(name, *args, **kwargs):
        raise jax.errors.JaxRuntimeError(
            f"INVALID_ARGUMENT: XLA FFI handler registration for {name} failed because the "
            "handler's API version (0.5) is incompatible with the framework's API version (0.4)")
    monkeypatch.setattr(jax.ffi, "register_ffi_target", refuse)
    ok, why = _kernels.load.__wrapped__("cpu")
    assert not ok and "JAX cannot register the kernels of" in why and "upgrade jax" in why, why


# -- the wheel: where nvcc 13 is -------------------------------------------------------

def _nvcc13() -> str | None:
    for nvcc in (os.environ.get("NVCC13"),
                 str(Path(os.environ.get("CUDA_HOME") or "/usr/local/cuda") / "bin" / "nvcc"),
                 shutil.which("nvcc")):
        if nvcc and cuda_wheel.nvcc_release(nvcc).startswith("13."):
            return nvcc
    return None


GIVEN = os.environ.get("PFFT_CUDA_WHEEL", "").strip()
needs_wheel = pytest.mark.skipif(
    not GIVEN and _nvcc13() is None,
    reason="no nvcc of CUDA 13 here ($NVCC13, $CUDA_HOME/bin/nvcc or on PATH) and no "
           "$PFFT_CUDA_WHEEL: the CUDA wheel cannot be built (`make wheel-cuda` needs one)")


def _run(cmd, timeout=1800, **kw) -> subprocess.CompletedProcess:
    return run_checked(cmd, timeout, **kw)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    if GIVEN:
        path = Path(GIVEN)
        assert path.is_file(), f"$PFFT_CUDA_WHEEL={GIVEN} is no file"
        return path
    out = tmp_path_factory.mktemp("cuda-dist")
    _run([sys.executable, ROOT / "kernels" / "cuda" / "wheel.py", "--out", out], cwd=ROOT,
         timeout=3600)
    path, = out.glob("pfft-*-manylinux*.whl")
    return path


@pytest.fixture(scope="module")
def unpacked(wheel, tmp_path_factory) -> Path:
    where = tmp_path_factory.mktemp("cuda-wheel")
    with zipfile.ZipFile(wheel) as z:
        z.extractall(where)
    return where


def _dynamic(lib: Path) -> tuple[list[str], list[str]]:
    text = _run(["readelf", "-d", lib]).stdout
    needed = re.findall(r"\(NEEDED\).*\[(.*)\]", text)
    paths = [p for r in re.findall(r"\((?:RPATH|RUNPATH)\).*\[(.*)\]", text) for p in r.split(":")]
    return needed, paths


@needs_wheel
def test_cuda_wheel_holds_the_cpu_kernels_and_a_gpu_library_per_cuda_major(unpacked):
    libs = {p.name for p in (unpacked / "pfft" / "_lib").iterdir()}
    cpu = {"libpfft_cpu_v2.so", "libpfft_cpu_v3.so"} if cuda_wheel.platform.machine() in (
        "x86_64", "AMD64") else {"libpfft_cpu.so"}
    assert libs == cpu | {"libpfft_cuda13.so", "libpfft_cuda12.so"}, libs
    # nothing vendored by the repair: cuFFT and the runtime stay the nvidia wheels'
    assert not [p for p in unpacked.iterdir() if p.name.endswith(".libs")], list(unpacked.iterdir())


@needs_wheel
@pytest.mark.parametrize("major", [13, 12])
def test_gpu_libraries_need_only_cufft_the_runtime_and_the_c_runtime(unpacked, major):
    lib = unpacked / "pfft" / "_lib" / f"libpfft_cuda{major}.so"
    needed, rpaths = _dynamic(lib)
    assert set(needed) <= NEEDS[major] | C_RUNTIME, needed
    assert f"libcufft.so.{major - 1}" in needed, needed
    assert rpaths == RPATHS[major], rpaths
    exported = _run(["nm", "-D", "--defined-only", lib]).stdout
    for symbol in ("PfftC2C", "PfftR2C", "PfftC2R", "pfft_cuda_abi_version",
                   "pfft_cuda_workspace_size"):
        assert re.search(rf"\b{symbol}$", exported, re.M), (symbol, exported)


@needs_wheel
def test_manylinux_tag_in_the_name_and_the_wheel_file(wheel, unpacked):
    m = re.fullmatch(r"pfft-[\w.]+-(cp\d+)-(cp\d+)-((?:manylinux_\d+_\d+_x86_64\.?)+)\.whl",
                     wheel.name)
    assert m, wheel.name
    info, = unpacked.glob("pfft-*.dist-info")
    tags = re.findall(r"^Tag: (.*)$", (info / "WHEEL").read_text(), re.M)
    assert tags and all(re.fullmatch(rf"{m[1]}-{m[2]}-manylinux_\d+_\d+_x86_64", t)
                        for t in tags), tags
    assert {t.split("-")[2] for t in tags} == set(m[3].split(".")), (tags, wheel.name)
    # RECORD lists every file with its hash and size
    rows = [line.split(",") for line in (info / "RECORD").read_text().splitlines() if line]
    listed = {name for name, _, _ in rows}
    on_disk = {str(p.relative_to(unpacked)) for p in unpacked.rglob("*") if p.is_file()}
    assert listed == on_disk, listed ^ on_disk
    for name, digest, size in rows:
        if digest:
            data = (unpacked / name).read_bytes()
            want = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            assert digest == f"sha256={want}" and int(size) == len(data), name


def _nvidia_site(work: Path, site: Path) -> None:
    """``site/nvidia`` laid out as the nvidia wheels of both majors lay it, linked to
    the ones the wheel's build unpacked."""
    parts = {"cu13/lib": work / "cu13" / "site" / "nvidia" / "cu13" / "lib",
             "cufft/lib": work / "cu12" / "site" / "nvidia" / "cufft" / "lib",
             "cuda_runtime/lib": work / "cu12" / "toolkit-site" / "nvidia" / "cuda_runtime" / "lib"}
    missing = [str(p) for p in parts.values() if not p.is_dir()]
    if missing:
        pytest.skip(f"the nvidia libraries the build fetched are not here ({', '.join(missing)}):"
                    " build the wheel in this checkout (`make wheel-cuda`)")
    for rel, src in parts.items():
        (site / "nvidia" / rel).parent.mkdir(parents=True, exist_ok=True)
        (site / "nvidia" / rel).symlink_to(src)


LOAD = r"""
import ctypes, json, sys
out = {}
for path in sys.argv[1:]:
    try:
        out[path] = ctypes.CDLL(path).pfft_cuda_abi_version()
    except OSError as err:
        out[path] = str(err)
print(json.dumps(out))
"""


@needs_wheel
def test_gpu_libraries_load_and_find_cufft_by_their_rpath(unpacked, tmp_path):
    """In a site-packages with the nvidia wheels beside pfft, each library loads (no GPU
    is needed to load it) and reports the CUDA ABI pfft wants; without them it does not:
    its rpath found cuFFT, not a folder of this machine."""
    site = tmp_path / "site-packages"
    shutil.copytree(unpacked / "pfft", site / "pfft")
    bare = tmp_path / "bare" / "site-packages"
    shutil.copytree(unpacked / "pfft" / "_lib", bare / "pfft" / "_lib")
    _nvidia_site(ROOT / "build" / "cuda-wheel", site)
    env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
    libs = [site / "pfft" / "_lib" / f"libpfft_cuda{m}.so" for m in (13, 12)]
    got = json.loads(_run([sys.executable, "-c", LOAD, *libs], env=env).stdout)
    assert got == {str(p): _kernels.ABI_VERSIONS["cuda"] for p in libs}, got
    for lib in libs:
        ldd = _run(["ldd", lib], env=env).stdout
        major = int(lib.name[len("libpfft_cuda"):-3])
        cufft = f"libcufft.so.{major - 1}"
        assert re.search(rf"{cufft} => {re.escape(str(site))}/pfft/_lib/\.\./\.\./nvidia/", ldd), ldd
    bare_libs = [bare / "pfft" / "_lib" / f"libpfft_cuda{m}.so" for m in (13, 12)]
    got = json.loads(_run([sys.executable, "-c", LOAD, *bare_libs], env=env).stdout)
    for lib in bare_libs:
        assert "libcufft.so" in str(got[str(lib)]), got


CHILD = r"""
import json, sys
from pfft.engines import _kernels
print(json.dumps(dict(plugins=_kernels.installed_cuda_plugins(),
                      names=_kernels.library_names("cuda"),
                      found=[str(p) for p in _kernels._find_all("cuda")])))
"""


@pytest.fixture(scope="module")
def venv(wheel, tmp_path_factory) -> tuple[Path, Path]:
    """A fresh venv with the CUDA wheel's pfft (no deps) and this Python's packages
    through a ``.pth`` line (not its editable pfft)."""
    where = tmp_path_factory.mktemp("cuda-venv")
    _run([sys.executable, "-m", "venv", "--without-pip", where / "venv"], timeout=120)
    python = where / "venv" / "bin" / "python"
    site = Path(_run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"])
                .stdout.strip())
    ours = {sysconfig.get_paths()[k] for k in ("purelib", "platlib")}
    (site / "deps.pth").write_text("\n".join(sorted(ours)) + "\n")
    _run([sys.executable, "-m", "pip", "--python", python, "install", "-q", "--no-deps",
          "--no-index", wheel], timeout=300)
    return python, site


HERE_PLUGINS = {m: v for m, v in _kernels.installed_cuda_plugins().items() if v}


@needs_wheel
@pytest.mark.parametrize("case", CASES)
def test_installed_wheel_picks_the_library_of_the_plugin(venv, case, tmp_path):
    """The installed wheel's pfft reads the plugins' metadata and tries the library of
    each, from its own pfft/_lib; ``python -m pfft`` names it and why not the other."""
    python, site = venv
    plugins, tried = CASES[case]
    if any(not plugins[m] for m in HERE_PLUGINS):
        pytest.skip(f"this Python has jax's CUDA {sorted(HERE_PLUGINS)} plugin installed: "
                    f"'{case}' cannot be laid out here")
    fake = []
    for major, version in plugins.items():
        if version:
            info = site / f"jax_cuda{major}_plugin-{version}.dist-info"
            info.mkdir()
            (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: jax-cuda{major}-plugin"
                                           f"\nVersion: {version}\n")
            fake.append(info)
    try:
        env = {k: v for k, v in os.environ.items()
               if k not in ("PFFT_KERNELS_DIR", "PYTHONPATH")}
        env["JAX_PLATFORMS"] = "cpu"
        got = json.loads(_run([python, "-c", CHILD], cwd=tmp_path, env=env)
                         .stdout.strip().splitlines()[-1])
        assert got["plugins"] == {str(m): v for m, v in plugins.items()}, got
        assert got["names"] == ["libpfft_cuda.so"] + tried, got
        assert got["found"] == [str(site / "pfft" / "_lib" / n) for n in tried], got
        config = _run([python, "-m", "pfft"], cwd=tmp_path, env=env).stdout
        line = next(ln for ln in config.splitlines() if "cuda libraries:" in ln)
        if tried:
            major = tried[0][len("libpfft_cuda"):-3]
            assert f"cuda libraries: {tried[0]}: not loaded: no CUDA backend in this JAX " \
                   f"(chosen: jax-cuda{major}-plugin {V} installed" in line, line
        for name, chosen, why in _kernels.cuda_library_choice(plugins):
            if not chosen:
                assert f"{name}: not loaded: {why}" in line, line
        assert "libpfft_cuda.so" not in line, line
    finally:
        for info in fake:
            shutil.rmtree(info)
