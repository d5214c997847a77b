"""Benchmark: generate GPT-3 175B on 1024 ranks (TP 8, PP 16, DP 8) and simulate one step.

Prints one line per phase (generation, simulation) with its wall time, then a JSON line.
The simulation needs the collective runtime; without it the line says so and the run only
times generation. Platform: DGX A100 nodes (Switch 8 NVSwitch x Switch 128 InfiniBand).

    PYTHONPATH=src python bench/generate_gpt3.py [--global-batch 1536] [--micro-batch 1]
"""

from __future__ import annotations

import argparse
import json
import time

from trainsim.compute import OperatorTimer
from trainsim.config.types import DimSpec, NetworkSpec, Platform, SystemSpec
from trainsim.workload.generate import Parallelism, generate
from trainsim.workload.models import get_model, megatron_flops


def dgx_a100(npus: int) -> Platform:
    """DGX A100: 8 GPUs on NVSwitch (300 GB/s per direction), 8x 200 Gb/s HDR InfiniBand per
    node (25 GB/s per GPU per direction)."""
    dims = (DimSpec("Switch", 8, 300e9, 700.0), DimSpec("Switch", npus // 8, 25e9, 2000.0))
    return Platform(network=NetworkSpec(dims), system=SystemSpec(local_mem_bw=2039e9))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--global-batch", type=int, default=1536)
    ap.add_argument("--micro-batch", type=int, default=1)
    args = ap.parse_args()
    spec = get_model("gpt3-175b")
    par = Parallelism(tp=8, pp=16, dp=8, micro_batch=args.micro_batch, global_batch=args.global_batch, recompute="full")
    t0 = time.perf_counter()
    workload = generate(spec, par, OperatorTimer("A100"), network_sizes=(8, par.world // 8))
    gen_s = time.perf_counter() - t0
    nodes = sum(len(g) for g in workload.graphs)
    print(f"generate gpt3-175b 1024 ranks: {gen_s:.2f} s, {nodes} nodes ({workload.info['nodes_per_stage'][0]} per rank)")
    out = {"case": "generate_gpt3", "generate_s": gen_s, "nodes": nodes, "ranks": par.world}
    try:
        from trainsim.system.collective_runtime import CollectiveRuntime  # noqa: F401
    except ImportError:
        print("simulate: skipped (the collective runtime has not landed)")
    else:
        from trainsim.system.api import simulate

        t1 = time.perf_counter()
        result = simulate(dgx_a100(par.world), workload.graphs)
        sim_s = time.perf_counter() - t1
        tflops = megatron_flops(spec, par.global_batch) / par.world / result.makespan_s / 1e12
        print(f"simulate one step: {sim_s:.2f} s wall, step {result.makespan_s:.3f} s simulated, {tflops:.1f} TFLOP/s per GPU")
        out.update({"simulate_s": sim_s, "step_s": result.makespan_s, "tflops_per_gpu": tflops, "events": result.events})
    print(json.dumps(out))


if __name__ == "__main__":
    main()
