"""``python -m benchmarks``: the whole benchmark suite (see benchmarks/suite.py, docs/performance.md).

    python -m benchmarks --quick                           # smoke config, seconds
    python -m benchmarks --sizes 128 256 --dtypes complex64 --grids 1 2 4 2x2 8 2x4
"""
from .suite import main

if __name__ == "__main__":
    main()
