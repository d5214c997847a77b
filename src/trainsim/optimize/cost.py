"""LIBRA's network cost model: dollars as a linear function of per-dimension bandwidth.

Source: LIBRA (Won, Rashidi et al., arXiv 2109.11762), the cost-model part of the framework,
as implemented in astra-sim/libra ``src/cost_model/cost_model.py``. The variable of dimension
``d`` is ``B_d``, the bandwidth one NPU has on that dimension, in GB/s (LIBRA: bytes per ns;
trainsim: 1e9 B/s, the same number). Prices are dollars per GB/s of component bandwidth.

The network is built from *building blocks*, one kind per dimension, and LIBRA counts them over
the whole system (``N`` = total NPUs, ``n_d`` = NPUs of dimension ``d``):

============== ======================== ======================= =================== ======================
block          blocks in the system     links per block         bandwidth per link  priced components
============== ======================== ======================= =================== ======================
Ring           ``N / n_d``              ``2 n_d`` (both ways)   ``B_d / 2``         Link
FullyConnected ``N / n_d``              ``n_d (n_d - 1)``       ``B_d / (n_d - 1)`` Link
Switch         ``prod(n_{d+1..})``      ``prod(n_{0..d})``      ``B_d``             Link + NIC + Switch
============== ======================== ======================= =================== ======================

(a Switch dimension is one big switch spanning every NPU of dimensions ``0..d``). Multiplying
out, every block kind gives ``blocks x links x link bandwidth = N x B_d``, so

    cost(B) = sum_d N * price_d * B_d,   price_d = Link_d (+ Nic_d + Switch_d for a Switch),

linear in the bandwidths, which is what lets the optimizer treat a budget in dollars as a linear
constraint. :func:`building_blocks` keeps the per-block breakdown for reports.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from trainsim.errors import ConfigError
from trainsim.optimize.libra_inputs import LibraNetwork


@dataclass(frozen=True)
class BlockCount:
    """One dimension's building blocks and their price per GB/s of that dimension's ``B_d``."""

    dim: int
    kind: str
    blocks: int  # building blocks of this dimension in the whole system
    links_per_block: int
    link_share: float  # link bandwidth / B_d
    components: tuple[str, ...]  # priced components of each link
    unit_price: float  # $ per GB/s of link bandwidth, summed over the components

    @property
    def dollars_per_gbps(self) -> float:
        """d cost / d B_d, in $ per GB/s of per-NPU bandwidth."""
        return self.blocks * self.links_per_block * self.link_share * self.unit_price


def link_share(kind: str, size: int) -> float:
    """Bandwidth of one link as a fraction of the NPU's bandwidth on the dimension (LIBRA's
    ``_get_link_bandwidth``): a Ring NPU has two links, a FullyConnected one ``n - 1``, a
    Switch one."""
    if kind == "Ring":
        return 0.5
    if kind == "FullyConnected":
        return 1.0 / (size - 1)
    return 1.0


def building_blocks(network: LibraNetwork, prices: dict[str, dict[str, float]]) -> list[BlockCount]:
    """Each dimension's building blocks, counted over the whole system, with their prices."""
    if network.cost_dims is None:
        raise ConfigError(
            "the network names no cost dimension, so it cannot be priced",
            file=network.source or None,
            hint="use LIBRA's network file (with CostDimension) or leave the cost model out",
        )
    out = []
    sizes = network.sizes
    comps: tuple[str, ...]
    for d, (kind, n, cdim) in enumerate(zip(network.kinds, sizes, network.cost_dims, strict=True)):
        if kind == "Switch":
            blocks, links, comps = math.prod(sizes[d + 1 :]), math.prod(sizes[: d + 1]), ("Link", "Nic", "Switch")
        elif kind == "Ring":
            blocks, links, comps = network.npus // n, 2 * n, ("Link",)
        else:
            blocks, links, comps = network.npus // n, n * (n - 1), ("Link",)
        table = prices.get(cdim)
        if table is None:
            raise ConfigError(
                f"dimension {d} is priced as {cdim!r}, which the cost model does not define",
                field=f"CostDimension[{d}]",
            )
        missing = [c for c in comps if c not in table]
        if missing:
            raise ConfigError(
                f"a {kind} dimension needs the price of {', '.join(missing)} in {cdim!r}",
                field=f"{cdim}",
            )
        out.append(BlockCount(d, kind, blocks, links, link_share(kind, n), comps, sum(table[c] for c in comps)))
    return out


def cost_coefficients(network: LibraNetwork, prices: dict[str, dict[str, float]]) -> np.ndarray:
    """``c`` with ``cost(B) = c @ B`` in dollars for ``B`` in GB/s per NPU, one entry a dimension."""
    return np.array([b.dollars_per_gbps for b in building_blocks(network, prices)], dtype=float)
