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


def precise_time(seconds: float) -> str:
    """A duration in a readable unit with every digit down to the nanosecond, for comparing
    runs: ``117.780 us``, ``7.321456789 s``, ``512 ns``; a time that is not a whole number of
    nanoseconds (the default mode's exact arithmetic) keeps 10 significant digits."""
    if seconds == 0:
        return "0 s"
    scale, unit, decimals = next(u for u in _PRECISE_UNITS if abs(seconds) >= u[0] or u[1] == "ns")
    ns = seconds / NS
    whole = round(ns)
    if abs(ns - whole) >= 1e-3:
        return f"{seconds / scale:.10g} {unit}"
    if not decimals:
        return f"{whole} {unit}"
    units, fraction = divmod(abs(whole), 10**decimals)
    return f"{'-' if whole < 0 else ''}{units}.{fraction:0{decimals}d} {unit}"


_PRECISE_UNITS = ((1.0, "s", 9), (MS, "ms", 6), (US, "us", 3), (NS, "ns", 0))  # scale, unit, decimals to the ns


def human_bytes(nbytes: float) -> str:
    """Format a byte count with binary prefixes, e.g. ``1 MiB``."""
    a = abs(nbytes)
    for scale, unit in ((GIB, "GiB"), (MIB, "MiB"), (KIB, "KiB")):
        if a >= scale:
            return f"{nbytes / scale:.4g} {unit}"
    return f"{nbytes:.0f} B"
