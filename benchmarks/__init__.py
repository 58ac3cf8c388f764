"""pfft benchmarks: ``python -m benchmarks.demo``, ``python -m benchmarks.fftn_table``."""
