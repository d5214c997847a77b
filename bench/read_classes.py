"""Benchmark: reading GPT-3 175B's 1,024 Chakra rank files and finding its equivalent ranks
(issue 18; ``workload/chakra/template.py``, ``system/symmetry/equivalence.py``), this tree
against another revision, in one run.

The inputs are ``bench/equivalence_files.py``'s (TP 8, PP 16, DP 8 on [Switch 8, Switch 128];
generated into ``--dir`` when absent: 1,024 files, 1.3 GB). ``--base REV`` (default ``main``)
is exported with ``git archive`` into a temporary folder (the compiled cores copied from this
tree); child processes of each tree alternate ``--repeat`` times, each timing in its own
process (CPU seconds, ``time.process_time``): ``read_workload`` of every file, then
``find_mirrors`` (the equivalence classes). Prints per tree the best of each, the ratios
base / this tree, whether both read the same graphs (a digest of every field of every rank)
and found the same classes, and the load average. With ``--simulate`` a child of this tree
and one of the base's also run ``simulate`` (the 16 representatives): prints the split
reading / classes / simulation of the whole run from files (the simulation's own call of
``find_mirrors`` counted as classes) and whether every rank's finish (whole ns) and the step
are the base's.

    PYTHONPATH=src python bench/read_classes.py [--dir DIR] [--base REV] [--repeat N] [--simulate]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_CHILD = r"""
import hashlib, json, sys, time
import numpy as np
from trainsim.config.astra import load_astra_platform
from trainsim.system.symmetry import equivalence
from trainsim.workload.chakra import read_workload
d, simulate_too = sys.argv[1], sys.argv[2] == "1"
plat = load_astra_platform(f"{d}/network.yml", f"{d}/system.json", f"{d}/memory.json", f"{d}/w.comm_groups.json")
t = time.process_time()
graphs = read_workload(f"{d}/w", plat.network.npus)
read_s = time.process_time() - t
t = time.process_time()
mirrors = equivalence.find_mirrors(plat, graphs)
classes_s = time.process_time() - t
digest = hashlib.blake2b()
for g in graphs:
    for name, value in vars(g).items():
        digest.update(name.encode())
        digest.update(value.tobytes() if isinstance(value, np.ndarray) else repr(value).encode())
out = {"read_s": read_s, "classes_s": classes_s, "graphs": digest.hexdigest(),
       "classes": sorted([rep, *ms] for rep, ms in mirrors.items())}
if simulate_too:
    from trainsim.report.astra_lines import whole_ns
    from trainsim.system.api import simulate
    inner = [0.0]
    find = equivalence.find_mirrors
    def timed(*args, **kwargs):
        t0 = time.process_time()
        try:
            return find(*args, **kwargs)
        finally:
            inner[0] += time.process_time() - t0
    equivalence.find_mirrors = timed
    t = time.process_time()
    r = simulate(plat, graphs)
    out.update(simulate_s=time.process_time() - t - inner[0], simulate_classes_s=inner[0],
               ranks_run=r.info.get("ranks_simulated"), step_s=r.makespan_s,
               finish=[whole_ns(x.finish_s) for x in r.ranks])
json.dump(out, sys.stdout)
"""


def run(src: Path, folder: Path, simulate: bool) -> dict:
    env = {**os.environ, "PYTHONPATH": str(src)}
    cmd = [sys.executable, "-c", _CHILD, str(folder), "1" if simulate else "0"]
    return json.loads(subprocess.run(cmd, check=True, capture_output=True, env=env, text=True).stdout)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dir", type=Path, default=None, help="folder of the gpt3 inputs (generated there when absent)")
    ap.add_argument("--base", default="main", help="git revision to compare with (default: main)")
    ap.add_argument("--repeat", type=int, default=3, help="child processes per tree, alternating")
    ap.add_argument("--simulate", action="store_true", help="also run this tree's whole simulation once")
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT / "bench"))
    from equivalence_files import write_inputs
    from per_collective import base_src as export_src

    folder = (args.dir or Path(tempfile.mkdtemp(prefix="read-classes-"))) / "gpt3"
    write_inputs("gpt3", folder)
    base_src = export_src(args.base, Path(tempfile.mkdtemp(prefix="read-classes-base-")))
    try:
        runs: dict[str, list[dict]] = {"base": [], "this": []}
        for _ in range(args.repeat):
            runs["base"].append(run(base_src, folder, False))
            runs["this"].append(run(ROOT / "src", folder, False))
        if args.simulate:
            whole_base = run(base_src, folder, True)
            whole = run(ROOT / "src", folder, True)
    finally:
        shutil.rmtree(base_src.parent)
    best = {k: {m: min(r[m] for r in rs) for m in ("read_s", "classes_s")} for k, rs in runs.items()}
    line = {
        "base": args.base,
        "base_read_cpu_s": round(best["base"]["read_s"], 3), "read_cpu_s": round(best["this"]["read_s"], 3),
        "x_read": round(best["base"]["read_s"] / best["this"]["read_s"], 2),
        "base_classes_cpu_s": round(best["base"]["classes_s"], 3), "classes_cpu_s": round(best["this"]["classes_s"], 3),
        "x_classes": round(best["base"]["classes_s"] / best["this"]["classes_s"], 2),
        "x_read_and_classes": round(sum(best["base"].values()) / sum(best["this"].values()), 2),
        "same_graphs": len({r["graphs"] for rs in runs.values() for r in rs}) == 1,
        "same_classes": len({json.dumps(r["classes"]) for rs in runs.values() for r in rs}) == 1,
        "classes": len(runs["this"][0]["classes"]),
        "loadavg": [round(x, 2) for x in os.getloadavg()],
    }  # fmt: skip
    print(json.dumps(line), flush=True)
    if args.simulate:
        split = {
            "reading_cpu_s": round(whole["read_s"], 3),
            "classes_cpu_s": round(whole["classes_s"] + whole["simulate_classes_s"], 3),
            "simulation_cpu_s": round(whole["simulate_s"], 3),
            "ranks_run": whole["ranks_run"], "step_s": whole["step_s"],
            "base_split_cpu_s": [round(whole_base["read_s"], 3), round(whole_base["classes_s"] + whole_base["simulate_classes_s"], 3), round(whole_base["simulate_s"], 3)],
            "same_ranks_as_base": whole["finish"] == whole_base["finish"] and whole["step_s"] == whole_base["step_s"],
            "loadavg": [round(x, 2) for x in os.getloadavg()],
        }  # fmt: skip
        print(json.dumps(split), flush=True)


if __name__ == "__main__":
    main()
