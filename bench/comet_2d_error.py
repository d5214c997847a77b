"""Measurement: the strategy search's estimate against simulation for strategies of COMET's 2-D
space (docs/comet.md, "COMET's 2-D space"): TP x DP with PP 1, TP groups within and across
nodes, with and without ZeRO-3 and sequence parallelism, on 16-NPU clusters small enough to
simulate every rank.

Each case is one strategy searched alone (``trainsim.optimize.strategy.search`` with a one-point
space and ``top_k=1``) on a COMET cluster (``optimize/comet.py``: 312 TFLOP/s, 80 GB at 2 TB/s,
300 GB/s in a node, the inter-node bandwidth given), simulated in memory as the search does
(the replica slice where it applies: not under ZeRO-3) and again on every rank; prints the
estimate, both simulated steps and (estimate / simulation - 1) against each.

    PYTHONPATH=src python bench/comet_2d_error.py [--model megatron-1.7b] [--global-batch 32] [--inter-gbps 12.5,100]
"""

from __future__ import annotations

import argparse
import tempfile
from dataclasses import replace
from pathlib import Path

import yaml

from trainsim.compute import OperatorTimer, get_device
from trainsim.config.platform import parse_platform
from trainsim.optimize.comet import COMET_2D_SPACE, DEVICE, Cluster, cluster_platform
from trainsim.optimize.strategy.search import SearchInputs, search
from trainsim.sweep.runner import run_items
from trainsim.system.symmetry.replica import simulate_generated
from trainsim.workload.generate import generate
from trainsim.workload.models import get_model

CASES = (  # (NPUs per node, TP, ZeRO, SP)
    (4, 1, 3, False),
    (4, 2, 3, False),
    (4, 2, 3, True),
    (4, 4, 3, True),
    (4, 8, 3, True),  # TP across two nodes
    (4, 8, 0, True),
    (4, 4, 0, True),
)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="megatron-1.7b")
    ap.add_argument("--global-batch", type=int, default=32)
    ap.add_argument("--inter-gbps", default="12.5,100")
    args = ap.parse_args()
    spec = get_model(args.model)
    print("| per node | TP x DP | ZeRO | SP | inter-node | estimate | simulated (search) | error | every rank | error |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory(prefix="comet-2d-") as tmp:
        for inter in (float(g) for g in args.inter_gbps.split(",")):
            for per, tp, zero, sp in CASES:
                c = Cluster(nodes=16 // per, npus_per_node=per, hbm_gb=80.0, inter_gbps=inter)
                path = Path(tmp) / f"{c.name}.yaml"
                path.write_text(yaml.safe_dump(cluster_platform(c), sort_keys=False))
                space = replace(COMET_2D_SPACE, tp=(tp,), micro_batch=(1,), zero=(zero,), sp=(sp,), recompute=("selective",))
                result = search(SearchInputs(args.model, 16, args.global_batch, str(path), DEVICE), space=space, top_k=1, run=run_items)
                row = result.rows[0]
                platform = parse_platform(cluster_platform(c), str(path))
                workload = generate(spec, row.parallelism, OperatorTimer(get_device(DEVICE, platform.devices)), check_memory=False)
                every = simulate_generated(platform, workload, replica_slice=False).result.makespan_s
                print(f"| {per} | {tp} x {16 // tp} | {zero} | {'yes' if sp else 'no'} | {inter:g} GB/s | {row.estimate.step_s:.4f} s | "
                      f"{row.simulated_s:.4f} s | {row.error:+.2%} | {every:.4f} s | {row.estimate.step_s / every - 1:+.2%} |", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
