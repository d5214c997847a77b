"""The names a run is configured by: network backends and arithmetic conventions.

Kept apart from :mod:`trainsim.system.api` so that a command line can list them without
importing the simulator.
"""

BACKENDS = ("congestion_unaware", "congestion_aware", "flow")
"""Network backends, named as in reference-results/cases.json."""

COMPAT_MODES = ("default", "astra")
"""``astra`` reproduces ASTRA-sim's arithmetic (reference/astra-sim-semantics.md)."""
