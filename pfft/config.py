"""What pfft runs with here: versions, devices, engines (``pfft.show_config()``,
``python -m pfft``). The text to paste into a bug report."""
from __future__ import annotations

import importlib.metadata
import os
import platform
import sys
from typing import TextIO

from . import settings
from .versions import jax_range_text

__all__ = ["show_config", "config_text"]

_PACKAGES = ("pfft", "jax", "jaxlib", "numpy", "mpi4py", "mpi4jax")
_MPI4JAX_HINT = "pip install --no-build-isolation mpi4jax (docs/mpi.md#install)"
# JAX's variables that change what pfft runs on (pfft's own: pfft.settings)
_JAX_ENV = ("XLA_FLAGS", "JAX_PLATFORMS")
# under the devices where JAX has one CPU device: how to simulate several
CPU_DEVICES_HINT = [
    "  one CPU device: to simulate 8 (pfft distributes over several), set",
    "  XLA_FLAGS=--xla_force_host_platform_device_count=8 before starting Python, or call",
    "  jax.config.update(\"jax_num_cpu_devices\", 8) before JAX starts (before the first",
    "  jax.devices() call or array)",
]


def _version(package: str) -> str:
    # from the metadata: importing mpi4py would start MPI
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return "not installed" + (f" ({_MPI4JAX_HINT})" if package == "mpi4jax" else "")


def _devices() -> list[str]:
    import jax

    lines = [f"default backend: {jax.default_backend()}"]
    for backend in ("cpu", "gpu", "tpu"):
        try:
            devs = jax.devices(backend)
        except RuntimeError:
            continue
        kinds = sorted({d.device_kind for d in devs})
        lines.append(f"{backend}: {len(devs)} device(s), {', '.join(kinds)}")
        if backend == "cpu" and len(devs) == 1 and jax.default_backend() == "cpu":
            lines += CPU_DEVICES_HINT
    return lines


def _engines() -> tuple[list[str], str | None]:
    """One line per engine, and the CPU kernel library in use (None without)."""
    import jax

    from .engines import _kernels, native

    lines, cpu_path = [], None
    for label, platform in (("native cpu (DUCC)", "cpu"), ("native cuda (cuFFT)", "cuda")):
        ok, detail = _kernels.load(platform)
        lines.append(f"{label}: " + (f"available, {detail}" if ok else f"unavailable: {detail}"))
        if ok and platform == "cpu":
            cpu_path = detail
        if platform == "cuda":     # which GPU library, and why not the others
            lines.append("  cuda libraries: " + _kernels.cuda_library_report(loaded=(ok, detail)))
    lines.append("xla (lax.fft): available")
    backend = jax.default_backend()
    name = settings.engine()
    if name == "auto":
        if backend == "cpu":
            auto = "native" if native.available("cpu") else "xla"
        else:
            auto = ("per stage: native (cuFFT) for strided transforms over the leading "
                    "axes, xla for the others" if native.available(backend) else "xla")
        lines.append(f"engine='auto' on {backend}: {auto}")
    else:
        lines.append(f"$PFFT_ENGINE={name}")
    return lines, cpu_path


def config_text() -> str:
    """The report :func:`show_config` prints."""
    import pfft

    lines = [f"pfft {pfft.__version__} ({os.path.dirname(pfft.__file__)})",
             f"python {platform.python_version()} ({sys.executable}), {platform.platform()}",
             "versions: " + ", ".join(f"{p} {_version(p)}" for p in _PACKAGES[1:]),
             jax_range_text(_version("jax"))]
    lines += ["devices:"] + [f"  {line}" for line in _devices()]
    engines, cpu_path = _engines()
    lines += ["engines:"] + [f"  {line}" for line in engines]
    lines.append(f"kernel library: {cpu_path or 'none (the CPU engine is xla)'}")
    lines += ["settings (pfft.settings):"] + [f"  {line}" for line in _settings()]
    env = [f"{k}={os.environ[k]}" for k in _JAX_ENV if os.environ.get(k)]
    lines.append("jax environment: " + (", ".join(env) if env else
                                        "none of " + ", ".join(_JAX_ENV)))
    return "\n".join(lines)


def _settings() -> list[str]:
    """Every pfft variable: those set with their values, then the others."""
    set_ = settings.current()
    lines = [f"{name}={value}" for name, value in set_.items()]
    unset = [v.name for v in settings.VARIABLES if v.name not in set_]
    if unset:
        lines.append("unset: " + ", ".join(unset))
    return lines


def show_config(file: TextIO | None = None) -> None:
    """Print pfft's configuration: versions, devices, engines and kernel library.

    Parameters
    ----------
    file : text stream, optional
        Where to print (default ``sys.stdout``).

    Examples
    --------
    >>> import pfft
    >>> pfft.show_config()                                    # doctest: +SKIP
    pfft 0.1.0 (.../site-packages/pfft)
    python 3.12.1 (...)
    versions: jax 0.12.0.1, jaxlib 0.12.0.1, numpy 2.5.5, ...
    jax 0.12.0.1: inside the tested range 0.10.2 to 0.12.0.1
    ...
    engines:
      native cpu (DUCC): available, .../site-packages/pfft/_lib/libpfft_cpu_v3.so
      native cuda (cuFFT): unavailable: no CUDA backend in this JAX
        cuda libraries: none in this install
      xla (lax.fft): available
      engine='auto' on cpu: native
    kernel library: .../site-packages/pfft/_lib/libpfft_cpu_v3.so
    """
    print(config_text(), file=file or sys.stdout)
