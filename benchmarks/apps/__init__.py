"""Applications built on pfft's public API (issue 16): solvers and their benchmarks."""
