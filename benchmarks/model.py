"""A cost model for distributed 3D FFTs (``/work/shared/DESIGN.md``, "Cost model").

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
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

__all__ = ["predict", "predict_system", "System", "SYSTEMS", "exchange_axes",
           "spectral_bytes"]


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
        grid = tuple(grid)
        stride = math.prod(grid[axis + 1:])
        p = grid[axis]
        members = [k * stride for k in range(p)]             # the group of device 0
        node = [m // self.gpus_per_node for m in members]
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


if __name__ == "__main__":
    print(system_table())
