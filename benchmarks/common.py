"""The benchmarks' shared harness: simulated devices, the malloc setting, timing (one loop,
:func:`timings`, that every benchmark measures through: medians, alternated calls, the
slowest MPI rank), what a run records about itself (the command, the machine, the date),
CSV and Markdown tables, and plots.

Every benchmark writes ``NAME.csv`` (one row per measurement), ``NAME.json`` (the run:
:func:`run_info`) and ``NAME.md`` under its ``--out``; ``python -m benchmarks report``
renders the tables and figures of the docs from the CSV and JSON files in ``docs/data``.
"""
from __future__ import annotations

import csv
import datetime
import json
import math
import os
import platform
import shlex
import statistics
import sys
import time


def simulate_cpu_devices(n: int) -> None:
    """Ask XLA for ``n`` CPU devices; must run before JAX starts its backend."""
    flags = os.environ.get("XLA_FLAGS", "")
    if "xla_force_host_platform_device_count" not in flags:
        os.environ["XLA_FLAGS"] = f"{flags} --xla_force_host_platform_device_count={n}".strip()


def devices_in_words() -> str:
    """The devices JAX runs on here, for a run's record: ``"8 simulated CPU devices"``,
    or ``"one NVIDIA H100 80GB HBM3 (gpu)"`` where JAX's default backend is a GPU."""
    import jax

    devices = jax.devices()
    if devices[0].platform == "cpu":
        return (f"{len(devices)} simulated CPU devices" if len(devices) > 1
                else "one CPU device")
    count = "one" if len(devices) == 1 else str(len(devices))
    return f"{count} {devices[0].device_kind} ({devices[0].platform})"


#: glibc malloc's setting for the ratio benchmarks (``--malloc steady``): one arena for
#: every thread, and blocks up to 1 GiB kept in its heap (no mapping threshold below
#: that, no trimming below 4 GiB). Under glibc's default each XLA thread allocates from
#: an arena of its own whose extra heaps are unmapped when freed, and blocks over 32
#: MiB are mapped anew unless the heap holds a free block that large: one device's
#: 128³ float64 ``rfftn`` then faults in its 17 MiB output on most calls (4,160 faults;
#: 10-12 ms a call against 5.5 ms without them) and its 256³ one on most (33,025
#: faults; about 105 against 55 ms), while pfft's smaller blocks fault less, which
#: flattered pfft at random (docs/performance.md, "The one-device baseline"). Under this
#: setting neither side maps blocks anew once warm; ``real_workloads`` reports the faults
#: per call of both sides.
STEADY_MALLOC = ("glibc.malloc.arena_max=1", "glibc.malloc.mmap_threshold=1073741824",
                 "glibc.malloc.trim_threshold=4294967296")
MALLOC_CHOICES = ("steady", "default")


def add_malloc_argument(ap) -> None:
    """The ``--malloc`` option of a benchmark that times ratios to one device."""
    ap.add_argument("--malloc", choices=MALLOC_CHOICES, default="steady",
                    help="glibc malloc setting: steady (default; one arena, blocks up to 1 "
                         "GiB reused, so neither side faults pages in once warm) or the "
                         "process's default")


#: how this process was started when ``python -m benchmarks TOPIC`` started it:
#: ``("-m", "benchmarks", TOPIC)`` (set by ``benchmarks/__main__.py``), else None
LAUNCH: tuple[str, ...] | None = None


def command(module: str, argv=None) -> str:
    """The command line that runs this benchmark again: ``python -m benchmarks TOPIC
    ARGS`` where it was started so, else ``python -m MODULE ARGS``."""
    argv = sys.argv[1:] if argv is None else argv
    return "python " + " ".join(shlex.quote(a) for a in (*(LAUNCH or ("-m", module)), *argv))


def apply_malloc(choice: str, module: str, argv=None) -> str:
    """Run under glibc malloc setting ``choice``; returns the setting, for the header.

    ``"steady"`` needs ``GLIBC_TUNABLES`` (:data:`STEADY_MALLOC`), which glibc reads at
    start-up: unless it is already set, the benchmark starts again in this process's
    place (the command that started it, :func:`command`, with ``argv``, default the
    command line's arguments). Not glibc (or not Linux): nothing to do.
    """
    argv = sys.argv[1:] if argv is None else argv
    tunables = os.environ.get("GLIBC_TUNABLES", "")
    have = [t for t in tunables.split(":") if t]
    if choice == "default":
        return f"malloc default{' (' + tunables + ')' if tunables else ''}"
    if not sys.platform.startswith("linux"):
        return "malloc default (no glibc tunables here)"
    if all(t in have for t in STEADY_MALLOC):
        return "malloc steady (" + ":".join(STEADY_MALLOC) + ")"
    ours = {t.split("=")[0] for t in STEADY_MALLOC}
    keep = [t for t in have if t.split("=")[0] not in ours]
    env = dict(os.environ, GLIBC_TUNABLES=":".join(keep + list(STEADY_MALLOC)))
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(sys.executable, [sys.executable, *(LAUNCH or ("-m", module)), *argv], env)
    raise RuntimeError("os.execve returned")  # pragma: no cover


# -- the timing harness -----------------------------------------------------------------
# Every benchmark measures through :func:`timings`, the one loop: warm-up calls, then
# ``repeats`` rounds in which each candidate runs once (alternated, so that all see the
# same state of a shared machine), each call waited for. The other functions here are
# views of it: medians (:func:`compare`, :func:`median_time`, :func:`paired_medians`),
# the slowest MPI rank (:func:`slowest_rank_times`) and page faults (:func:`faults_per_call`).
def block(out):
    """Wait for ``out``: any pytree of JAX arrays, or anything else with a
    ``block_until_ready`` method (host values are ready when they are returned)."""
    if "jax" in sys.modules:
        import jax
        return jax.block_until_ready(out)
    if hasattr(out, "block_until_ready"):
        out.block_until_ready()
    return out


def timings(fns, *, repeats: int = 7, warmup: int = 1, calls: int = 1,
            batch_s: float | None = None, budget: float | None = None,
            max_repeats: int = 101, before=None, reduce=None,
            clock=time.perf_counter) -> list[list[float]]:
    """What each call of ``fns`` (functions of no arguments) takes, in seconds: one list
    per candidate, one entry per repeat.

    Each candidate is called ``warmup`` times (its result waited for: :func:`block`).
    Then, ``repeats`` times, every candidate in turn (alternated within each repeat, so
    each runs the same number of times under the same load): ``before()`` where given
    (a barrier), the clock read, ``calls`` calls back to back (dispatched without
    waiting, as a loop of steps does; the last one's result waited for), the clock read
    again; the difference over ``calls``, passed through ``reduce`` where given (the
    slowest MPI rank's), is the entry.

    ``batch_s``: each candidate's ``calls`` instead, from one timed call of it (after
    the warm-up): as many as make about ``batch_s`` seconds, 1 to 50 (short calls,
    whose dispatch would count otherwise). ``budget``: more repeats (up to
    ``max_repeats``) for fast candidates, about ``budget`` seconds in all, from one
    timed round of them after the warm-up. ``clock``: what is counted (the default:
    wall time; :func:`faults_per_call` counts page faults).
    """
    fns = list(fns)
    for fn in fns:
        for _ in range(warmup):
            block(fn())
    counts = [calls] * len(fns)
    if batch_s is not None or budget is not None:
        once = []
        for fn in fns:
            start = clock()
            block(fn())
            once.append(clock() - start)
        if batch_s is not None:
            counts = [max(1, min(50, int(batch_s / max(t, 1e-6)))) for t in once]
        if budget is not None:
            repeats = int(min(max_repeats, max(repeats, budget / max(sum(once), 1e-6))))
    times: list[list[float]] = [[] for _ in fns]
    for _ in range(repeats):
        for fn, n, out in zip(fns, counts, times):
            if before is not None:
                before()
            start = clock()
            for _ in range(n - 1):
                fn()
            block(fn())
            t = (clock() - start) / n
            out.append(reduce(t) if reduce is not None else t)
    return times


def compare(*fns, **options) -> list[float]:
    """The median seconds of each of ``fns`` (functions of no arguments), timed
    alternately by :func:`timings` (its keyword ``options``): the same-run baseline
    and its candidates in one call."""
    return [statistics.median(t) for t in timings(fns, **options)]


def median_time(fn, *args, repeats: int = 7, warmup: int = 1, calls: int = 1,
                batch_s: float | None = None) -> float:
    """Median wall time of ``fn(*args)`` in seconds, after ``warmup`` calls
    (:func:`timings`: with ``calls > 1`` each timed run makes that many calls back to
    back and counts their mean)."""
    (t,) = compare(lambda: fn(*args), repeats=repeats, warmup=warmup, calls=calls,
                   batch_s=batch_s)
    return t


def paired_medians(first, first_arg, second, second_arg, repeats: int,
                   budget: float = 1.0) -> tuple[float, float]:
    """Median wall times in seconds of ``first(first_arg)`` and ``second(second_arg)``,
    called alternately so that both see the same state of a shared machine: at least
    ``repeats`` pairs, more (up to 101) for fast calls, about ``budget`` seconds in all,
    after one warm-up call of each (:func:`compare`)."""
    a, b = compare(lambda: first(first_arg), lambda: second(second_arg), repeats=repeats,
                   budget=budget)
    return a, b


def faults_per_call(fn, arg, calls: int = 5) -> float:
    """Median minor page faults of the whole process during one ``fn(arg)`` (after a
    warm-up call): what a call pays for blocks mapped anew (:func:`timings`, counting
    faults instead of seconds)."""
    import resource

    def faults() -> int:
        return resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    (counts,) = timings([lambda: fn(arg)], repeats=calls, clock=faults)
    return statistics.median(counts)


def first_device(platform: str):
    """The first JAX device of ``platform`` ("cpu" or "gpu"); exits saying why where
    there is none."""
    import jax
    try:
        return jax.devices(platform)[0]
    except RuntimeError as exc:
        sys.exit(f"no {platform} device: {exc}")


def machine() -> str:
    """This machine in words: its CPU model, cores, last-level cache and transparent huge
    page mode where Linux says, the Python and glibc versions."""
    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            model = next(line.split(":", 1)[1].strip() for line in f
                         if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    parts = [f"{os.cpu_count()}-core {model}"]
    for index in (3, 2):
        try:
            with open(f"/sys/devices/system/cpu/cpu0/cache/index{index}/size") as f:
                parts.append(f"L{index} {f.read().strip()}")
            break
        except OSError:
            continue
    try:
        with open("/sys/kernel/mm/transparent_hugepage/enabled") as f:
            mode = f.read().split("[")[1].split("]")[0]
        parts.append(f"transparent huge pages {mode}")
    except (OSError, IndexError):
        pass
    parts.append(f"Python {platform.python_version()}")
    libc, version = platform.libc_ver()
    if libc:
        parts.append(f"{libc} {version}")
    return ", ".join(parts)


def run_info(module: str, argv=None, where: str = "8 simulated CPU devices", **extra) -> dict:
    """What a run records about itself (written beside its CSV as ``NAME.json``): the
    command that runs it again, the date, the machine, where it ran (devices, malloc
    setting), the jax and pfft versions and the 1-minute load average at its start."""
    import subprocess

    import jax

    import pfft
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else math.nan
    version = pfft.__version__
    try:                                   # the commit of the checkout pfft runs from
        commit = subprocess.run(["git", "-C", os.path.dirname(pfft.__file__), "rev-parse",
                                 "--short", "HEAD"], capture_output=True, text=True,
                                timeout=10).stdout.strip()
        version += f" (the code of commit {commit})" if commit else ""
    except (OSError, subprocess.SubprocessError):
        pass
    return {"command": command(module, argv), "date": str(datetime.date.today()),
            "machine": machine(), "where": where, "jax": jax.__version__,
            "pfft": version, "load": round(load, 2), **extra}


def run_header(title: str, info: dict) -> str:
    """A benchmark's first line: ``pfft <title>``, the date, the machine, the jax version
    and where it ran (from :func:`run_info`)."""
    return (f"pfft {title}, {info['date']}, {info['machine']}, jax {info['jax']}, "
            f"{info['where']}")


def caption(info: dict) -> str:
    """One line under a table of the docs: the machine, where and when it ran, and the
    command that measures it again (from a run's :func:`run_info`)."""
    when = info.get("date", "date not recorded")
    if info.get("load") is not None:
        when += f", load average {info['load']} at the start"
    versions = ", ".join(f"{k} {info[k]}" for k in ("jax", "pfft") if info.get(k))
    text = "; ".join(filter(None, [info.get("machine"), info.get("where"), when, versions]))
    out = f"*{text}.* Measured by `{info.get('command', 'command not recorded')}`."
    if info.get("measured_with"):       # a run of the same benchmark under an earlier name
        run = info["measured_with"]
        run = run if isinstance(run, list) else [run]
        out = (f"*{text}.* Measured by " + " and ".join(f"`{c}`" for c in run)
               + f"; `{info['command']}` measures it again.")
    if info.get("source"):
        out += " " + info["source"]
    if info.get("note"):
        out += " " + info["note"]
    return out


def figure_note(info: dict) -> str:
    """The same as :func:`caption` in plain text, for the bottom of a figure."""
    return caption(info).replace("*", "").replace("`", "")


#: how many ``irfftn(rfftn(x))`` a round-trip benchmark runs in one jitted call
ROUND_TRIPS = 3


def jitted_round_trips(forward, backward, count: int = ROUND_TRIPS):
    """``jax.jit`` of ``count`` round trips ``x = backward(forward(x))`` in a row."""
    import jax

    def run(x):
        for _ in range(count):
            x = backward(forward(x))
        return x
    return jax.jit(run)


def parse_grids(names) -> list[tuple[int, ...]]:
    """``["2x2", "8"]`` -> ``[(2, 2), (8,)]``."""
    return [tuple(int(v) for v in name.split("x")) for name in names]


def write_results(rows: list[dict], markdown: str, out: str, name: str,
                  info: dict | None = None) -> None:
    """Write ``rows`` as ``out/name.csv``, the table as ``out/name.md`` and the run's
    :func:`run_info` as ``out/name.json``."""
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, f"{name}.csv"), "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    with open(os.path.join(out, f"{name}.md"), "w") as f:
        f.write(markdown + "\n")
    if info is not None:
        write_info(os.path.join(out, f"{name}.csv"), info)


def write_info(csv_path: str, info: dict) -> None:
    """The run's :func:`run_info` beside its CSV (``NAME.json``)."""
    with open(os.path.splitext(csv_path)[0] + ".json", "w") as f:
        json.dump(info, f, indent=1, ensure_ascii=False)
        f.write("\n")


def read_info(csv_path: str) -> dict:
    """What the run that wrote ``csv_path`` recorded about itself (``NAME.json`` beside
    it; empty where there is none)."""
    try:
        with open(os.path.splitext(csv_path)[0] + ".json") as f:
            return json.load(f)
    except FileNotFoundError:
        return {}


def write_doc(path: str, info: dict, *parts: str) -> str:
    """A page section of the docs (``docs/data/NAME.md``, which the pages include): the
    tables and lines ``parts``, then the :func:`caption` of the run."""
    text = "\n\n".join([*parts, caption(info)]) + "\n"
    with open(path, "w") as f:
        f.write(text)
    return path


def read_results(path: str, text=(), ints=()) -> list[dict]:
    """The rows of a CSV that :func:`write_results` wrote: the ``text`` columns as
    strings, the ``ints`` as ints, every other column as a float (NaN where blank:
    not measured)."""
    def number(v: str) -> float:
        return float(v) if v != "" else math.nan
    with open(path, newline="") as f:
        return [{k: v if k in text else int(v) if k in ints else number(v)
                 for k, v in r.items()} for r in csv.DictReader(f)]


def read_table_rows(path: str, text=(), ints=()) -> list[dict]:
    """:func:`read_results`, with ``None`` for what was not measured (the tables print
    why: failed, not available) instead of NaN."""
    return [{k: None if isinstance(v, float) and math.isnan(v) else v for k, v in r.items()}
            for r in read_results(path, text, ints)]


def weak_shape(base: int, parts: int) -> tuple[int, int, int]:
    """``base³`` per device or rank: double axis 0, then 1, then 2, ... to ``base³·parts``."""
    shape = [base] * 3
    i = 0
    while math.prod(shape) < base ** 3 * parts:
        shape[i % 3] *= 2
        i += 1
    return tuple(shape)


def stamp(fig, note: str | None) -> None:
    """Write ``note`` (the machine, the date, the command that made the figure) along
    the bottom of a matplotlib figure, below its axes, with room made for it."""
    if note:
        import textwrap

        width, height = fig.get_size_inches()
        lines = textwrap.wrap(note, width=max(40, int(width * 17)))
        fig.text(0.005, 0.005, "\n".join(lines), fontsize=6.5, color="0.35", ha="left",
                 va="bottom")
        fig.subplots_adjust(bottom=max(fig.subplotpars.bottom,
                                       (0.11 * len(lines) + 0.5) / height))


def pyplot():
    """matplotlib's ``pyplot`` on the file-only Agg backend (``pip install 'pfft[bench]'``)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def save_plot(fig, path: str, note: str | None) -> str:
    """Lay out a finished matplotlib figure, :func:`stamp` ``note`` on it, write it to
    ``path`` and close it; returns ``path``."""
    fig.tight_layout()
    stamp(fig, note)
    fig.savefig(path, dpi=120)
    pyplot().close(fig)
    return path


def markdown_table(rows, columns) -> str:
    """A Markdown table of ``rows`` (dicts): ``columns`` are ``(key, header, format)``;
    a NaN, or a column a row lacks, shows as "–" (not measured)."""
    lines = ["| " + " | ".join(h for _, h, _ in columns) + " |", "|" + "---|" * len(columns)]
    for r in rows:
        values = [r.get(k, math.nan) for k, _, _ in columns]  # older runs lack new columns
        cells = ["–" if isinstance(v, float) and math.isnan(v) else f.format(v)
                 for v, (_, _, f) in zip(values, columns)]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def add_distributed_arguments(ap) -> None:
    """``--distributed`` and its set-up options on an ``argparse`` parser: one JAX
    program over several processes (:func:`start_distributed`)."""
    ap.add_argument("--distributed", action="store_true",
                    help="one JAX program over several processes (jax.distributed)")
    ap.add_argument("--coordinator", help="with --distributed, outside srun: HOST:PORT")
    ap.add_argument("--num-processes", type=int)
    ap.add_argument("--process-id", type=int)


def start_distributed(args) -> tuple[bool, str]:
    """``jax.distributed.initialize`` from the options of
    :func:`add_distributed_arguments` (under ``srun`` with none, JAX finds them itself).

    Returns whether this is process 0 (the one that prints and writes) and the line
    that names the set-up."""
    import jax

    jax.distributed.initialize(args.coordinator, args.num_processes, args.process_id)
    return (jax.process_index() == 0,
            f"jax.distributed: {jax.process_count()} processes, {jax.device_count()} devices")


# -- under mpirun -----------------------------------------------------------------------
def quiet_barrier(comm) -> None:
    """A barrier that sleeps instead of spinning (the ranks share cores, or a device)."""
    req = comm.Ibarrier()
    while not req.Test():
        time.sleep(0.002)


def slowest_rank(comm) -> dict:
    """The options of :func:`timings` (and :func:`compare`) that time the slowest rank
    of ``comm``: each call started after a barrier, its time the largest over the
    ranks."""
    from mpi4py import MPI

    return dict(before=lambda: quiet_barrier(comm),
                reduce=lambda t: comm.allreduce(t, op=MPI.MAX))


def slowest_rank_times(fns, repeats: int, comm, warmup: int = 1) -> list[list[float]]:
    """Seconds each of ``fns`` takes on the slowest rank of ``comm``, ``repeats`` times
    (:func:`timings` with :func:`slowest_rank`: the calls interleaved, call 1 of each,
    call 2 of each, ..., after ``warmup`` calls of each, so that all see the same
    background load)."""
    return timings(fns, repeats=repeats, warmup=warmup, **slowest_rank(comm))
