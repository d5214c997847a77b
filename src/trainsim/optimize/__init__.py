"""Optimizers: bandwidth allocation per network dimension (LIBRA), parallelization and
cluster-design search (DESIGN.md, optimize layer)."""
