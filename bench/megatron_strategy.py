"""Does the strategy search find what Megatron-LM published? SC'21 Table 1 rows, searched.

For each row of Narayanan et al. (SC'21) Table 1 (``docs/megatron_table.py``: model, GPUs,
global batch, the published TP / PP / micro-batch / interleaving), on the same DGX A100
platform (Switch 8 at 300 GB/s x Switch N/8 at 25 GB/s per GPU), this runs the strategy search
(every TP/PP/DP/micro-batch/schedule/ZeRO/SP/recompute combination, memory-pruned, estimated),
simulates its best ``--top-k`` and the best with full recomputation (the paper's setting for
every row), simulates the published strategy, and prints the published step against the
search's best: ``gap = published / best - 1`` (target: within 5%, or the pick explained).

    python bench/megatron_strategy.py [--rows 1.7b,3.6b,7.5b,18b,39b,76b] [--top-k 2] [--jobs 2] [--nccl] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "docs"))

import yaml  # noqa: E402
from megatron_table import IB_BW, IB_LATENCY_NS, NVSWITCH_BW, NVSWITCH_LATENCY_NS, ROWS  # noqa: E402

from trainsim.optimize.strategy.search import (  # noqa: E402
    SearchInputs,
    needs_every_rank,
    search,
    simulate_strategies,
)
from trainsim.sweep.runner import run_items  # noqa: E402

# NCCL's pricing of the collectives (docs/nccl.md) with the DGX A100 calibration of
# examples/nccl/dgx_a100_8gpu.yaml: a group that spans nodes gets the NICs' share, as NCCL's
# rings and trees do, instead of the first dimension where two ranks differ
NCCL_A100 = {"arch": "ampere", "channels": 16, "efficiency": 0.96}


def platform_file(folder: Path, gpus: int, nccl: bool = False) -> str:
    dims = [
        {
            "topology": "Switch",
            "size": min(8, gpus),
            "bandwidth_gbps": NVSWITCH_BW / 1e9,
            "latency_ns": NVSWITCH_LATENCY_NS,
        }
    ]
    if gpus > 8:
        dims.append(
            {
                "topology": "Switch",
                "size": gpus // 8,
                "bandwidth_gbps": IB_BW / 1e9,
                "latency_ns": IB_LATENCY_NS,
            }
        )
    system: dict = {"local_mem_bw_gbps": 2039}
    if nccl:
        system |= {"collective_tuner": "nccl", "nccl": dict(NCCL_A100)}
    path = folder / f"dgx_{gpus}{'_nccl' if nccl else ''}.yaml"
    path.write_text(yaml.safe_dump({"network": {"dims": dims}, "system": system}))
    return str(path)


def label(p: dict) -> str:
    sched = f" {p['schedule']} v{p['virtual_stages']}" if p["pp"] > 1 else ""
    return f"TP {p['tp']} PP {p['pp']} DP {p['dp']} mb {p['micro_batch']}{sched}{' SP' if p['sp'] else ''} ZeRO {p['zero']} {p['recompute']}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", default="1.7b,3.6b,7.5b,18b,39b,76b")
    ap.add_argument("--top-k", type=int, default=2)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--json", default=None)
    ap.add_argument("--nccl", action="store_true", help="price the collectives as NCCL does (docs/nccl.md)")
    args = ap.parse_args()
    wanted = args.rows.split(",")
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, tp, pp, gpus, batch, mbs, v, _published_tflops in ROWS:
            if name not in wanted:
                continue
            t0 = time.perf_counter()
            result = search(
                SearchInputs(f"megatron-{name}", gpus, batch, platform_file(Path(tmp), gpus, args.nccl)),
                top_k=args.top_k,
                run=run_items,
                jobs=args.jobs,
            )
            published = {"tp": tp, "pp": pp, "dp": gpus // (tp * pp), "micro_batch": mbs, "schedule": "interleaved" if v > 1 else "1f1b",
                         "virtual_stages": v, "sp": False, "zero": 0, "recompute": "full"}  # fmt: skip
            # the paper's space: no ZeRO, no sequence parallelism (SC'21 predates both in Megatron-LM), full recomputation
            paper = next(
                (
                    r.params
                    for r in result.rows
                    if r.params["recompute"] == "full"
                    and r.params["zero"] == 0
                    and not r.params["sp"]
                ),
                None,
            )
            assert result.estimator is not None
            memory_mode = result.estimator.comm.platform.memory.mode  # the tier, if any: offload to a shared one needs every rank
            full = next(
                (
                    r.params
                    for r in result.rows
                    if r.params["recompute"] == "full"
                    and not (needs_every_rank(r.parallelism, memory_mode) and gpus > 64)
                ),
                None,
            )
            extra = [published] + [p for p in (paper, full) if p is not None]
            pub, *rest = simulate_strategies(result, extra, run_items, args.jobs)
            best = result.best
            if best is None:
                raise SystemExit(f"{name} on {gpus} GPUs: none of the {result.enumerated:,} combinations fits")
            if pub.simulated_s is None:
                raise SystemExit(f"{name} on {gpus} GPUs: the published strategy did not simulate: {pub.sim_error}")
            pub_s = pub.simulated_s
            by = {label(r.params): r for r in [*rest, best]}
            row = {"row": name, "gpus": gpus, "combinations": result.enumerated, "fit": len(result.rows),
                   "published": label(published), "published_step_s": pub_s,
                   "published_estimate_rank": next((i + 1 for i, r in enumerate(result.rows) if r.params == published), None),
                   "max_abs_estimate_error": result.max_abs_error(), "wall_s": time.perf_counter() - t0}  # fmt: skip
            for key, params in (
                ("best", best.params),
                ("paper_space", paper),
                ("full_recompute", full),
            ):
                step_s = None if params is None else by[label(params)].simulated_s
                if params is not None and step_s:
                    row[key] = label(params)
                    row[f"{key}_step_s"] = step_s
                    row[f"{key}_gap"] = pub_s / step_s - 1
            print(
                f"{name} on {gpus} GPUs: {result.enumerated:,} combinations, {len(result.rows):,} fit ({row['wall_s']:.0f} s)"
            )
            print(
                f"  published  {row['published']}: {pub_s:.3f} s (estimate {pub.estimate.step_s:.3f} s, rank {row['published_estimate_rank']})"
            )
            for key, what in (
                ("best", "search's best"),
                ("paper_space", "best without ZeRO/SP, full recomputation"),
                ("full_recompute", "best with full recomputation"),
            ):
                if key in row:
                    print(
                        f"  {what}: {row[key]}: {row[key + '_step_s']:.3f} s -> published {row[key + '_gap']:+.1%}"
                    )
            if result.skipped:
                print(
                    f"  not simulated: {len(result.skipped)} better estimates need every rank (ZeRO-3); best {result.skipped[0].estimate.step_s:.3f} s"
                )
            print(
                f"  estimate error on the simulated candidates: max {result.max_abs_error():.2%}",
                flush=True,
            )
            out.append(row)
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
