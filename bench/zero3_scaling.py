"""Measurement: ZeRO-3 / FSDP model TFLOP/s per GPU as the data-parallel degree grows at a fixed
global batch (docs/generator.md, "ZeRO-3 / FSDP at scale").

One micro-batch of ``global_batch / DP`` sequences per GPU, no recomputation, A100 profile, DGX
A100 nodes (8 GPUs on NVSwitch at 300 GB/s per GPU per direction x DP/8 nodes at 25 GB/s per GPU
of InfiniBand), congestion-unaware backend, every rank (ranks are identical, so the whole-step
symmetry runs one). ``--impl`` sets the all-gather / reduce-scatter / all-reduce implementation
of every dimension: ``ring`` (a hierarchical ring, one per dimension), ``oneRing`` (one flat ring
over all ranks), or ``none`` (no list: ASTRA-sim's convention, which on this branch stops a
whole-machine collective at the first dimension). Throughput is Megatron's no-recompute formula
``72 B s l h^2 (1 + s/(6h) + V/(12 l h))`` per GPU and second.

    PYTHONPATH=src python bench/zero3_scaling.py [--model megatron-1.7b] [--global-batch 1536] [--dp 384,768,1536] [--impl ring]
"""

from __future__ import annotations

import argparse
import json
import time

from trainsim.compute import OperatorTimer
from trainsim.config.types import CollectiveImpl, DimSpec, NetworkSpec, Platform, SystemSpec
from trainsim.system.symmetry.replica import simulate_generated
from trainsim.workload.generate import Parallelism, generate
from trainsim.workload.models import TransformerSpec, get_model, megatron_flops


def platform(npus: int, impl: str) -> Platform:
    dims = [DimSpec("Switch", min(8, npus), 300e9, 700.0)]
    if npus > 8:
        dims.append(DimSpec("Switch", npus // 8, 25e9, 2000.0))
    if impl == "none":
        return Platform(network=NetworkSpec(tuple(dims)))
    names = (impl,) if impl.startswith("one") else (impl,) * len(dims)
    system = SystemSpec(implementations=CollectiveImpl(all_reduce=names, all_gather=names, reduce_scatter=names, all_to_all=names))
    return Platform(network=NetworkSpec(tuple(dims)), system=system)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="megatron-1.7b")
    ap.add_argument("--global-batch", type=int, default=1536)
    ap.add_argument("--dp", default="384,768,1536")
    ap.add_argument("--impl", default="ring")
    args = ap.parse_args()
    spec = get_model(args.model)
    if not isinstance(spec, TransformerSpec):
        raise SystemExit(f"--model {args.model}: not a transformer; the Megatron FLOP count (TFLOP/s per GPU) needs one")
    timer = OperatorTimer("A100")
    rows = []
    for dp in (int(x) for x in args.dp.split(",")):
        t0 = time.perf_counter()
        par = Parallelism(dp=dp, zero=3, micro_batch=args.global_batch // dp, global_batch=args.global_batch)
        w = generate(spec, par, timer, check_memory=False)
        step = simulate_generated(platform(dp, args.impl), w).makespan_s
        tflops = megatron_flops(spec, args.global_batch, recompute=False) / dp / step / 1e12
        row = {"dp": dp, "micro_batch": par.micro_batch, "step_s": step, "compute_s": w.info["compute_s_per_stage"][0], "tflops_per_gpu": tflops, "wall_s": time.perf_counter() - t0}
        rows.append(row)
        print(f"DP {dp:5d}  micro-batch {par.micro_batch:3d}  step {step * 1e3:9.2f} ms  compute {row['compute_s'] * 1e3:9.2f} ms  {tflops:6.1f} TFLOP/s per GPU", flush=True)
    print(json.dumps({"model": args.model, "impl": args.impl, "rows": rows}))


if __name__ == "__main__":
    main()
