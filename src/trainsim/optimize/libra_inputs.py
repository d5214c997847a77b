"""LIBRA's input files, read strictly (optimize layer; DESIGN.md, "Inputs").

LIBRA (Won, Rashidi et al., arXiv 2109.11762, released as astra-sim/libra) takes four data files
besides its constraints and training loop; reference copies are in
``reference-data/reference-workloads/libra/``:

- **network** (``network/3d_network.yml``): ``Topology`` (``Ring``, ``FullyConnected``,
  ``Switch`` per dimension), ``NpusCount`` (ints > 1) and ``CostDimension`` (the cost-model
  section that prices each dimension). An ASTRA-sim network YAML (``topology``,
  ``npus_count``; its ``bandwidth`` and ``latency`` are ignored, bandwidth being what is
  optimized) is accepted too; it has no cost dimensions, so it cannot be priced.
- **cost model** (``cost_model/3d_cost_model.yml``): for each cost dimension, the price of
  ``Link``, ``Switch`` and ``Nic`` bandwidth in dollars per GB/s (LIBRA's GB/s is bytes per ns,
  i.e. 1e9 B/s, the same as trainsim's). See :mod:`trainsim.optimize.cost`.
- **communicator** (``communicator/ResNet_50_3d.yml``): for each training phase (``Forward``,
  ``InputGrad``, ``WeightGrad``) the group size of its collective on every dimension, ``-1``
  where the phase's collective does not use that dimension. One list per phase kind: every
  layer's forward collective uses the forward list, and so on.
- **workload**: ASTRA-sim 1.0 text, read by :func:`trainsim.workload.astra_text.parse_text_workload`.

Every problem is a :class:`~trainsim.errors.ConfigError` naming the file, the field and the
value; nothing is ignored silently.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trainsim.config.files import load_yaml_mapping
from trainsim.config.types import NetworkSpec
from trainsim.errors import ConfigError

TOPOLOGY_KINDS = ("Ring", "FullyConnected", "Switch")
PHASE_KEYS = ("Forward", "InputGrad", "WeightGrad")
COST_ELEMENTS = ("Link", "Switch", "Nic")


@dataclass(frozen=True)
class LibraNetwork:
    """The shape of a multi-dimensional network: building block and NPU count per dimension,
    and the cost dimension that prices it (``None`` when the file named none)."""

    kinds: tuple[str, ...]
    sizes: tuple[int, ...]
    cost_dims: tuple[str, ...] | None = None
    source: str = ""

    @property
    def ndims(self) -> int:
        return len(self.kinds)

    @property
    def npus(self) -> int:
        return math.prod(self.sizes)

    @classmethod
    def from_spec(cls, spec: NetworkSpec, cost_dims: tuple[str, ...] | None = None) -> LibraNetwork:
        """The shape of a trainsim :class:`NetworkSpec` (its bandwidths are not used)."""
        return _checked(
            tuple(d.kind for d in spec.dims), tuple(d.size for d in spec.dims), cost_dims, spec.source
        )


@dataclass(frozen=True)
class Communicator:
    """Group size per dimension of each phase's collective; ``None`` = dimension not used."""

    forward: tuple[int | None, ...]
    input_grad: tuple[int | None, ...]
    weight_grad: tuple[int | None, ...]
    source: str = ""

    def phase(self, index: int) -> tuple[int | None, ...]:
        """Groups of phase 0 (forward), 1 (input gradient) or 2 (weight gradient)."""
        return (self.forward, self.input_grad, self.weight_grad)[index]

    @classmethod
    def full(cls, network: LibraNetwork) -> Communicator:
        """Every phase spans every dimension (pure data parallelism over the whole network)."""
        groups: tuple[int | None, ...] = tuple(network.sizes)
        return cls(groups, groups, groups, "all dimensions")


def _read_yaml(path: str | Path) -> tuple[dict[str, Any], str]:
    return load_yaml_mapping(path), str(path)


def _int_list(value: Any, file: str, field: str) -> list[int]:
    if not isinstance(value, list) or not value:
        raise ConfigError(f"expected a non-empty list of integers, got {value!r}", file=file, field=field)
    out = []
    for i, v in enumerate(value):
        if isinstance(v, bool) or not isinstance(v, int):
            raise ConfigError(f"expected an integer, got {v!r}", file=file, field=f"{field}[{i}]")
        out.append(v)
    return out


def _checked(
    kinds: tuple[str, ...], sizes: tuple[int, ...], cost_dims: tuple[str, ...] | None, file: str,
    keys: tuple[str, str, str] = ("Topology", "NpusCount", "CostDimension"),
) -> LibraNetwork:
    for i, k in enumerate(kinds):
        if k not in TOPOLOGY_KINDS:
            raise ConfigError(
                f"unknown building block {k!r}; expected one of {', '.join(TOPOLOGY_KINDS)}",
                file=file, field=f"{keys[0]}[{i}]",
            )
    if len(sizes) != len(kinds):
        raise ConfigError(f"{len(sizes)} NPU counts for {len(kinds)} dimensions", file=file, field=keys[1])
    for i, n in enumerate(sizes):
        if n < 2:
            raise ConfigError(f"NPU count {n} must be larger than 1", file=file, field=f"{keys[1]}[{i}]")
    if cost_dims is not None and len(cost_dims) != len(kinds):
        raise ConfigError(f"{len(cost_dims)} cost dimensions for {len(kinds)} dimensions", file=file, field=keys[2])
    return LibraNetwork(kinds, sizes, cost_dims, file)


def load_network(path: str | Path) -> LibraNetwork:
    """A LIBRA network YAML, or the shape of an ASTRA-sim network YAML."""
    data, file = _read_yaml(path)
    if "Topology" in data:
        unknown = set(data) - {"Topology", "NpusCount", "CostDimension"}
        if unknown:
            raise ConfigError(f"unknown keys {sorted(unknown)}; expected Topology, NpusCount, CostDimension", file=file)
        for key in ("NpusCount", "CostDimension"):
            if key not in data:
                raise ConfigError("missing", file=file, field=key)
        topo = data["Topology"]
        cost = data["CostDimension"]
        if not isinstance(topo, list) or not isinstance(cost, list):
            raise ConfigError("Topology and CostDimension must be lists", file=file)
        return _checked(
            tuple(str(t) for t in topo),
            tuple(_int_list(data["NpusCount"], file, "NpusCount")),
            tuple(str(c) for c in cost),
            file,
        )
    if "topology" in data:
        unknown = set(data) - {"topology", "npus_count", "bandwidth", "latency"}
        if unknown:
            raise ConfigError(f"unknown keys {sorted(unknown)}", file=file)
        if "npus_count" not in data or not isinstance(data["topology"], list):
            raise ConfigError("an ASTRA-sim network needs the lists topology and npus_count", file=file)
        return _checked(
            tuple(str(t) for t in data["topology"]),
            tuple(_int_list(data["npus_count"], file, "npus_count")),
            None,
            file,
            ("topology", "npus_count", "CostDimension"),
        )
    raise ConfigError(
        "not a network file: expected LIBRA's Topology/NpusCount/CostDimension or ASTRA-sim's topology/npus_count",
        file=file,
    )


def load_communicator(path: str | Path, network: LibraNetwork) -> Communicator:
    """A LIBRA communicator YAML, checked against the network's dimensions."""
    data, file = _read_yaml(path)
    unknown = set(data) - set(PHASE_KEYS)
    if unknown:
        raise ConfigError(f"unknown keys {sorted(unknown)}; expected {', '.join(PHASE_KEYS)}", file=file)
    phases = []
    for key in PHASE_KEYS:
        if key not in data:
            raise ConfigError("missing", file=file, field=key)
        values = _int_list(data[key], file, key)
        if len(values) != network.ndims:
            raise ConfigError(
                f"{len(values)} group sizes for a {network.ndims}-dimensional network", file=file, field=key
            )
        groups: list[int | None] = []
        for d, g in enumerate(values):
            if g == -1:
                groups.append(None)
            elif 1 <= g <= network.sizes[d]:
                groups.append(g)
            else:
                raise ConfigError(
                    f"group size {g} must be -1 (dimension unused) or between 1 and the dimension's {network.sizes[d]} NPUs",
                    file=file, field=f"{key}[{d}]",
                )
        phases.append(tuple(groups))
    return Communicator(phases[0], phases[1], phases[2], file)


def load_cost_model(path: str | Path) -> dict[str, dict[str, float]]:
    """``{cost dimension: {"Link"|"Switch"|"Nic": dollars per GB/s}}``; prices must be > 0."""
    data, file = _read_yaml(path)
    model: dict[str, dict[str, float]] = {}
    for dim, elements in data.items():
        if not isinstance(elements, dict):
            raise ConfigError(f"expected a mapping of component prices, got {elements!r}", file=file, field=str(dim))
        prices: dict[str, float] = {}
        for name, price in elements.items():
            if name not in COST_ELEMENTS:
                raise ConfigError(
                    f"unknown component {name!r}; expected one of {', '.join(COST_ELEMENTS)}",
                    file=file, field=f"{dim}.{name}",
                )
            if isinstance(price, bool) or not isinstance(price, int | float) or not 0 < price < math.inf:
                raise ConfigError(f"price {price!r} must be a positive, finite number ($ per GB/s)", file=file, field=f"{dim}.{name}")
            prices[name] = float(price)
        model[str(dim)] = prices
    return model
