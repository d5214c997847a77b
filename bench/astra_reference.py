"""Every case of ../shared/reference-results/cases.json against ASTRA-sim's own numbers.

Until ``trainsim run`` and the Chakra reader land, the cases whose workload is one collective
per rank (``main``, ``knob``) run through the collective runtime directly
(tests/helpers/astra_cases.py: one request per rank at t = 0, compatibility mode); ``dp``
graph cases and congestion-aware cases are listed as skipped. Prints one line per case (ours
vs ASTRA-sim's max / min finish ns, our wall time vs ASTRA-sim's), the worst relative
difference, and a JSON line.

    PYTHONPATH=src:. python bench/astra_reference.py
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.helpers.astra_cases import load_cases, parse_workload, run_case  # noqa: E402


def main() -> int:
    worst = 0.0
    rows = []
    for case in load_cases():
        name = case["name"]
        if case["backend"] != "congestion_unaware":
            print(f"{name:80s} skipped (congestion-aware backend: another issue)")
            continue
        if parse_workload(case["workload"]) is None:
            print(f"{name:80s} skipped (graph workload: needs the executor and Chakra reader)")
            continue
        t0 = time.perf_counter()
        mx, mn = run_case(case)
        wall = time.perf_counter() - t0
        ref_max, ref_min = case["max_finish_ns"], case["min_finish_ns"]
        if ref_max is None:
            print(
                f"{name:80s} ours {mx:>13,.0f} / {mn:>13,.0f}  ASTRA-sim failed (exit {case['astra_exit_code']})"
            )
            rows.append({"case": name, "max": mx, "min": mn, "astra_exit": case["astra_exit_code"]})
            continue
        rel = max(abs(mx - ref_max) / ref_max, abs(mn - ref_min) / ref_min)
        worst = max(worst, rel)
        speed = case["astra_wall_s"] / wall if wall > 0 else float("inf")
        print(
            f"{name:80s} ours {mx:>13,.0f} / {mn:>13,.0f}  astra {ref_max:>13,.0f} / {ref_min:>13,.0f}"
            f"  rel {rel:.2e}  wall {wall * 1e3:7.1f} ms (astra {case['astra_wall_s'] * 1e3:.0f} ms, x{speed:.1f})"
        )
        rows.append(
            {
                "case": name,
                "max": mx,
                "min": mn,
                "astra_max": ref_max,
                "astra_min": ref_min,
                "rel": rel,
            }
        )
    print(f"worst relative difference over completed congestion-unaware cases: {worst:.3e}")
    print(
        json.dumps(
            {"bench": "astra_reference", "driver": "runtime", "worst_rel": worst, "cases": rows}
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
