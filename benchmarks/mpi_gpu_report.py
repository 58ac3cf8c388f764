"""The table of :mod:`benchmarks.mpi_gpu` (pfft.mpi with several ranks sharing one device)
and the docs' copy of it: rendering only (no JAX, no MPI), so that ``python -m benchmarks
report`` renders ``docs/data/gpu_mpi.md`` from a GPU run's ``mpi_gpu.csv`` (and
``mpi_gpu_cuda_mpi.csv``, the run with device buffers where the MPI is CUDA-aware) and
the ``.json`` beside each (the run's machine, date and command).
"""
from __future__ import annotations

import os

from . import common

__all__ = ["table", "NOTE", "report", "DOCS"]

NOTE = ("pfft.mpi: the slowest rank's time per forward transform, each call after a "
        "barrier; 1 process: rank 0 alone on the same device while the other ranks wait. "
        "Median of the repeats after warm-up calls. Errors: relative L2 over the global "
        "array, against numpy in float64 (— above the check size) and of "
        "backward(forward(x)) against x. The ranks share one device, so this measures the "
        "transport, not scaling.")


def _f(v, fmt: str) -> str:
    return "—" if v is None or v == "" else format(float(v), fmt)


def table(rows: list[dict], header: str = "") -> str:
    """The Markdown table of ``rows`` (:func:`benchmarks.mpi_gpu.bench`'s, or a CSV's),
    under ``header`` where given, with the transport and what the columns are."""
    lines = ([header, ""] if header else []) + [
        "| size | dtype | ranks on one device | grid | engine | pfft.mpi (ms) | "
        "1 process: jnp.fft.fftn (ms) | 1 process: pfft 1x1, same engine (ms) | "
        "ratio pfft.mpi / jnp | rel. L2 error | round-trip error |",
        "|" + "---|" * 11]
    for r in rows:
        lines.append(f"| {r['n']}³ | {r['dtype']} | {r['ranks']} | {r['grid']} | {r['engine']} | "
                     f"{_f(r['mpi_ms'], '.2f')} | {_f(r['one_jnp_ms'], '.2f')} | "
                     f"{_f(r['one_pfft_ms'], '.2f')} | {_f(r['ratio'], '.2f')} | "
                     f"{_f(r['rel_err'], '.1e')} | {_f(r['round_trip_err'], '.1e')} |")
    transports = list(dict.fromkeys(r["transport"] for r in rows)) or ["?"]
    lines += ["", f"MPI transport: {'; '.join(transports)}. " + NOTE]
    return "\n".join(lines)


#: the GPU run's data in docs/data and the table it gives
DOCS = {"mpi_gpu.csv": ("gpu_mpi.md",)}
RUNS = ("mpi_gpu.csv", "mpi_gpu_cuda_mpi.csv")


def report(data: str, figures: str) -> list[str]:
    """``data/gpu_mpi.md``: the rows of a GPU run's ``mpi_gpu.csv`` (and
    ``mpi_gpu_cuda_mpi.csv``) in ``data``, with each run's caption; nothing where there
    is none."""
    paths = [os.path.join(data, name) for name in RUNS
             if os.path.isfile(os.path.join(data, name))]
    if not paths:
        return []
    rows = [r for p in paths for r in common.read_table_rows(
        p, text=("dtype", "grid", "engine", "transport", "device"), ints=("n", "ranks"))]
    captions = [common.caption(common.read_info(p)) for p in paths]
    out = os.path.join(data, "gpu_mpi.md")
    with open(out, "w") as f:
        f.write("\n\n".join([table(rows)] + captions) + "\n")
    return [out]
