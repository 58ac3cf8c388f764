"""Tables and a plot of per-device measurements and the predictions made from them.

The measured table is :mod:`benchmarks.per_device`'s (every figure measured on one
device). :func:`per_device_report` adds what :mod:`benchmarks.cost_model` predicts from
such a CSV: each plan's time on H100s with the all-to-alls modelled from published NCCL
figures, beside published times of other libraries, and the largest ``N³`` that fits.
Every column says whether its figures are measured or modelled. Needs no JAX: it only
reads the CSV. :func:`report` is what ``python -m benchmarks report`` calls.

    python -m benchmarks.model --per-device results/per_device_gpu.csv \\
        --markdown docs/data/gpu_model.md --plot docs/figures/gpu_model.png
"""
from __future__ import annotations

import math
import os

from .common import markdown_table, pyplot, read_results, save_plot
from .cost_model import (ANCHORS, GOAL, H100_NCCL, Anchor, exchange_seconds, largest_n,
                         model_grid, per_device_prediction, system_table)
from .floors import FLOOR_GOAL, STAGE_COLUMNS, STAGE_NOTE, floor_verdict, worst_cell

__all__ = ["load_per_device", "measured_table", "floor_verdict", "predictions",
           "per_device_report", "per_device_plot", "report", "DOCS", "FLOOR_GOAL"]

TEXT_COLUMNS = ("platform", "device", "device_memory_gib", "date", "jax", "command", "plan",
                "grid", "kind", "direction", "engine", "fft_engines", "exchange_groups",
                "exchange_sizes", "exchange_mib", "status") + STAGE_COLUMNS
ITEMSIZE = {"c2c": 8, "r2c": 4}           # bytes of an input point: complex64, float32
MEMORY_GOAL = (3.0, 2.0)                  # blocks a device may need: kept, donated


def load_per_device(path: str) -> list[dict]:
    """The rows of a ``per_device_<platform>.csv`` (blank figures as NaN; ``direction``
    forward in a CSV from before that option)."""
    rows = read_results(path, text=TEXT_COLUMNS, ints=("n", "devices"))
    for r in rows:
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
    exact, err = _num(r.get("exact_err")), _num(r.get("numpy_err"))
    parts = [] if math.isnan(exact) else [f"{exact:.0e} vs exact"]
    diff = _num(r.get("engine_diff"))       # CSVs from before the exact check
    if not math.isnan(diff) and r["engine"] != "xla":
        parts.append(f"{diff:.0e} vs xla")
    if not math.isnan(err):
        parts.append(f"{err:.0e} vs numpy")
    return ", ".join(parts) or "–"


def _routes(rows: list[dict]) -> str:
    seen = {}
    for r in rows:
        if r["engine"] == "auto" and r.get("fft_engines"):
            backward = " backward" if r["direction"] == "backward" else ""
            seen.setdefault(f"{r['plan']} {r['kind']}{backward}", r["fft_engines"])
    return ("the engine of each FFT stage, in order: " +
            "; ".join(f"{k}: {v}" for k, v in seen.items())) if seen else "not run"


MEASURED_NOTE = (
    "Every figure measured on one device. time: the per-device program (forward, or "
    "backward: the plan's inverse, its complex spectrum in); copy of block: `jnp.copy` of "
    "the input block (the bandwidth unit); in copies: the stand-in transfers alone, one "
    "copy of each exchange's bytes (a real exchange replaces them by the transfer); local "
    "work = time − in copies: the local transforms, packing and unpacking. floor: the "
    "device's own FFT of a block of the same size (`jnp.fft.fftn`, `rfftn` for r2c, "
    "`ifftn` / `irfftn` backward: cuFFT's 3-D transform on a GPU) plus one copy of the "
    "bytes each exchange moves (the copy of block scaled to them: for c2c one copy of the "
    "block per exchange); local / floor: the local work over it (– where a run measured "
    "no floor). " + STAGE_NOTE + " memory: "
    "arguments + outputs + temporaries (`compiled.memory_analysis()`) in blocks of the "
    "input, kept and with the input donated (the native engine's cuFFT work area is among "
    "the temporaries; the work area of `lax.fft`'s cuFFT plans, which XLA allocates when "
    "the program runs, is not). check: vs exact, the largest error of the output for "
    "three point sources against its exact value at every point, over the largest value "
    "(older CSVs: vs xla, relative L2 difference of a strided sample from the xla "
    "engine's), and (small blocks) relative L2 error against numpy in float64 of the "
    "same block-level math. auto: ")


def measured_table(rows: list[dict], header: str = "") -> str:
    """The Markdown table of per-device measurements (every figure measured): rows as
    :func:`load_per_device` or :func:`benchmarks.per_device.rows` give them."""
    view = []
    for r in rows:
        v = dict(r, exchange_names=_exchange_names(r), plan_grid=f"{r['plan']} {r['grid']}",
                 memory=_pair(r.get("kept_blocks"), r.get("donated_blocks")), check=_check(r),
                 time=r["status"] if r["status"] != "ok" else f"{_num(r['ms']):.3g}",
                 worst=worst_cell(r))
        for key in ("copy_ms", "copies_ms", "local_ms", "local_over_copy", "block_mib",
                    "floor_ms", "local_over_floor"):
            v[key] = _num(r.get(key))
        view.append(v)
    columns = [("n", "N³", "{}³"), ("devices", "p", "{}"), ("plan_grid", "plan", "{}"),
               ("kind", "kind", "{}"), ("direction", "direction", "{}"),
               ("engine", "engine", "{}"), ("block_mib", "block (MiB)", "{:.4g}"),
               ("exchange_names", "exchanges", "{}"), ("time", "time (ms)", "{}"),
               ("copy_ms", "copy of block (ms)", "{:.3g}"),
               ("copies_ms", "in copies (ms)", "{:.3g}"),
               ("local_ms", "local work (ms)", "{:.3g}"),
               ("local_over_copy", "local / copy", "{:.2f}"),
               ("floor_ms", "floor (ms)", "{:.3g}"),
               ("local_over_floor", "local / floor", "{:.2f}"),
               ("worst", "worst stage (local / floor)", "{}"),
               ("memory", "memory kept / donated (blocks)", "{}"), ("check", "check", "{}")]
    out = [header, ""] if header else []
    out += [markdown_table(view, columns), "", MEASURED_NOTE + _routes(rows) + "."]
    verdict = floor_verdict(rows)
    return "\n".join(out + (["", verdict] if verdict else []))


def predictions(rows: list[dict], chunks: int = 4) -> list[dict]:
    """One prediction per measured configuration (size, GPUs, plan, kind).

    Forward programs only (those of the published times): :func:`per_device_prediction`
    of the engine pfft runs by default, ``auto`` (where it was not measured: the engine
    whose local work is least), beside each engine's measured local work.
    """
    out = []
    rows = _forward(rows)
    keys = dict.fromkeys((r["n"], r["devices"], r["plan"], r["kind"]) for r in rows if _ok(r))
    for key in keys:
        ran = {r["engine"]: r for r in rows
               if _ok(r) and (r["n"], r["devices"], r["plan"], r["kind"]) == key}
        best = ran.get("auto") or min(ran.values(), key=lambda r: _num(r["local_ms"]))
        p = per_device_prediction(best, chunks=chunks)
        out.append(dict(n=key[0], devices=key[1], plan=key[2], kind=key[3],
                        grid=best["grid"], engine=best["engine"],
                        local={e: _num(r["local_ms"]) for e, r in ran.items()},
                        kept=best["kept_blocks"], donated=best["donated_blocks"],
                        exchanges=_exchange_names(best), **p))
    return out


def _ms(seconds: float) -> str:
    return "–" if seconds is None or math.isnan(seconds) else f"{seconds * 1e3:.2f}"


def _prediction_table(preds: list[dict]) -> str:
    engines = [e for e in ("native", "xla", "auto") if any(e in p["local"] for p in preds)]
    view = [dict(p, local_text=" / ".join(
        "–" if math.isnan(p["local"].get(e, math.nan)) else f"{p['local'][e]:.2f}"
        for e in engines), plan_grid=f"{p['plan']} {p['grid']}",
        comm=_ms(p["comm_s"]), serial=_ms(p["serial_s"]), overlap=_ms(p["overlap_s"]),
        memory=_pair(p["kept"], p["donated"])) for p in preds]
    columns = [("n", "N³", "{}³"), ("devices", "GPUs", "{}"), ("plan_grid", "plan", "{}"),
               ("kind", "kind", "{}"), ("exchanges", "exchanges", "{}"),
               ("local_text", f"local work {' / '.join(engines)} (ms, measured)", "{}"),
               ("engine", "engine", "{}"), ("comm", "all-to-alls (ms, modelled)", "{}"),
               ("serial", "pfft today: local + all-to-alls (ms)", "{}"),
               ("overlap", "overlapped: local work beside all-to-alls, modelled (ms)", "{}"),
               ("memory", "memory kept / donated (blocks, measured)", "{}")]
    return markdown_table(view, columns)


def _floor(anchor: Anchor) -> float:
    """The all-to-alls alone of the anchor's plan (slab or pencil) at its size and GPU
    count, the whole complex64 block sent per exchange: modelled."""
    grid = (anchor.gpus,) if "slab" in anchor.label else model_grid(anchor.gpus)
    groups = [(0,)] if len(grid) == 1 else [(1,), (0,)]
    block = 8 * anchor.n ** 3 / anchor.gpus
    return sum(exchange_seconds(grid, groups, [block] * len(groups)))


def _anchor_rows(preds: list[dict]) -> list[dict]:
    out = []
    for a in ANCHORS:
        row = dict(label=a.label, n=a.n, gpus=a.gpus, published=a.ms)
        mine = [p for p in preds if p["n"] == a.n and p["devices"] == a.gpus
                and p["kind"] == "c2c"]
        if "floor" in a.label:
            row.update(pfft=_floor(a) * 1e3, how="all-to-alls alone, modelled",
                       overlap=math.nan)
        elif mine:
            best = min(mine, key=lambda p: p["serial_s"])
            lap = min(mine, key=lambda p: p["overlap_s"])
            row.update(pfft=best["serial_s"] * 1e3, overlap=lap["overlap_s"] * 1e3,
                       how=f"{best['plan']} {best['grid']}, {best['engine']}")
        else:
            row.update(pfft=math.nan, overlap=math.nan, how="not measured")
        row["ratio"] = row["pfft"] / a.ms
        out.append(row)
    return out


def _anchor_table(preds: list[dict]) -> str:
    columns = [("label", "published", "{}"), ("n", "N³", "{}³"), ("gpus", "H100s", "{}"),
               ("published", "published (ms, ±15 %)", "{:.1f}"),
               ("pfft", "pfft today (ms): local measured + all-to-alls modelled", "{:.2f}"),
               ("how", "plan, engine", "{}"),
               ("overlap", "overlapped (ms): local work beside all-to-alls, modelled",
                "{:.2f}"),
               ("ratio", "pfft today / published", "{:.2f}")]
    return markdown_table(_anchor_rows(preds), columns)


def _verdict(preds: list[dict]) -> str:
    """Whether the prediction meets the goal (pfft ≤ cuFFTMp at 1024³ on 8 H100), in
    series and as the overlap is modelled, and why."""
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
    lap = min(mine, key=lambda p: p["overlap_s"])
    lap_met = lap["overlap_s"] * 1e3 <= goal.ms
    text += (f". Overlapped, as modelled (the local work and the all-to-alls taken as cut "
             f"into pieces, each piece's all-to-all beside the next piece's work): "
             f"{_ms(lap['overlap_s'])} ms ({lap['plan']}, {lap['engine']}): "
             f"**{'met' if lap_met else 'not met'}**"
             + ("" if lap_met else ": the longer of the two, local work or all-to-alls, "
                f"is already {max(lap['local_s'], lap['comm_s']) * 1e3:.2f} ms") + ". ")
    text += ("The overlap is modelled, not a program pfft runs: one GPU cannot show whether "
             "XLA would run a piece's all-to-all beside the next piece's transforms; that "
             "needs several GPUs.")
    return head + text


def _in_forward_blocks(r: dict, key: str) -> float:
    """``key`` (blocks of the row's input) in blocks of the forward input: a real plan's
    backward program takes the larger complex spectrum in."""
    forward_mib = r["n"] ** 3 / r["devices"] * ITEMSIZE[r["kind"]] / 2 ** 20
    return _num(r[key]) * _num(r["block_mib"]) / forward_mib


def _fewest(at: list[dict], key: str) -> dict:
    """Of one configuration's rows, the row of the fewest blocks ``key`` in each
    direction, the more of those (a plan runs both directions)."""
    per = [min((r for r in at if r["direction"] == d),
               key=lambda r: _in_forward_blocks(r, key))
           for d in dict.fromkeys(r["direction"] for r in at)]
    return max(per, key=lambda r: _in_forward_blocks(r, key))


def _memory_rows(rows: list[dict], memory_bytes: float) -> list[dict]:
    """Per GPU count, plan and kind: the fewest blocks measured at the largest size
    run, in blocks of the forward input (where the backward program was measured
    too, the more of the two directions' fewest: a plan runs both), and the largest
    N³ that fits with them (N a multiple of every grid size)."""
    def name(r: dict) -> str:
        return r["engine"] + (", backward" if r["direction"] == "backward" else "")

    out = []
    measured = [r for r in rows if not math.isnan(_num(r.get("kept_blocks")))]
    keys = dict.fromkeys((r["devices"], r["plan"], r["kind"]) for r in measured)
    for p, plan, kind in sorted(keys, key=lambda k: (k[0], k[1] != "slab", k[2])):
        mine = [r for r in measured if (r["devices"], r["plan"], r["kind"]) == (p, plan, kind)]
        n = max(r["n"] for r in mine)
        at = [r for r in mine if r["n"] == n]
        kept, donated = _fewest(at, "kept_blocks"), _fewest(at, "donated_blocks")
        k = _in_forward_blocks(kept, "kept_blocks")
        d = _in_forward_blocks(donated, "donated_blocks")
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


def _network_note() -> str:
    nccl = H100_NCCL
    return (f"All-to-alls modelled with published NCCL figures: {nccl.nvlink_bw / 1e9:.0f} "
            f"GB/s per GPU over NVLink inside a node of {nccl.gpus_per_node}, "
            f"{nccl.ib_bw / 1e9:.0f} GB/s per GPU over NDR InfiniBand between "
            f"nodes (devices numbered as the mesh is, the last grid axis fastest); each sends "
            f"(1 − 1/p) of its block. Published times read off published plots (±15 %).")


def _predictions_note(chunks: int) -> str:
    return (" pfft today: the measured local work of the engine pfft runs by default "
            "(auto), plus the modelled all-to-alls, in series, as its programs run them. "
            "Overlapped: a model, not a program pfft runs: the same local work and "
            f"all-to-alls as if both were cut into {chunks} pieces, each piece's all-to-all "
            f"beside the next piece's local work (the longer of the two plus 1/{chunks} of "
            "the shorter). Whether XLA would run one piece's all-to-all beside the next "
            "piece's transforms cannot be seen on one GPU: only a run on several GPUs can "
            "show it.")


def per_device_report(path: str | None, *, chunks: int = 4, memory_bytes: float = 76 * 2 ** 30,
                      command: str = "", figure: str | None = None) -> str:
    """The Markdown the docs include: how it was made, the measured per-device table,
    the predictions (with ``figure``, the path of :func:`per_device_plot`'s image
    relative to the Markdown file), the comparison with published figures, the goal's
    verdict and the largest sizes that fit. Without ``path`` (no GPU measured yet):
    the published figures beside the modelled all-to-all floors only."""
    if path is None:
        return "\n".join([
            "*Not measured on a GPU yet: the per-device table and the predictions appear "
            "here when `python -m benchmarks.per_device --platform gpu` has run and "
            "`python -m benchmarks.model --per-device results/per_device_gpu.csv --markdown "
            f"docs/data/gpu_md` has written this file. Written by `{command}`.*", "",
            _network_note(), "", _anchor_table([])])
    rows = load_per_device(path)
    if not rows:
        raise ValueError(f"{path}: no rows")
    meta = rows[0]
    preds = predictions(rows, chunks)
    return "\n".join([
        f"*Measured on {meta['device']} ({meta['device_memory_gib']} GiB for XLA), jax "
        f"{meta['jax']}, {meta['date']}: `{meta['command']}`. Predictions: `{command}`.*", "",
        "### The per-device programs (measured)", "", measured_table(rows), "",
        "### Predicted times on H100s", "", _network_note() + _predictions_note(chunks), "",
        _prediction_table(preds), "",
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


def _plot_against_published(ax, preds: list[dict]) -> None:
    """pfft's predicted times at the published ones' sizes (stacked bars: local work
    and all-to-alls; a marker: overlapped), beside the published times (lines)."""
    cases = list(dict.fromkeys((a.n, a.gpus) for a in ANCHORS))
    width, step = 0.3, 1.8                     # bar width; room for the labels beside
    for i, (n, g) in enumerate(cases):
        for j, plan in enumerate(("slab", "pencil")):
            mine = [p for p in preds if (p["n"], p["devices"], p["plan"]) == (n, g, plan)]
            if not mine:
                continue
            p, x = mine[0], i * step + (j - 0.5) * width
            color = "C0" if plan == "slab" else "C2"
            ax.bar(x, p["local_s"] * 1e3, width, color=color,
                   label=f"{plan}: local work (measured)" if i == 0 else None)
            ax.bar(x, p["comm_s"] * 1e3, width, bottom=p["local_s"] * 1e3, color="0.75",
                   edgecolor=color, label="all-to-alls (modelled)" if (i, j) == (0, 0) else None)
            ax.plot([x], [p["overlap_s"] * 1e3], "v", color="k", markerfacecolor="none",
                    label="overlapped (modelled)" if (i, j) == (0, 0) else None)
        for a in ANCHORS:
            if (a.n, a.gpus) == (n, g):
                ax.hlines(a.ms, i * step - 0.4, i * step + 0.4, linestyles="--" if "floor"
                          in a.label else "-", colors="C3" if "cuFFTMp" in a.label else "C1")
                ax.annotate(a.label, (i * step + 0.42, a.ms), fontsize=6.5, va="center")
    ax.set_xticks([i * step for i in range(len(cases))], [f"{n}³ on {g}" for n, g in cases])
    ax.set(ylabel="ms (forward, complex64)", title="pfft predicted (bars) vs published (lines)",
           xlim=(-0.6, (len(cases) - 1) * step + 1.5))
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=7, loc="upper left")


def _plot_against_gpus(ax, preds: list[dict]) -> None:
    """The predicted time of each size's best plan against the GPUs, in series and
    overlapped, with the published times as stars."""
    for k, n in enumerate(sorted({p["n"] for p in preds})):
        by = {}
        for p in preds:
            if p["n"] == n:
                prev = by.get(p["devices"])
                by[p["devices"]] = p if prev is None or p["serial_s"] < prev["serial_s"] else prev
        gpus = sorted(by)
        ax.plot(gpus, [by[g]["serial_s"] * 1e3 for g in gpus], "o-", color=f"C{k}",
                label=f"{n}³ today")
        ax.plot(gpus, [by[g]["overlap_s"] * 1e3 for g in gpus], "s:", color=f"C{k}",
                markerfacecolor="none", label=f"{n}³ overlapped (model)")
    for a in ANCHORS:
        if "floor" not in a.label:
            ax.plot([a.gpus], [a.ms], "*", color="C3", markersize=9)
            ax.annotate(f"{a.label} {a.n}³", (a.gpus, a.ms), fontsize=6,
                        xytext=(4, 2), textcoords="offset points")
    ax.set(xscale="log", yscale="log", xlabel="H100s", ylabel="ms",
           title="predicted, best plan (stars: published)")
    ax.legend(fontsize=7)


def per_device_plot(path: str, png: str, *, chunks: int = 4, command: str = "") -> None:
    """Two panels from a per-device CSV: pfft's predicted times (stacked as local work
    and all-to-alls, and overlapped as modelled) beside the published ones at their
    sizes, and the predicted time against GPUs for each size."""
    rows = load_per_device(path)
    preds = [p for p in predictions(rows, chunks) if p["kind"] == "c2c"]
    fig, (left, right) = pyplot().subplots(1, 2, figsize=(12, 4.8))
    _plot_against_published(left, preds)
    _plot_against_gpus(right, preds)
    meta = rows[0]
    save_plot(fig, png, f"local work measured on one {meta['device']}, {meta['date']} "
                        f"(`{meta['command']}`); all-to-alls and their overlap modelled (NCCL "
                        f"370 GB/s NVLink, 48 GB/s InfiniBand per GPU); `{command}`")


#: the docs' tables: what report() writes (no data file: the model is a function of the code)
DOCS = {"benchmarks/cost_model.py": ("model_systems.md",),
        "per_device_gpu.csv": ("gpu_model.md", "gpu_model.png")}


def report(data: str, figures: str) -> list[str]:
    """``data/model_systems.md``: :func:`benchmarks.cost_model.system_table` (``python -m
    benchmarks model``), under a line saying that every figure in it is modelled; and
    where ``data`` holds a GPU run's per-device programs (``per_device_gpu.csv``),
    ``data/gpu_model.md`` and ``figures/gpu_model.png``: the predictions from them
    (``--per-device``)."""
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
