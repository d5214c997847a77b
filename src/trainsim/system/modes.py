"""The names a run is configured by: arithmetic conventions, and the network backends (from
``network/registry.py``, the one list of them).

Kept apart from :mod:`trainsim.system.api` so that a command line can list them without
importing the simulator.
"""

from trainsim.network.registry import backend_names

COMPAT_MODES = ("default", "astra")
"""``astra`` reproduces ASTRA-sim's arithmetic (reference/astra-sim-semantics.md)."""

__all__ = ["COMPAT_MODES", "backend_names"]
