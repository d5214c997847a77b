"""Benchmark: the default mode's shift-exact memo of symmetric collectives (issue 18,
``trainsim.system.symmetry.shift``) against the same step simulated without it, in one run.

For each generated workload (in memory, default mode, congestion-unaware backend, DGX A100
platform as in bench/generate_gpt3.py) the step is simulated twice - memo on, then memo off
(``SymmetricRunner.shift_exact = False``: every symmetric collective simulated message by
message, the path before issue 18) - and the script prints CPU seconds of each
(``time.process_time``), their ratio, the step time of each as ``repr`` (they must be equal, bit
for bit: the script exits 1 otherwise), the events and the memo's replays and the machine's
load average. These steps run 16-24 times the micro-batches of issue 18's ASTRA-sim anchors
(batch 64), so no ratio to ASTRA-sim is printed here: ``bench/equivalence_files.py --astra``
runs both tools on the anchors' own files.

    PYTHONPATH=src python bench/memo.py [--cases gpt3,megatron18b] [--no-baseline]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from trainsim.compute import OperatorTimer
from trainsim.system.symmetry.collective import SymmetricRunner
from trainsim.system.symmetry.replica import simulate_replica
from trainsim.workload.generate import Parallelism, generate
from trainsim.workload.models import get_model

sys.path.insert(0, str(Path(__file__).parent))
from generate_gpt3 import dgx_a100  # noqa: E402


@dataclass(frozen=True)
class Case:
    model: str
    tp: int
    pp: int
    dp: int
    global_batch: int


CASES = {
    # GPT-3 175B TP8 PP16 DP8 with recompute, [Switch 8, Switch 128]: bench/generate_gpt3.py
    "gpt3": Case("gpt3-175b", 8, 16, 8, 1536),
    # Megatron 18B TP8 PP4 DP8 on [Switch 8, Switch 32]
    "megatron18b": Case("megatron-18b", 8, 4, 8, 1024),
}


def _simulate(platform, workload, memo: bool):
    SymmetricRunner.shift_exact = memo
    try:
        t0 = time.process_time()
        result = simulate_replica(platform, workload)
        return result, time.process_time() - t0
    finally:
        SymmetricRunner.shift_exact = True


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", default="gpt3,megatron18b")
    ap.add_argument("--no-baseline", action="store_true", help="skip the run without the memo")
    args = ap.parse_args()
    status = 0
    for name in args.cases.split(","):
        case = CASES[name]
        par = Parallelism(tp=case.tp, pp=case.pp, dp=case.dp, micro_batch=1, global_batch=case.global_batch, recompute="full")
        platform = dgx_a100(par.world)
        workload = generate(get_model(case.model), par, OperatorTimer("A100"), network_sizes=platform.network.sizes)
        platform = workload.platform(platform)
        fast, fast_s = _simulate(platform, workload, True)
        out = {"case": name, "ranks": par.world, "memo_cpu_s": fast_s, "step_s": repr(fast.makespan_s),
               "events": fast.events, "shift_replays": fast.run.info.get("shift_replays"),
               "load": os.getloadavg()}
        line = f"{name} ({par.world} ranks): memo {fast_s:.2f} s CPU, step {fast.makespan_s!r} s, {fast.events} events"
        if not args.no_baseline:
            slow, slow_s = _simulate(platform, workload, False)
            same = slow.makespan_s == fast.makespan_s and slow.rank_results() == fast.rank_results()
            out.update({"plain_cpu_s": slow_s, "plain_step_s": repr(slow.makespan_s), "plain_events": slow.events,
                        "speedup": slow_s / fast_s, "bit_equal": same})
            line += (f"; without the memo {slow_s:.2f} s CPU, step {slow.makespan_s!r} s, {slow.events} events: "
                     f"{slow_s / fast_s:.1f}x, {'bit-equal' if same else 'DIFFERENT'}")
            if not same:
                status = 1
        print(line + f" (load average {os.getloadavg()[0]:.2f})")
        print(json.dumps(out))
    return status


if __name__ == "__main__":
    raise SystemExit(main())
