"""Shared benchmark helpers: simulated devices, timing by median of repeated runs."""
from __future__ import annotations

import csv
import math
import os
import statistics
import sys
import time


def simulate_cpu_devices(n: int) -> None:
    """Ask XLA for ``n`` CPU devices; must run before JAX starts its backend."""
    flags = os.environ.get("XLA_FLAGS", "")
    if "xla_force_host_platform_device_count" not in flags:
        os.environ["XLA_FLAGS"] = f"{flags} --xla_force_host_platform_device_count={n}".strip()


#: glibc malloc's setting for the ratio benchmarks (``--malloc steady``): one arena for
#: every thread, and blocks up to 1 GiB kept in its heap (no mapping threshold below
#: that, no trimming below 4 GiB). Under glibc's default each XLA thread allocates from
#: an arena of its own whose extra heaps are unmapped when freed, and blocks over 32
#: MiB are mapped anew unless the heap holds a free block that large: one device's
#: 128³ float64 ``rfftn`` then faults in its 17 MiB output on most calls (4,160 faults;
#: 10-12 ms a call against 5.5 ms without them) and its 256³ one on most (33,025
#: faults; about 105 against 55 ms), while pfft's smaller blocks fault less, which
#: flattered pfft at random (docs/benchmarks.md, session 19). Under this setting
#: neither side maps blocks anew once warm; ``real_workloads`` reports the faults per
#: call of both sides.
STEADY_MALLOC = ("glibc.malloc.arena_max=1", "glibc.malloc.mmap_threshold=1073741824",
                 "glibc.malloc.trim_threshold=4294967296")
MALLOC_CHOICES = ("steady", "default")


def add_malloc_argument(ap) -> None:
    """The ``--malloc`` option of a benchmark that times ratios to one device."""
    ap.add_argument("--malloc", choices=MALLOC_CHOICES, default="steady",
                    help="glibc malloc setting: steady (default; one arena, blocks up to 1 "
                         "GiB reused, so neither side faults pages in once warm) or the "
                         "process's default")


def apply_malloc(choice: str, module: str, argv=None) -> str:
    """Run under glibc malloc setting ``choice``; returns the setting, for the header.

    ``"steady"`` needs ``GLIBC_TUNABLES`` (:data:`STEADY_MALLOC`), which glibc reads at
    start-up: unless it is already set, the benchmark starts again in this process's
    place (``python -m module`` with ``argv``, default the command line's arguments).
    Not glibc (or not Linux): nothing to do.
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
    os.execve(sys.executable, [sys.executable, "-m", module, *argv], env)
    raise RuntimeError("os.execve returned")  # pragma: no cover


def faults_per_call(fn, arg, calls: int = 5) -> float:
    """Median minor page faults of the whole process during one ``fn(arg)`` (after a
    warm-up call): what a call pays for blocks mapped anew."""
    import resource
    fn(arg).block_until_ready()
    counts = []
    for _ in range(calls):
        before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        fn(arg).block_until_ready()
        counts.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
    return statistics.median(counts)


def median_time(fn, *args, repeats: int = 7, warmup: int = 1, calls: int = 1) -> float:
    """Median wall time of ``fn(*args)`` in seconds, after ``warmup`` calls.

    With ``calls > 1`` each timed run makes that many calls back to back (dispatched
    without waiting, as a loop of steps does, then waited for once) and counts their
    mean: for calls short enough that dispatching them would count otherwise."""
    for _ in range(warmup):
        fn(*args).block_until_ready()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(calls - 1):
            fn(*args)
        fn(*args).block_until_ready()
        times.append((time.perf_counter() - start) / calls)
    return statistics.median(times)


def paired_medians(first, first_arg, second, second_arg, repeats: int,
                   budget: float = 1.0) -> tuple[float, float]:
    """Median wall times in seconds of ``first(first_arg)`` and ``second(second_arg)``,
    called alternately so that both see the same state of a shared machine: at least
    ``repeats`` pairs, more (up to 101) for fast calls, about ``budget`` seconds in all,
    after one warm-up call of each."""
    for fn, arg in ((first, first_arg), (second, second_arg)):
        fn(arg).block_until_ready()                   # compiles: the warm-up
    start = time.perf_counter()
    first(first_arg).block_until_ready()
    second(second_arg).block_until_ready()
    pair = time.perf_counter() - start
    runs = int(min(101, max(repeats, budget / max(pair, 1e-6))))
    times = ([], [])
    for _ in range(runs):
        for out, (fn, arg) in zip(times, ((first, first_arg), (second, second_arg))):
            start = time.perf_counter()
            fn(arg).block_until_ready()
            out.append(time.perf_counter() - start)
    return statistics.median(times[0]), statistics.median(times[1])


def first_device(platform: str):
    """The first JAX device of ``platform`` ("cpu" or "gpu"); exits saying why where
    there is none."""
    import jax
    try:
        return jax.devices(platform)[0]
    except RuntimeError as exc:
        sys.exit(f"no {platform} device: {exc}")


def run_header(title: str, where: str = "8 simulated CPU devices") -> str:
    """A benchmark's first line: ``pfft <title>``, the date, the machine, its cores,
    the jax version and ``where`` it ran."""
    import datetime
    import platform

    import jax
    return (f"pfft {title}, {datetime.date.today()}, {platform.node()}, "
            f"{os.cpu_count()} cores, jax {jax.__version__}, {where}")


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


def write_results(rows: list[dict], markdown: str, out: str, name: str) -> None:
    """Write ``rows`` as ``out/name.csv`` and the table as ``out/name.md``."""
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, f"{name}.csv"), "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    with open(os.path.join(out, f"{name}.md"), "w") as f:
        f.write(markdown + "\n")


def read_results(path: str, text=(), ints=()) -> list[dict]:
    """The rows of a CSV that :func:`write_results` wrote: the ``text`` columns as
    strings, the ``ints`` as ints, every other column as a float (NaN where blank:
    not measured)."""
    def number(v: str) -> float:
        return float(v) if v != "" else math.nan
    with open(path, newline="") as f:
        return [{k: v if k in text else int(v) if k in ints else number(v)
                 for k, v in r.items()} for r in csv.DictReader(f)]


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
    the bottom of a matplotlib figure, below its axes."""
    if note:
        fig.text(0.005, 0.005, note, fontsize=6.5, color="0.35", ha="left", va="bottom",
                 wrap=True)
        fig.subplots_adjust(bottom=max(fig.subplotpars.bottom, 0.2))


def save_plot(fig, path: str, note: str | None) -> None:
    """Lay out a finished matplotlib figure, :func:`stamp` ``note`` on it and write it
    to ``path``."""
    fig.tight_layout()
    stamp(fig, note)
    fig.savefig(path, dpi=120)


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
