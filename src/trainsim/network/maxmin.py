"""Max-min fair rates by progressive filling (Bertsekas & Gallager, Data Networks, §6.5.2).

All unfrozen flows grow at the same rate until a link saturates; the flows crossing it are
frozen at that rate; repeat on the remaining capacity. Vectorized over a flow-link incidence
list: each round is a few ``bincount`` calls, and there are at most as many rounds as
distinct bottleneck levels.
"""

from __future__ import annotations

import numpy as np


def max_min_rates(flow_of: np.ndarray, link_of: np.ndarray, capacity: np.ndarray, flows: int) -> np.ndarray:
    """Rates of ``flows`` flows, where pair ``i`` says flow ``flow_of[i]`` crosses link
    ``link_of[i]`` and link ``l`` has ``capacity[l]`` (any rate unit). A flow that crosses no
    link gets ``inf``."""
    rate = np.full(flows, np.inf)
    if flows == 0 or flow_of.size == 0:
        return rate
    links = capacity.size
    remaining = capacity.astype(float).copy()
    unfrozen = np.zeros(flows, dtype=bool)
    unfrozen[flow_of] = True
    while True:
        live = unfrozen[flow_of]
        if not live.any():
            break
        counts = np.bincount(link_of[live], minlength=links)
        used = counts > 0
        share = np.full(links, np.inf)
        share[used] = np.maximum(remaining[used], 0.0) / counts[used]
        level = share.min()
        bottleneck = used & (share <= level * (1 + 1e-12) + 1e-300)
        hit = live & bottleneck[link_of]
        frozen_now = np.zeros(flows, dtype=bool)
        frozen_now[flow_of[hit]] = True
        rate[frozen_now] = level
        unfrozen &= ~frozen_now
        # every link crossed by a newly frozen flow gives up that flow's rate
        pairs = frozen_now[flow_of]
        remaining -= np.bincount(link_of[pairs], minlength=links) * level
    return rate
