"""Build pfft's CUDA wheel: the CPU wheel with one GPU library per CUDA major
(``libpfft_cuda13.so``, ``libpfft_cuda12.so``), repaired to a manylinux tag.

    python kernels/cuda/wheel.py [--majors 13 12] [--out dist]     (`make wheel-cuda`)

pfft loads the library that matches the jax CUDA plugin it finds
(``pfft/engines/_kernels.py``: ``jax-cuda13-plugin`` -> ``libpfft_cuda13.so``,
``jax-cuda12-plugin`` -> ``libpfft_cuda12.so``). Each library links cuFFT of its major
by soname (CUDA 13: ``libcufft.so.12``, CUDA 12: ``libcufft.so.11``) and finds it
through an ``$ORIGIN`` rpath in the nvidia wheel that ``jax[cudaNN]`` installs beside
pfft (``nvidia/cu13/lib``, ``nvidia/cufft/lib``); the CUDA runtime is linked
statically. Steps, each announced with the time it took:

1. toolchains, under ``--work`` (default ``build/cuda-wheel``, git-ignored and kept,
   so a second run downloads nothing):

   * CUDA 13: ``$NVCC13``, else ``$CUDA_HOME/bin/nvcc`` (``/usr/local/cuda``), which
     must be release 13; cuFFT from the ``nvidia-cufft`` wheel.
   * CUDA 12: ``$NVCC12`` (the nvcc of a CUDA 12 toolkit), else a build-only toolkit
     assembled in ``--work``/cu12: PyPI's CUDA 12 wheels hold no compiler driver
     (``nvidia-cuda-nvcc-cu12`` has ptxas, libnvvm and the crt headers only), so nvcc,
     cicc, cudafe++, fatbinary and nvlink come from Debian's ``nvidia-cuda-toolkit``
     (non-free, the release after this machine's, fetched with ``apt-get download``
     from this machine's own Debian mirror under a private apt configuration: the
     system's sources are not changed; unpacked with ``dpkg-deb``), the headers and
     the static runtime from the ``nvidia-cuda-nvcc-cu12`` and
     ``nvidia-cuda-runtime-cu12`` wheels of the same CUDA minor, cuFFT from
     ``nvidia-cufft-cu12``. This library links the CUDA runtime as ``libcudart.so.12``
     (found by rpath in ``nvidia/cuda_runtime/lib``, from the
     ``nvidia-cuda-runtime-cu12`` wheel that ``jax[cuda12]`` brings); CUDA 13's links
     it statically. Its host compiler is the system's ``g++`` (GCC 12 is
     supported by CUDA 12.4: no ``-allow-unsupported-compiler``).

   All the wheel's libraries, CPU and GPU, are compiled against the XLA FFI headers of
   the oldest jax pfft supports (``.ci/oldest.txt``'s jaxlib, whose wheel is fetched
   for its ``include/`` only): a handler built against a newer jax's FFI is refused by
   an older jax ("the handler's API version is incompatible"), one built against an
   older FFI is taken by every newer jax.

2. the libraries: CMake (``kernels/CMakeLists.txt`` with ``PFFT_CUDA_MAJOR``) in
   ``--work``/cmake-cuNN.
3. the CPU wheel: ``python -m build --wheel --no-isolation`` in ``--build-dir``
   (default ``build/cuda-wheel/cpu-{wheel_tag}``: not the folder of the editable
   install, which builds against this Python's jax; a second run recompiles nothing).
4. the CUDA libraries added to it (its ``libpfft_cuda.so`` or
   ``cuda_not_built.txt`` taken out, ``RECORD`` written anew).
5. ``auditwheel repair`` with cuFFT and the CUDA runtime excluded (they come from
   the nvidia wheels): ``--out``/pfft-*-manylinux_*.whl, whose path is the last line
   printed. Earlier manylinux pfft wheels in ``--out`` are removed first.
"""
from __future__ import annotations

import argparse
import base64
import glob
import hashlib
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
KERNELS = ROOT / "kernels"
# the cuFFT each major links: (wheel, version) and the soname of its library
CUFFT = {13: ("nvidia-cufft", "12.5.0.14", "libcufft.so.12"),
         12: ("nvidia-cufft-cu12", "11.2.1.3", "libcufft.so.11")}
# where those wheels put cuFFT, relative to site-packages (the library's rpath)
CUFFT_DIR = {13: "nvidia/cu13", 12: "nvidia/cufft"}
# the CUDA runtime each library links: CUDA 13's statically (as a source build does);
# CUDA 12's as libcudart.so.12 from nvidia-cuda-runtime-cu12 (which jax[cuda12] brings),
# since that wheel carries the static runtime only from CUDA 12.9 on and the compiler
# here is CUDA 12.4's
RUNTIME = {13: "Static", 12: "Shared"}
# the Debian package with CUDA 12's compiler, and the release that has it
DEBIAN_CUDA12 = ("nvidia-cuda-toolkit", "trixie", "non-free")
# what auditwheel must leave out of the wheel: the nvidia wheels' libraries
EXCLUDE = ["libcufft.so.12", "libcufft.so.11", "libcudart.so.*"]
MANYLINUX = ["manylinux_2_17_x86_64", "manylinux2014_x86_64", "manylinux_2_27_x86_64",
             "manylinux_2_28_x86_64"]

_T0 = time.monotonic()


def say(msg: str) -> None:
    print(f"== wheel-cuda [{time.monotonic() - _T0:5.0f} s] {msg}", flush=True)


def run(cmd, **kw) -> subprocess.CompletedProcess:
    cmd = [str(c) for c in cmd]
    print("+ " + " ".join(cmd), flush=True)
    proc = subprocess.run(cmd, text=True, capture_output=True, **kw)
    if proc.returncode != 0:
        sys.stdout.write(proc.stdout[-6000:])
        sys.stderr.write(proc.stderr[-6000:])
        raise SystemExit(f"wheel-cuda: failed ({proc.returncode}): {' '.join(cmd)}")
    return proc


def nvcc_release(nvcc: str | Path) -> str:
    """'13.0' from ``nvcc --version`` (empty where it does not run)."""
    try:
        out = subprocess.run([str(nvcc), "--version"], capture_output=True, text=True,
                             timeout=60).stdout
    except (OSError, subprocess.TimeoutExpired):
        return ""
    m = re.search(r"release (\d+\.\d+)", out)
    return m.group(1) if m else ""


def pip_download(dest: Path, *reqs: str) -> list[Path]:
    """The manylinux x86-64 wheels of ``reqs`` (no dependencies) in ``dest``."""
    dest.mkdir(parents=True, exist_ok=True)
    plats = [a for p in MANYLINUX for a in ("--platform", p)]
    run([sys.executable, "-m", "pip", "download", "-q", "--disable-pip-version-check",
         "--no-deps", "--only-binary", ":all:", *plats, "--python-version", "3.12",
         "-d", dest, *reqs])
    return sorted(dest.glob("*.whl"))


def unpack_wheel(whl: Path, into: Path) -> None:
    with zipfile.ZipFile(whl) as z:
        for info in z.infolist():
            path = z.extract(info, into)
            mode = info.external_attr >> 16
            if mode:
                os.chmod(path, mode & 0o777)


def cufft_root(major: int, work: Path) -> Path:
    """The nvidia-cufft wheel of ``major``, unpacked under ``work`` (once)."""
    site = work / f"cu{major}" / "site"
    root = site / CUFFT_DIR[major]
    name, version, soname = CUFFT[major]
    # the same wheel that `make -C kernels cufft` unpacked, where it did
    fetched = KERNELS / "build" / "cufft"
    if (not (root / "lib" / soname).is_file()
            and (fetched / f"{name.replace('-', '_')}-{version}.dist-info").is_dir()
            and (fetched / CUFFT_DIR[major] / "lib" / soname).is_file()):
        site.parent.mkdir(parents=True, exist_ok=True)
        shutil.rmtree(site, ignore_errors=True)
        site.symlink_to(fetched)
    if not (root / "lib" / soname).is_file():
        say(f"CUDA {major}: fetching cuFFT ({name}=={version})")
        for whl in pip_download(work / f"cu{major}" / "cufft-wheel", f"{name}=={version}"):
            unpack_wheel(whl, site)
    if not ((root / "include" / "cufft.h").is_file() and (root / "lib" / soname).is_file()):
        raise SystemExit(f"wheel-cuda: no cufft.h or {soname} under {root} after fetching {name}")
    return root


def debian_mirror() -> tuple[str, str]:
    """(URI, Signed-By) of this machine's Debian archive, from its apt sources."""
    codename = ""
    try:
        codename = re.search(r"^VERSION_CODENAME=(\S+)", Path("/etc/os-release").read_text(),
                             re.M).group(1)
    except (OSError, AttributeError):
        pass
    candidates = []
    for f in sorted(glob.glob("/etc/apt/sources.list.d/*.sources")):
        for block in Path(f).read_text().split("\n\n"):
            fields = dict(re.findall(r"^([\w-]+):\s*(.*)$", block, re.M))
            if "deb" in fields.get("Types", "").split() and fields.get("URIs"):
                candidates.append((fields["URIs"].split()[0], fields.get("Suites", "").split(),
                                   fields.get("Signed-By", "")))
    for f in ["/etc/apt/sources.list", *sorted(glob.glob("/etc/apt/sources.list.d/*.list"))]:
        if os.path.isfile(f):
            for m in re.finditer(r"^deb\s+(?:\[[^\]]*\]\s+)?(\S+)\s+(\S+)", Path(f).read_text(),
                                 re.M):
                candidates.append((m.group(1), [m.group(2)], ""))
    for uri, suites, signed in candidates:
        if codename in suites:
            return uri, signed
    raise SystemExit("wheel-cuda: no Debian archive in this machine's apt sources to fetch "
                     f"CUDA 12's compiler ({DEBIAN_CUDA12[0]}) from: set NVCC12 to the nvcc "
                     "of a CUDA 12 toolkit, or build only CUDA 13 (--majors 13)")


def debian_cuda12_compiler(work: Path) -> Path:
    """Debian's nvidia-cuda-toolkit, fetched and unpacked under ``work`` (once)."""
    pkg, suite, component = DEBIAN_CUDA12
    unpacked = work / "debian" / "root"
    if (unpacked / ".complete").is_file():
        return unpacked
    for tool in ("apt-get", "dpkg-deb"):
        if shutil.which(tool) is None:
            raise SystemExit(f"wheel-cuda: CUDA 12's compiler comes from Debian's {pkg}, "
                             f"fetched with apt-get and dpkg-deb, and {tool} is missing: set "
                             "NVCC12 to the nvcc of a CUDA 12 toolkit, or --majors 13")
    uri, signed = debian_mirror()
    apt = work / "debian" / "apt"
    for d in ("lists/partial", "cache/archives/partial", "etc"):
        (apt / d).mkdir(parents=True, exist_ok=True)
    option = f"[signed-by={signed}] " if signed else ""
    (apt / "etc" / "sources.list").write_text(f"deb {option}{uri} {suite} {component}\n")
    opts = [f"-oDir::Etc::SourceList={apt / 'etc' / 'sources.list'}",
            "-oDir::Etc::SourceParts=/dev/null", f"-oDir::State::Lists={apt / 'lists'}",
            f"-oDir::Cache={apt / 'cache'}", "-oAPT::Sandbox::User=root",
            "-oDebug::NoLocking=1", "-qq"]
    say(f"CUDA 12: fetching the compiler, Debian {suite} {component} {pkg} "
        "(apt-get with a private configuration)")
    run(["apt-get", *opts, "update"])
    debs = work / "debian" / "debs"
    shutil.rmtree(debs, ignore_errors=True)
    debs.mkdir(parents=True)
    run(["apt-get", *opts, "download", pkg], cwd=debs)
    deb, = debs.glob(f"{pkg}_*.deb")
    shutil.rmtree(unpacked, ignore_errors=True)
    run(["dpkg-deb", "-x", deb, unpacked])
    (unpacked / ".complete").write_text(deb.name + "\n")
    return unpacked


NVCC_PROFILE = """\
TOP              = $(_HERE_)/..
CICC_PATH        = $(TOP)/nvvm/bin
NVVMIR_LIBRARY_DIR = $(TOP)/nvvm/libdevice
LD_LIBRARY_PATH += $(TOP)/lib64:
PATH            += $(CICC_PATH):$(_HERE_):
INCLUDES        +=  "-I$(TOP)/include" $(_SPACE_)
LIBRARIES        =+ $(_SPACE_) "-L$(TOP)/lib64"
CUDAFE_FLAGS    +=
PTXAS_FLAGS     +=
"""


def cuda12_toolkit(work: Path) -> Path:
    """A CUDA 12 toolkit for building only (nvcc at ``bin/nvcc``), assembled once."""
    top = work / "cu12" / "toolkit"
    if (top / ".complete").is_file():
        return top / "bin" / "nvcc"
    deb = debian_cuda12_compiler(work)
    tk = deb / "usr" / "lib" / "nvidia-cuda-toolkit"
    release = nvcc_release(tk / "bin" / "nvcc")
    if not release.startswith("12."):
        raise SystemExit(f"wheel-cuda: Debian's {DEBIAN_CUDA12[0]} has nvcc {release or '?'}, "
                         "not CUDA 12: set NVCC12 to the nvcc of a CUDA 12 toolkit")
    say(f"CUDA 12: headers and static runtime of CUDA {release} (nvidia-cuda-nvcc-cu12, "
        "nvidia-cuda-runtime-cu12)")
    wheels = work / "cu12" / "toolkit-wheels"
    shutil.rmtree(wheels, ignore_errors=True)
    pip_download(wheels, f"nvidia-cuda-nvcc-cu12=={release}.*",
                 f"nvidia-cuda-runtime-cu12=={release}.*")
    site = work / "cu12" / "toolkit-site"
    shutil.rmtree(site, ignore_errors=True)
    for whl in wheels.glob("*.whl"):
        unpack_wheel(whl, site)
    shutil.rmtree(top, ignore_errors=True)
    for d in ("bin/crt", "nvvm/bin", "nvvm/libdevice", "include", "lib64"):
        (top / d).mkdir(parents=True)
    for exe in ("nvcc", "cicc"):
        src = tk / "bin" / exe
        shutil.copy2(src, top / ("bin" if exe == "nvcc" else "nvvm/bin") / exe)
    for exe in ("cudafe++", "fatbinary", "nvlink", "ptxas", "bin2c"):
        shutil.copy2(deb / "usr" / "bin" / exe, top / "bin" / exe)
    for stub in (tk / "bin" / "crt").iterdir():
        shutil.copy2(stub, top / "bin" / "crt" / stub.name)
    shutil.copy2(tk / "libdevice" / "libdevice.10.bc", top / "nvvm" / "libdevice")
    (top / "bin" / "nvcc.profile").write_text(NVCC_PROFILE)
    for pkg in ("cuda_runtime", "cuda_nvcc"):
        shutil.copytree(site / "nvidia" / pkg / "include", top / "include", dirs_exist_ok=True)
    for lib in (site / "nvidia" / "cuda_runtime" / "lib").glob("libcuda*"):
        shutil.copy2(lib, top / "lib64" / lib.name)
    (top / "lib64" / "libcudart.so").symlink_to("libcudart.so.12")   # for -cudart=shared
    # nvcc links -lcudadevrt into every program; it serves relocatable device code
    # only (-rdc, which pfft does not use), and the 12.4 wheel lacks it: an empty archive
    run(["ar", "rc", top / "lib64" / "libcudadevrt.a"])
    (top / "version.txt").write_text(f"CUDA Version {release}\n")
    (top / ".complete").write_text(release + "\n")
    return top / "bin" / "nvcc"


def nvcc_for(major: int, work: Path) -> Path:
    """The nvcc that builds ``major``'s library."""
    given = os.environ.get(f"NVCC{major}")
    if given:
        nvcc = Path(given)
    elif major == 13:
        nvcc = Path(os.environ.get("CUDA_HOME") or "/usr/local/cuda") / "bin" / "nvcc"
        if not nvcc.is_file() and shutil.which("nvcc"):
            nvcc = Path(shutil.which("nvcc"))
    else:
        nvcc = cuda12_toolkit(work)
    release = nvcc_release(nvcc)
    if not release.startswith(f"{major}."):
        raise SystemExit(f"wheel-cuda: CUDA {major} needs an nvcc of release {major}, and "
                         f"{nvcc} is {release or 'not there'}: set NVCC{major}")
    return nvcc


def oldest_jaxlib() -> str:
    """The jaxlib version of the oldest jax pfft supports (``.ci/oldest.txt``)."""
    text = (ROOT / ".ci" / "oldest.txt").read_text()
    m = re.search(r"^jaxlib==(\S+)", text, re.M)
    if not m:
        raise SystemExit("wheel-cuda: .ci/oldest.txt pins no jaxlib")
    return m.group(1)


def ffi_include(work: Path) -> Path:
    """XLA's FFI headers of the oldest supported jaxlib, unpacked under ``work`` (once)."""
    version = oldest_jaxlib()
    root = work / f"ffi-jaxlib-{version}"
    include = root / "jaxlib" / "include"
    if not (include / "xla" / "ffi" / "api" / "ffi.h").is_file():
        say(f"the XLA FFI headers of jaxlib {version}, the oldest pfft supports")
        wheels = root / "wheel"
        whl, = pip_download(wheels, f"jaxlib=={version}")
        with zipfile.ZipFile(whl) as z:
            z.extractall(root, [n for n in z.namelist() if n.startswith("jaxlib/include/")])
        shutil.rmtree(wheels)
    m = re.search(r"#define XLA_FFI_API_MINOR (\d+)",
                  (include / "xla" / "ffi" / "api" / "c_api.h").read_text())
    say(f"XLA FFI headers: jaxlib {version} (API 0.{m.group(1) if m else '?'}), {include}")
    return include


def cmake_exe() -> str:
    exe = shutil.which("cmake") or str(Path(sys.executable).with_name("cmake"))
    if not os.path.exists(exe):
        raise SystemExit("wheel-cuda: no cmake (on PATH or next to this Python)")
    return exe


def build_library(major: int, work: Path, archs: str, ffi: Path) -> Path:
    nvcc = nvcc_for(major, work)
    cufft = cufft_root(major, work)
    build = work / f"cmake-cu{major}"
    out = work / "lib"
    out.mkdir(parents=True, exist_ok=True)
    say(f"CUDA {major}: compiling libpfft_cuda{major}.so with {nvcc} (CUDA "
        f"{nvcc_release(nvcc)}, architectures {archs}; about 15 s on 2 idle cores)")
    generator = ["-G", "Ninja"] if shutil.which("ninja") else []
    run([cmake_exe(), "-S", KERNELS, "-B", build, *generator, "-DPFFT_CPU=OFF",
         "-DPFFT_CUDA=ON", f"-DPFFT_CUDA_MAJOR={major}", f"-DCUFFT_ROOT={cufft}",
         f"-DCMAKE_CUDA_COMPILER={nvcc}", f"-DCMAKE_CUDA_ARCHITECTURES={archs}",
         f"-DPFFT_CUDA_RUNTIME={RUNTIME[major]}",
         f"-DCMAKE_CUDA_FLAGS=-cudart={RUNTIME[major].lower()}",
         f"-DJAX_FFI_INCLUDE={ffi}", f"-DPFFT_OUT={out}"])
    run([cmake_exe(), "--build", build, "-j", str(os.cpu_count() or 2)])
    lib = out / f"libpfft_cuda{major}.so"
    if not lib.is_file():
        raise SystemExit(f"wheel-cuda: the CUDA {major} build made no {lib}")
    return lib


def _record_hash(data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
    return "sha256=" + digest.decode()


def add_libraries(plain: Path, libs: list[Path], out: Path) -> None:
    """``plain`` with ``libs`` in pfft/_lib (and no libpfft_cuda.so, no note that the GPU
    engine was not built), its RECORD written anew, as ``out``."""
    drop = {"pfft/_lib/libpfft_cuda.so", "pfft/_lib/cuda_not_built.txt"}
    with zipfile.ZipFile(plain) as z:
        record = next(n for n in z.namelist() if n.endswith(".dist-info/RECORD"))
        infos = [i for i in z.infolist() if i.filename not in drop | {record}]
        files = [(i, z.read(i)) for i in infos]
    stamp = files[0][0].date_time
    for lib in libs:
        info = zipfile.ZipInfo(f"pfft/_lib/{lib.name}", date_time=stamp)
        info.external_attr = 0o755 << 16
        files.append((info, lib.read_bytes()))
    files.sort(key=lambda f: (".dist-info/" in f[0].filename, f[0].filename))
    lines = [f"{i.filename},{_record_hash(d)},{len(d)}" for i, d in files] + [f"{record},,"]
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as w:
        for info, data in files:
            info.compress_type = zipfile.ZIP_DEFLATED
            w.writestr(info, data)
        w.writestr(zipfile.ZipInfo(record, date_time=stamp), "\n".join(lines) + "\n",
                   compress_type=zipfile.ZIP_DEFLATED)


def dynamic(lib: Path) -> tuple[list[str], list[str]]:
    """(NEEDED entries, RPATH/RUNPATH entries) of ``lib``, from ``readelf -d``."""
    text = run(["readelf", "-d", lib]).stdout
    needed = re.findall(r"\(NEEDED\).*\[(.*)\]", text)
    paths = [p for r in re.findall(r"\((?:RPATH|RUNPATH)\).*\[(.*)\]", text) for p in r.split(":")]
    return needed, paths


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--majors", nargs="+", type=int, default=[13, 12], choices=[12, 13])
    ap.add_argument("--out", type=Path, default=ROOT / "dist")
    ap.add_argument("--work", type=Path, default=ROOT / "build" / "cuda-wheel")
    ap.add_argument("--build-dir", default="build/cuda-wheel/cpu-{wheel_tag}",
                    help="scikit-build-core's folder for the CPU wheel")
    ap.add_argument("--archs", default=os.environ.get("CUDA_ARCHS", "80-real;90-real;90-virtual"))
    args = ap.parse_args(argv)
    if platform.machine() not in ("x86_64", "AMD64"):
        raise SystemExit(f"wheel-cuda: x86-64 only (this is {platform.machine()})")
    work, out = args.work.resolve(), args.out.resolve()
    work.mkdir(parents=True, exist_ok=True)
    say(f"building pfft's CUDA wheel: CUDA {', '.join(map(str, args.majors))} "
        f"(work folder {work})")
    ffi = ffi_include(work)
    libs = [build_library(major, work, args.archs, ffi) for major in args.majors]

    say(f"the CPU wheel (python -m build --wheel, CMake folder {args.build_dir}; the CPU "
        "kernels compile the first time: about 3 minutes on 2 cores)")
    plain_dir = work / "plain"
    shutil.rmtree(plain_dir, ignore_errors=True)
    run([sys.executable, "-m", "build", "--no-isolation", "--wheel", "--outdir", plain_dir,
         f"-Cbuild-dir={args.build_dir}", f"-Ccmake.define.JAX_FFI_INCLUDE={ffi}", ROOT],
        cwd=ROOT)
    plain, = plain_dir.glob("pfft-*.whl")

    say(f"adding {', '.join(lib.name for lib in libs)} to {plain.name}")
    with tempfile.TemporaryDirectory(dir=work) as tmp:
        joined = Path(tmp) / plain.name
        add_libraries(plain, libs, joined)
        out.mkdir(parents=True, exist_ok=True)
        for old in out.glob("pfft-*-manylinux*.whl"):
            old.unlink()
        say("auditwheel repair (cuFFT and the CUDA runtime excluded: the nvidia wheels')")
        env = dict(os.environ, PATH=os.pathsep.join([str(Path(sys.executable).parent),
                                                     os.environ.get("PATH", "")]))
        excludes = [a for e in EXCLUDE for a in ("--exclude", e)]
        proc = run([sys.executable, "-m", "auditwheel", "repair", *excludes, "-w", out, joined],
                   env=env)
        print(proc.stderr[-2000:].strip())
    wheel, = out.glob("pfft-*-manylinux*.whl")

    with tempfile.TemporaryDirectory() as tmp, zipfile.ZipFile(wheel) as z:
        names = [n for n in z.namelist() if n.endswith(".so")]
        z.extractall(tmp, names)
        for n in sorted(names):
            lib = Path(tmp) / n
            needed, paths = dynamic(lib)
            print(f"  {n} ({lib.stat().st_size / 2**20:.1f} MiB): NEEDED {', '.join(needed)}; "
                  f"RUNPATH {':'.join(paths) or '-'}")
    say(f"done: {wheel} ({wheel.stat().st_size / 2**20:.1f} MiB)")
    print(wheel)
    return 0


if __name__ == "__main__":
    sys.exit(main())
