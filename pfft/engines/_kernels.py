"""Find, load and register pfft's FFI kernel libraries.

The libraries are plain C-ABI shared objects, loaded with :mod:`ctypes` and
registered through ``jax.ffi.pycapsule``, so one build serves any Python. They are
searched in (:func:`search_dirs`):

1. ``$PFFT_KERNELS_DIR``, an override;
2. the package's own ``pfft/_lib/`` (found with :mod:`importlib.resources`), where
   ``pip install .``, a wheel, or ``pip install -e .`` put them;
3. ``kernels/build/`` of the source tree this package is imported from
   (``make kernels``), a last fallback.

An editable install (``pip install --no-build-isolation -e .``) first rebuilds them
when their sources changed (:func:`_rebuild_editable`).

In each directory the CPU library is the first that exists of ``libpfft_cpu.so``
(one library for one ``-march``: ``make kernels MARCH=native``, or a non-x86 build),
``libpfft_cpu_v3.so`` where the CPU has the x86-64-v3 features (AVX2, FMA) and
``libpfft_cpu_v2.so`` where it has x86-64-v2's (:mod:`._cpu_features`).

The GPU library is ``libpfft_cuda.so`` where a source build made one (``pip install
.`` or ``make kernels`` with nvcc: built against this machine's cuFFT), else the one of
the CUDA wheel (``make wheel-cuda``) that matches the jax CUDA plugin installed
(:func:`cuda_library_choice`): ``libpfft_cuda13.so`` for ``jax-cuda13-plugin``,
``libpfft_cuda12.so`` for ``jax-cuda12-plugin``, CUDA 13's first where both are (as
JAX's own GPU extensions take it first), the other tried where it does not load. The
plugins are found from their metadata (:func:`installed_cuda_plugins`), without
importing them.

Nothing here runs at import: loading happens on the first :func:`load` call, which
also passes the library its settings (:func:`_configure`): the C++ reads no
environment, :mod:`pfft.settings` does. The CPU kernels' default thread count
(:func:`num_threads`) and the GPU kernels' working memory and plan cache
(:func:`gpu_workspace_bytes`, :func:`cufft_plan_cache_info`) live here too: what the
loaded libraries are asked, not what they compute.
"""
from __future__ import annotations

import contextlib
import ctypes
import functools
import hashlib
import importlib.metadata
import importlib.resources
import importlib.util
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import jax
import numpy as np

from .. import settings
from . import _cpu_features

__all__ = ["TARGETS", "PLATFORM_TARGETS", "ABI_VERSIONS", "load", "search_dirs", "library",
           "library_names", "BUILD_HINT", "set_num_threads", "num_threads",
           "CUDA_PLUGINS", "installed_cuda_plugins", "cuda_library_choice",
           "cuda_library_report",
           "gpu_workspace_bytes", "workspace_type", "cufft_plan_cache_info",
           "set_cufft_plan_cache_size"]

# ffi target name -> exported handler symbol (same names in the CPU and CUDA libraries)
TARGETS = {"pfft_c2c": "PfftC2C", "pfft_r2c": "PfftR2C", "pfft_c2r": "PfftC2R"}
# targets only one platform's library has: the CPU one fuses packing into its FFTs
PLATFORM_TARGETS = {"cpu": {"pfft_pieces": "PfftPieces", "pfft_pieces_pair": "PfftPiecesPair",
                            "pfft_r2r": "PfftR2R"}, "cuda": {}}
# the calling convention each library must report (rebuild when it changes)
ABI_VERSIONS = {"cpu": 14, "cuda": 9}
_XLA = {"cpu": ("cpu", "pfft_cpu_abi_version"), "cuda": ("CUDA", "pfft_cuda_abi_version")}
# how to get the kernels: what the warnings and errors suggest
BUILD_HINT = ("reinstall pfft from source so that they are built (`pip install .`, which "
              "needs a C++17 compiler), or point $PFFT_KERNELS_DIR at a folder holding them; "
              "in a source checkout `pip install --no-build-isolation -e .` or `make kernels`")

_SOURCE_ROOT = Path(__file__).resolve().parents[2]


# the CUDA wheel's GPU libraries, one per CUDA major, and the jax plugin each serves
# (its distribution names: the plugin, then the PJRT part jax[cudaNN] installs with it),
# CUDA 13 first: JAX's own GPU extensions (jax._src.lib) take jax_cuda13_plugin first
CUDA_PLUGINS = {13: ("jax-cuda13-plugin", "jax-cuda13-pjrt"),
                12: ("jax-cuda12-plugin", "jax-cuda12-pjrt")}
# a GPU library built from source on this machine (against its own cuFFT)
CUDA_SOURCE_BUILD = "libpfft_cuda.so"


def _cuda_library(major: int) -> str:
    return f"libpfft_cuda{major}.so"


def installed_cuda_plugins() -> dict[int, str | None]:
    """The jax CUDA plugins installed: ``{13: version or None, 12: ...}``.

    Read from the distributions' metadata (``jax-cuda13-plugin``, else
    ``jax-cuda13-pjrt``); a module found without metadata (``jax_cuda13_plugin`` on
    ``sys.path``) counts with version ``"unknown"``. Nothing is imported, so JAX's GPU
    backend is not started.
    """
    found: dict[int, str | None] = {}
    for major, dists in CUDA_PLUGINS.items():
        found[major] = None
        for dist in dists:
            try:
                found[major] = importlib.metadata.version(dist)
                break
            except importlib.metadata.PackageNotFoundError:
                continue
        if found[major] is None:
            try:
                module = importlib.util.find_spec(f"jax_cuda{major}_plugin")
            except (ImportError, ValueError):
                module = None
            if module is not None:
                found[major] = "unknown"
    return found


def cuda_library_choice(plugins: dict[int, str | None]) -> list[tuple[str, bool, str]]:
    """Which of the CUDA wheel's GPU libraries to load, for the jax CUDA plugins
    ``plugins`` (``{13: version or None, 12: version or None}``, as
    :func:`installed_cuda_plugins` returns).

    Returns ``(file name, chosen, why)`` for each library, the chosen first, in the
    order they are tried: the library of an installed plugin's CUDA major is chosen,
    CUDA 13's before CUDA 12's where both plugins are; one whose plugin is missing is
    not.
    """
    chosen, other = [], []
    both = all(plugins.get(major) for major in CUDA_PLUGINS)
    for major, (dist, _) in CUDA_PLUGINS.items():
        version = plugins.get(major)
        if not version:
            other.append((_cuda_library(major), False, f"{dist} not installed"))
            continue
        why = f"{dist} {version} installed"
        if both and not chosen:
            why += (f"; so is {CUDA_PLUGINS[12][0]} {plugins[12]}: CUDA 13's library "
                    "comes first, as for JAX's GPU extensions (keep one plugin)")
        elif both:
            why += f"; tried where {chosen[0][0]} does not load"
        chosen.append((_cuda_library(major), True, why))
    return chosen + other


def library_names(platform: str, flags: frozenset[str] | None = None,
                  plugins: dict[int, str | None] | None = None) -> list[str]:
    """The file names that may hold ``platform``'s kernels, in order of preference.

    ``flags``: the CPU's feature flags (default: this CPU's, from ``/proc/cpuinfo``).
    ``plugins``: the jax CUDA plugins installed (default: :func:`installed_cuda_plugins`).
    """
    if platform == "cuda":
        if plugins is None:
            plugins = installed_cuda_plugins()
        return [CUDA_SOURCE_BUILD] + [name for name, chosen, _ in cuda_library_choice(plugins)
                                      if chosen]
    names = ["libpfft_cpu.so"]
    if _cpu_features.is_x86_64():
        level = _cpu_features.x86_level(flags)
        names += [f"libpfft_cpu_v{lv}.so" for lv in (3, 2) if lv <= level]
    return names


def _package_dir() -> Path | None:
    """``pfft/_lib`` where the package has it (a wheel or an editable install)."""
    try:
        lib = importlib.resources.files(__package__.partition(".")[0]).joinpath("_lib")
    except (ModuleNotFoundError, TypeError):
        return None
    if not lib.is_dir() or not hasattr(lib, "__fspath__"):
        return None
    return Path(os.fspath(lib))


def search_dirs() -> list[Path]:
    """Directories searched for the kernel libraries, in order."""
    dirs = []
    if settings.kernels_dir() is not None:
        dirs.append(settings.kernels_dir())
    package = _package_dir()
    if package is not None:
        dirs.append(package)
    if (_SOURCE_ROOT / "kernels" / "CMakeLists.txt").is_file():
        dirs.append(_SOURCE_ROOT / "kernels" / "build")
    return dirs


def _find_all(platform: str) -> list[Path]:
    """Every library that may be loaded for ``platform``, in the order tried: by
    folder (:func:`search_dirs`), then by name (:func:`library_names`)."""
    names = library_names(platform)
    return [d / name for d in search_dirs() for name in names if (d / name).is_file()]


def _find(platform: str) -> tuple[Path | None, str]:
    """The library to load, or None and why there is none."""
    names = library_names(platform)
    dirs = search_dirs()
    found = _find_all(platform)
    if found:
        return found[0], ""
    why = ""
    if platform == "cpu" and _cpu_features.is_x86_64() and len(names) == 1:
        flags = _cpu_features.cpu_flags() or frozenset()
        why = (" (this CPU lacks x86-64-v2's "
               f"{', '.join(_cpu_features.missing_for_level(2, flags))}: only a "
               "libpfft_cpu.so built for it would do, `make kernels MARCH=native`)")
    where = ", ".join(str(d) for d in dirs) or "nowhere: no folder to search"
    if platform == "cuda" and (note := _not_built_note()):
        return None, (f"pfft was installed without its GPU engine: {note}; then reinstall "
                      f"pfft (looked for {names[0]} in {where})")
    if platform == "cuda":
        wheel = [d / _cuda_library(m) for d in dirs for m in CUDA_PLUGINS
                 if (d / _cuda_library(m)).is_file()]
        if wheel:    # the CUDA wheel's libraries are here, but no plugin chose one
            not_chosen = "; ".join(f"{name}: {why}" for name, chosen, why
                                   in cuda_library_choice(installed_cuda_plugins()))
            return None, (f"no jax CUDA plugin for the GPU libraries of this install "
                          f"({not_chosen}): install jax[cuda13] or jax[cuda12], or "
                          f"pfft[cuda13]/pfft[cuda12] (in {wheel[0].parent})")
    return None, f"no {' or '.join(names)} found{why} (looked in {where}); {BUILD_HINT}"


def _not_built_note() -> str:
    """Why the install built no GPU engine, as its build recorded (``""``: no record)."""
    package = _package_dir()
    note = package / "cuda_not_built.txt" if package is not None else None
    return note.read_text().strip() if note is not None and note.is_file() else ""


@functools.cache
def _rebuild_editable() -> str | None:
    """Rebuild the kernels of an editable install whose sources changed (once a process).

    scikit-build-core rebuilds on import only for Python extension modules; these
    libraries are loaded with ctypes, so pfft asks its loader (``rebuild()``, a no-op
    build when nothing changed). Returns None, or why the rebuild failed.
    """
    package = sys.modules.get(__package__.partition(".")[0])
    rebuild = getattr(getattr(package, "__loader__", None), "rebuild", None)
    if rebuild is None:
        return None
    try:
        # processes started together (mpirun, pytest's subprocesses) take turns: one
        # builds, the others then find the build up to date
        with _exclusive(Path(tempfile.gettempdir()) / f"pfft-rebuild-{os.getuid()}-"
                        f"{hashlib.sha1(str(_SOURCE_ROOT).encode()).hexdigest()[:12]}.lock"):
            rebuild()
    except (OSError, RuntimeError, subprocess.CalledProcessError) as err:
        return f"rebuilding the kernels of this editable install failed: {err}"
    return None


@contextlib.contextmanager
def _exclusive(lock: Path):
    """Hold an exclusive ``flock`` on ``lock`` (a no-op where there is no fcntl)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield
        return
    with open(lock, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def _gpu_backend_present() -> bool:
    try:
        return any(d.platform == "gpu" for d in jax.devices("gpu"))
    except RuntimeError:
        return False


_LOADED: dict[str, ctypes.CDLL] = {}


def _is_thread_count(text: str) -> bool:
    return text.strip().isdigit()


def _check_thread_settings(environ) -> str:
    """Make the thread-count variables DUCC reads safe for it; ``""`` when they are.

    DUCC sizes its thread pool from ``$DUCC0_NUM_THREADS``, else ``$OMP_NUM_THREADS``,
    and stops the process's first transform with an assertion when the value is not a
    number. An empty or non-numeric ``OMP_NUM_THREADS`` (``export OMP_NUM_THREADS=``
    in a job script) means "unset" to OpenMP runtimes and numpy; here it gets
    ``DUCC0_NUM_THREADS=0`` (DUCC's default: the usable cores) so that DUCC reads the
    same. pfft passes each call's thread count itself (:func:`pfft.engines.native.
    set_num_threads`). A bad ``DUCC0_NUM_THREADS`` is the user's own DUCC setting:
    the reason the engine is unavailable is returned instead.
    """
    ducc = environ.get("DUCC0_NUM_THREADS")
    if ducc is not None:
        return "" if _is_thread_count(ducc) else (
            f"DUCC0_NUM_THREADS={ducc!r} is not a thread count (DUCC would abort on it): "
            "set it to a whole number (0: all cores) or unset it")
    omp = environ.get("OMP_NUM_THREADS")
    if omp is not None and not _is_thread_count(omp):
        environ["DUCC0_NUM_THREADS"] = "0"
    return ""


def _configure(platform: str, lib: ctypes.CDLL) -> None:
    """Pass a freshly loaded library the settings it runs with (:mod:`pfft.settings`):
    the CPU one its huge-page advice and pieces batch, the GPU one the bound of its
    cuFFT plan cache where one is set (else it keeps its 64)."""
    if platform == "cpu":
        lib.pfft_cpu_set_hugepage_advice(ctypes.c_int(int(settings.hugepage_advice())))
        lib.pfft_cpu_set_pieces_batch(ctypes.c_long(settings.pieces_batch()))
    elif settings.cufft_plan_cache() is not None:
        lib.pfft_cuda_set_plan_cache_size(ctypes.c_long(settings.cufft_plan_cache()))


def library(platform: str) -> ctypes.CDLL | None:
    """The loaded kernel library for ``platform`` (after :func:`load`), or ``None``."""
    return _LOADED.get(platform) if load(platform)[0] else None


@functools.cache
def load(platform: str) -> tuple[bool, str]:
    """Load and register the kernels for ``platform`` ("cpu" or "cuda") once.

    Returns
    -------
    (ok, detail)
        ``ok`` is True when the platform's targets are registered for ``platform``;
        ``detail`` is the library path, or why it could not be used.
    """
    if platform not in _XLA:
        return False, f"no pfft kernels for platform {platform!r}"
    xla_platform, abi_symbol = _XLA[platform]
    if platform == "cuda" and not _gpu_backend_present():
        return False, "no CUDA backend in this JAX"
    failed = _rebuild_editable()
    if failed:
        return False, failed
    path, why = _find(platform)
    if path is None:
        return False, why
    if platform == "cpu":
        why = _check_thread_settings(os.environ)
        if why:
            return False, why
    # the GPU library of another CUDA major where the first does not load (both
    # plugins installed, one without its cuFFT)
    later = _find_all(platform)[1:] if platform == "cuda" else []
    try:
        try:
            lib = ctypes.CDLL(str(path))
        except OSError as err:
            errors = [f"{path}: {err}"]
            for path in later:
                try:
                    lib = ctypes.CDLL(str(path))
                    break
                except OSError as err2:
                    errors.append(f"{path}: {err2}")
            else:
                raise OSError("; ".join(errors)) from None
        _LOADED[platform] = lib
        abi = getattr(lib, abi_symbol)
        abi.restype = ctypes.c_int
        if abi() != ABI_VERSIONS[platform]:
            return False, (f"{path} has ABI {abi()}, pfft wants {ABI_VERSIONS[platform]}: "
                           f"rebuild it; {BUILD_HINT}")
        _configure(platform, lib)
        for target, symbol in {**TARGETS, **PLATFORM_TARGETS[platform]}.items():
            jax.ffi.register_ffi_target(target, jax.ffi.pycapsule(getattr(lib, symbol)),
                                        platform=xla_platform)
    except (OSError, AttributeError) as err:
        return False, f"cannot load {path}: {err}"
    except RuntimeError as err:     # JAX refused a handler: built against a newer XLA FFI
        return False, (f"JAX cannot register the kernels of {path}: {err} (they were built "
                       f"against a newer jax's XLA FFI than this jax {jax.__version__}: "
                       f"upgrade jax, or {BUILD_HINT})")
    return True, str(path)


def cuda_library_report(plugins: dict[int, str | None] | None = None,
                        loaded: tuple[bool, str] | None = None) -> str:
    """Which GPU library pfft loaded and why any other was not, one line
    (``python -m pfft``), e.g. ``libpfft_cuda13.so: loaded (jax-cuda13-plugin 0.12.0
    installed); libpfft_cuda12.so: not loaded: jax-cuda12-plugin not installed``.

    ``plugins``: the jax CUDA plugins (default: :func:`installed_cuda_plugins`);
    ``loaded``: what :func:`load` returned for ``"cuda"`` (default: that call).
    Libraries this install does not have are left out.
    """
    if plugins is None:
        plugins = installed_cuda_plugins()
    if loaded is None:
        loaded = load("cuda")
    ok, detail = loaded
    dirs = search_dirs()
    present = {}
    for name in [CUDA_SOURCE_BUILD] + [_cuda_library(m) for m in CUDA_PLUGINS]:
        where = next((d / name for d in dirs if (d / name).is_file()), None)
        if where is not None:
            present[name] = where
    if not present:
        return "none in this install"
    reasons = {CUDA_SOURCE_BUILD: (True, "built from source here; taken before the "
                                         "CUDA wheel's per-plugin libraries")}
    reasons.update({name: (chosen, why) for name, chosen, why in cuda_library_choice(plugins)})
    parts, first_chosen = [], True
    for name in [CUDA_SOURCE_BUILD] + [n for n, _, _ in cuda_library_choice(plugins)]:
        if name not in present:
            continue
        chosen, why = reasons[name]
        if ok and Path(detail) == present[name]:
            parts.append(f"{name}: loaded ({why})")
        elif not chosen:
            parts.append(f"{name}: not loaded: {why}")
        elif ok:
            parts.append(f"{name}: not loaded: {Path(detail).name} came first ({why})")
        elif first_chosen:
            parts.append(f"{name}: not loaded: {detail} (chosen: {why})")
        else:
            parts.append(f"{name}: not loaded (chosen after the one above: {why})")
        first_chosen = first_chosen and not chosen
    return "; ".join(parts)


_NUM_THREADS: int | None = None


def set_num_threads(n: int | None) -> None:
    """Default CPU threads per call (None: ``$PFFT_NUM_THREADS`` or all usable cores).

    Several simulated devices on one host each run their own calls at once: give
    each ``cores // devices`` threads to avoid oversubscription.
    """
    global _NUM_THREADS
    _NUM_THREADS = None if n is None else max(1, int(n))


def num_threads() -> int:
    """The CPU threads a call uses when it does not say."""
    if _NUM_THREADS is not None:
        return _NUM_THREADS
    from_env = settings.num_threads()
    if from_env is not None:
        return from_env
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


_KINDS = {"pfft_c2c": 0, "pfft_r2c": 1, "pfft_c2r": 2}   # the GPU library's kind numbers


@functools.lru_cache(maxsize=4096)
def gpu_workspace_bytes(target: str, in_shape: tuple[int, ...], out_shape: tuple[int, ...],
                        axes: tuple[int, ...], double: bool) -> int:
    """Bytes of working memory the GPU kernel ``target`` needs for one block
    ``in_shape`` -> ``out_shape`` over ``axes`` (negative): its C2R input copy, a pitched
    copy of a real side where cuFFT would get unaligned pointers, and cuFFT's work area,
    as the current GPU's cuFFT sizes them.

    The custom call returns this buffer as a second output, so XLA allocates it like any
    other (the FFI scratch allocator gave the kernels none).

    Raises
    ------
    RuntimeError
        If the GPU kernels are not loaded, or cuFFT cannot plan the transform.
    """
    dims = ctypes.c_longlong * len(in_shape)
    return _gpu_bytes("pfft_cuda_workspace_size", _KINDS[target], len(in_shape),
                      dims(*in_shape), dims(*out_shape), len(axes),
                      (ctypes.c_longlong * len(axes))(*axes), int(double))


def _gpu_bytes(symbol: str, *args) -> int:
    """The GPU library's ``symbol`` (a working-memory size) called with ``args``."""
    lib = library("cuda")
    if lib is None:
        raise RuntimeError(f"the GPU kernels are not loaded: {load('cuda')[1]}")
    size = getattr(lib, symbol)
    size.restype = ctypes.c_longlong
    lib.pfft_cuda_last_error.restype = ctypes.c_char_p
    nbytes = size(*args)
    if nbytes < 0:
        raise RuntimeError(lib.pfft_cuda_last_error().decode())
    return int(nbytes)


def workspace_type(x: jax.Array, nbytes: int):
    """A ``uint8[nbytes]`` result of the call on ``x``: replicated over ``x``'s mesh, with
    ``x``'s varying manual axes (inside ``shard_map``)."""
    aval = jax.typeof(x)
    sharding = getattr(aval, "sharding", None)
    if sharding is not None:
        sharding = jax.sharding.NamedSharding(sharding.mesh, jax.sharding.PartitionSpec())
    return aval.update(shape=(nbytes,), dtype=np.dtype(np.uint8), sharding=sharding)



def cufft_plan_cache_info() -> dict:
    """Size and bound of the GPU kernel's cuFFT plan cache (a thread-safe LRU).

    The bound is 64 plans unless ``$PFFT_CUFFT_PLAN_CACHE`` or
    :func:`set_cufft_plan_cache_size` says otherwise.

    Raises
    ------
    RuntimeError
        If the GPU kernels are not loaded.
    """
    lib = library("cuda")
    if lib is None:
        raise RuntimeError(f"the GPU kernels are not loaded: {load('cuda')[1]}")
    lib.pfft_cuda_plan_cache_size.restype = ctypes.c_long
    lib.pfft_cuda_plan_cache_limit.restype = ctypes.c_long
    return {"size": int(lib.pfft_cuda_plan_cache_size()),
            "maxsize": int(lib.pfft_cuda_plan_cache_limit())}


def set_cufft_plan_cache_size(maxsize: int) -> None:
    """Bound the GPU kernel's cuFFT plan cache (least recently used plans go first)."""
    if not isinstance(maxsize, int) or maxsize < 1:
        raise ValueError(f"set_cufft_plan_cache_size: maxsize must be a positive int, "
                         f"got {maxsize!r}")
    lib = library("cuda")
    if lib is None:
        raise RuntimeError(f"the GPU kernels are not loaded: {load('cuda')[1]}")
    lib.pfft_cuda_set_plan_cache_size(ctypes.c_long(maxsize))

