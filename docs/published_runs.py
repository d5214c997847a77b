"""Other published training runs, ours vs theirs: simulated TFLOP/s per GPU (docs/generator.md,
"Other published runs").

Nothing here is fitted to these rows: the A100 profile (``compute/devices.yaml``) was
calibrated once, on Megatron-LM SC'21 Table 1's 1.7B row (docs/generator.md, "A100 efficiency
profile"), and every row below is a prediction with that profile. Each row is generated with
trainsim's generator and simulated in replica-slice mode (one data-parallel replica, the
cross-replica collectives alone; equal to the every-rank simulation under the
congestion-unaware backend, tests/system/test_replica.py), or every rank where the slice
refuses (a data-parallel ring that crosses nodes unevenly, as BLOOM's TP 4), on a platform built from the source's
description of the machine, as a Clos fabric (``network.fabric: {kind: clos}``,
docs/topologies.md) whose derived dims the simulation runs on. Throughput is counted with the
formula the source uses (per row), over GPUs x the simulated step time.

Rows (sources in ``ROWS``): BLOOM-176B on Jean Zay (BigScience), Megatron-Turing NLG 530B on
Selene at 280, 350 and 420 DGX A100 nodes (Smith et al. 2022).

    PYTHONPATH=src python docs/published_runs.py [--rows bloom,mtnlg-280] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import dataclass

from trainsim.compute import OperatorTimer
from trainsim.config.clos import ClosParams, ClosTier
from trainsim.config.types import FabricSpec, NetworkSpec, Platform, SystemSpec
from trainsim.system.symmetry.replica import simulate_generated
from trainsim.workload.generate import Parallelism, generate
from trainsim.workload.models import TransformerSpec, get_model, megatron_flops


@dataclass(frozen=True)
class Row:
    label: str
    model: str
    source: str
    gpus: int
    tp: int
    pp: int
    micro_batch: int
    global_batch: int
    zero: int
    published_tflops: float
    flops: str  # "megatron": 96 B s l h^2 (1 + s/6h + V/16lh); "8P": 8 x params x tokens
    nic_gbps_per_gpu: float  # inter-node, GB/s per GPU per direction
    hbm_gbps: float
    layers_per_stage: tuple[int, ...] = ()
    note: str = ""


ROWS = [
    Row(
        "bloom", "bloom-176b",
        "BigScience tr11-176B-ml README and slurm script (github.com/bigscience-workshop/bigscience, "
        "train/tr11-176B-ml): 384 A100 80GB, TP 4, PP 12, DP 8, MBS 2, GBS 2048, activation "
        "checkpointing, bf16 with the BF16 optimizer's own ZeRO-1; stages [embed|5], 6 x 10, [5|embed]; "
        "'about 150 TFLOPs' (BigScience 176B model page; the README counts 4 x 2 x params x tokens)",
        384, 4, 12, 2, 2048, 1, 150.0, "8P", 4 * 100 / 8 / 8, 2039.0, (5, *[6] * 10, 5),
        "Jean Zay: 8 GPUs per node on NVLink, 4 x 100 Gb/s Omni-Path per node (6.25 GB/s per GPU)",
    ),
    *(
        Row(
            f"mtnlg-{nodes}", "mt-nlg-530b",
            "Smith et al. 2022 (arXiv:2201.11990) §2.4, as quoted in llm-analysis' MT-NLG example: "
            f"TP 8, PP 35, global batch 1920 on {nodes} DGX A100 nodes, {iter_s} s per iteration = "
            f"{tflops} TFLOP/s per GPU; micro-batch 1 assumed (not stated there; Megatron's 530B row uses 1)",
            nodes * 8, 8, 35, 1, 1920, 0, float(tflops), "megatron", 25.0, 2039.0, (), "Selene: DGX A100, 8 x 200 Gb/s HDR per node",
        )
        for nodes, iter_s, tflops in ((280, 60.1, 126), (350, 50.2, 121), (420, 44.4, 113))
    ),
]


def platform(gpus: int, nic_gbps: float, hbm_gbps: float) -> Platform:
    """8 GPUs per node on NVSwitch (300 GB/s per GPU per direction), nodes under one
    non-blocking leaf tier, as a 2-tier clos fabric; the dims are the fabric's derived ones."""
    clos = ClosParams((ClosTier(8, 300e9, 700.0), ClosTier(gpus // 8, nic_gbps * 1e9, 2000.0)))
    network = NetworkSpec(clos.dims(), fabric=FabricSpec(kind="clos", clos=clos))
    return Platform(network=network, system=SystemSpec(local_mem_bw=hbm_gbps * 1e9))


def run_row(row: Row, timer: OperatorTimer) -> dict:
    spec = get_model(row.model)
    assert isinstance(spec, TransformerSpec)  # ROWS names zoo transformers
    dp = row.gpus // (row.tp * row.pp)
    par = Parallelism(
        tp=row.tp, pp=row.pp, dp=dp, micro_batch=row.micro_batch, global_batch=row.global_batch,
        recompute="full", zero=row.zero, layers_per_stage=row.layers_per_stage,
    )
    base = platform(row.gpus, row.nic_gbps_per_gpu, row.hbm_gbps)
    t0, c0 = time.perf_counter(), time.process_time()
    w = generate(spec, par, timer, network_sizes=base.network.sizes)
    # the replica slice where it applies; every rank where it refuses (a data-parallel ring
    # crossing nodes unevenly: TP 4 on 8-GPU nodes, docs/generator.md "Replica slice")
    step = simulate_generated(base, w).result.makespan_s
    if row.flops == "8P":
        flops = 8.0 * spec.total_params() * spec.seq * row.global_batch
    else:
        flops = megatron_flops(spec, row.global_batch)
    ours = flops / row.gpus / step / 1e12
    return {
        "row": row.label, "model": row.model, "gpus": row.gpus, "tp": row.tp, "pp": row.pp, "dp": dp,
        "micro_batch": row.micro_batch, "global_batch": row.global_batch, "zero": row.zero, "step_s": step,
        "ours_tflops": ours, "published_tflops": row.published_tflops, "error": ours / row.published_tflops - 1,
        "wall_s": time.perf_counter() - t0, "cpu_s": time.process_time() - c0,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", default=",".join(r.label for r in ROWS), help="comma-separated row labels")
    ap.add_argument("--json", default=None, help="write the rows as JSON here")
    args = ap.parse_args()
    wanted = args.rows.split(",")
    timer = OperatorTimer("A100")
    results = []
    print("| row | GPUs | TP | PP | DP | micro / global batch | step (s) | ours TFLOP/s | published | error | CPU (s) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for row in ROWS:
        if row.label not in wanted:
            continue
        r = run_row(row, timer)
        results.append(r)
        print(f"| {r['row']} | {r['gpus']} | {r['tp']} | {r['pp']} | {r['dp']} | {r['micro_batch']} / {r['global_batch']} "
              f"| {r['step_s']:.2f} | {r['ours_tflops']:.1f} | {r['published_tflops']:.0f} | {100 * r['error']:+.1f}% "
              f"| {r['cpu_s']:.0f} |", flush=True)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(results, fh, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
