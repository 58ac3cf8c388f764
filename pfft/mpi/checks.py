"""Environment checks for the MPI transport, and the abort-on-exception hook.

- One JAX device per rank: a process that sees several local devices would put
  every rank's block on its first device; that is an error (:func:`check_local_devices`).
- GPUs: mpi4jax passes device buffers to MPI only with ``MPI4JAX_USE_CUDA_MPI=1`` and
  a CUDA-aware MPI; otherwise every collective stages through host memory. pfft
  warns when a GPU run will stage, or when the variable is set over an MPI that says
  it is not CUDA-aware (:func:`cuda_mpi_problem`).
- A rank that dies of an exception while the others wait in a collective would hang
  the job: :func:`install_excepthook` makes it call ``MPI_Abort``.
"""
from __future__ import annotations

import ctypes
import os
import sys
import time
import warnings

import jax

__all__ = ["MPITransportWarning", "check_environment", "check_local_devices",
           "check_cuda_mpi", "cuda_mpi_problem", "mpi_cuda_support", "install_excepthook"]

GPU_PLATFORMS = ("gpu", "cuda", "rocm")


class MPITransportWarning(UserWarning):
    """A set-up that works, but slowly or riskily, with the MPI transport."""


def check_environment() -> None:
    """Run every check (called by :class:`pfft.mpi.ProcessGrid`)."""
    check_local_devices()
    check_cuda_mpi()


def check_local_devices(devices=None) -> None:
    """Raise if this process sees more than one local JAX device.

    The MPI transport runs one rank per device and computes on the process's default
    device; with several local devices every rank would use the first one (on a GPU
    node: all ranks on GPU 0). Give each rank one device (``CUDA_VISIBLE_DEVICES`` per
    rank, e.g. from ``$OMPI_COMM_WORLD_LOCAL_RANK``/``$MPI_LOCALRANKID``; on CPU do
    not set ``--xla_force_host_platform_device_count``), or use the XLA transport
    (:func:`pfft.plan` with a mesh over all of them).

    Raises
    ------
    RuntimeError
        With the device list and the fix.
    """
    devices = jax.local_devices() if devices is None else list(devices)
    if len(devices) > 1:
        raise RuntimeError(
            f"pfft.mpi: this process sees {len(devices)} local JAX devices "
            f"({', '.join(str(d) for d in devices[:4])}{', ...' if len(devices) > 4 else ''}); "
            f"the MPI transport needs one device per rank. Give each rank one device "
            f"(CUDA_VISIBLE_DEVICES per rank; on CPU drop "
            f"--xla_force_host_platform_device_count from XLA_FLAGS), or use pfft.plan with "
            f"a mesh (XLA transport) for the devices of one process.")


def mpi_cuda_support() -> bool | None:
    """Whether the MPI library in this process says it is CUDA-aware (``None``: cannot tell).

    Asks ``MPIX_Query_cuda_support`` (MPICH >= 4, Open MPI >= 4) of the ``libmpi``
    mapped into this process.
    """
    try:
        with open("/proc/self/maps") as f:
            paths = {line.split()[-1] for line in f if "libmpi" in line and "/" in line}
    except OSError:
        return None
    for path in sorted(paths):
        try:
            query = getattr(ctypes.CDLL(path), "MPIX_Query_cuda_support")
        except (OSError, AttributeError):
            continue
        return bool(query())
    return None


def _truthy(value: str) -> bool:
    return value.lower() in ("1", "true", "on")


def _falsy(value: str) -> bool:
    return value.lower() in ("0", "false", "off")


def cuda_mpi_problem(platform: str, use_cuda_mpi: str, mpi_cuda: bool | None) -> str | None:
    """What is wrong with MPI on this platform, or ``None``.

    Parameters
    ----------
    platform
        JAX's backend platform (``jax.default_backend()``).
    use_cuda_mpi
        The value of ``MPI4JAX_USE_CUDA_MPI`` (``""`` if unset).
    mpi_cuda
        :func:`mpi_cuda_support`'s answer.
    """
    if platform not in GPU_PLATFORMS:
        return None
    if _truthy(use_cuda_mpi):
        if mpi_cuda is False:
            return ("pfft.mpi: MPI4JAX_USE_CUDA_MPI=1, but this MPI library reports no CUDA "
                    "support (MPIX_Query_cuda_support() == 0): passing GPU buffers to it will "
                    "fail or corrupt data. Use a CUDA-aware MPI, or unset MPI4JAX_USE_CUDA_MPI "
                    "to stage through host memory.")
        return None
    if _falsy(use_cuda_mpi):                 # staging through the host, chosen explicitly
        return None
    aware = ("this MPI reports CUDA support" if mpi_cuda else
             "this MPI is not CUDA-aware" if mpi_cuda is False else
             "this MPI's CUDA support is unknown")
    return ("pfft.mpi: GPU run without MPI4JAX_USE_CUDA_MPI=1 (" + aware + "): every "
            "all-to-all copies its block GPU -> host -> MPI -> host -> GPU, which can cost more "
            "than the transform. With a CUDA-aware MPI set MPI4JAX_USE_CUDA_MPI=1; set it to 0 "
            "to accept host staging and silence this warning.")


def check_cuda_mpi() -> None:
    """Warn (:class:`MPITransportWarning`) if a GPU run's MPI set-up stages or is unsafe."""
    platform = jax.default_backend()
    if platform not in GPU_PLATFORMS:
        return
    problem = cuda_mpi_problem(platform, os.environ.get("MPI4JAX_USE_CUDA_MPI", ""),
                               mpi_cuda_support())
    if problem:
        warnings.warn(problem, MPITransportWarning, stacklevel=3)


def install_excepthook(comm=None) -> None:
    """Make an uncaught exception on any rank abort the whole MPI job.

    The previous hook runs first (the traceback is printed), then a one-line note
    names the rank and ``comm.Abort(1)`` (default ``COMM_WORLD``) ends every rank,
    including those blocked in a collective. Installed once; a no-op on one rank.
    """
    if getattr(sys.excepthook, "_pfft_mpi", False):
        return
    previous = sys.excepthook

    def hook(kind, value, tb):
        previous(kind, value, tb)
        from mpi4py import MPI
        world = comm if comm is not None else MPI.COMM_WORLD
        if MPI.Is_initialized() and not MPI.Is_finalized() and world.Get_size() > 1:
            sys.stdout.flush()
            sys.stderr.write(f"pfft.mpi: uncaught {kind.__name__} on rank {world.Get_rank()} of "
                             f"{world.Get_size()}; calling MPI_Abort so that the other ranks "
                             f"do not wait forever in a collective\n")
            sys.stderr.flush()
            # MPI_Abort ends the job at once: give mpirun a moment to forward this
            # rank's traceback and note first (a CI run lost both with mpich's mpirun)
            time.sleep(0.5)
            world.Abort(1)

    hook._pfft_mpi = True
    sys.excepthook = hook
