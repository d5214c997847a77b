"""Memory layer (DESIGN.md, "Layers"): local HBM and remote, pooled or expanded memory tiers.

Sits beside ``workload``, ``collectives`` and ``compute``; imports only ``engine``, ``errors``
and ``units``. Sub-packages model one technology each (``pcm``: tri-level MLC phase-change
memory as an expansion tier) and hand the rest of the simulator small estimate objects.
"""
