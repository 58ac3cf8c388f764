"""Draw every committed figure of the docs again: ``make figures``.

    python docs/make_figures.py [--list]

The layout figure is drawn from the plans pfft makes now (``docs/layout_figures.py``);
every other figure, with the tables the pages include (``docs/data/*.md``), by
``python -m benchmarks report`` from the data of a measured run in ``docs/data/`` (a
benchmark's CSV, an application's history), each with the machine, the date and the
command that measured it along its bottom (from the run's ``.json`` beside its data).
To add a measurement, run its command with ``--out docs/data`` and draw again.
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


def _setup() -> None:
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    flags = os.environ.get("XLA_FLAGS", "")
    if "xla_force_host_platform_device_count" not in flags:
        os.environ["XLA_FLAGS"] = f"{flags} --xla_force_host_platform_device_count=8".strip()
    os.environ.setdefault("MPLBACKEND", "Agg")
    sys.path.insert(0, str(ROOT))
    sys.path.insert(0, str(HERE))


def figures_drawn() -> dict[str, str]:
    """Every figure under docs/figures/ and what it is drawn from."""
    _setup()
    from benchmarks.__main__ import figures_drawn as from_data

    return {"layouts.png": "pfft's plans (docs/layout_figures.py)", **from_data()}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--list", action="store_true", help="name each figure and its source")
    args = ap.parse_args(argv)
    if args.list:
        for name, source in figures_drawn().items():
            print(f"docs/figures/{name}: from {source}")
        return
    _setup()
    import layout_figures

    from benchmarks.__main__ import report

    layout_figures.draw(FIGURES / "layouts.png")
    print("docs/figures/layouts.png")
    for path in report(str(DATA), str(FIGURES)):
        print(os.path.relpath(path, ROOT))


if __name__ == "__main__":
    main(sys.argv[1:])
