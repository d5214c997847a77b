"""Check: Llama 3 405B on H100 against Dubey et al. 2024 ("The Llama 3 Herd of Models"), Table 4
(8,192 GPUs, TP 8, CP 1, PP 16, DP 64: 430 TFLOP/s per GPU; 16,384 GPUs, DP 128: 400; 16,384
GPUs, CP 16, DP 8, sequences of 131,072: 380), with the built-in H100 profile (nothing fitted to
these rows; docs/generator.md).

16M tokens per step (2,048 sequences of 8,192; with ``--cp 16``, 128 of 131,072), micro-batch 1, sequence parallelism, ZeRO-1,
no recomputation; 126 layers on 16 stages: 7 + 14 x 8 + 7 under 1F1B (``--virtual-stages 1``),
or with ``--virtual-stages V`` the first and the last chunk one layer short (128 / (16 V) layers
per chunk). Network: 8 GPUs on NVLink (450 GB/s per direction) x nodes on 400 Gb/s RoCE (50 GB/s
per GPU), a ring on each dimension, congestion-unaware backend, replica slice. Throughput per GPU
counts ``model_flops_per_token`` (6 x parameters + 12 l s h_attn per token).

    PYTHONPATH=src python bench/llama3_405b.py [--dp 64] [--virtual-stages 1] [--cp 1]
"""

from __future__ import annotations

import argparse
import time

from trainsim.compute import OperatorTimer
from trainsim.config.types import CollectiveImpl, DimSpec, NetworkSpec, Platform, SystemSpec
from trainsim.system.symmetry.replica import simulate_generated
from trainsim.workload.generate import Parallelism, generate
from trainsim.workload.models import TransformerSpec, get_model
from trainsim.workload.models.transformer import model_flops_per_token


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dp", type=int, default=64)
    ap.add_argument("--virtual-stages", type=int, default=1)
    ap.add_argument("--cp", type=int, default=1)
    args = ap.parse_args()
    dp, v, cp = args.dp, args.virtual_stages, args.cp
    seq = 8192 if cp == 1 else 131072
    spec = get_model("llama3-405b", seq=seq)
    assert isinstance(spec, TransformerSpec)  # a zoo transformer
    npus = 8 * cp * 16 * dp
    ring = ("ring", "ring")
    impl = CollectiveImpl(all_reduce=ring, all_gather=ring, reduce_scatter=ring, all_to_all=ring)
    dims = (DimSpec("Switch", 8, 450e9, 700.0), DimSpec("Switch", npus // 8, 50e9, 2000.0))
    platform = Platform(network=NetworkSpec(dims), system=SystemSpec(local_mem_bw=3350e9, implementations=impl))
    common = dict(tp=8, cp=cp, pp=16, dp=dp, sp=True, micro_batch=1, global_batch=16 * 1024 * 1024 // seq, zero=1)
    if v == 1:
        par = Parallelism(**common, first_stage_layers=7, last_stage_layers=7)  # type: ignore[arg-type]
    else:
        n = 128 // (16 * v)
        chunks = (n - 1,) + (n,) * (16 * v - 2) + (n - 1,)
        par = Parallelism(**common, schedule="interleaved", virtual_stages=v, layers_per_chunk=chunks)  # type: ignore[arg-type]
    t0 = time.perf_counter()
    w = generate(spec, par, OperatorTimer("H100"), network_sizes=(8, npus // 8), check_memory=False)
    run = simulate_generated(platform, w)
    tflops = model_flops_per_token(spec) * par.global_batch * spec.seq / npus / run.makespan_s / 1e12
    print(
        f"{npus} GPUs, CP {cp}, DP {dp}, virtual stages {v}: step {run.makespan_s:.3f} s, {tflops:.1f} TFLOP/s per GPU, "
        f"peak memory {w.peak_memory().total / 1e9:.1f} GB, wall {time.perf_counter() - t0:.0f} s"
    )


if __name__ == "__main__":
    main()
