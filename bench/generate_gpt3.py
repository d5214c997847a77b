"""Benchmark: generate GPT-3 175B on 1024 ranks (TP 8, PP 16, DP 8; ``--dp`` for more) and simulate one step.

Prints one line per phase (generation, simulation) with its wall time in seconds, then a JSON
line. Platform: DGX A100 nodes (Switch 8 NVSwitch at 300 GB/s per GPU per direction x Switch
128 InfiniBand at 25 GB/s per GPU), congestion-unaware backend.

The step is simulated as a replica slice by default (``trainsim.system.symmetry.replica``: data-parallel
replica 0, 128 ranks, whose data-parallel all-reduces the other replicas' ranks join; equal to
the full simulation bit for bit under this backend, tests/system/test_replica.py); ``--full``
simulates every rank. The output says which.

    PYTHONPATH=src python bench/generate_gpt3.py [--global-batch 1536] [--micro-batch 1] [--dp 8] [--full]
"""

from __future__ import annotations

import argparse
import json
import time

from trainsim.compute import OperatorTimer
from trainsim.config.types import CollectiveImpl, DimSpec, NetworkSpec, Platform, SystemSpec
from trainsim.workload.generate import Parallelism, generate
from trainsim.workload.models import TransformerSpec, get_model, megatron_flops


def dgx_a100(npus: int) -> Platform:
    """DGX A100: 8 GPUs on NVSwitch (300 GB/s per direction), 8x 200 Gb/s HDR InfiniBand per
    node (25 GB/s per GPU per direction)."""
    dims = (DimSpec("Switch", 8, 300e9, 700.0), DimSpec("Switch", npus // 8, 25e9, 2000.0))
    rings = ("ring", "ring")  # one per dimension: a whole-machine collective crosses both
    impl = CollectiveImpl(rings, rings, rings, rings)
    return Platform(network=NetworkSpec(dims), system=SystemSpec(local_mem_bw=2039e9, implementations=impl))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--global-batch", type=int, default=1536)
    ap.add_argument("--micro-batch", type=int, default=1)
    ap.add_argument("--dp", type=int, default=8, help="data-parallel degree (8: 1,024 ranks; 128: 16,384, the DGX's second dimension grown)")
    ap.add_argument("--full", action="store_true", help="simulate every rank instead of one data-parallel replica")
    args = ap.parse_args()
    spec = get_model("gpt3-175b")
    assert isinstance(spec, TransformerSpec)  # a zoo transformer
    par = Parallelism(tp=8, pp=16, dp=args.dp, micro_batch=args.micro_batch, global_batch=args.global_batch, recompute="full")
    platform = dgx_a100(par.world)
    t0 = time.perf_counter()
    workload = generate(spec, par, OperatorTimer("A100"), network_sizes=platform.network.sizes)
    gen_s = time.perf_counter() - t0
    per_stage = workload.info["nodes_per_stage"]  # (counting graphs would make every rank's)
    nodes = sum(per_stage[stage] for stage in workload.stage_of_rank)
    print(f"generate gpt3-175b {par.world} ranks: {gen_s:.2f} s, {nodes} nodes ({workload.info['nodes_per_stage'][0]} per rank)")
    out: dict = {"case": "generate_gpt3", "generate_s": gen_s, "nodes": nodes, "ranks": par.world}
    platform = workload.platform(platform)
    t1 = time.perf_counter()
    if args.full:
        from trainsim.system.api import simulate

        result = simulate(platform, workload.graphs)
        step, events, mode, ranks = result.makespan_s, result.events, "full", par.world
    else:
        from trainsim.errors import ConfigError
        from trainsim.system.symmetry.replica import simulate_replica

        try:
            sliced = simulate_replica(platform, workload)
        except ConfigError as exc:  # the slice would not equal the full run (its reason)
            raise SystemExit(f"replica slice refused: {exc}; rerun with --full") from None
        step, events, mode, ranks = sliced.makespan_s, sliced.events, "replica slice", sliced.ranks_simulated
    sim_s = time.perf_counter() - t1
    tflops = megatron_flops(spec, par.global_batch) / par.world / step / 1e12
    print(f"simulate one step ({mode}: {ranks} of {par.world} ranks simulated): {sim_s:.2f} s wall, "
          f"step {step:.3f} s simulated, {tflops:.1f} TFLOP/s per GPU, {events} events")
    out.update({"mode": mode, "ranks_simulated": ranks, "simulate_s": sim_s, "step_s": step, "tflops_per_gpu": tflops, "events": events,
                "total_s": gen_s + sim_s})
    print(json.dumps(out))


if __name__ == "__main__":
    main()
