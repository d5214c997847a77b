"""An all-to-all of 128 ranks on a 2:1 oversubscribed leaf-spine fat-tree, against the same
fabric without oversubscription and against the congestion-unaware model.

Every rank sends 1/128 of its buffer to every other rank at once (direct algorithm); 15/16
of that traffic leaves its leaf, so the oversubscribed uplinks are the bottleneck.

    python examples/fat_tree_alltoall/run.py
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from trainsim.config.platform import load_platform
from trainsim.system.api import simulate
from trainsim.workload.micro import collective_workload

HERE = Path(__file__).resolve().parent
SIZE = 16 << 20  # bytes per rank


def main() -> dict[str, float]:
    platform = load_platform(HERE / "platform.yaml")
    fabric = platform.network.fabric
    assert fabric is not None
    full = dataclasses.replace(platform, network=dataclasses.replace(platform.network, fabric=dataclasses.replace(fabric, oversubscription=1.0)))
    graphs = collective_workload(128, "all_to_all", SIZE)
    times = {
        "unaware (no contention)": simulate(platform, graphs, backend="congestion_unaware").makespan_s,
        "flow, 1:1 fat-tree": simulate(full, graphs, backend="flow").makespan_s,
        "flow, 2:1 fat-tree": simulate(platform, graphs, backend="flow").makespan_s,
    }
    for label, t in times.items():
        print(f"{label:26s} {t * 1e3:8.3f} ms")
    ratio = times["flow, 2:1 fat-tree"] / times["flow, 1:1 fat-tree"]
    print(f"2:1 oversubscription slows the all-to-all by {ratio:.2f}x")
    times["oversubscription_slowdown"] = ratio
    return times


if __name__ == "__main__":
    main()
