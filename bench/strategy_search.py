"""Strategy search speed and estimate accuracy: GPT-3 175B on 1,024 GPUs of the DGX A100 platform.

Runs `trainsim optimize strategy`'s search (every TP/PP/DP/micro-batch/schedule/ZeRO/SP/
recompute combination at global batch 1,536, pruned by memory, ranked by the analytical
estimate, the best ``--top-k`` generated and simulated on ``--jobs`` processes) and prints:
combinations, wall and CPU seconds of each phase, the estimate's error on every simulated
candidate, and the baseline measured in the same run: the simulations' own mean wall time per
candidate times the number of candidates that fit (what simulating every candidate would
cost). A JSON line closes the output.

    python bench/strategy_search.py [--top-k 3] [--jobs 2] [--model gpt3-175b --gpus 1024 --batch 1536]
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from trainsim.optimize.strategy.search import SearchInputs, search  # noqa: E402
from trainsim.sweep.runner import run_items  # noqa: E402
from trainsim.sweep.store import SweepStore  # noqa: E402

PLATFORM = str(Path(__file__).resolve().parents[1] / "examples" / "dgx_a100" / "platform.yaml")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="gpt3-175b")
    ap.add_argument("--gpus", type=int, default=1024)
    ap.add_argument("--batch", type=int, default=1536)
    ap.add_argument("--top-k", type=int, default=3)
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        store = SweepStore(Path(tmp) / "search.sqlite")
        wall0, cpu0 = time.perf_counter(), time.process_time()
        result = search(
            SearchInputs(args.model, args.gpus, args.batch, PLATFORM),
            top_k=args.top_k,
            store=store,
            run=run_items,
            jobs=args.jobs,
        )
        wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu_children = children.ru_utime + children.ru_stime
        store.close()
    sims = result.simulated
    print(
        f"{args.model} on {args.gpus} GPUs, batch {args.batch}: {result.enumerated:,} combinations, {result.valid:,} valid, {len(result.rows):,} fit"
    )
    print(f"search: {wall:.1f} s wall (estimate phase {result.wall_s['estimate']:.1f} s, store {result.wall_s['store']:.1f} s, "
          f"simulation of the best {len(sims)} on {args.jobs} processes {result.wall_s['simulate']:.1f} s); CPU: main process {cpu:.1f} s, "
          f"simulation processes {cpu_children:.1f} s")  # fmt: skip
    sim_walls = []
    for r in sims:
        sim_walls.append(float(r.metrics.get("wall_s", 0.0)))
        p = r.params
        print(f"  TP {p['tp']} PP {p['pp']} DP {p['dp']} mb {p['micro_batch']} {p['schedule']} v{p['virtual_stages']} SP {p['sp']} ZeRO {p['zero']} {p['recompute']}: "
              f"estimate {r.estimate.step_s:.4f} s, simulated {r.simulated_s:.4f} s, error {r.error:+.2%}")  # fmt: skip
    cpu_per_sim = cpu_children / max(1, len(sims))
    idle_wall = cpu + -(-len(sims) // args.jobs) * cpu_per_sim
    print(f"on {args.jobs} idle cores (the CPU seconds above, simulations {args.jobs} at a time): about {idle_wall:.1f} s; "
          f"{cpu_per_sim:.1f} CPU s per simulation")  # fmt: skip
    per_sim = result.wall_s["simulate"] * args.jobs / max(1, len(sims))
    baseline = per_sim * len(result.rows)
    print(f"baseline (same run): simulating every one of the {len(result.rows):,} fitting candidates at {per_sim:.1f} s each "
          f"= {baseline / 3600:.1f} h wall, {baseline / wall:.0f}x the search; at {cpu_per_sim:.1f} CPU s each on {args.jobs} idle cores "
          f"{cpu_per_sim * len(result.rows) / args.jobs / 3600:.1f} h, {cpu_per_sim * len(result.rows) / args.jobs / idle_wall:.0f}x")  # fmt: skip
    if result.skipped:
        s0 = result.skipped[0]
        print(f"not simulated: {len(result.skipped)} better-ranked strategies need every rank (ZeRO-3, {args.gpus} ranks); "
              f"best estimate {s0.estimate.step_s:.3f} s (TP {s0.params['tp']} PP {s0.params['pp']} DP {s0.params['dp']} ZeRO {s0.params['zero']})")  # fmt: skip
    worst = result.max_abs_error()
    print(
        f"estimate error on the simulated candidates: max {worst:.2%}"
        if worst is not None
        else "nothing simulated"
    )
    print(json.dumps({"combinations": result.enumerated, "fit": len(result.rows), "wall_s": wall, "cpu_main_s": cpu, "cpu_children_s": cpu_children, "phases_s": result.wall_s,
                      "simulated": len(sims), "not_simulated": len(result.skipped), "max_abs_error": worst, "baseline_s": baseline, "idle_wall_s": idle_wall}))  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
