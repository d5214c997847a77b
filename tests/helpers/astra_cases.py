"""Run ASTRA-sim reference cases (reference-data/reference-results/cases.json) at the collective
runtime level: one collective per rank, issued at t = 0 (the ``main`` and ``knob`` groups).

The network YAML and system JSON are read minimally here until the config loaders land;
the workload's collective, rank count and size come from its directory name
(``inputs/workload/<collective>/<npus>npus_<size>/et``). Time in ns, sizes in bytes.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import yaml

from tests.helpers.reference_data import RESULTS
from trainsim.config.types import CollectiveImpl, DimSpec, NetworkSpec, Platform, SystemSpec
from trainsim.engine import EventQueue
from trainsim.enums import CommType
from trainsim.network import AnalyticalNetwork
from trainsim.system.collective_api import CollectiveRequest
from trainsim.system.collective_runtime import CollectiveRuntime

CASES_JSON = RESULTS / "cases.json"

_COLLECTIVES = {
    "all_reduce": CommType.ALL_REDUCE,
    "all_gather": CommType.ALL_GATHER,
    "reduce_scatter": CommType.REDUCE_SCATTER,
    "all_to_all": CommType.ALL_TO_ALL,
}
_SIZE_UNITS = {"KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "B": 1}


def load_cases() -> list[dict]:
    return json.loads(CASES_JSON.read_text())


def load_network(path: Path) -> NetworkSpec:
    data = yaml.safe_load(path.read_text())
    dims = tuple(
        DimSpec(kind, int(n), float(bw) * 2**30, float(lat))
        for kind, n, bw, lat in zip(
            data["topology"], data["npus_count"], data["bandwidth"], data["latency"], strict=True
        )
    )
    return NetworkSpec(dims, str(path))


def load_system(path: Path) -> SystemSpec:
    d = json.loads(path.read_text())
    impl = CollectiveImpl(
        all_reduce=tuple(d.get("all-reduce-implementation", ["ring"])),
        all_gather=tuple(d.get("all-gather-implementation", ["ring"])),
        reduce_scatter=tuple(d.get("reduce-scatter-implementation", ["ring"])),
        all_to_all=tuple(d.get("all-to-all-implementation", ["ring"])),
    )
    return SystemSpec(
        scheduling_policy=d.get("scheduling-policy", "LIFO"),
        endpoint_delay_ns=float(d.get("endpoint-delay", 10)),
        active_chunks_per_dimension=int(d.get("active-chunks-per-dimension", 1)),
        preferred_dataset_splits=int(d.get("preferred-dataset-splits", 1)),
        collective_optimization=d.get("collective-optimization", "baseline"),
        local_mem_bw=float(d.get("local-mem-bw", 1600)) * 1e9,
        implementations=impl,
        inter_dimension_scheduling=d.get("inter-dimension-scheduling", "baseline"),
        intra_dimension_scheduling=d.get("intra-dimension-scheduling", "FIFO"),
        source=str(path),
    )


@dataclass(frozen=True)
class Workload:
    comm_type: CommType
    npus: int
    size: int


def parse_workload(workload: str) -> Workload | None:
    """``inputs/workload/all_reduce/8npus_1MiB/et`` -> (ALL_REDUCE, 8, 1 MiB); None otherwise."""
    parts = Path(workload).parts
    if len(parts) < 3 or parts[-3] not in _COLLECTIVES:
        return None
    m = re.fullmatch(r"(\d+)npus_(\d+)(KiB|MiB|GiB|B)", parts[-2])
    if not m:
        return None
    return Workload(
        _COLLECTIVES[parts[-3]], int(m.group(1)), int(m.group(2)) * _SIZE_UNITS[m.group(3)]
    )


def run_collective(
    platform: Platform,
    comm_type: int,
    size: int,
    *,
    compat_astra: bool = True,
    symmetry: bool = True,
) -> tuple[list[float], CollectiveRuntime]:
    """Issue one collective per rank at t = 0; returns every rank's finish time (ns)."""
    queue = EventQueue()
    network = AnalyticalNetwork(platform.network, queue, compat_astra=compat_astra)
    runtime = CollectiveRuntime(
        platform, network, queue, compat_astra=compat_astra, symmetry=symmetry
    )
    npus = platform.network.npus
    finish = [-1.0] * npus

    def done(rank: int) -> None:
        finish[rank] = queue.now

    for rank in range(npus):
        runtime.issue(CollectiveRequest(rank, 1, int(comm_type), size, None, "", None), done, rank)
    queue.run()
    return finish, runtime


def run_case(case: dict, *, symmetry: bool = True) -> tuple[float, float]:
    """(max, min) finish ns of a one-collective case, in compatibility mode."""
    wl = parse_workload(case["workload"])
    if wl is None:
        raise ValueError(f"{case['name']}: not a one-collective workload")
    platform = Platform(
        load_network(RESULTS / case["network"]), load_system(RESULTS / case["system"])
    )
    finish, _ = run_collective(platform, wl.comm_type, wl.size, symmetry=symmetry)
    return max(finish), min(finish)
