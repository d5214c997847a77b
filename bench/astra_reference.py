"""Every case of reference-data/reference-results/cases.json through `trainsim run`, against
ASTRA-sim's own numbers.

Each case runs the real command line in this process (``trainsim run
--workload-configuration=... --system-configuration=... --network-configuration=...
--remote-memory-configuration=... --compat astra --backend <case backend> --json``; ASTRA-sim's
input files as they are). Prints one line per case (ours vs ASTRA-sim's max / min finish in
ns, our wall time and the ratio to ASTRA-sim's), the worst relative difference over the cases
ASTRA-sim completed, and a JSON line. Cases where ASTRA-sim failed print our result.

    PYTHONPATH=src python bench/astra_reference.py [--only SUBSTRING]
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

from trainsim.cli.main import main as trainsim_main  # noqa: E402

REFERENCE = ROOT / "reference-data" / "reference-results"


def run_case(case: dict, out: Path) -> tuple[int, int, float]:
    """(max finish ns, min finish ns, wall s) of one case through the CLI."""
    args = [
        "run",
        f"--workload-configuration={REFERENCE / case['workload']}",
        f"--system-configuration={REFERENCE / case['system']}",
        f"--network-configuration={REFERENCE / case['network']}",
        f"--remote-memory-configuration={REFERENCE / case['memory']}",
        "--compat", "astra",
        "--backend", case["backend"],
        "--json", str(out),
        "--quiet",
    ]
    start = time.perf_counter()
    code = trainsim_main(args)
    wall = time.perf_counter() - start
    if code != 0:
        raise SystemExit(f"{case['name']}: trainsim run exited {code}")
    finish = [round(r["finish_s"] * 1e9) for r in json.loads(out.read_text())["ranks"]]
    return max(finish), min(finish), wall


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="run only the cases whose name contains this")
    args = parser.parse_args()
    cases = [c for c in json.loads((REFERENCE / "cases.json").read_text()) if args.only in c["name"]]
    worst, rows, exact = 0.0, [], 0
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "result.json"
        for case in cases:
            mx, mn, wall = run_case(case, out)
            row = {"case": case["name"], "max_ns": mx, "min_ns": mn, "wall_s": wall}
            if case["astra_exit_code"] != 0:
                print(f"{case['name']:78s} ours {mx:>13,} / {mn:>13,}  (ASTRA-sim failed, exit {case['astra_exit_code']})")
                rows.append({**row, "astra_exit": case["astra_exit_code"]})
                continue
            ref_max, ref_min = case["max_finish_ns"], case["min_finish_ns"]
            rel = max(abs(mx - ref_max) / ref_max, abs(mn - ref_min) / ref_min)
            worst = max(worst, rel)
            exact += mx == ref_max and mn == ref_min
            ratio = case["astra_wall_s"] / wall if wall > 0 else float("inf")
            print(
                f"{case['name']:78s} ours {mx:>13,} / {mn:>13,}  astra {ref_max:>13,} / {ref_min:>13,}"
                f"  rel {rel:.1e}  wall {wall * 1e3:7.1f} ms (ASTRA-sim/ours {ratio:.2f})"
            )
            rows.append({**row, "astra_max_ns": ref_max, "astra_min_ns": ref_min, "rel": rel, "astra_wall_s": case["astra_wall_s"]})
    completed = sum(1 for r in rows if "rel" in r)
    print(f"{completed} cases ASTRA-sim completed: {exact} exact to the ns, worst relative difference {worst:.2e}; {len(rows) - completed} cases ASTRA-sim failed on ran here")
    print(json.dumps({"worst_relative_difference": worst, "exact": exact, "completed": completed, "cases": rows}))
    return 0 if worst <= 0.005 else 1


if __name__ == "__main__":
    raise SystemExit(main())
