"""Two all-reduces on non-contiguous groups of an 8x8 mesh contend for the same links.

The tensor-parallel group {0, 2, 4, 6} and the data-parallel group {1, 3, 5, 7} both sit in row
0; each group's ring sends to a member two columns away, so every message crosses a link the
other group also uses. Run under the flow backend: each all-reduce alone, then both at once.

    python examples/mesh_contention/run.py
"""

from __future__ import annotations

from pathlib import Path

from trainsim.config.platform import load_platform
from trainsim.enums import CommType, NodeType
from trainsim.system.api import simulate
from trainsim.workload import GraphBuilder

HERE = Path(__file__).resolve().parent
SIZE = 64 << 20  # bytes per all-reduce


def graphs(groups: set[str]) -> list:
    out = []
    for rank in range(64):
        b = GraphBuilder(source="<mesh contention>", rank=rank)
        for name, members in (("1", (0, 2, 4, 6)), ("2", (1, 3, 5, 7))):
            if name in groups and rank in members:
                b.add(1, NodeType.COMM_COLL_NODE, f"allreduce_g{name}", comm_type=int(CommType.ALL_REDUCE), comm_size=SIZE, pg_name=name)
        out.append(b.build())
    return out


def main() -> dict[str, float]:
    platform = load_platform(HERE / "platform.yaml")
    times = {}
    for label, groups in (("tp alone", {"1"}), ("dp alone", {"2"}), ("both", {"1", "2"})):
        times[label] = simulate(platform, graphs(groups), backend="flow").makespan_s
    slowdown = times["both"] / max(times["tp alone"], times["dp alone"])
    for label, t in times.items():
        print(f"{label:9s} {t * 1e3:8.3f} ms")
    print(f"slowdown when both run at once: {slowdown:.2f}x")
    times["slowdown"] = slowdown
    return times


if __name__ == "__main__":
    main()
