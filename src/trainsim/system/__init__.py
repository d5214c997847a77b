"""The per-rank runtime: walks each rank's workload graph and runs its compute, memory and
communication nodes on the platform (DESIGN.md, system layer)."""
