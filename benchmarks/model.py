"""``python -m benchmarks.model``: the cost model's command line (docs/performance.md,
"The cost model").

The model itself is :mod:`benchmarks.cost_model` (:func:`predict`,
:func:`predict_system`, :data:`SYSTEMS`, :func:`per_device_prediction`, ...); its names
are re-exported here, ``from benchmarks.model import predict``. Without options the
command prints :func:`system_table`, the predictions for :data:`SYSTEMS`; with
``--per-device`` a ``benchmarks.per_device`` CSV's measured table and the predictions
made from it (:func:`benchmarks.model_report.per_device_report`; every column says
whether its figures are measured or modelled), ``--markdown`` and ``--plot`` writing
them to files as well.

    python -m benchmarks.model --per-device results/per_device_gpu.csv \\
        --markdown docs/data/gpu_model.md --plot docs/figures/gpu_model.png
"""
from __future__ import annotations

import argparse
import os
import sys

from .cost_model import (ANCHORS, GOAL, H100_NCCL, SYSTEMS, Anchor, System, exchange_axes,
                         exchange_seconds, largest_n, model_grid, overlapped,
                         per_device_prediction, predict, predict_system, spectral_bytes,
                         system_table)
from .model_report import per_device_plot, per_device_report

__all__ = ["predict", "predict_system", "System", "SYSTEMS", "exchange_axes",
           "spectral_bytes", "H100_NCCL", "Anchor", "ANCHORS", "GOAL", "exchange_seconds",
           "overlapped", "per_device_prediction", "largest_n", "system_table", "model_grid"]


def main(argv=None) -> None:
    """Print the model's tables (with ``--markdown`` and ``--plot``, write them too);
    ``argv``: the options, ``sys.argv[1:]`` by default."""
    ap = argparse.ArgumentParser(description="The cost model: multi-GPU extrapolation, or "
                                 "predictions from measured per-device programs")
    ap.add_argument("--per-device", metavar="CSV",
                    help="a benchmarks.per_device CSV (per_device_gpu.csv): predict from it")
    ap.add_argument("--markdown", metavar="FILE", help="write the tables there as well")
    ap.add_argument("--plot", metavar="PNG", help="draw the predictions (with --per-device)")
    ap.add_argument("--chunks", type=int, default=4,
                    help="pieces of the modelled overlap (default 4)")
    ap.add_argument("--gpu-memory-gib", type=float, default=76.0,
                    help="memory XLA may use on each 80 GB GPU (default 76: 95 %% of an "
                         "H100's 79.6 GiB)")
    args = ap.parse_args(argv)
    if args.per_device is None and args.markdown is None:
        print(system_table())
        return
    if args.plot and args.per_device is None:
        ap.error("--plot needs --per-device")
    figure = None
    if args.plot and args.markdown:
        figure = os.path.relpath(args.plot, os.path.dirname(os.path.abspath(args.markdown)))
    text = per_device_report(args.per_device, chunks=args.chunks,
                             memory_bytes=args.gpu_memory_gib * 2 ** 30,
                             command=_command(argv), figure=figure)
    print(text)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(text + "\n")
    if args.plot:
        per_device_plot(args.per_device, args.plot, chunks=args.chunks, command=_command(argv))


def _command(argv) -> str:
    return "python -m benchmarks.model " + " ".join(argv if argv is not None else sys.argv[1:])


if __name__ == "__main__":
    main()
