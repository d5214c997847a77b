"""Network backends behind one small protocol (DESIGN.md, network): ``send(src, dst, nbytes,
on_arrival, arg)`` plus the shared event queue. Analytical (congestion-unaware) here;
congestion-aware and flow-level backends sit beside it."""

from trainsim.network.analytical import AnalyticalNetwork
from trainsim.network.protocol import NetworkBackend

__all__ = ["AnalyticalNetwork", "NetworkBackend"]
