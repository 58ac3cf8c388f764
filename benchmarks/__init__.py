"""pfft benchmarks: ``python -m benchmarks TOPIC`` (``python -m benchmarks --help`` lists the
topics; docs/benchmarks.md shows their results) and ``python -m benchmarks.demo``."""
