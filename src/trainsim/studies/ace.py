"""The ACE study (Rashidi et al., "Enabling Compute-Communication Overlap in Distributed Deep
Learning Training Platforms", ISCA 2021): the baseline endpoint (``endpoint.shared``) against
ACE (``endpoint.ace``) and the ideal endpoint on one platform (studies layer: built on
``system.api.simulate``; docs/ace.md explains every number).

- :func:`torus_platform`: the issue's platform, a 3-D torus of rings [4, 4, 4] with [400, 200,
  200] GB/s per rank (``latency_ns`` per hop, 500 by default: an assumption), 900 GB/s of HBM,
  80 compute units, hierarchical all-reduce (``localBWAware``), the roofline for compute (or
  recorded durations, ``roofline=False``, for ASTRA-sim 1.0 text workloads), with the
  ``endpoint`` section given;
- :func:`best_baseline`: the split of compute units and HBM bandwidth between compute and
  collectives (``comm_units`` x ``comm_hbm_gbps``, a grid) that minimizes the step;
- :func:`hbm_per_network_byte`: the HBM bytes an endpoint moves per byte it sends, from one
  all-reduce run alone;
- :func:`compare`: a workload's step and effective network bandwidth under the best baseline,
  ACE and the ideal endpoint.

Times in seconds, bandwidths in GB/s (1e9 B/s), sizes in bytes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from trainsim.config.platform import parse_platform
from trainsim.config.types import Platform
from trainsim.system.api import simulate
from trainsim.system.result import RunResult
from trainsim.workload.graph import WorkloadGraph

SIZES = (4, 4, 4)
LINK_GBPS = (400.0, 200.0, 200.0)
LATENCY_NS = 500.0  # per hop (an assumption: docs/ace.md, "Inputs against sources")
HBM_GBPS = 900.0
COMPUTE_UNITS = 80
PEAK_TFLOPS = 120.0  # a V100-class device of 80 units (assumption: docs/ace.md)
UNITS_GRID = (4, 8, 16, 32)
HBM_GRID = (225.0, 450.0, 675.0, 800.0)


def torus_platform(
    endpoint: dict[str, Any],
    *,
    link_gbps: Sequence[float] = LINK_GBPS,
    roofline: bool = True,
    latency_ns: float = LATENCY_NS,
) -> Platform:
    """The issue's platform with ``endpoint`` as its ``endpoint:`` section (module docstring).
    ``roofline=False`` replays compute nodes' recorded durations (ASTRA-sim 1.0 text workloads
    carry cycles, not FLOPs: under the roofline their compute would take no time)."""
    data = {
        "network": {
            "dims": [
                {"topology": "Ring", "size": n, "bandwidth_gbps": bw, "latency_ns": latency_ns}
                for n, bw in zip(SIZES, link_gbps, strict=True)
            ]
        },
        # ASTRA-sim's torus sample of the ACE era (astra-sim/astra-sim 9ccbd7e, 2020-07-10,
        # system/sys_inputs/sample_torus_sys.txt): LIFO, endpoint-delay 10, 4 splits,
        # hierarchical ring, localBWAware (docs/ace.md, "Inputs against sources")
        "system": {
            "endpoint_delay_ns": 10,
            "local_mem_bw_gbps": HBM_GBPS,
            "preferred_dataset_splits": 4,
            "all_reduce": ["ring"] * 3,
            "all_gather": ["ring"] * 3,
            "reduce_scatter": ["ring"] * 3,
            "all_to_all": ["direct"] * 3,
            "collective_optimization": "localBWAware",
            "roofline_enabled": roofline,
            "peak_perf_tflops": PEAK_TFLOPS,
        },
        "endpoint": endpoint,
    }
    return parse_platform(data, "<ace study>")


def baseline_section(
    comm_units: int, comm_hbm_gbps: float, unit_gbps: float = 50.0
) -> dict[str, Any]:
    return {
        "model": "shared",
        "compute_units": COMPUTE_UNITS,
        "comm_units": comm_units,
        "comm_hbm_gbps": comm_hbm_gbps,
        "unit_bandwidth_gbps": unit_gbps,
    }


@dataclass
class Outcome:
    """One run: its endpoint section, step (s), and rank 0's bytes sent and time with
    collectives in flight."""

    endpoint: dict[str, Any]
    step_s: float
    network_bytes: float
    comm_s: float
    compute_slowdown: float
    result: RunResult

    @property
    def effective_gbps(self) -> float:
        """Bytes rank 0 sent per second of collectives in flight, GB/s."""
        return self.network_bytes / self.comm_s / 1e9 if self.comm_s > 0 else 0.0


def run(graphs: Sequence[WorkloadGraph], endpoint: dict[str, Any], **platform: Any) -> Outcome:
    """Simulate ``graphs`` on the torus with ``endpoint``."""
    result = simulate(torus_platform(endpoint, **platform), graphs)
    rank0 = result.ranks[0]
    sent = float(sum(sum(r.dim_bytes) for r in result.collectives if r.rank == 0))
    slowdown = result.resources[0].compute_slowdown if result.resources else 1.0
    return Outcome(endpoint, result.makespan_s, sent, rank0.comm_s, slowdown, result)


def best_baseline(
    graphs: Sequence[WorkloadGraph],
    units: Sequence[int] = UNITS_GRID,
    hbm_gbps: Sequence[float] = HBM_GRID,
    unit_gbps: float = 50.0,
    **platform: Any,
) -> tuple[Outcome, list[Outcome]]:
    """The baseline split with the shortest step, and every split tried; ``unit_gbps``: the
    HBM bandwidth one unit moves."""
    tried = [
        run(graphs, baseline_section(u, h, unit_gbps), **platform) for u in units for h in hbm_gbps
    ]
    return min(tried, key=lambda o: o.step_s), tried


def hbm_per_network_byte(graphs: Sequence[WorkloadGraph], endpoint: dict[str, Any]) -> float:
    """HBM bytes rank 0's collectives moved per byte they sent."""
    result = simulate(torus_platform(endpoint), graphs)
    assert result.resources is not None
    return result.resources[0].hbm_per_network_byte


@dataclass
class Comparison:
    """A workload under the best baseline, ACE and the ideal endpoint."""

    name: str
    baseline: Outcome
    ace: Outcome
    ideal: Outcome
    tried: list[Outcome]

    @property
    def speedup(self) -> float:
        """Best baseline's step over ACE's."""
        return self.baseline.step_s / self.ace.step_s

    @property
    def bandwidth_gain(self) -> float:
        """ACE's effective network bandwidth over the best baseline's."""
        return self.ace.effective_gbps / self.baseline.effective_gbps


def compare(
    name: str,
    graphs: Sequence[WorkloadGraph],
    ace: dict[str, Any] | None = None,
    unit_gbps: float = 50.0,
    **platform: Any,
) -> Comparison:
    """Best baseline (grid search, units of ``unit_gbps``), ACE (``ace`` section, default
    parameters when None) and ideal on ``graphs``."""
    best, tried = best_baseline(graphs, unit_gbps=unit_gbps, **platform)
    with_ace = run(graphs, ace or {"model": "ace"}, **platform)
    ideal = run(graphs, {"model": "ideal"}, **platform)
    return Comparison(name, best, with_ace, ideal, tried)
