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
published NCCL figures (:data:`H100_NCCL`), in series with the local work and
overlapped with it (:func:`overlapped`). For a program pipelined with pfft's
``pipeline=k`` the local work is that program's, measured, and its stages outside the
windows are measured apart; only the overlap is modelled (one GPU cannot show whether
XLA runs a piece's all-to-all beside the next piece's transforms).
:data:`ANCHORS` are published times to compare with. ``python -m benchmarks.model
--per-device results/per_device_gpu.csv`` prints the tables (:func:`per_device_report`;
every column says whether its figures are measured or modelled).
"""
from __future__ import annotations

import argparse
import itertools
import math
from dataclasses import dataclass
from typing import Sequence

from .common import markdown_table, read_results, save_plot

__all__ = ["predict", "predict_system", "System", "SYSTEMS", "exchange_axes",
           "spectral_bytes", "H100_NCCL", "Anchor", "ANCHORS", "GOAL", "exchange_seconds",
           "overlapped", "per_device_prediction", "largest_n", "measured_table",
           "per_device_report", "per_device_plot", "load_per_device"]


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
    """Time of local work and exchanges overlapped in a pipeline of ``chunks`` pieces
    (each piece's exchange beside the next piece's local work): the longer of the two,
    plus the shorter one's first (or last) piece, which nothing hides. It models the
    best a pipeline can do, the pieces' transfers running concurrently with the
    transforms; it takes all of ``local_s`` as cut into the pieces, so local work that
    runs on the whole block (a pipelined chain's stages outside its windows) is to be
    added apart (:func:`per_device_prediction` does).

    >>> overlapped(4.0, 2.0, chunks=4)
    4.5
    """
    if chunks < 1:
        raise ValueError(f"chunks must be at least 1, got {chunks}")
    return max(local_s, comm_s) + min(local_s, comm_s) / chunks


def _pipeline(row: dict) -> int:
    """A row's ``pipeline`` (1 where blank or absent: runs from before the option)."""
    v = row.get("pipeline")
    if v in ("", None) or (isinstance(v, float) and math.isnan(v)):
        return 1
    return int(v)


def per_device_prediction(row: dict, system: System = H100_NCCL, chunks: int = 4) -> dict:
    """Predicted time of a plan from a ``benchmarks.per_device`` row (its columns
    ``grid``, ``exchange_groups``, ``exchange_mib``, ``local_ms``; ``pipeline`` and
    ``outside_ms`` for a pipelined program).

    Parameters
    ----------
    row
        The measured row.
    system
        The all-to-alls' bandwidths.
    chunks
        Pieces of the modelled pipeline of an unpipelined row (``pipeline`` 1).

    Returns
    -------
    dict
        ``local_s`` (measured: the per-device program less its stand-in copies, at
        least 0), ``exchange_s`` (modelled, one per all-to-all), ``comm_s`` (their
        sum), ``serial_s`` (local work then exchanges: the program's time where
        collectives do not overlap), ``pipeline``, ``outside_s`` (measured: the
        pipelined program's local work outside its windows; NaN for pipeline 1),
        ``overlap_s`` (never above ``serial_s``) and ``overlap_kind``. For pipeline
        ``k > 1`` (``"measured-pipeline"``): ``outside_s`` plus :func:`overlapped` of
        the rest of the local work and the all-to-alls in ``k`` pieces. For pipeline 1
        (``"model"``): :func:`overlapped` of all the local work in ``chunks`` pieces, a
        model of a pipeline of the unpipelined program's local work.

    Raises
    ------
    ValueError
        Where the exchanges' groups and sizes differ in number, or a pipelined row
        lacks ``outside_ms``.
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
    k = _pipeline(row)
    if k > 1:
        outside = _num(row.get("outside_ms"))
        if math.isnan(outside):
            raise ValueError(f"a pipelined row (pipeline {k}) without outside_ms: {row!r}")
        outside = min(max(outside * 1e-3, 0.0), local)       # within the timing's noise
        overlap, kind = outside + overlapped(local - outside, comm, k), "measured-pipeline"
    else:
        outside, overlap, kind = math.nan, overlapped(local, comm, chunks), "model"
    return {"local_s": local, "exchange_s": exchange, "comm_s": comm,
            "serial_s": local + comm, "pipeline": k, "outside_s": outside,
            "overlap_s": min(local + comm, overlap), "overlap_kind": kind}


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


# -- tables and a plot of per-device measurements and their predictions ------------------
# Tables and a plot of per-device measurements and the predictions made from them.
#
# The measured table is :mod:`benchmarks.per_device`'s (every figure measured on one
# device). :func:`report` adds what :mod:`benchmarks.model` predicts from such a CSV: each
# plan's time on H100s with the all-to-alls modelled from published NCCL figures, beside
# published times of other libraries, and the largest ``N³`` that fits. Every column
# says whether its figures are measured or modelled. Needs no JAX: it only reads the CSV.
#
#     python -m benchmarks.model --per-device results/per_device_gpu.csv \\
#         --markdown docs/data/gpu_model.md --plot docs/figures/gpu_model.png

TEXT_COLUMNS = ("platform", "device", "device_memory_gib", "date", "jax", "command", "plan",
                "grid", "kind", "direction", "engine", "fft_engines", "exchange_groups", "exchange_sizes",
                "exchange_mib", "status")
ITEMSIZE = {"c2c": 8, "r2c": 4}           # bytes of an input point: complex64, float32
MEMORY_GOAL = (2.5, 1.5)                  # blocks a device may need: kept, donated


def load_per_device(path: str) -> list[dict]:
    """The rows of a ``per_device_<platform>.csv`` (blank figures as NaN; ``pipeline``
    1 and ``direction`` forward in a CSV from before those options)."""
    rows = read_results(path, text=TEXT_COLUMNS, ints=("n", "devices", "pipeline"))
    for r in rows:
        r.setdefault("pipeline", 1)
        r["direction"] = r.get("direction") or "forward"
    return rows


def _forward(rows: list[dict]) -> list[dict]:
    """The rows of forward programs (what the published times measure)."""
    return [r for r in rows if r["direction"] == "forward"]


def _num(v) -> float:
    return math.nan if v in ("", None) else float(v)


def _ok(r: dict) -> bool:
    return r["status"] == "ok" and not math.isnan(_num(r.get("local_ms")))


def _exchange_names(r: dict) -> str:
    """``"y 4 · x 2"``: each exchange's mesh axes and devices."""
    if not r.get("exchange_sizes"):
        return "none"
    return " · ".join("".join("xy"[int(i)] for i in g.split("+")) + f" {s}"
                      for g, s in zip(r["exchange_groups"].split(";"),
                                      r["exchange_sizes"].split(";")))


def _pair(a, b, fmt="{:.2f}") -> str:
    a, b = _num(a), _num(b)
    return "–" if math.isnan(a) else fmt.format(a) + " / " + (
        "–" if math.isnan(b) else fmt.format(b))


def _check(r: dict) -> str:
    parts = []
    diff, err = _num(r.get("engine_diff")), _num(r.get("numpy_err"))
    if not math.isnan(diff) and (r["engine"], _pipeline(r)) != ("xla", 1):
        parts.append(f"{diff:.0e} vs xla")
    if not math.isnan(err):
        parts.append(f"{err:.0e} vs numpy")
    return ", ".join(parts) or "–"


def _routes(rows: list[dict]) -> str:
    seen = {}
    for r in sorted(rows, key=_pipeline):       # the unpipelined chain's stages first
        if r["engine"] == "auto" and r.get("fft_engines"):
            backward = " backward" if r["direction"] == "backward" else ""
            seen.setdefault(f"{r['plan']} {r['kind']}{backward}", r["fft_engines"])
    return ("the engine of each FFT stage, in order: " +
            "; ".join(f"{k}: {v}" for k, v in seen.items())) if seen else "not run"


def measured_table(rows: list[dict], header: str = "") -> str:
    """The Markdown table of per-device measurements (every figure measured): rows as
    :func:`load_per_device` or :func:`benchmarks.per_device.rows` give them."""
    view = []
    for r in rows:
        v = dict(r, exchange_names=_exchange_names(r), plan_grid=f"{r['plan']} {r['grid']}",
                 memory=_pair(r.get("kept_blocks"), r.get("donated_blocks")), check=_check(r),
                 time=r["status"] if r["status"] != "ok" else f"{_num(r['ms']):.3g}")
        for key in ("copy_ms", "copies_ms", "local_ms", "outside_ms", "local_over_copy",
                    "block_mib"):
            v[key] = _num(r.get(key))
        v["pipeline"] = _pipeline(r)
        view.append(v)
    columns = [("n", "N³", "{}³"), ("devices", "p", "{}"), ("plan_grid", "plan", "{}"),
               ("kind", "kind", "{}"), ("direction", "direction", "{}"),
               ("engine", "engine", "{}"), ("pipeline", "pipeline", "{}"),
               ("block_mib", "block (MiB)", "{:.4g}"), ("exchange_names", "exchanges", "{}"),
               ("time", "time (ms)", "{}"), ("copy_ms", "copy of block (ms)", "{:.3g}"),
               ("copies_ms", "in copies (ms)", "{:.3g}"),
               ("local_ms", "local work (ms)", "{:.3g}"),
               ("outside_ms", "outside windows (ms)", "{:.3g}"),
               ("local_over_copy", "local / copy", "{:.2f}"),
               ("memory", "memory kept / donated (blocks)", "{}"), ("check", "check", "{}")]
    out = [header, ""] if header else []
    out += [markdown_table(view, columns), "",
            "Every figure measured on one device. time: the per-device program (forward, or "
            "backward: the plan's inverse, its complex spectrum in); "
            "copy of block: `jnp.copy` of the input block (the bandwidth unit); in copies: the "
            "stand-in transfers alone, one copy of each exchange's bytes (a real exchange "
            "replaces them by the transfer); local work = time − in copies: the local "
            "transforms, packing and unpacking. pipeline: the pieces each exchange's window "
            "of stages runs on (pfft's `pipeline=`; 1: none); outside windows: the part of "
            "a pipelined program's local work that runs on the whole block (its stages "
            "outside every window, timed by themselves; – for pipeline 1). memory: "
            "arguments + outputs + temporaries "
            "(`compiled.memory_analysis()`) in blocks of the input, kept and with the input "
            "donated (the native engine's cuFFT work area is among the temporaries; the "
            "work area of `lax.fft`'s cuFFT plans, which XLA allocates when the program "
            "runs, is not). check: relative L2 difference of a strided sample of the output from "
            "the unpipelined xla engine's, and (small blocks) error against numpy in float64 "
            "of the same block-level math. auto: " + _routes(rows) + "."]
    return "\n".join(out)


def _engine_name(r: dict) -> str:
    """``"auto"``, or ``"auto, pipeline 4"`` for a pipelined program."""
    k = _pipeline(r)
    return r["engine"] + (f", pipeline {k}" if k > 1 else "")


def predictions(rows: list[dict], chunks: int = 4) -> list[dict]:
    """One prediction per measured configuration (size, GPUs, plan, kind).

    Forward programs only (those of the published times). pfft today:
    :func:`per_device_prediction` of the unpipelined program (pipeline 1;
    where none was measured, the fewest pieces measured) of the engine pfft runs by
    default, ``auto`` (where it was not measured: the engine whose local work is
    least), beside each engine's measured local work. ``pipelined``: that of the
    pipelined program (``auto`` at the most pieces measured, else the one predicted
    fastest), or ``None`` where no pipelined program was measured.
    """
    out = []
    rows = _forward(rows)
    keys = dict.fromkeys((r["n"], r["devices"], r["plan"], r["kind"]) for r in rows if _ok(r))
    for key in keys:
        mine = [r for r in rows if _ok(r) and (r["n"], r["devices"], r["plan"], r["kind"]) == key]
        fewest = min(_pipeline(r) for r in mine)
        ran = {r["engine"]: r for r in mine if _pipeline(r) == fewest}
        best = ran.get("auto") or min(ran.values(), key=lambda r: _num(r["local_ms"]))
        p = per_device_prediction(best, chunks=chunks)
        out.append(dict(n=key[0], devices=key[1], plan=key[2], kind=key[3],
                        grid=best["grid"], engine=_engine_name(best),
                        local={e: _num(r["local_ms"]) for e, r in ran.items()},
                        kept=best["kept_blocks"], donated=best["donated_blocks"],
                        exchanges=_exchange_names(best), pipelined=_pipelined(mine), **p))
    return out


def _pipelined(mine: list[dict]) -> dict | None:
    """The pipelined prediction of one configuration's rows: ``auto`` at the most pieces
    measured, else the row predicted fastest; its :func:`per_device_prediction` with
    ``engine`` (``None`` where no row is pipelined)."""
    piped = [r for r in mine if _pipeline(r) > 1]
    if not piped:
        return None
    auto = [r for r in piped if r["engine"] == "auto"]
    if auto:
        row = max(auto, key=_pipeline)
    else:
        row = min(piped, key=lambda r: per_device_prediction(r)["overlap_s"])
    return dict(per_device_prediction(row), engine=_engine_name(row))


def _ms(seconds: float) -> str:
    return "–" if seconds is None or math.isnan(seconds) else f"{seconds * 1e3:.2f}"


#: what a configuration without a pipelined program measured shows in its place
NOT_MEASURED = "not measured"


def _piped_ms(p: dict) -> str:
    """A prediction's pipelined time, or :data:`NOT_MEASURED`."""
    return _ms(p["pipelined"]["overlap_s"]) if p.get("pipelined") else NOT_MEASURED


def _piped_program(p: dict) -> str:
    """``"auto, pipeline 4: 3.40 local (0.52 outside windows), 5.94 in series"``."""
    q = p.get("pipelined")
    if not q:
        return "–"
    return (f"{q['engine']}: {_ms(q['local_s'])} local ({_ms(q['outside_s'])} outside "
            f"windows), {_ms(q['serial_s'])} in series")


def _prediction_table(preds: list[dict]) -> str:
    engines = [e for e in ("native", "xla", "auto") if any(e in p["local"] for p in preds)]
    view = [dict(p, local_text=" / ".join(
        "–" if math.isnan(p["local"].get(e, math.nan)) else f"{p['local'][e]:.2f}"
        for e in engines), plan_grid=f"{p['plan']} {p['grid']}",
        comm=_ms(p["comm_s"]), serial=_ms(p["serial_s"]), overlap=_ms(p["overlap_s"]),
        piped=_piped_ms(p), program=_piped_program(p),
        memory=_pair(p["kept"], p["donated"])) for p in preds]
    columns = [("n", "N³", "{}³"), ("devices", "GPUs", "{}"), ("plan_grid", "plan", "{}"),
               ("kind", "kind", "{}"), ("exchanges", "exchanges", "{}"),
               ("local_text", f"local work {' / '.join(engines)} (ms, measured)", "{}"),
               ("engine", "engine", "{}"), ("comm", "all-to-alls (ms, modelled)", "{}"),
               ("serial", "pfft today: local + all-to-alls (ms)", "{}"),
               ("overlap", "overlapped: unpipelined local work, overlap modelled (ms)", "{}"),
               ("piped", "pfft pipelined: local measured, overlap modelled (ms)", "{}"),
               ("program", "pipelined program (ms, measured)", "{}"),
               ("memory", "memory kept / donated (blocks, measured)", "{}")]
    return markdown_table(view, columns)


def _floor(anchor: Anchor) -> float:
    """The all-to-alls alone of the anchor's plan (slab or pencil) at its size and GPU
    count, the whole complex64 block sent per exchange: modelled."""
    grid = (anchor.gpus,) if "slab" in anchor.label else model_grid(anchor.gpus)
    groups = [(0,)] if len(grid) == 1 else [(1,), (0,)]
    block = 8 * anchor.n ** 3 / anchor.gpus
    return sum(exchange_seconds(grid, groups, [block] * len(groups)))


def model_grid(gpus: int) -> tuple[int, int]:
    """The balanced 2-D grid ``pfft.dims_create`` gives (the smaller size first)."""
    best = max(d for d in range(1, math.isqrt(gpus) + 1) if gpus % d == 0)
    return (best, gpus // best)


def _anchor_rows(preds: list[dict]) -> list[dict]:
    out = []
    for a in ANCHORS:
        row = dict(label=a.label, n=a.n, gpus=a.gpus, published=a.ms)
        if "floor" in a.label:
            row.update(pfft=_floor(a) * 1e3, how="all-to-alls alone, modelled",
                       overlap=math.nan, piped="–")
        else:
            mine = [p for p in preds if p["n"] == a.n and p["devices"] == a.gpus
                    and p["kind"] == "c2c"]
            if mine:
                best = min(mine, key=lambda p: p["serial_s"])
                lap = min(mine, key=lambda p: p["overlap_s"])
                row.update(pfft=best["serial_s"] * 1e3, overlap=lap["overlap_s"] * 1e3,
                           how=f"{best['plan']} {best['grid']}, {best['engine']}",
                           piped=_anchor_piped(mine))
            else:
                row.update(pfft=math.nan, overlap=math.nan, how="not measured",
                           piped=NOT_MEASURED)
        row["ratio"] = row["pfft"] / a.ms
        out.append(row)
    return out


def _fastest_pipelined(mine: list[dict]) -> dict | None:
    """Of one size's predictions, the one whose pipelined time is least (``None``
    where none was measured pipelined)."""
    piped = [p for p in mine if p.get("pipelined")]
    return min(piped, key=lambda p: p["pipelined"]["overlap_s"]) if piped else None


def _anchor_piped(mine: list[dict]) -> str:
    """``"3.12 (slab 8, auto, pipeline 4)"``, or :data:`NOT_MEASURED`."""
    p = _fastest_pipelined(mine)
    if p is None:
        return NOT_MEASURED
    q = p["pipelined"]
    return f"{_ms(q['overlap_s'])} ({p['plan']} {p['grid']}, {q['engine']})"


def _anchor_table(preds: list[dict]) -> str:
    columns = [("label", "published", "{}"), ("n", "N³", "{}³"), ("gpus", "H100s", "{}"),
               ("published", "published (ms, ±15 %)", "{:.1f}"),
               ("pfft", "pfft today (ms): local measured + all-to-alls modelled", "{:.2f}"),
               ("how", "plan, engine", "{}"),
               ("piped", "pfft pipelined (ms): local measured, overlap modelled", "{}"),
               ("overlap", "overlapped (ms): unpipelined local work, overlap modelled",
                "{:.2f}"),
               ("ratio", "pfft today / published", "{:.2f}")]
    return markdown_table(_anchor_rows(preds), columns)


def _verdict(preds: list[dict]) -> str:
    """Whether the prediction meets the goal (pfft ≤ cuFFTMp at 1024³ on 8 H100), in
    series and pipelined, and why."""
    goal = GOAL
    mine = [p for p in preds if p["n"] == goal.n and p["devices"] == goal.gpus
            and p["kind"] == "c2c"]
    head = (f"**Goal: pfft ≤ {goal.label} at {goal.n}³ on {goal.gpus} H100s "
            f"({goal.ms} ms ±15 %).** ")
    if not mine:
        return head + (f"Not predicted: no {goal.n}³ complex64 per-device measurement on "
                       f"{goal.gpus} GPUs.")
    best = min(mine, key=lambda p: p["serial_s"])
    local, comm = best["local_s"] * 1e3, best["comm_s"] * 1e3
    met = best["serial_s"] * 1e3 <= goal.ms
    text = (f"Predicted today: {_ms(best['serial_s'])} ms ({best['plan']} {best['grid']}, "
            f"{best['engine']}: local work {local:.2f} ms measured + all-to-alls {comm:.2f} ms "
            f"modelled, in series): **{'met' if met else 'not met'}**")
    if not met:
        text += (f"; the all-to-alls alone take {comm:.2f} ms of the {goal.ms} ms, leaving "
                 f"{goal.ms - comm:.2f} ms for local work that takes {local:.2f} ms")
    text += ". "
    piped = _fastest_pipelined(mine)
    if piped is not None:
        q = piped["pipelined"]
        q_met = q["overlap_s"] * 1e3 <= goal.ms
        text += (f"Pipelined: {_ms(q['overlap_s'])} ms ({piped['plan']} {piped['grid']}, "
                 f"{q['engine']}: the pipelined program's local work {_ms(q['local_s'])} ms "
                 f"measured, {_ms(q['outside_s'])} ms of it outside the windows; its "
                 f"overlap with the all-to-alls modelled): **{'met' if q_met else 'not met'}**"
                 + ("" if q_met else
                    f": the windows' local work or the all-to-alls, whichever is longer, "
                    f"and the work outside the windows already take "
                    f"{_ms(q['outside_s'] + max(q['local_s'] - q['outside_s'], q['comm_s']))} "
                    f"ms") + ". ")
    else:
        lap = min(mine, key=lambda p: p["overlap_s"])
        lap_met = lap["overlap_s"] * 1e3 <= goal.ms
        text += (f"Pipelined: {NOT_MEASURED} (no run with a pipeline above 1). Overlapped, "
                 f"as modelled from the unpipelined local work (all of it taken as cut into "
                 f"pieces): {_ms(lap['overlap_s'])} ms ({lap['plan']}, {lap['engine']}): "
                 f"**{'met' if lap_met else 'not met'}**"
                 + ("" if lap_met else ": the longer of the two, local work or all-to-alls, "
                    f"is already {max(lap['local_s'], lap['comm_s']) * 1e3:.2f} ms") + ". ")
    text += ("The overlap is modelled: one GPU cannot show whether XLA runs a piece's "
             "all-to-all beside the next piece's transforms; that needs several GPUs.")
    return head + text


def _memory_rows(rows: list[dict], memory_bytes: float) -> list[dict]:
    """Per GPU count, plan and kind: the fewest blocks measured at the largest size
    run, in blocks of the forward input (where the backward program was measured
    too, the more of the two directions' fewest: a plan runs both), and the largest
    N³ that fits with them (N a multiple of every grid size)."""
    def blocks(r: dict, key: str) -> float:
        """``key`` (blocks of the row's input) in blocks of the forward input: a real
        plan's backward program takes the larger complex spectrum in."""
        forward_mib = r["n"] ** 3 / r["devices"] * ITEMSIZE[r["kind"]] / 2 ** 20
        return _num(r[key]) * _num(r["block_mib"]) / forward_mib

    def fewest(at: list[dict], key: str) -> dict:
        per = [min((r for r in at if r["direction"] == d), key=lambda r: blocks(r, key))
               for d in dict.fromkeys(r["direction"] for r in at)]
        return max(per, key=lambda r: blocks(r, key))

    def name(r: dict) -> str:
        return _engine_name(r) + (", backward" if r["direction"] == "backward" else "")

    out = []
    keys = dict.fromkeys((r["devices"], r["plan"], r["kind"]) for r in rows
                         if not math.isnan(_num(r.get("kept_blocks"))))
    for p, plan, kind in sorted(keys, key=lambda k: (k[0], k[1] != "slab", k[2])):
        measured = [r for r in rows if (r["devices"], r["plan"], r["kind"]) == (p, plan, kind)
                    and not math.isnan(_num(r.get("kept_blocks")))]
        n = max(r["n"] for r in measured)
        at = [r for r in measured if r["n"] == n]
        kept, donated = fewest(at, "kept_blocks"), fewest(at, "donated_blocks")
        k, d = blocks(kept, "kept_blocks"), blocks(donated, "donated_blocks")
        step = math.lcm(*(int(v) for v in kept["grid"].split("x")))
        out.append(dict(devices=p, plan=f"{plan} {kept['grid']}", kind=kind, n=n,
                        blocks=f"{k:.2f} ({name(kept)}) / {d:.2f} ({name(donated)})",
                        n_kept=largest_n(k, p, ITEMSIZE[kind], memory_bytes, step),
                        n_donated=largest_n(d, p, ITEMSIZE[kind], memory_bytes, step)))
    return out


def _memory_table(rows: list[dict], memory_bytes: float) -> str:
    columns = [("devices", "GPUs", "{}"), ("plan", "plan", "{}"), ("kind", "kind", "{}"),
               ("n", "at N³", "{}³"),
               ("blocks", "kept / donated (blocks, measured; engine)", "{}"),
               ("n_kept", "largest N³, kept (modelled)", "{}³"),
               ("n_donated", "largest N³, donated (modelled)", "{}³")]
    return markdown_table(_memory_rows(rows, memory_bytes), columns)


def per_device_report(path: str | None, *, chunks: int = 4, memory_bytes: float = 76 * 2 ** 30,
           command: str = "", figure: str | None = None) -> str:
    """The Markdown the docs include: how it was made, the measured per-device table,
    the predictions (with ``figure``, the path of :func:`plot`'s image relative to the
    Markdown file), the comparison with published figures, the goal's verdict and the
    largest sizes that fit. Without ``path`` (no GPU measured yet): the published
    figures beside the modelled all-to-all floors only."""
    nccl = H100_NCCL
    net = (f"All-to-alls modelled with published NCCL figures: {nccl.nvlink_bw / 1e9:.0f} "
           f"GB/s per GPU over NVLink inside a node of {nccl.gpus_per_node}, "
           f"{nccl.ib_bw / 1e9:.0f} GB/s per GPU over NDR InfiniBand between "
           f"nodes (devices numbered as the mesh is, the last grid axis fastest); each sends "
           f"(1 − 1/p) of its block. Published times read off published plots (±15 %).")
    if path is None:
        return "\n".join([
            "*Not measured on a GPU yet: the per-device table and the predictions appear "
            "here when `python -m benchmarks.per_device --platform gpu` has run and "
            "`python -m benchmarks.model --per-device results/per_device_gpu.csv --markdown "
            f"docs/data/gpu_md` has written this file. Written by `{command}`.*", "",
            net, "", _anchor_table([])])
    rows = load_per_device(path)
    if not rows:
        raise ValueError(f"{path}: no rows")
    meta = rows[0]
    preds = predictions(rows, chunks)
    return "\n".join([
        f"*Measured on {meta['device']} ({meta['device_memory_gib']} GiB for XLA), jax "
        f"{meta['jax']}, {meta['date']}: `{meta['command']}`. Predictions: `{command}`.*", "",
        "### The per-device programs (measured)", "", measured_table(rows), "",
        "### Predicted times on H100s", "", net + " pfft today: the measured local work of "
        "the unpipelined program of the engine pfft runs by default (auto), plus the "
        "modelled all-to-alls, in series. pfft pipelined: the program planned with "
        "`pipeline=k` (auto at the most pieces measured), its local work measured (that of "
        "its stages outside the windows, which run on the whole block, measured apart), "
        "the overlap modelled: the work outside the windows, plus the longer of the rest "
        "and the all-to-alls, plus 1/k of the shorter; in series it would take its local "
        "work plus the all-to-alls. Overlapped: the same model applied to the unpipelined "
        f"program's local work, all of it taken as cut into {chunks} pieces. Whether XLA "
        "runs one piece's all-to-all beside the next piece's transforms cannot be seen on "
        "one GPU: every overlap here is modelled, and only a run on several GPUs can "
        "show it.", "", _prediction_table(preds), "",
        *([f"![pfft's predicted times (local work measured, all-to-alls modelled) beside the "
           f"published ones]({figure})", ""] if figure else []),
        "### Against published figures", "", _anchor_table(preds), "", _verdict(preds), "",
        "### Memory: the largest N³ that fits", "",
        f"With the fewest blocks measured at the largest size run, in blocks of the "
        f"forward input (forward and backward where both were: the more of the two), on "
        f"GPUs giving XLA "
        f"{memory_bytes / 2 ** 30:.0f} GiB each (N a multiple of each grid size; the blocks "
        f"a device needs are taken as constant above the sizes measured). Goal: at most "
        f"{MEMORY_GOAL[0]} blocks kept, {MEMORY_GOAL[1]} donated.", "",
        _memory_table(rows, memory_bytes)])


def per_device_plot(path: str, png: str, *, chunks: int = 4, command: str = "") -> None:
    """Two panels from a per-device CSV: pfft's predicted times (today, stacked as local
    work and all-to-alls; pipelined, where measured; overlapped, as modelled from the
    unpipelined local work) beside the published ones at their sizes, and the predicted
    time against GPUs for each size."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = load_per_device(path)
    preds = [p for p in predictions(rows, chunks) if p["kind"] == "c2c"]
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.8))
    cases = list(dict.fromkeys((a.n, a.gpus) for a in ANCHORS))
    width, step = 0.3, 1.8                     # bar width; room for the labels beside
    piped_drawn = False
    for i, (n, g) in enumerate(cases):
        for j, plan in enumerate(("slab", "pencil")):
            mine = [p for p in preds if (p["n"], p["devices"], p["plan"]) == (n, g, plan)]
            if not mine:
                continue
            p = mine[0]
            x = i * step + (j - 0.5) * width
            left.bar(x, p["local_s"] * 1e3, width, color="C0" if plan == "slab" else "C2",
                     label=f"{plan}: local work (measured)" if i == 0 else None)
            left.bar(x, p["comm_s"] * 1e3, width, bottom=p["local_s"] * 1e3, color="0.75",
                     edgecolor="C0" if plan == "slab" else "C2",
                     label="all-to-alls (modelled)" if (i, j) == (0, 0) else None)
            left.plot([x - width / 5], [p["overlap_s"] * 1e3], "v", color="k",
                      markerfacecolor="none",
                      label="overlapped: unpipelined local work, overlap modelled"
                      if (i, j) == (0, 0) else None)
            if p.get("pipelined"):
                left.plot([x + width / 5], [p["pipelined"]["overlap_s"] * 1e3], "D", color="k",
                          markersize=4, label="pipelined: local measured, overlap modelled"
                          if not piped_drawn else None)
                piped_drawn = True
        for a in ANCHORS:
            if (a.n, a.gpus) == (n, g):
                left.hlines(a.ms, i * step - 0.4, i * step + 0.4, linestyles="--" if "floor"
                            in a.label else "-", colors="C3" if "cuFFTMp" in a.label else "C1")
                left.annotate(a.label, (i * step + 0.42, a.ms), fontsize=6.5, va="center")
    if not piped_drawn:
        left.annotate(f"pipelined program: {NOT_MEASURED}", (0.99, 0.01),
                      xycoords="axes fraction", ha="right", va="bottom", fontsize=7)
    left.set_xticks([i * step for i in range(len(cases))], [f"{n}³ on {g}" for n, g in cases])
    left.set(ylabel="ms (forward, complex64)", title="pfft predicted (bars) vs published (lines)",
             xlim=(-0.6, (len(cases) - 1) * step + 1.5))
    if left.get_legend_handles_labels()[0]:
        left.legend(fontsize=7, loc="upper left")
    for k, n in enumerate(sorted({p["n"] for p in preds})):
        by = {}
        for p in preds:
            if p["n"] == n:
                prev = by.get(p["devices"])
                by[p["devices"]] = p if prev is None or p["serial_s"] < prev["serial_s"] else prev
        gpus = sorted(by)
        right.plot(gpus, [by[g]["serial_s"] * 1e3 for g in gpus], "o-", color=f"C{k}",
                   label=f"{n}³ today")
        right.plot(gpus, [by[g]["overlap_s"] * 1e3 for g in gpus], "s:", color=f"C{k}",
                   markerfacecolor="none", label=f"{n}³ overlapped (model)")
        piped = {}
        for p in preds:
            q = p.get("pipelined")
            if p["n"] == n and q and (p["devices"] not in piped
                                      or q["overlap_s"] < piped[p["devices"]]):
                piped[p["devices"]] = q["overlap_s"]
        if piped:
            right.plot(sorted(piped), [piped[g] * 1e3 for g in sorted(piped)], "D--",
                       color=f"C{k}", markersize=4, label=f"{n}³ pipelined")
    for a in ANCHORS:
        if "floor" not in a.label:
            right.plot([a.gpus], [a.ms], "*", color="C3", markersize=9)
            right.annotate(f"{a.label} {a.n}³", (a.gpus, a.ms), fontsize=6,
                           xytext=(4, 2), textcoords="offset points")
    right.set(xscale="log", yscale="log", xlabel="H100s", ylabel="ms",
              title="predicted, best plan (stars: published)")
    right.legend(fontsize=7)
    meta = rows[0]
    save_plot(fig, png, f"local work measured on one {meta['device']}, {meta['date']} "
                        f"(`{meta['command']}`); all-to-alls and their overlap modelled (NCCL "
                        f"370 GB/s NVLink, 48 GB/s InfiniBand per GPU); `{command}`")
    plt.close(fig)


#: the docs' tables: what report() writes (no data file: the model is a function of the code)
DOCS = {"benchmarks/model.py": ("model_systems.md",),
        "per_device_gpu.csv": ("gpu_model.md", "gpu_model.png")}


def report(data: str, figures: str) -> list[str]:
    """``data/model_systems.md``: :func:`system_table` (``python -m benchmarks model``),
    under a line saying that every figure in it is modelled; and where ``data`` holds a
    GPU run's per-device programs (``per_device_gpu.csv``), ``data/gpu_model.md`` and
    ``figures/gpu_model.png``: the predictions from them (``--per-device``)."""
    import os

    path = os.path.join(data, "model_systems.md")
    with open(path, "w") as f:
        f.write(system_table() + "\n\n*Modelled, not measured: `python -m benchmarks model` "
                "(benchmarks/model.py, `SYSTEMS`). complex64; the copy bandwidth is half the "
                "quoted HBM bandwidth.*\n")
    done = [path]
    measured = os.path.join(data, "per_device_gpu.csv")
    if os.path.isfile(measured):
        markdown, png = os.path.join(data, "gpu_model.md"), os.path.join(figures, "gpu_model.png")
        command = "python -m benchmarks report"
        text = per_device_report(measured, command=command,
                                 figure=os.path.relpath(png, os.path.dirname(markdown)))
        with open(markdown, "w") as f:
            f.write(text + "\n")
        per_device_plot(measured, png, command=command)
        done += [markdown, png]
    return done


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description="The cost model: multi-GPU extrapolation, or "
                                 "predictions from measured per-device programs")
    ap.add_argument("--per-device", metavar="CSV",
                    help="a benchmarks.per_device CSV (per_device_gpu.csv): predict from it")
    ap.add_argument("--markdown", metavar="FILE", help="write the tables there as well")
    ap.add_argument("--plot", metavar="PNG", help="draw the predictions (with --per-device)")
    ap.add_argument("--chunks", type=int, default=4,
                    help="pieces of the modelled overlap pipeline (default 4)")
    ap.add_argument("--gpu-memory-gib", type=float, default=76.0,
                    help="memory XLA may use on each 80 GB GPU (default 76: 95 %% of an "
                         "H100's 79.6 GiB)")
    args = ap.parse_args(argv)
    if args.per_device is None and args.markdown is None:
        print(system_table())
        return
    import os

    figure = None
    if args.plot and args.markdown and args.per_device:
        figure = os.path.relpath(args.plot, os.path.dirname(os.path.abspath(args.markdown)))
    text = per_device_report(args.per_device, chunks=args.chunks,
                                    memory_bytes=args.gpu_memory_gib * 2 ** 30,
                                    command=_command(argv), figure=figure)
    print(text)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(text + "\n")
    if args.plot:
        if args.per_device is None:
            ap.error("--plot needs --per-device")
        per_device_plot(args.per_device, args.plot, chunks=args.chunks,
                               command=_command(argv))


def _command(argv) -> str:
    import sys
    return "python -m benchmarks.model " + " ".join(argv if argv is not None else sys.argv[1:])


if __name__ == "__main__":
    main()
