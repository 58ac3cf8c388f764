"""Find, load and register pfft's FFI kernel libraries (built by ``make kernels``).

The libraries are plain C-ABI shared objects (``kernels/build/libpfft_cpu.so``,
``libpfft_cuda.so``), loaded with :mod:`ctypes` and registered through
``jax.ffi.pycapsule``, so one build serves any Python. They are searched in
``$PFFT_KERNELS_DIR`` first, then in ``kernels/build/`` of the source tree this
package was installed from (an editable install).

Nothing here runs at import: loading happens on the first :func:`load` call.
"""
from __future__ import annotations

import ctypes
import functools
import os
from pathlib import Path

import jax

__all__ = ["TARGETS", "PLATFORM_TARGETS", "ABI_VERSIONS", "load", "search_dirs", "library"]

# ffi target name -> exported handler symbol (same names in the CPU and CUDA libraries)
TARGETS = {"pfft_c2c": "PfftC2C", "pfft_r2c": "PfftR2C", "pfft_c2r": "PfftC2R"}
# targets only one platform's library has: the CPU one fuses packing into its FFTs
PLATFORM_TARGETS = {"cpu": {"pfft_pieces": "PfftPieces"}, "cuda": {}}
# the calling convention each library must report (rebuild when it changes)
ABI_VERSIONS = {"cpu": 3, "cuda": 1}
_LIBS = {"cpu": ("libpfft_cpu.so", "cpu", "pfft_cpu_abi_version"),
         "cuda": ("libpfft_cuda.so", "CUDA", "pfft_cuda_abi_version")}


def search_dirs() -> list[Path]:
    """Directories searched for the kernel libraries, in order."""
    dirs = []
    if os.environ.get("PFFT_KERNELS_DIR"):
        dirs.append(Path(os.environ["PFFT_KERNELS_DIR"]))
    dirs.append(Path(__file__).resolve().parents[2] / "kernels" / "build")
    return dirs


def _gpu_backend_present() -> bool:
    try:
        return any(d.platform == "gpu" for d in jax.devices("gpu"))
    except RuntimeError:
        return False


_LOADED: dict[str, ctypes.CDLL] = {}


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
    if platform not in _LIBS:
        return False, f"no pfft kernels for platform {platform!r}"
    name, xla_platform, abi_symbol = _LIBS[platform]
    if platform == "cuda" and not _gpu_backend_present():
        return False, "no CUDA backend in this JAX"
    paths = [d / name for d in search_dirs()]
    path = next((p for p in paths if p.is_file()), None)
    if path is None:
        where = ", ".join(str(p) for p in paths)
        return False, f"{name} not built (looked in {where}; run `make kernels`)"
    try:
        lib = ctypes.CDLL(str(path))
        _LOADED[platform] = lib
        abi = getattr(lib, abi_symbol)
        abi.restype = ctypes.c_int
        if abi() != ABI_VERSIONS[platform]:
            return False, (f"{path} has ABI {abi()}, pfft wants {ABI_VERSIONS[platform]}: "
                           "rebuild it (`make kernels`)")
        for target, symbol in {**TARGETS, **PLATFORM_TARGETS[platform]}.items():
            jax.ffi.register_ffi_target(target, jax.ffi.pycapsule(getattr(lib, symbol)),
                                        platform=xla_platform)
    except (OSError, AttributeError) as err:
        return False, f"cannot load {path}: {err}"
    return True, str(path)
