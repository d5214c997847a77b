"""Roofline compute time (Williams et al., CACM 2009): time = FLOP / min(peak, BW x intensity).

ASTRA-sim's form (astra-sim-semantics.md, "Roofline"): operational intensity =
num_ops / tensor_size, attainable = min(peak, local_mem_bw x intensity), runtime truncated to
whole ns in compatibility mode. Units: FLOP, bytes, FLOP/s, B/s; result in ns.
"""

from __future__ import annotations

import math


def roofline_time_ns(
    num_ops: float, tensor_size: float, peak_flops: float, mem_bw: float, *, compat_astra: bool = False
) -> float:
    """Time in ns to run ``num_ops`` FLOP touching ``tensor_size`` bytes on a device with
    ``peak_flops`` FLOP/s and ``mem_bw`` B/s. ``tensor_size`` 0 means no memory bound."""
    if num_ops <= 0:
        return 0.0
    attainable = peak_flops
    if tensor_size > 0:
        attainable = min(peak_flops, mem_bw * num_ops / tensor_size)
    seconds = num_ops / attainable
    return float(math.trunc(seconds * 1e9)) if compat_astra else seconds * 1e9
