"""File-level entry points of the bandwidth optimizer, and the sweep over the budget.

``optimize_files(network="3d_network.yml", workloads=["ResNet_50.txt"],
communicators=["ResNet_50_3d.yml"], constraints=["sum == 500"], cost="3d_cost_model.yml")``
reads LIBRA's files and returns a :class:`~trainsim.optimize.bandwidth.BandwidthResult`;
:func:`budget_sweep` re-solves with the total bandwidth ``sum == b`` for each budget ``b``
(GB/s per NPU), for the time-and-cost plot of :mod:`trainsim.optimize.plot`.

A workload path ending in ``.txt`` is ASTRA-sim 1.0 text and goes with a LIBRA communicator
(without one, every collective spans every dimension); any other path is a Chakra ET prefix
(``PREFIX.<rank>.et``) whose rank-0 graph is used, LIBRA assuming every rank alike.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from trainsim.errors import ConfigError, InfeasibleError
from trainsim.optimize.bandwidth import BandwidthResult, optimize_bandwidth
from trainsim.optimize.constraints import LinearConstraint, parse_constraints
from trainsim.optimize.cost import cost_coefficients
from trainsim.optimize.libra_inputs import (
    Communicator,
    LibraNetwork,
    load_communicator,
    load_cost_model,
    load_network,
)
from trainsim.optimize.traffic import WorkloadTraffic, traffic_from_graph, traffic_from_text


def load_workload(path: str | Path, network: LibraNetwork, communicator: str | Path | Communicator | None = None,
                  *, pipelined: bool = True) -> WorkloadTraffic:
    """A text workload (with its communicator) or a Chakra ET prefix, as traffic."""
    text = str(path)
    if text.endswith(".txt"):
        if communicator is None:
            comm = Communicator.full(network)
        elif isinstance(communicator, Communicator):
            comm = communicator
        else:
            comm = load_communicator(communicator, network)
        return traffic_from_text(path, comm, network, pipelined=pipelined)
    if Path(text).is_file():
        raise ConfigError("a file, but not a .txt text workload; expected an ASTRA-sim 1.0 text workload (.txt) "
                          "or the prefix of Chakra ET files PREFIX.<rank>.et", file=text, field="workload")
    if communicator is not None:
        raise ConfigError("a communicator file goes with a text workload; a Chakra graph carries its own groups",
                          field="communicator", file=str(communicator))
    try:
        from trainsim.workload.chakra import read_workload  # type: ignore[import-not-found]
    except ImportError:
        raise ConfigError(f"{text} is not a .txt workload and this build has no Chakra reader",
                          hint="pass an ASTRA-sim 1.0 text workload (.txt)") from None
    graphs = read_workload(text, network.npus)
    return traffic_from_graph(graphs[0], network, pipelined=pipelined, name=Path(text).name)


def load_workloads(network: LibraNetwork, workloads: Sequence[str | Path],
                   communicators: Sequence[str | Path | None] | None = None, *, pipelined: bool = True) -> list[WorkloadTraffic]:
    comms: list[str | Path | None] = list(communicators or [])
    if comms and len(comms) != len(workloads):
        raise ConfigError(f"{len(comms)} communicators for {len(workloads)} workloads; give one per workload, in order",
                          field="communicator")
    comms += [None] * (len(workloads) - len(comms))
    return [load_workload(w, network, c, pipelined=pipelined) for w, c in zip(workloads, comms, strict=True)]


def optimize_files(
    network: str | Path,
    workloads: Sequence[str | Path],
    constraints: Sequence[str],
    *,
    communicators: Sequence[str | Path | None] | None = None,
    cost: str | Path | None = None,
    objective: str = "perf",
    weights: Sequence[float] | None = None,
    pipelined: bool = True,
    bounds: Sequence[tuple[float | None, float | None]] | None = None,
) -> BandwidthResult:
    """Read LIBRA's files and optimize (see :func:`~trainsim.optimize.bandwidth.optimize_bandwidth`)."""
    net = load_network(network)
    traffic = load_workloads(net, workloads, communicators, pipelined=pipelined)
    if weights is not None and len(weights) != len(traffic):
        raise ConfigError(f"{len(weights)} weights for {len(traffic)} workloads", field="weight")
    pairs = list(zip(traffic, weights or [1.0] * len(traffic), strict=True))
    coeffs = None if cost is None else cost_coefficients(net, load_cost_model(cost))
    return optimize_bandwidth(net, pairs, constraints, objective=objective, cost_coeffs=coeffs, bounds=bounds)


@dataclass(frozen=True)
class SweepPoint:
    budget_gbps: float  # total bandwidth per NPU, sum of B_d
    bandwidths_gbps: tuple[float, ...]
    time_s: float
    equal_time_s: float
    cost: float | None
    equal_cost: float | None


def _is_total(con: LinearConstraint) -> bool:
    return con.sense == "==" and len(set(con.coeffs)) == 1 and con.coeffs[0] != 0


def budget_sweep(
    network: LibraNetwork,
    workloads: Sequence[WorkloadTraffic | tuple[WorkloadTraffic, float]],
    budgets: Sequence[float],
    constraints: Sequence[str | LinearConstraint] = (),
    *,
    objective: str = "perf",
    cost_coeffs: Sequence[float] | np.ndarray | None = None,
) -> list[SweepPoint]:
    """Optimum and equal split for each total budget; a total-bandwidth equality among
    ``constraints`` is replaced by the swept one, the other constraints are kept. Budgets the
    other constraints rule out are left out; none left is the last budget's error."""
    kept = [c for c in parse_constraints(constraints, network.ndims) if not _is_total(c)]
    points = []
    error: InfeasibleError | None = None
    for b in budgets:
        total = LinearConstraint((1.0,) * network.ndims, "==", float(b), f"sum == {b:g}")
        try:
            res = optimize_bandwidth(network, workloads, [*kept, total], objective=objective, cost_coeffs=cost_coeffs)
        except InfeasibleError as exc:
            error = exc
            continue
        points.append(SweepPoint(float(b), tuple(float(x) for x in res.bandwidths_gbps), res.time_s,
                                 res.equal_time_s, res.cost, res.equal_cost))
    if not points and error is not None:
        raise error
    return points
