"""Packet-level network backend (DESIGN.md, network layer): RoCE with PFC, ECN and per-flow
congestion control (none, DCQCN, DCTCP, TIMELY, HPCC), after the public HPCC ns-3 code base.

- :mod:`.config`: the ``backends: {packet: {...}}`` options and their sources;
- :mod:`.engine`: the pure-Python reference engine (ports, shared-buffer switches, NICs);
- :mod:`.cc`: one class per congestion-control scheme;
- :mod:`.backend`: :class:`PacketNetwork`, the engine behind the network seam;
- :mod:`.counters`: queue, pause and rate statistics.
"""
