"""Applications built on pfft's public API, checked against published results: solvers and their benchmarks."""
