"""Unit constants (DESIGN.md, "Units"). Internally everything is SI: s, B, B/s, FLOP, FLOP/s.

Conversions happen once, where a file is read. ASTRA-sim's "GB/s" in network YAML is 2**30
bytes per second (``ASTRA_GBPS``); everywhere else GB/s means 1e9 B/s.
"""

from __future__ import annotations

NS = 1e-9
US = 1e-6
MS = 1e-3

KB = 1e3
MB = 1e6
GB = 1e9
KIB = 1024
MIB = 1024**2
GIB = 1024**3

GBPS = 1e9  # 1 GB/s in B/s (decimal)
ASTRA_GBPS = float(2**30)  # ASTRA-sim's network-YAML "GB/s" in B/s
GBITPS = 1e9 / 8  # 1 Gb/s in B/s
TFLOPS = 1e12


def human_time(seconds: float) -> str:
    """Format a duration with a unit chosen for readability, e.g. ``64.44 us``."""
    a = abs(seconds)
    if a == 0:
        return "0 s"
    for scale, unit in ((1.0, "s"), (MS, "ms"), (US, "us"), (NS, "ns")):
        if a >= scale:
            return f"{seconds / scale:.4g} {unit}"
    return f"{seconds / NS:.4g} ns"


def human_bytes(nbytes: float) -> str:
    """Format a byte count with binary prefixes, e.g. ``1 MiB``."""
    a = abs(nbytes)
    for scale, unit in ((GIB, "GiB"), (MIB, "MiB"), (KIB, "KiB")):
        if a >= scale:
            return f"{nbytes / scale:.4g} {unit}"
    return f"{nbytes:.0f} B"
