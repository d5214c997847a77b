"""Collective algorithms as plans per network dimension: ring, direct, halving-doubling,
double binary tree, in-switch; multi-dimensional decomposition (DESIGN.md, collectives)."""
