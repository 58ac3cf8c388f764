"""The tables, figures and doc text of ``python -m benchmarks transforms`` and ``peers``
(:mod:`benchmarks.suite`, which measures): from the rows of a run or of its CSV in
``docs/data`` (:mod:`benchmarks.suite_rows`), without JAX.

- the run's tables (:func:`render`: the Markdown a run prints and writes);
- the docs' sections (:func:`one_device_doc`, :func:`peers_doc`, :func:`cost_model_doc`)
  and :func:`report`, what ``python -m benchmarks report`` calls; the figures are
  :mod:`benchmarks.suite_plots`'.
"""
from __future__ import annotations

import math
import os
import statistics

from . import common
from .common import read_info, write_doc
from .suite_plots import model_plot, one_device_plot, ratios_plot, scaling_plot
from .suite_rows import CHAIN, JAXDECOMP, JNP, PFFT, parse_grid, read_csv


# -- the run's tables -------------------------------------------------------------------
def fmt(v, spec="{:.1f}"):
    if v in ("", None) or (isinstance(v, float) and math.isnan(v)):
        return "–"
    return spec.format(v) if isinstance(v, (int, float)) else str(v)


def md_table(head, lines) -> str:
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    out += ["| " + " | ".join(line) + " |" for line in lines]
    return "\n".join(out)


def sweep_table(rows, study="sweep") -> str:
    cells = {}
    for r in rows:
        if r["study"] == study and r["grid"]:
            cells.setdefault((r["shape"], r["dtype"], r["kind"], r["grid"]), {})[r["impl"]] = r
    lines = []
    for (shape, dt, kind, grid), c in cells.items():
        p = c.get(PFFT)
        if p is None:
            continue
        ch, jd = c.get(CHAIN, {}), c.get(JAXDECOMP, {})

        def cell(r):
            return f"{fmt(r.get('ms'))} ({fmt(r.get('ratio'), '{:.2f}')})" if r else "–"
        lines.append([shape.split("x")[0] + "³" if len(set(shape.split("x"))) == 1 else shape,
                      dt, kind, grid, str(p["exchanges"]), fmt(p["single_ms"]), cell(p), cell(ch),
                      cell(jd), fmt(p["model_ms"]), fmt(p["over_model"], "{:.2f}"),
                      fmt(p["rel_err"], "{:.1e}"), fmt(ch.get("rel_err"), "{:.1e}"),
                      fmt(jd.get("rel_err"), "{:.1e}")])
    head = ["size", "dtype", "kind", "grid", "a2a", "jnp 1 dev ms", "pfft ms (ratio)",
            "shard_map chain ms (ratio)", "jaxDecomp ms (ratio)", "model ms", "pfft / model",
            "pfft err", "chain err", "jaxDecomp err"]
    return md_table(head, lines)


def memory_table(rows) -> str:
    """Bytes per device of the compiled executables, as multiples of the local input block."""
    cells = {}
    for r in rows:
        if r["study"] == "sweep" and r["peak_bytes"] != "":
            cells.setdefault((r["shape"], r["dtype"], r["kind"]), {}).setdefault(r["grid"], {})[r["impl"]] = r
    lines = []
    for (shape, dt, kind), grids in cells.items():
        j = grids.get("1", {}).get(JNP)
        for grid, c in grids.items():
            p, ch = c.get(PFFT), c.get(CHAIN, {})
            if p is None:
                continue
            lines.append([shape, dt, kind, grid, f"{p['block_bytes'] / 2**20:.1f}",
                          fmt(j["peak_over_block"] if j else "", "{:.2f}"),
                          fmt(p["peak_over_block"], "{:.2f}"),
                          fmt(p["xla_peak_bytes"] / p["block_bytes"], "{:.2f}"),
                          fmt(ch.get("peak_over_block"), "{:.2f}")])
    return md_table(["shape", "dtype", "kind", "grid", "input block MiB",
                     "jnp 1 dev (arg+out+temp) / array", "pfft (arg+out+temp) / block",
                     "pfft XLA peak_memory / block", "chain (arg+out+temp) / block"], lines)


def single_table(rows) -> str:
    lines = [[r["shape"], r["dtype"], r["kind"], fmt(r["ms"]), fmt(r["model_ms"]),
              fmt(r["over_model"], "{:.2f}"), fmt(r["copy_ms"]), fmt(r["rel_err"], "{:.1e}"),
              fmt(r["peak_over_block"], "{:.2f}")]
             for r in rows if r["impl"] == JNP and r["study"] == "sweep"]
    return md_table(["shape", "dtype", "kind", "jnp 1 dev ms", "model ms (3 passes)",
                     "measured / model", "copy ms", "rel. err", "peak / array"], lines)


def calibration_table(rows) -> str:
    seen, lines = set(), []
    for r in rows:
        if r["impl"] != PFFT or r["kind"] != "c2c" or r["study"] != "sweep":
            continue
        key = (r["shape"], r["dtype"], r["grid"])
        if key in seen:
            continue
        seen.add(key)
        v = r["block_bytes"]
        bw = v / (r["copy_ms"] * 1e-3) / 1e9
        a2a = []
        for part in filter(None, r["a2a_ms"].split()):
            name, t = part.split(":")
            p = dict(zip(("x", "y"), parse_grid(r["grid"])))[name]
            a2a.append(f"{name}: {float(t):.1f} ms ({(1 - 1 / p) * v / (float(t) * 1e-3) / 1e9:.2f} GB/s)")
        lines.append([r["shape"], r["dtype"], r["grid"], f"{v / 2**20:.1f}",
                      f"{r['copy_ms']:.1f} ({bw:.2f} GB/s)", "; ".join(a2a) or "–"])
    return md_table(["shape", "dtype", "grid", "block MiB", "copy ms (GB/s per device)",
                     "bare all_to_all per mesh axis (GB/s per device)"], lines)


def strong_table(rows) -> str:
    """pfft and the best of each implementation per device count, from the sweep."""
    lines = []
    groups = {}
    for r in rows:
        if r["study"] == "sweep" and r["impl"] in (PFFT, CHAIN, JAXDECOMP) and r["ms"] != "":
            groups.setdefault((r["shape"], r["dtype"], r["kind"]), []).append(r)
    for (shape, dt, kind), rs in groups.items():
        base = [r for r in rs if r["impl"] == PFFT and r["devices"] == 1]
        t1 = base[0]["ms"] if base else None
        for d in sorted({r["devices"] for r in rs}):
            best = {}
            for r in rs:
                if r["devices"] == d and (r["impl"] not in best or r["ms"] < best[r["impl"]]["ms"]):
                    best[r["impl"]] = r
            p = best.get(PFFT)
            if p is None:
                continue
            lines.append([shape, dt, kind, str(d), f"{p['ms']:.1f} ({p['grid']})",
                          fmt(t1 / p["ms"] if t1 else "", "{:.2f}"), fmt(p["ratio"], "{:.2f}"),
                          *(f"{best[i]['ms']:.1f} ({best[i]['grid']})" if i in best else "–"
                            for i in (CHAIN, JAXDECOMP))])
    return md_table(["shape", "dtype", "kind", "devices", "pfft best ms (grid)",
                     "speed-up vs pfft 1 dev", "pfft / jnp 1 dev", "chain best ms (grid)",
                     "jaxDecomp best ms (grid)"], lines)


def weak_table(rows) -> str:
    ps = [r for r in rows if r["study"] == "weak" and r["impl"] == PFFT]
    t1 = next((r["ms"] for r in ps if r["devices"] == 1), None)
    lines = [[r["shape"], r["dtype"], r["grid"], str(r["devices"]), fmt(r["single_ms"]),
              fmt(r["ms"]), fmt(r["ratio"], "{:.2f}"), fmt(t1 / r["ms"] if t1 else "", "{:.2f}"),
              fmt(r["model_ms"]), fmt(r["over_model"], "{:.2f}"), fmt(r["rel_err"], "{:.1e}"),
              fmt(r["peak_over_block"], "{:.2f}")] for r in ps]
    return md_table(["global shape", "dtype", "grid", "devices", "jnp 1 dev ms", "pfft ms",
                     "pfft / jnp", "weak efficiency t(1)/t(P)", "model ms", "pfft / model",
                     "rel. err", "peak / block"], lines)


def mpi_table(rows) -> str:
    ms1 = {(r["study"], r["dtype"]): r["ms"] for r in rows
           if r["impl"] == "pfft.mpi" and r["devices"] == 1 and r["ms"] != ""
           and r["study"].startswith("mpi-")}
    lines = []
    for r in rows:
        if r["impl"] != "pfft.mpi" or not r["study"].startswith("mpi-"):
            continue
        if r["ms"] == "":
            lines.append([r["study"], "–", "–", str(r["devices"]), "–", "–", "–", r["note"]])
            continue
        t1 = ms1.get((r["study"], r["dtype"]))
        lines.append([r["study"], r["shape"], r["grid"], str(r["devices"]), fmt(r["ms"]),
                      fmt(t1 / r["ms"] if t1 else "", "{:.2f}"), fmt(r["rel_err"], "{:.1e}"), ""])
    return md_table(["study", "global shape", "grid", "ranks", "pfft.mpi ms",
                     "t(1 rank) / t(R) (strong: speed-up, weak: efficiency)", "rel. err", "note"],
                    lines)


def mpi4pyfft_table(rows) -> str:
    rs = [r for r in rows if r["study"] == "mpi4py-fft"]
    lines = [[r["impl"], r["shape"], r["dtype"], f"{r['devices']} ({r['grid']})", fmt(r["ms"]),
              fmt(r["single_ms"]), fmt(r["ratio"], "{:.2f}"), fmt(r["rel_err"], "{:.1e}"),
              r["version"] or r["note"]]
             for r in rs]
    return md_table(["impl", "shape", "dtype", "ranks (grid)", "ms", "jnp 1 dev ms (1 thread)",
                     "ratio", "rel. err", "version / note"], lines)


def notes_table(rows) -> str:
    rs = [r for r in rows if r["ms"] == "" and r["note"]]
    return "\n".join(f"- {r['impl']} ({r['study']}, {r['grid'] or '-'}): {r['note']}" for r in rs)


def render(rows, header, footer, cmd) -> str:
    sections = [
        ("Distributed FFT vs single-device jnp.fft (ms, ratio to jnp 1 device, same run)",
         sweep_table(rows)),
        ("Memory per device (compiled executable)", memory_table(rows)),
        ("Single device: jnp.fft vs the cost model", single_table(rows)),
        ("Calibration: one copy pass and a bare all_to_all on each grid, timed interleaved with the transforms", calibration_table(rows)),
        ("Strong scaling (fixed size; simulated devices share the cores)", strong_table(rows)),
    ]
    if any(r["study"] == "weak" for r in rows):
        sections.append(("Weak scaling (fixed size per device)", weak_table(rows)))
    if any(r["study"].startswith("mpi-") for r in rows):
        sections.append(("pfft.mpi over MPI ranks", mpi_table(rows)))
    if any(r["study"] == "mpi4py-fft" for r in rows):
        sections.append(("mpi4py-fft (FFTW) vs pfft.mpi, 4 and 8 ranks", mpi4pyfft_table(rows)))
    notes = notes_table(rows)
    if notes:
        sections.append(("Not run / failed", notes))
    return f"{header}\ncommand: {cmd}\n{footer}\n\n" + "\n\n".join(
        f"### {title}\n\n{body}" for title, body in sections)


# -- the docs' tables (python -m benchmarks report) ------------------------------------
def _size(shape: str) -> str:
    sides = shape.split("x")
    return sides[0] + "³" if len(set(sides)) == 1 else shape


def _span(values) -> str:
    values = sorted(v for v in values if v not in ("", None) and not math.isnan(v))
    if not values:
        return "–"
    return f"{values[0]:.2f}" if len(values) == 1 else f"{values[0]:.2f}–{values[-1]:.2f}"


def one_device_doc(rows) -> str:
    """pfft against one device: the table and, per size, dtype and kind, the range of
    the ratio over the grids."""
    ps = [r for r in rows if r["study"] == "sweep" and r["impl"] == PFFT and r["ms"] != ""]
    lines = [[_size(r["shape"]), r["dtype"], r["kind"], r["grid"], str(r["exchanges"]),
              fmt(r["single_ms"]), fmt(r["ms"]), f"**{fmt(r['ratio'], '{:.2f}')}**"]
             for r in ps]
    table = md_table(["N³", "dtype", "kind", "grid", "exch.", "one device ms", "pfft ms",
                      "**pfft / one device**"], lines)
    keys = list(dict.fromkeys((r["shape"], r["dtype"], r["kind"]) for r in ps))
    summary = "\n".join(
        f"- {_size(shape)} {dtype} {kind}: pfft takes **{_span(r['ratio'] for r in ps if (r['shape'], r['dtype'], r['kind']) == (shape, dtype, kind))}** "
        f"of one device's time over the grids." for shape, dtype, kind in keys)
    return table + "\n\n" + summary


def peers_doc(rows) -> str:
    """pfft, the straightforward chain and jaxDecomp on each grid; then pfft.mpi and
    mpi4py-fft under mpirun beside pfft on as many simulated devices."""
    cells = {}
    for r in rows:
        if r["study"] == "sweep" and r["grid"] and r["impl"] != JNP:
            cells.setdefault((r["shape"], r["dtype"], r["grid"]), {})[r["impl"]] = r

    def cell(r):
        return f"{fmt(r.get('ms'))} ({fmt(r.get('ratio'), '{:.2f}')})" if r else "–"
    lines, faster = [], {CHAIN: [0, 0], JAXDECOMP: [0, 0]}
    for (shape, dtype, grid), c in cells.items():
        p = c.get(PFFT)
        if p is None:
            continue
        lines.append([_size(shape), dtype, grid, cell(p), cell(c.get(CHAIN)),
                      cell(c.get(JAXDECOMP))])
        for impl in faster:
            if c.get(impl, {}).get("ms") not in ("", None):
                faster[impl][0] += p["ms"] < c[impl]["ms"]
                faster[impl][1] += 1
    out = [md_table(["N³", "dtype", "grid", "pfft ms (/ one device)",
                     "shard_map chain ms (/ one device)", "jaxDecomp ms (/ its one device)"],
                    lines)]
    out.append("\n".join(f"- pfft is faster than {impl} on {won} of {of} rows."
                         for impl, (won, of) in faster.items() if of))
    mpi = [r for r in rows if r["study"] == "mpi4py-fft" and r["ms"] != ""]
    if mpi:
        sweep = {(r["shape"], r["dtype"], r["grid"]): r for r in rows
                 if r["study"] == "sweep" and r["impl"] == PFFT and r["ms"] != ""}
        by = {}
        for r in mpi:
            by.setdefault((r["shape"], r["dtype"], r["grid"], r["devices"]), {})[r["impl"]] = r
        lines = []
        for (shape, dtype, grid, ranks), c in by.items():
            one = sweep.get((shape, dtype, grid))
            lines.append([_size(shape), dtype, f"{ranks} ({grid})",
                          fmt(one["ms"]) if one else "–",
                          fmt(c.get("pfft.mpi", {}).get("ms")),
                          fmt(c.get("mpi4py-fft", {}).get("ms"))])
        out.append(md_table(["N³", "dtype", "devices or ranks (grid)",
                             "pfft, one process, simulated devices ms", "pfft.mpi, MPI ranks ms",
                             "mpi4py-fft (FFTW), MPI ranks ms"], lines))
    return "\n\n".join(out)


def cost_model_doc(rows) -> str:
    """Measured time over the cost model (median and range per implementation and size),
    and memory per device at the largest size."""
    lines = []
    for impl in (JNP, PFFT, CHAIN):
        for shape in dict.fromkeys(r["shape"] for r in rows if r["study"] == "sweep"):
            vals = [r["over_model"] for r in rows if r["impl"] == impl and r["shape"] == shape
                    and r["study"] == "sweep" and r["over_model"] != ""]
            if vals:
                lines.append([impl, _size(shape), f"{statistics.median(vals):.2f}", _span(vals)])
    out = [md_table(["implementation", "N³", "measured / model (median)", "range"], lines)]
    biggest = max((r["n"] for r in rows if r["study"] == "sweep" and r["n"] != ""), default=None)
    mem = [r for r in rows if r["study"] == "sweep" and r["n"] == biggest and r["impl"] == PFFT
           and r["peak_bytes"] != ""]
    if mem:
        chain = {(r["dtype"], r["kind"], r["grid"]): r for r in rows
                 if r["study"] == "sweep" and r["impl"] == CHAIN and r["n"] == biggest}
        lines = [[_size(r["shape"]), r["dtype"], r["kind"], r["grid"],
                  f"{r['block_bytes'] / 2**20:.0f}", fmt(r["peak_over_block"], "{:.2f}"),
                  fmt(r["xla_peak_bytes"] / r["block_bytes"], "{:.2f}"),
                  fmt(chain.get((r["dtype"], r["kind"], r["grid"]), {}).get("peak_over_block"),
                      "{:.2f}")] for r in mem]
        out.append(md_table(["N³", "dtype", "kind", "grid", "input block MiB",
                             "pfft (arg + out + temp) / block", "pfft XLA peak / block",
                             "chain (arg + out + temp) / block"], lines))
    return "\n\n".join(out)


#: the docs' tables and figures: data file in docs/data -> what report() makes of it
DOCS = {"peers.csv": ("fftn.md", "peers.md", "fftn.png", "peers.png"),
        "transforms.csv": ("transforms.md", "transforms_model.png", "transforms_scaling.png")}


def report(data: str, figures: str) -> list[str]:
    """``fftn`` and ``peers`` (tables in ``data``, figures in ``figures``) from
    ``data/peers.csv``, the cost model's and the scaling's from ``data/transforms.csv``:
    the paths written."""
    done = []
    peers = os.path.join(data, "peers.csv")
    if os.path.exists(peers):
        rows, info = read_csv(peers), read_info(peers)
        done += [write_doc(os.path.join(data, "fftn.md"), info, one_device_doc(rows)),
                 write_doc(os.path.join(data, "peers.md"), info, peers_doc(rows)),
                 one_device_plot(rows, os.path.join(figures, "fftn.png"), common.figure_note(info)),
                 ratios_plot(rows, os.path.join(figures, "peers.png"), common.figure_note(info))]
    sweep = os.path.join(data, "transforms.csv")
    if os.path.exists(sweep):
        rows, info = read_csv(sweep), read_info(sweep)
        note = common.figure_note(info)
        done += [write_doc(os.path.join(data, "transforms.md"), info, cost_model_doc(rows)),
                 model_plot(rows, os.path.join(figures, "transforms_model.png"), note),
                 scaling_plot(rows, os.path.join(figures, "transforms_scaling.png"), note)]
    return [p for p in done if p]
