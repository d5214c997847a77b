"""Megatron-LM SC'21 Table 1, ours vs theirs: simulated TFLOP/s per GPU on DGX A100 nodes.

Each row of Narayanan et al. (SC'21, Table 1; configurations from Megatron-LM's
``examples/sc21/run_table_1.sh``: micro-batch size and interleaving per row) is generated
with trainsim's generator (full recomputation, 1F1B or interleaved 1F1B, scatter/gather p2p)
and simulated on a 2-D network: Switch 8 (NVSwitch, 300 GB/s per GPU per direction) x
Switch N/8 (8x 200 Gb/s HDR InfiniBand per node = 25 GB/s per GPU per direction). Throughput
is counted as the paper does: ``F = 96 B s l h^2 (1 + s/(6h) + V/(16 l h))`` per iteration
divided by GPUs and the simulated step time.

Modes:
- ``full``: simulate every rank (exact; slow beyond a few hundred ranks in pure Python);
- ``slice`` (default above 64 ranks): simulate one data-parallel replica (TP x PP ranks) on
  the full platform, with the data-parallel gradient all-reduce simulated alone on its own
  groups (``trainsim.system.symmetry.replica``). Under the congestion-unaware backend this equals the
  full simulation (``tests/system/test_replica.py``); where the slice refuses (a
  data-parallel ring crossing nodes unevenly: TP 4 on 8-GPU nodes) every rank runs (``full``);
- ``bound``: no simulation; compute time of the slowest stage only (an upper bound).

Simulation needs the collective runtime (``trainsim.system.collective_runtime``).

    PYTHONPATH=src python docs/megatron_table.py [--rows 1.7b,18b] [--mode auto|full|slice|bound] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from trainsim.compute import OperatorTimer
from trainsim.config.types import DimSpec, NetworkSpec, Platform, SystemSpec
from trainsim.workload.generate import Parallelism, generate
from trainsim.workload.models import TransformerSpec, get_model, megatron_flops

NVSWITCH_BW = 300e9  # B/s per GPU per direction (600 GB/s bidirectional NVLink 3)
IB_BW = 25e9  # B/s per GPU per direction (8 x 200 Gb/s per 8-GPU node)
NVSWITCH_LATENCY_NS = 700.0
IB_LATENCY_NS = 2000.0

# (label, TP, PP, GPUs, batch, micro-batch, virtual stages, published TFLOP/s per GPU)
ROWS = [
    ("1.7b", 1, 1, 32, 512, 16, 1, 137),
    ("3.6b", 2, 1, 64, 512, 16, 1, 138),
    ("7.5b", 4, 1, 128, 512, 16, 1, 142),
    ("18b", 8, 1, 256, 1024, 8, 1, 135),
    ("39b", 8, 2, 512, 1536, 4, 1, 138),
    ("76b", 8, 4, 1024, 1792, 2, 3, 140),
    ("145b", 8, 8, 1536, 2304, 2, 2, 148),
    ("310b", 8, 16, 1920, 2160, 1, 2, 155),
    ("530b", 8, 35, 2520, 2520, 1, 3, 163),
    ("1t", 8, 64, 3072, 3072, 1, 1, 163),
]


def dgx_a100(npus: int) -> Platform:
    if npus % 8:
        raise ValueError(f"{npus} GPUs is not a whole number of DGX nodes")
    dims = [DimSpec("Switch", min(8, npus), NVSWITCH_BW, NVSWITCH_LATENCY_NS)]
    if npus > 8:
        dims.append(DimSpec("Switch", npus // 8, IB_BW, IB_LATENCY_NS))
    return Platform(network=NetworkSpec(tuple(dims)), system=SystemSpec(local_mem_bw=2039e9))


def parallelism(tp: int, pp: int, dp: int, batch: int, mbs: int, v: int) -> Parallelism:
    return Parallelism(
        tp=tp, pp=pp, dp=dp, micro_batch=mbs, global_batch=batch, recompute="full",
        schedule="interleaved" if v > 1 else "1f1b", virtual_stages=v,
    )


def run_row(row: tuple, mode: str, timer: OperatorTimer) -> dict:
    label, tp, pp, gpus, batch, mbs, v, published = row
    spec = get_model(f"megatron-{label}")
    assert isinstance(spec, TransformerSpec)  # the zoo's Megatron transformers
    dp = gpus // (tp * pp)
    flops = megatron_flops(spec, batch)
    t0 = time.perf_counter()
    if mode == "auto":
        mode = "full" if gpus <= 64 else "slice"
    events = 0
    if mode == "bound":
        w = generate(spec, parallelism(tp, pp, 1, batch // dp, mbs, v), timer)
        step = max(w.info["compute_s_per_stage"])
    else:
        platform = dgx_a100(gpus)
        w = generate(spec, parallelism(tp, pp, dp, batch, mbs, v), timer, network_sizes=platform.network.sizes)
        platform = w.platform(platform)  # the generated communicator groups
        if mode == "full":
            from trainsim.system.api import simulate

            result = simulate(platform, w.graphs)
            step, events = result.makespan_s, result.events
        elif mode == "slice":
            from trainsim.system.symmetry.replica import simulate_generated

            # every rank when the slice refuses (a data-parallel ring crossing nodes unevenly)
            run = simulate_generated(platform, w)
            step, events = run.result.makespan_s, run.result.events
            if run.mode != "replica slice":
                mode = "full"
        else:
            raise SystemExit(f"unknown mode {mode!r}")
    ours = flops / gpus / step / 1e12
    return {
        "params_b": round(spec.total_params() / 1e9, 1), "tp": tp, "pp": pp, "dp": dp, "gpus": gpus, "batch": batch,
        "micro_batch": mbs, "virtual_stages": v, "mode": mode, "step_s": step, "ours_tflops": ours,
        "theirs_tflops": published, "error": ours / published - 1, "events": events, "wall_s": time.perf_counter() - t0,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", default=",".join(r[0] for r in ROWS), help="comma-separated row labels")
    ap.add_argument("--mode", default="auto", choices=["auto", "full", "slice", "bound"])
    ap.add_argument("--json", default=None, help="write the rows as JSON here")
    args = ap.parse_args()
    if args.mode != "bound":
        try:
            import trainsim.system.collective_runtime  # noqa: F401
        except ImportError:
            print("this comparison simulates collectives: it needs trainsim.system.collective_runtime "
                  "(use --mode bound for the compute-only upper bound)", file=sys.stderr)
            return 2
    timer = OperatorTimer("A100")
    wanted = args.rows.split(",")
    results = []
    print("| params (B) | TP | PP | DP | GPUs | batch | micro-batch | step (s) | ours TFLOP/s | theirs | error | mode | wall (s) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for row in ROWS:
        if row[0] not in wanted:
            continue
        r = run_row(row, args.mode, timer)
        results.append(r)
        print(f"| {r['params_b']} | {r['tp']} | {r['pp']} | {r['dp']} | {r['gpus']} | {r['batch']} | {r['micro_batch']} "
              f"| {r['step_s']:.2f} | {r['ours_tflops']:.1f} | {r['theirs_tflops']} | {100 * r['error']:+.1f}% | {r['mode']} "
              f"| {r['wall_s']:.0f} |", flush=True)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(results, fh, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
