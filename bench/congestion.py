"""Congestion-aware and flow backends at scale: a 1 GiB all-reduce (ring algorithm) on a
1,024-rank ring and on a 3-D 8x8x16 network, with events per second.

Baseline: ASTRA-sim's congestion-aware backend takes 21.1 s on the 1,024-rank ring on this
machine class (issue 4); the ratio printed is that figure over our wall time (ASTRA-sim
cannot run the 3-D case on its aware backend at all). Prints one line per case, then a JSON
line.

    PYTHONPATH=src python bench/congestion.py [--ranks 1024] [--backends congestion_aware,flow]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from trainsim.config.types import (  # noqa: E402
    CollectiveImpl,
    DimSpec,
    NetworkSpec,
    Platform,
    SystemSpec,
    TopologyKind,
)
from trainsim.system.api import simulate  # noqa: E402
from trainsim.workload.micro import collective_workload  # noqa: E402

ASTRA_AWARE_RING1024_S = 21.1
BW = 50 * 2**30  # ASTRA-sim's 50 "GB/s"


def platform(dims: list[tuple[TopologyKind, int]]) -> Platform:
    system = SystemSpec(
        endpoint_delay_ns=10,
        preferred_dataset_splits=4,
        collective_optimization="localBWAware",
        implementations=CollectiveImpl(all_reduce=tuple("ring" for _ in dims)),
    )
    return Platform(NetworkSpec(tuple(DimSpec(k, n, BW, 500.0) for k, n in dims)), system, compat="astra")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", type=int, default=1024, help="ranks of the ring case")
    parser.add_argument("--backends", default="congestion_aware,flow")
    args = parser.parse_args()
    cases: dict[str, list[tuple[TopologyKind, int]]] = {f"ring {args.ranks}": [("Ring", args.ranks)], "3D Ring 8 x Ring 8 x Ring 16": [("Ring", 8), ("Ring", 8), ("Ring", 16)]}
    rows = []
    for name, dims in cases.items():
        plat = platform(dims)
        graphs = collective_workload(plat.network.npus, "all_reduce", 1 << 30)
        for backend in args.backends.split(","):
            start = time.perf_counter()
            result = simulate(plat, graphs, backend=backend)
            wall = time.perf_counter() - start
            ratio = ASTRA_AWARE_RING1024_S / wall if name == "ring 1024" else None
            rows.append({"case": name, "backend": backend, "simulated_s": result.makespan_s, "wall_s": wall, "events": result.events, "events_per_s": result.events / wall, "astra_ratio": ratio})
            extra = f", ASTRA-sim aware / ours = {ratio:.2f}" if ratio else ""
            print(f"{name:32s} {backend:18s} simulated {result.makespan_s * 1e3:10.3f} ms  wall {wall:8.2f} s  {result.events:>11,} events  {result.events / wall:>10,.0f} events/s{extra}")
    print(json.dumps(rows))


if __name__ == "__main__":
    main()
