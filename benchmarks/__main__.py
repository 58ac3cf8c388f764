"""``python -m benchmarks TOPIC [options]``: pfft's benchmarks (docs/benchmarks.md).

Topics (``python -m benchmarks TOPIC --help`` for each one's options)::

    transforms  fftn and rfftn against one device on every grid of 1-8 devices, the
                straightforward shard_map chain, the cost model, memory, scaling
    peers       fftn against one device, the shard_map chain, jaxDecomp and mpi4py-fft
    real        rfftn, irfftn, round trips and an RK4 step against one device
                (--layouts: on the user's own meshes and shardings)
    r2r         dctn against rfftn, scipy and jax.scipy
    memory      what each kind of plan holds on a device (plan.memory()), on one device,
                a slab and a pencil, per engine, beside XLA's bare all-to-all
    mpi         pfft.mpi against mpi4py-fft (--scaling: pfft.mpi alone), one process per
                rank: mpirun -n 4 python -m benchmarks mpi
    apps        taylor_green | nbody: the applications against their published references
    gpu         engines | real_engines | per_device | huge_blocks | mpi_gpu: one device's
                transforms, the per-device program of a p-GPU plan, blocks of 2³¹ points
                against their exact values (benchmarks/gpu.sh runs them all)
    model       the cost model's multi-GPU predictions (--per-device CSV: from measurements)
    report      the docs' tables (docs/data/*.md) and figures (docs/figures/) from the
                data in docs/data: python -m benchmarks report [--data DIR] [--figures DIR]

Each topic is a module, also run as ``python -m benchmarks.MODULE``. Every one times
through one harness (``benchmarks.common.timings``: warm-up calls, then the candidates
alternated within each repeat, each call waited for; medians by ``common.compare``).
"""
from __future__ import annotations

import argparse
import os
import runpy
import sys

from . import common

#: topic -> module (``{}``: the sub-topic named next, one of the set given)
TOPICS = {
    "transforms": "suite", "peers": "suite", "real": "real_workloads", "r2r": "r2r",
    "memory": "memory", "mpi": "mpi", "model": "model",
    "apps": ("apps.{}", {"taylor_green", "nbody"}),
    "gpu": ("{}", {"engines", "real_engines", "per_device", "huge_blocks", "mpi_gpu"}),
}
#: the modules whose ``report(data, figures)`` renders the docs' tables and figures
#: (``suite_report`` and ``model_report``: the rendering halves of ``suite`` and ``model``)
REPORTERS = ("suite_report", "real_workloads", "r2r", "mpi", "apps.taylor_green", "apps.nbody",
             "model_report", "engines", "real_engines", "huge_blocks", "mpi_gpu_report", "memory",
             "largest_grid")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def report(data: str, figures: str) -> list[str]:
    """Every reporter's tables and figures, from the data files in ``data``."""
    import importlib

    os.makedirs(figures, exist_ok=True)
    done = []
    for name in REPORTERS:
        done += importlib.import_module(f"benchmarks.{name}").report(data, figures)
    return done


def figures_drawn() -> dict[str, str]:
    """Every figure :func:`report` draws and the data file it is drawn from."""
    import importlib

    out = {}
    for name in REPORTERS:
        for source, made in importlib.import_module(f"benchmarks.{name}").DOCS.items():
            out.update({m: f"docs/data/{source}" for m in made if m.endswith(".png")})
    return out


def main(argv: list[str]) -> None:
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__)
        return
    topic, rest = argv[0], argv[1:]
    if topic == "report":
        ap = argparse.ArgumentParser(prog="python -m benchmarks report",
                                     description="Render the docs' tables and figures")
        ap.add_argument("--data", default=os.path.join(ROOT, "docs", "data"))
        ap.add_argument("--figures", default=os.path.join(ROOT, "docs", "figures"))
        args = ap.parse_args(rest)
        for path in report(args.data, args.figures):
            print(f"wrote {os.path.relpath(path)}")
        return
    if topic in TOPICS:
        module = TOPICS[topic]
    else:
        raise SystemExit(f"python -m benchmarks: no topic {topic!r} (python -m benchmarks "
                         f"--help lists them)")
    launch = ("-m", "benchmarks", topic)
    if isinstance(module, tuple):
        pattern, names = module
        if not rest or rest[0] not in names:
            raise SystemExit(f"python -m benchmarks {topic} NAME: NAME is one of "
                             f"{', '.join(sorted(names))}")
        module, launch, rest = pattern.format(rest[0]), launch + (rest[0],), rest[1:]
    common.LAUNCH = launch
    sys.argv = [f"python -m benchmarks {' '.join(launch[2:])}", *rest]
    runpy.run_module(f"benchmarks.{module}", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main(sys.argv[1:])
