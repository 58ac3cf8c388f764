"""A cost model for distributed 3D FFTs (docs/performance.md, "The cost model").

For an array of ``B`` bytes on ``P`` devices the local volume is ``V = B / P``:

- the local FFTs make about three passes over ``V`` (memory-bound; one per axis);
- each all-to-all over a grid axis of size ``p`` moves ``(1 - 1/p)·V`` per device;
- each pack before and unpack after an all-to-all is one more pass over ``V``.

A *pass* reads ``V`` and writes ``V``; ``mem_bw`` is the **copy bandwidth**, array
bytes copied per second (about half a GPU's quoted HBM bandwidth, which counts reads
and writes). ``a2a_bw`` is the bytes per second one device sends (and at the same
time receives) in an all-to-all. :func:`predict` takes both as numbers (measured,
or a system's datasheet); :func:`predict_system` derives each grid axis's all-to-all
bandwidth from a node topology (NVLink inside a node, InfiniBand between nodes).

    >>> t = predict((256, 256, 256), (2, 2), 8, mem_bw=10e9, a2a_bw=5e9)
    >>> round(t["total_s"] * 1e3, 1)                     # ms
    30.2

With measurements of the device's own work (``benchmarks.per_device``: the per-device
program of a plan, run on one GPU with each transfer replaced by a copy), the model
adds only the transfers: :func:`per_device_prediction` takes a measured row's local work
(its time less its copies) and each exchange's bytes, and models the all-to-alls with
published NCCL figures (:data:`H100_NCCL`), in series with the local work (what pfft's
programs run) and, as a model only, overlapped with it (:func:`overlapped`).
:data:`ANCHORS` are published times to compare with.

This module is the model alone and imports no other module of the benchmarks. Its
command line, ``python -m benchmarks.model`` (:mod:`benchmarks.model`, which also
re-exports these names), prints :func:`system_table`, or with ``--per-device
results/per_device_gpu.csv`` the tables of :mod:`benchmarks.model_report` (every column
says whether its figures are measured or modelled).
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Sequence

__all__ = ["predict", "predict_system", "System", "SYSTEMS", "exchange_axes",
           "spectral_bytes", "H100_NCCL", "Anchor", "ANCHORS", "GOAL", "exchange_seconds",
           "overlapped", "per_device_prediction", "largest_n", "system_table", "model_grid"]


def _shape(n) -> tuple[int, ...]:
    return (int(n),) * 3 if isinstance(n, (int,)) else tuple(int(v) for v in n)


def spectral_bytes(shape, itemsize: int, kind: str = "c2c") -> int:
    """Bytes of the complex array a transform works on (``itemsize`` of the complex
    dtype): the whole array for ``c2c``, the half spectrum ``(..., n//2 + 1)`` for ``r2c``."""
    shape = _shape(shape)
    if kind == "r2c":
        shape = shape[:-1] + (shape[-1] // 2 + 1,)
    return itemsize * math.prod(shape)


def exchange_axes(grid: Sequence[int], kind: str = "c2c") -> list:
    """Grid-axis index of each all-to-all of pfft's plan (a tuple of indices for one
    over a group of grid axes): none on one device, one for a slab, two for a pencil
    grid (a real transform with numpy's spectrum layout moves its second over both
    grid axes at once, keeping the halved axis whole)."""
    axes = [i for i, p in enumerate(grid) if p > 1]
    if len(axes) <= 1:
        return axes
    return [axes[1], tuple(axes)] if kind == "r2c" else [axes[1], axes[0]]


def predict(shape, grid: Sequence[int], itemsize: int, *, mem_bw: float,
            a2a_bw: float | Sequence[float], kind: str = "c2c",
            exchanges: Sequence | None = None, fft_passes: float = 3.0,
            passes_per_exchange: float = 2.0) -> dict:
    """Predicted time of one forward transform, in seconds, and its parts.

    Parameters
    ----------
    shape
        ``N`` (an ``N³`` grid) or a 3-tuple.
    grid
        Device grid: ``(1,)``, ``(p,)`` (slab) or ``(p, q)`` (pencil).
    itemsize
        Bytes per complex element (8 for complex64, 16 for complex128).
    mem_bw
        Copy bandwidth per device, array bytes per second.
    a2a_bw
        All-to-all bandwidth per device (bytes sent per second), one number or one
        per grid axis.
    kind
        ``"c2c"`` or ``"r2c"`` (works on the half spectrum: about half the bytes).
    exchanges
        Grid-axis index of each all-to-all (a tuple for one over a group of grid
        axes); default :func:`exchange_axes`.
    fft_passes, passes_per_exchange
        Passes over the local volume for the local FFTs (3) and per exchange (pack
        and unpack: 2).

    Returns
    -------
    dict
        ``volume_bytes`` (per device), ``fft_s``, ``pack_s``, ``comm_s``, ``total_s``.
    """
    grid = tuple(int(p) for p in grid)
    devices = math.prod(grid)
    v = spectral_bytes(shape, itemsize, kind) / devices
    if exchanges is None:
        exchanges = exchange_axes(grid, kind)
    bws = list(a2a_bw) if isinstance(a2a_bw, (list, tuple)) else [a2a_bw] * len(grid)
    pass_s = v / mem_bw
    def cost(a):             # one grid axis, or a group: its devices, its slowest link
        group = a if isinstance(a, tuple) else (a,)
        p = math.prod(grid[i] for i in group)
        return (1 - 1 / p) * v / min(bws[i] for i in group)
    comm = sum(cost(a) for a in exchanges)
    fft = fft_passes * pass_s
    pack = passes_per_exchange * len(exchanges) * pass_s
    return {"volume_bytes": v, "fft_s": fft, "pack_s": pack, "comm_s": comm,
            "total_s": fft + pack + comm}


@dataclass(frozen=True)
class System:
    """A multi-GPU system: per-GPU bandwidths and how many GPUs share a node.

    ``hbm_bw`` is the quoted memory bandwidth (reads + writes), ``nvlink_bw`` the
    per-GPU NVLink bandwidth per direction, ``ib_bw`` the per-GPU network bandwidth
    per direction between nodes (one NIC per GPU, as on a DGX H100).
    """

    name: str
    gpus_per_node: int
    hbm_bw: float
    nvlink_bw: float
    ib_bw: float
    fft_efficiency: float = 1.0   # fraction of the copy bandwidth the local FFT passes reach

    def axis_bandwidth(self, grid: Sequence[int], axis: int) -> float:
        """Effective all-to-all bandwidth over ``grid``'s axis ``axis``: devices are laid
        out row-major (the last grid axis fastest), nodes are consecutive blocks of
        ``gpus_per_node`` devices; bytes to peers on the same node go over NVLink, the
        rest over the network, concurrently; the slower of the two sets the time."""
        return self.group_bandwidth(grid, (axis,))

    def group_bandwidth(self, grid: Sequence[int], axes: Sequence[int]) -> float:
        """:meth:`axis_bandwidth` of an all-to-all over several grid axes at once (the
        devices that differ only along ``axes``).

        >>> SYSTEMS["2x8 H100, 400G IB"].group_bandwidth((2, 8), (0, 1)) / 1e9
        93.75
        """
        grid = tuple(grid)
        sizes = [grid[a] for a in axes]
        p = math.prod(sizes)
        members = [sum(i * math.prod(grid[a + 1:]) for i, a in zip(index, axes))
                   for index in itertools.product(*(range(s) for s in sizes))]
        node = [m // self.gpus_per_node for m in members]   # the group of device 0
        off = sum(n != node[0] for n in node) / p             # fraction of V sent off-node
        on = (1 - 1 / p) - off
        t = max(on / self.nvlink_bw, off / self.ib_bw if off else 0.0)
        return (1 - 1 / p) / t if t else math.inf


def predict_system(shape, grid: Sequence[int], itemsize: int, system: System, *,
                   kind: str = "c2c") -> dict:
    """:func:`predict` with ``system``'s bandwidths (copy bandwidth = HBM / 2)."""
    grid = tuple(grid)
    bws = [system.axis_bandwidth(grid, a) for a in range(len(grid))]
    return predict(shape, grid, itemsize, mem_bw=system.fft_efficiency * system.hbm_bw / 2,
                   a2a_bw=bws, kind=kind)


SYSTEMS = {
    # 8x H100 SXM in one node: NVLink 4 at 450 GB/s per direction, HBM3 3.35 TB/s (3 used)
    "8xH100 NVLink": System("8xH100 NVLink", 8, 3.0e12, 450e9, 50e9),
    # 2 such nodes, 8 GPUs each, one 400 Gb/s (50 GB/s) InfiniBand NIC per GPU
    "2x8 H100, 400G IB": System("2x8 H100, 400G IB", 8, 3.0e12, 450e9, 50e9),
    # 2 nodes with a single 400 Gb/s NIC per node shared by its 8 GPUs
    "2x8 H100, 1 NIC/node": System("2x8 H100, 1 NIC/node", 8, 3.0e12, 450e9, 50e9 / 8),
}


#: Published NCCL all-to-all bandwidths per GPU (bytes sent per second while as many
#: arrive): 370 GB/s over NVLink inside an 8-GPU H100 node, 48 GB/s over NDR InfiniBand
#: between nodes (one NIC per GPU). ``hbm_bw`` is the H100 SXM datasheet's (unused where
#: the local work is measured).
H100_NCCL = System("H100: NCCL all-to-all 370 GB/s per GPU on NVLink (8 a node), 48 GB/s "
                   "on NDR InfiniBand", 8, 3.35e12, 370e9, 48e9)


@dataclass(frozen=True)
class Anchor:
    """A published time (ms) of a forward complex-to-complex ``n³`` transform in single
    precision on ``gpus`` H100s, read off a published plot (±15 %)."""

    label: str
    n: int
    gpus: int
    ms: float


#: What pfft's predictions are compared with. The floors are the all-to-alls alone on
#: 8 H100s at 370 GB/s: one exchange of a 1 GiB block (a slab), two (a pencil).
ANCHORS = (Anchor("cuFFTMp", 1024, 8, 4.5),
           Anchor("cuFFTMp", 2048, 256, 6.8),
           Anchor("JAX custom_partitioning + jnp.fft", 1024, 8, 7.5),
           Anchor("jaxDecomp", 1024, 4, 13.5),
           Anchor("one-exchange (slab) floor", 1024, 8, 2.5),
           Anchor("two-exchange (pencil) floor", 1024, 8, 5.1))
#: the goal: predicted pfft no slower than this
GOAL = ANCHORS[0]


def exchange_seconds(grid: Sequence[int], groups: Sequence[Sequence[int]],
                     nbytes: Sequence[float], system: System = H100_NCCL) -> list[float]:
    """Modelled time of each all-to-all of a plan on ``grid``: the one over grid axes
    ``groups[i]`` sends ``(1 - 1/p)`` of its ``nbytes[i]`` (the block that goes into it,
    per device) at :meth:`System.group_bandwidth`.

    >>> [round(t * 1e3, 2) for t in exchange_seconds((8,), [(0,)], [2 ** 30])]
    [2.54]
    """
    out = []
    for axes, size in zip(groups, nbytes):
        p = math.prod(grid[a] for a in axes)
        out.append((1 - 1 / p) * size / system.group_bandwidth(grid, axes) if p > 1 else 0.0)
    return out


def overlapped(local_s: float, comm_s: float, chunks: int = 4) -> float:
    """Time of local work and exchanges overlapped, as if both were cut into ``chunks``
    pieces with each piece's exchange beside the next piece's local work: the longer of
    the two, plus the shorter one's first (or last) piece, which nothing hides. A model
    of the best such an overlap could do, not a program pfft runs (its programs run
    the local work and the exchanges in series).

    >>> overlapped(4.0, 2.0, chunks=4)
    4.5
    """
    if chunks < 1:
        raise ValueError(f"chunks must be at least 1, got {chunks}")
    return max(local_s, comm_s) + min(local_s, comm_s) / chunks


def per_device_prediction(row: dict, system: System = H100_NCCL, chunks: int = 4) -> dict:
    """Predicted time of a plan from a ``benchmarks.per_device`` row (its columns
    ``grid``, ``exchange_groups``, ``exchange_mib``, ``local_ms``).

    Parameters
    ----------
    row
        The measured row.
    system
        The all-to-alls' bandwidths.
    chunks
        Pieces of the modelled overlap (:func:`overlapped`).

    Returns
    -------
    dict
        ``local_s`` (measured: the per-device program less its stand-in copies, at
        least 0), ``exchange_s`` (modelled, one per all-to-all), ``comm_s`` (their
        sum), ``serial_s`` (local work then exchanges: the program's time, its
        collectives not overlapping it) and ``overlap_s`` (:func:`overlapped` of the
        local work and the all-to-alls in ``chunks`` pieces, a model; never above
        ``serial_s``).

    Raises
    ------
    ValueError
        Where the exchanges' groups and sizes differ in number.
    """
    grid = tuple(int(v) for v in str(row["grid"]).split("x"))
    groups = [tuple(int(a) for a in g.split("+")) for g in str(row["exchange_groups"]).split(";")
              if g != ""]
    nbytes = [float(m) * 2 ** 20 for m in str(row["exchange_mib"]).split(";") if m != ""]
    if len(groups) != len(nbytes):
        raise ValueError(f"{len(groups)} exchanges but {len(nbytes)} sizes in {row!r}")
    exchange = exchange_seconds(grid, groups, nbytes, system)
    # the program's time less its copies timed apart: below the timing's resolution
    # (blocks of a few MiB) the difference can come out negative, and counts as none
    local, comm = max(float(row["local_ms"]), 0.0) * 1e-3, sum(exchange)
    return {"local_s": local, "exchange_s": exchange, "comm_s": comm,
            "serial_s": local + comm,
            "overlap_s": min(local + comm, overlapped(local, comm, chunks))}


def largest_n(blocks: float, devices: int, itemsize: int, memory_bytes: float,
              step: int = 1) -> int:
    """The largest multiple ``N`` of ``step`` whose ``N³`` transform fits on ``devices``
    devices of ``memory_bytes`` each, where a device needs ``blocks`` times its input
    block (``itemsize`` bytes a point); 0 if none does.

    >>> largest_n(4.0, 8, 8, 80e9, step=8)
    2712
    """
    if blocks <= 0 or step < 1:
        raise ValueError(f"largest_n: blocks must be positive and step at least 1, got "
                         f"{blocks}, {step}")
    n = int((memory_bytes * devices / (blocks * itemsize)) ** (1 / 3)) // step * step
    while n > 0 and blocks * itemsize * n ** 3 / devices > memory_bytes:   # rounding
        n -= step
    while blocks * itemsize * (n + step) ** 3 / devices <= memory_bytes:
        n += step
    return n


def system_table(sizes=(512, 1024, 2048), itemsize: int = 8) -> str:
    """Markdown table of predictions for :data:`SYSTEMS` (``python -m benchmarks.model``)."""
    lines = ["| system | GPUs | grid | N³ | V per GPU (MiB) | FFT passes (ms) | pack/unpack (ms) "
             "| all-to-all (ms) | total (ms) | comm share |", "|" + "---|" * 10]
    layouts = {"8xH100 NVLink": [(8,), (2, 4)],
               "2x8 H100, 400G IB": [(16,), (2, 8), (4, 4)],
               "2x8 H100, 1 NIC/node": [(16,), (2, 8)]}
    for name, system in SYSTEMS.items():
        for grid in layouts[name]:
            for n in sizes:
                r = predict_system(n, grid, itemsize, system)
                lines.append(
                    f"| {name} | {math.prod(grid)} | {'x'.join(map(str, grid))} | {n}³ | "
                    f"{r['volume_bytes'] / 2**20:.0f} | {r['fft_s'] * 1e3:.2f} | "
                    f"{r['pack_s'] * 1e3:.2f} | {r['comm_s'] * 1e3:.2f} | "
                    f"{r['total_s'] * 1e3:.2f} | {r['comm_s'] / r['total_s']:.0%} |")
    return "\n".join(lines)


def model_grid(gpus: int) -> tuple[int, int]:
    """The balanced 2-D grid ``pfft.dims_create`` gives (the smaller size first)."""
    best = max(d for d in range(1, math.isqrt(gpus) + 1) if gpus % d == 0)
    return (best, gpus // best)
