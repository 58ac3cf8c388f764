"""Draw every committed figure of the docs again: ``make figures``.

    python docs/make_figures.py [--only NAME ...] [--list]

Each figure is drawn from the plans pfft makes now (the layouts) or from the data of a
measured run committed in ``docs/data/`` (a benchmark's CSV, an application's history),
and carries along its bottom the machine, the date and the command that measured it.
To add a measurement, run its command (it writes ``results/``), copy the CSV into
``docs/data/`` and update its entry here; the pages quote the same command.
"""
from __future__ import annotations

import argparse
import os
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent
DATA = HERE / "data"
FIGURES = HERE / "figures"

CPU_BOX = ("2-core x86-64 development machine (AMD EPYC, no transparent huge pages), "
           "Python 3.11, jax 0.10.2, 8 simulated CPU devices")
# the same machine in session 13, where the kernels' huge-page advice took effect
CPU_BOX_THP = ("2-core x86-64 development machine (AMD EPYC, transparent huge pages on "
               "madvise), Python 3.11, jax 0.10.2, 8 simulated CPU devices")


def _real_workloads(path):
    from benchmarks import real_workloads

    rows = real_workloads._read_csv(str(DATA / "real_workloads.csv"))
    real_workloads.plot(rows, str(path), note=(
        f"{CPU_BOX_THP}, 2026-11-26 (session 21), malloc steady. python -m "
        "benchmarks.real_workloads --sizes 64 128 --dtypes float32 float64 --step-sizes 128 "
        "--repeats 7 (64³ and 128³ rows), --sizes 256 --step-sizes (none) --repeats 5 "
        "(docs/data/real_workloads.csv); the 256³ float64 steps of 4, 2x2 and 2x4 are "
        "session 20's (--sizes 256 --dtypes float64 --step-sizes 256 --repeats 3; one "
        "device's step maps a 4.1 GB temporary anew each call). Solid float32, dashed "
        "float64, dotted: the float32 floor."))


def _fixed_costs(path):
    import csv

    from benchmarks import fixed_costs

    with open(DATA / "fixed_costs.csv") as f:
        rows = list(csv.DictReader(f))
    fixed_costs.plot(rows, str(path), note=(
        f"{CPU_BOX}, quiet, 2026-11-25. python -m benchmarks.fixed_costs --repeats 51 "
        "(docs/data/fixed_costs.csv)."))


def _swaps(path):
    from benchmarks import switches

    rows = switches.read_csv(str(DATA / "switches_pfft_no_swaps.csv"))
    switches.plot(rows, str(path), note=(
        f"{CPU_BOX_THP}, 2026-11-25 (session 16). python -m benchmarks.switches --switch "
        "PFFT_NO_SWAPS --sizes 64 128 --dtypes float32 float64 --grids 4 2x2 1x4 8 2x4 4x2 "
        "--repeats 11 (docs/data/switches_pfft_no_swaps.csv): pieces swapped / shifted, "
        "rfftn solid, irfftn dashed."))


def _taylor_green(path):
    import numpy as np

    from benchmarks.apps import taylor_green

    t, energy, dedt, eps = np.loadtxt(DATA / "taylor_green_128_2x4_float32_padding1.5.txt").T
    taylor_green.plot(t, energy, dedt, eps, taylor_green.load_reference(), str(path),
                      "128³ (3/2 rule) float32, grid 2x4", note=(
                          f"{CPU_BOX}, 2026-11-23. python -m benchmarks.apps.taylor_green "
                          "--n 128 --grid 2x4 --padding 1.5 --t-end 10.5 --plot "
                          "(docs/data/taylor_green_128_2x4_float32_padding1.5.txt); dotted: "
                          "the 512³ spectral reference."))


def _r2r(path):
    from benchmarks import r2r
    from benchmarks.common import read_results

    rows = read_results(str(DATA / "r2r.csv"), text=("dtype", "grid", "goal_met"),
                        ints=("size",))
    r2r.plot(rows, str(path), note=(
        f"{CPU_BOX_THP}, 2026-11-24 (session 13: strided passes move whole cache lines). "
        "python -m benchmarks.r2r --sizes 128 --dtypes float32 float64 --grids 2x2 1x4 "
        "--repeats 7, and --sizes 256 --repeats 5 (docs/data/r2r.csv)."))


def _fftshift(path):
    from benchmarks import fftshift

    fftshift.plot(fftshift.read_csv(str(DATA / "fftshift.csv")), str(path), note=(
        f"{CPU_BOX_THP}, 2026-11-25 (session 14). python -m benchmarks.fftshift --sizes 256 "
        "--grids 2x2 1x4 2x4 --repeats 5 --plot, then --sizes 128 --repeats 7 "
        "(docs/data/fftshift.csv), glibc's default "
        "allocator: blocks of 32 MiB (256³ on 2x2 and 1x4) are mapped anew on every call, "
        "smaller ones are reused."))


def _suite(path):
    from benchmarks import suite

    suite.plots(suite.read_csv(str(DATA / "suite.csv")), str(FIGURES), prefix="suite_", note=(
        f"{CPU_BOX}, load 1.9 at the start (not quiet), 2026-11-23, 91 s. python -m benchmarks "
        "--sizes 64 128 256 --dtypes complex64 --kinds c2c r2c --grids all --repeats 5 "
        "--weak-base 64 --peers --mpi-ranks (docs/data/suite.csv)."))


def _user_layouts(path):
    from benchmarks import user_layouts

    rows = user_layouts._read_csv(str(DATA / "user_layouts.csv"))
    user_layouts.plot(rows, str(path), note=(
        f"{CPU_BOX_THP}, 2026-11-26 (session 19), malloc steady. python -m "
        "benchmarks.user_layouts "
        "--sizes 128 --dtypes float32 float64 --grids 2x4 8 --repeats 7 "
        "(docs/data/user_layouts.csv): jax.make_mesh with axis names rows/cols (devs), "
        "the layouts along x ('3:' a batch of 3 fields), pfft over one-device jnp.fft."))


def _layouts(path):
    sys.path.insert(0, str(HERE))
    import layout_figures

    layout_figures.draw(path)


# name: (draw(path), source); every image under docs/figures/ is one of these
FIGURES_DRAWN = {
    "layouts.png": (_layouts, "pfft's plans (docs/layout_figures.py)"),
    "real_workloads.png": (_real_workloads, "docs/data/real_workloads.csv"),
    "user_layouts.png": (_user_layouts, "docs/data/user_layouts.csv"),
    "fixed_costs.png": (_fixed_costs, "docs/data/fixed_costs.csv"),
    "switches_pfft_no_swaps.png": (_swaps, "docs/data/switches_pfft_no_swaps.csv"),
    "r2r.png": (_r2r, "docs/data/r2r.csv"),
    "fftshift.png": (_fftshift, "docs/data/fftshift.csv"),
    "suite_ratios.png": (_suite, "docs/data/suite.csv (with the two below)"),
    "suite_scaling.png": (_suite, "docs/data/suite.csv"),
    "suite_model.png": (_suite, "docs/data/suite.csv"),
    "taylor_green_128.png": (_taylor_green,
                             "docs/data/taylor_green_128_2x4_float32_padding1.5.txt"),
}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="+", choices=sorted(FIGURES_DRAWN))
    ap.add_argument("--list", action="store_true", help="name each figure and its source")
    args = ap.parse_args(argv)
    if args.list:
        for name, (_, source) in FIGURES_DRAWN.items():
            print(f"docs/figures/{name}: from {source}")
        return
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    flags = os.environ.get("XLA_FLAGS", "")
    if "xla_force_host_platform_device_count" not in flags:
        os.environ["XLA_FLAGS"] = f"{flags} --xla_force_host_platform_device_count=8".strip()
    os.environ.setdefault("MPLBACKEND", "Agg")
    sys.path.insert(0, str(ROOT))
    drawn = set()
    for name in args.only or FIGURES_DRAWN:
        draw = FIGURES_DRAWN[name][0]
        if draw not in drawn:              # the suite's entries are one drawing
            draw(FIGURES / name)
            drawn.add(draw)
        print(f"docs/figures/{name}")


if __name__ == "__main__":
    main(sys.argv[1:])
