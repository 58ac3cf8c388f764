"""The largest N³ transform that fits on 1 to 256 GPUs, from the blocks a device holds.

A device running a plan holds its input, its output and its temporaries at once: so
many *blocks* (multiples of its part of the forward input, ``N³ × itemsize / p``
bytes). The largest ``N`` that fits on ``p`` GPUs is then the largest integer with

    blocks × N³ × itemsize / p  ≤  fraction × memory

``itemsize`` 8 for a complex64 ``fftn`` (c2c), 4 for a float32 ``rfftn`` (r2c: its
blocks are counted in the real input's). ``fraction`` is the share of a GPU's memory
XLA takes for its arrays: 0.75 by default (``XLA_PYTHON_CLIENT_MEM_FRACTION``).

pfft's blocks per GPU count (:func:`pfft_blocks`): on one device, the one-device plans
measured on a CPU device (``docs/data/memory.csv``: a one-device program holds the
same on a GPU, its input and output); on 2 to 8 GPUs the slab plan, above 8 the pencil
plan, as measured on a GPU (``docs/data/per_device_gpu.csv``: the per-device program of
a p-GPU plan, at the largest N run, the engine pfft chooses, the more of the forward
and the backward program), at the nearest GPU count measured. Beside them, the figures
the other libraries publish, taken as the same at every GPU count: jaxDecomp 4 blocks
(:data:`JAXDECOMP_BLOCKS`), cuFFTMp 3 (:data:`CUFFTMP_BLOCKS`, the top of its range).

No JAX here: ``python -m benchmarks report`` renders ``docs/data/largest_grid.md``
from those two files (:func:`report`).
"""
from __future__ import annotations

import csv
import math
import os

from .common import markdown_table, read_info

__all__ = ["GPUS", "GPU_COUNTS", "FRACTION", "ITEMSIZE", "JAXDECOMP_BLOCKS", "CUFFTMP_BLOCKS",
           "largest_n", "pfft_blocks", "rows", "markdown", "report"]

#: the memory the CUDA driver reports on each GPU (the runs' recorded XLA limit at
#: ``XLA_PYTHON_CLIENT_MEM_FRACTION=0.95``, 75.2 and 132.8 GiB, over 0.95)
GPUS = {"H100 80 GB": 79.2 * 2 ** 30, "H200 141 GB": 139.8 * 2 ** 30}
GPU_COUNTS = tuple(2 ** k for k in range(9))           # 1, 2, 4, ..., 256
#: XLA's default share of a GPU's memory for arrays (XLA_PYTHON_CLIENT_MEM_FRACTION)
FRACTION = 0.75
#: bytes of a point of the forward input
ITEMSIZE = {"c2c": 8, "r2c": 4}
#: jaxDecomp: argument 4 GB + output 4 GB + temporaries 8 GB for a 4 GB result (its
#: benchmark at 2048³ complex64 on 16 A100s). It has no real transform: a real field
#: goes through the complex one, 4 complex64 blocks, 8 of the float32 field's.
JAXDECOMP_BLOCKS = {"c2c": 4.0, "r2c": 8.0}
#: cuFFTMp: the data (in place) and S/n to 2S/n of scratch with its slabs, 2-3 blocks:
#: 3, the conservative end (NVIDIA's docs, below). Its real transform works in place
#: on the padded real array, the same bytes as the real field to within 2/N.
CUFFTMP_BLOCKS = {"c2c": 3.0, "r2c": 3.0}
CUFFTMP_URL = "https://docs.nvidia.com/cuda/cufftmp/usage/memory.html"
#: slab plans up to this many GPUs, pencil plans above
SLAB_UP_TO = 8


def largest_n(blocks: float, devices: int, itemsize: int, memory_bytes: float) -> int:
    """The largest integer ``N`` with ``blocks × N³ × itemsize / devices ≤ memory_bytes``.

    >>> largest_n(2.0, 1, 8, 16 * 1000 ** 3)
    1000
    """
    if blocks <= 0 or devices < 1:
        raise ValueError(f"largest_n: blocks must be positive and devices at least 1, "
                         f"got {blocks}, {devices}")
    fits = lambda n: blocks * itemsize * n ** 3 <= memory_bytes * devices  # noqa: E731
    n = int((memory_bytes * devices / (blocks * itemsize)) ** (1 / 3))
    while n > 0 and not fits(n):                        # float rounding, either way
        n -= 1
    while fits(n + 1):
        n += 1
    return n


def _read(path: str) -> list[dict]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def _gpu_blocks(per_device: list[dict]) -> dict:
    """(kind, plan, devices) -> (kept, donated, grid): the engine pfft chooses (auto),
    at the largest N measured for it, the more of the two directions, in blocks of the
    forward input (a real plan's backward program takes the spectrum in)."""
    out: dict = {}
    rows = [r for r in per_device if r["engine"] == "auto" and r["kept_blocks"] != ""]
    for key in dict.fromkeys((r["kind"], r["plan"], int(r["devices"])) for r in rows):
        mine = [r for r in rows if (r["kind"], r["plan"], int(r["devices"])) == key]
        n = max(int(r["n"]) for r in mine)
        at = [r for r in mine if int(r["n"]) == n]
        forward_mib = n ** 3 / key[2] * ITEMSIZE[key[0]] / 2 ** 20

        def most(column: str) -> float:
            return max(float(r[column]) * float(r["block_mib"]) / forward_mib for r in at)
        out[key] = (most("kept_blocks"), most("donated_blocks"), at[0]["grid"], n)
    return out


def _one_device_blocks(memory_rows: list[dict]) -> dict:
    """kind -> (kept, donated): the one-device plans of ``memory.csv`` (engine auto,
    the more of the two directions)."""
    out = {}
    for kind in ITEMSIZE:
        mine = [r for r in memory_rows if r["case"] == kind and r["grid"] == "1"
                and r["engine"] == "auto"]
        if mine:
            out[kind] = (max(float(r["kept_blocks"]) for r in mine),
                         max(float(r["donated_blocks"]) for r in mine), int(mine[0]["n"]))
    return out


def _nearest(counts, p: int) -> list[int]:
    """The measured GPU counts nearest ``p`` by ratio (both where two are as near)."""
    gap = {c: abs(math.log2(c / p)) for c in counts}
    return [c for c in counts if gap[c] == min(gap.values())]


def pfft_blocks(per_device: list[dict], memory_rows: list[dict]) -> dict:
    """(kind, GPUs) -> dict(kept, donated, plan): pfft's blocks by the rule of the
    module's docstring; where two measured counts are as near, the more blocks."""
    gpu, one = _gpu_blocks(per_device), _one_device_blocks(memory_rows)
    out = {}
    for kind in ITEMSIZE:
        for p in GPU_COUNTS:
            if p == 1:
                if kind in one:
                    kept, donated, n = one[kind]
                    out[kind, p] = dict(kept=kept, donated=donated,
                                        plan=f"one device (CPU, {n}³)")
                continue
            plan = "slab" if p <= SLAB_UP_TO else "pencil"
            counts = sorted(c for k, pl, c in gpu if (k, pl) == (kind, plan))
            if not counts:
                continue
            near = [gpu[kind, plan, c] for c in _nearest(counts, p)]
            kept, donated, grid, n = max(near, key=lambda v: (v[0], v[1]))
            at = int(math.prod(int(g) for g in grid.split("x")))
            where = grid if at == p else f"as on {grid}"
            out[kind, p] = dict(kept=kept, donated=donated, plan=f"{plan} {where}")
    return out


def rows(blocks: dict, kind: str, fraction: float = FRACTION) -> list[dict]:
    """One row per GPU count of ``kind``: pfft's blocks and plan, and for each GPU of
    :data:`GPUS` the largest N of pfft (kept, donated), jaxDecomp and cuFFTMp."""
    out = []
    for p in GPU_COUNTS:
        if (kind, p) not in blocks:
            continue
        b = blocks[kind, p]
        row = dict(gpus=p, plan=b["plan"], blocks=f"{b['kept']:.2f} / {b['donated']:.2f}")
        for gpu, memory in GPUS.items():
            usable = fraction * memory
            for name, count in (("kept", b["kept"]), ("donated", b["donated"]),
                                ("jaxdecomp", JAXDECOMP_BLOCKS[kind]),
                                ("cufftmp", CUFFTMP_BLOCKS[kind])):
                row[f"{gpu} {name}"] = largest_n(count, p, ITEMSIZE[kind], usable)
        out.append(row)
    return out


def markdown(blocks: dict, kind: str, fraction: float = FRACTION) -> str:
    """The table of :func:`rows`; pfft's donated columns only where some row's N
    differs from the kept one's."""
    table = rows(blocks, kind, fraction)
    donated = any(r[f"{g} kept"] != r[f"{g} donated"] for r in table for g in GPUS)
    columns = [("gpus", "GPUs", "{}"), ("plan", "pfft's plan", "{}"),
               ("blocks", "pfft blocks, kept / donated", "{}")]
    for gpu in GPUS:
        short = gpu.split()[0]
        columns += [(f"{gpu} kept", f"{short}: **pfft**", "{}³"),
                    *([(f"{gpu} donated", f"{short}: pfft donated", "{}³")] if donated else []),
                    (f"{gpu} jaxdecomp", f"{short}: jaxDecomp", "{}³"),
                    (f"{gpu} cufftmp", f"{short}: cuFFTMp", "{}³")]
    return markdown_table(table, columns)


#: the docs' tables: data file in docs/data -> what report() makes of it
DOCS = {"per_device_gpu.csv": ("largest_grid.md",)}


def report(data: str, figures: str) -> list[str]:
    """``data/largest_grid.md`` from ``data/per_device_gpu.csv`` (GPU counts 2 to 256)
    and ``data/memory.csv`` (one device), where both are there."""
    per_device, memory = (os.path.join(data, n) for n in ("per_device_gpu.csv", "memory.csv"))
    if not (os.path.isfile(per_device) and os.path.isfile(memory)):
        return []
    gpu_rows = _read(per_device)
    blocks = pfft_blocks(gpu_rows, _read(memory))
    meta, info = gpu_rows[0], read_info(memory)
    usable = ", ".join(f"{g}: {m / 2 ** 30:.1f} GiB ({FRACTION * m / 2 ** 30:.1f} GiB for "
                       f"arrays)" for g, m in GPUS.items())
    parts = []
    for kind, title in (("c2c", "complex64 `fftn` (c2c)"), ("r2c", "float32 `rfftn` (r2c)")):
        parts += [f"**{title}**: the largest N³ per GPU count and GPU", markdown(blocks, kind)]
    donated = any("pfft donated" in part for part in parts)
    parts.append(
        f"*Largest integer N with blocks × N³ × {ITEMSIZE['c2c']} / p (c2c) or "
        f"× {ITEMSIZE['r2c']} / p (r2c) bytes at most {FRACTION:.0%} of a GPU's memory "
        f"(XLA's default `XLA_PYTHON_CLIENT_MEM_FRACTION`; {usable}). pfft: "
        f"its input kept (the default)" + (
            "; *pfft donated*: the input donated (`jax.jit(..., donate_argnums=0)`)" if donated
            else "; donating it (`jax.jit(..., donate_argnums=0)`) holds as many blocks "
                 "here (the blocks column)") + f"; on one device the one-device plan measured on "
        f"a CPU device (`{info.get('command', 'python -m benchmarks memory')}`, "
        f"{info.get('date', '')}; taken as the same on a GPU: its input and its output), on 2–"
        f"{SLAB_UP_TO} GPUs the slab plan, above {SLAB_UP_TO} the pencil plan, as measured "
        f"on {meta['device']} at {max(int(r['n']) for r in gpu_rows)}³ "
        f"(`{meta['command']}`, {meta['date']}, jax {meta['jax']}; engine auto, the more "
        f"of forward and backward), at the nearest GPU count measured. jaxDecomp: 4 blocks "
        f"(its own benchmark: an 8 GB temporary for a 4 GB result at 2048³ complex64 on "
        f"16 A100s; no real transform: a real field through the complex one, 8 blocks of "
        f"the float32 field). cuFFTMp: 3 blocks, the conservative end of the 2–3 its "
        f"documentation gives for its slabs ({CUFFTMP_URL}). Rendered by "
        f"`python -m benchmarks report`.*")
    path = os.path.join(data, "largest_grid.md")
    with open(path, "w") as f:
        f.write("\n\n".join(parts) + "\n")
    return [path]
