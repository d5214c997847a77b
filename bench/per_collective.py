"""Benchmark: the per-collective CPU cost of the group path (issue 18), this tree against a base
commit, in one run.

The workload has GPT-3 from files' shape at a size that runs in seconds: ``trainsim generate``
Megatron 18B, TP 8 x PP 4 x DP 2, global batch 256 (128 micro-batches per replica), on
[Switch 8, Switch 8] written as Chakra files with ASTRA-sim's network / system files
(``bench/equivalence_files.py``'s inputs). Each source tree runs it in child processes
(``--repeat`` times, alternating, so both see the same load) in two shapes:

- ``files``: ``read_workload`` + ``simulate`` in ASTRA-sim's mode, equivalent ranks folded
  (4 of 64 ranks run, ~32k tensor-parallel all-reduces, each a memo's answer);
- ``mirrors``: the same graphs in the default mode with those mirrors handed to ``simulate``
  (the replica slice's shape: the shift-exact memo's answers).

It prints, per shape, the least CPU seconds of ``simulate`` (``time.process_time`` in the child)
of each tree, their ratio, and whether every rank's result, timeline and collective record is
the same (a digest of all of them; exit status 1 otherwise); then ``floor``: this tree on the
``files`` shape with every collective answered 1 us after its issue (no runtime at all), the
executor's and event loop's share that the per-collective work comes on top of. The base tree is ``--base`` (a
commit: its ``src`` is extracted with ``git archive`` into a temporary folder, the compiled
cores copied from this tree) or ``--base-src`` (a ``src`` folder).

``--gpt3 DIR`` measures GPT-3 from files instead (``DIR``: ``bench/equivalence_files.py gpt3
--dir D``'s ``D/gpt3``, 1,024 files; a minute or two a process): per tree, alternating, the CPU
seconds of reading, finding the classes, simulating (and of it the event loop, ``api._run``)
and the whole, and whether every rank's result and the representatives' records are equal.

    PYTHONPATH=src python bench/per_collective.py [--base f26db37] [--repeat 3] [--dir DIR] [--gpt3 DIR]
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

sys.path.insert(0, str(Path(__file__).parent))
import equivalence_files  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
BASE = "f26db37"  # main before the per-collective work
CASE = (
    "megatron-18b --tp 8 --pp 4 --dp 2 --micro-batch 1 --global-batch 256 --recompute full --network-dims 8,8",
    ("Switch", "Switch"), (8, 8), (300.0, 25.0), (700.0, 2000.0), None, None,
)  # fmt: skip

_CHILD = r"""
import hashlib, json, sys, time
from dataclasses import astuple
from trainsim.config.astra import load_astra_platform
from trainsim.system.api import simulate
from trainsim.system.symmetry.equivalence import find_mirrors
from trainsim.workload.chakra import read_workload
from trainsim.workload.graph import GraphBuilder
d, shape = sys.argv[1], sys.argv[2]
plat = load_astra_platform(f"{d}/network.yml", f"{d}/system.json", f"{d}/memory.json", f"{d}/w.comm_groups.json")
graphs = read_workload(f"{d}/w", plat.network.npus)
if shape in ("files", "floor"):
    if shape == "floor":  # every collective answered 1 us after its issue: what is not the runtime's
        from trainsim.system.collective_runtime import CollectiveRuntime
        CollectiveRuntime.issue = lambda self, request, on_done, arg=None: self.queue.schedule(1000.0, on_done, arg)
    t = time.process_time()
    r = simulate(plat, graphs)
else:
    mirrors = find_mirrors(plat, graphs, compat_astra=True)
    empty = GraphBuilder(source="mirror").build()
    mirrored = {m for ms in mirrors.values() for m in ms}
    ran = [empty if rank in mirrored else g for rank, g in enumerate(graphs)]
    t = time.process_time()
    r = simulate(plat, ran, compat="default", mirrors=mirrors)
cpu = time.process_time() - t
h = hashlib.sha256(repr([astuple(x) for x in r.ranks]).encode())
for tl in r.timelines:
    h.update(repr((tl.start_ns, tl.end_ns)).encode())
for c in r.collectives:
    h.update(repr(astuple(c)).encode())
print(json.dumps({"cpu_s": cpu, "digest": h.hexdigest(), "records": len(r.collectives), "events": r.events}))
"""


_SPLIT = r"""
import hashlib, json, sys, time
from dataclasses import astuple
from trainsim.config.astra import load_astra_platform
from trainsim.system import api
from trainsim.system.symmetry import equivalence
from trainsim.workload.chakra import read_workload
d = sys.argv[1]
spent = {"classes": 0.0, "loop": 0.0}
def timed(name, f):
    def run(*a, **k):
        t = time.process_time()
        try:
            return f(*a, **k)
        finally:
            spent[name] += time.process_time() - t
    return run
equivalence.find_mirrors = timed("classes", equivalence.find_mirrors)
api._run = timed("loop", api._run)
t0 = time.process_time()
plat = load_astra_platform(f"{d}/network.yml", f"{d}/system.json", f"{d}/memory.json", f"{d}/w.comm_groups.json")
graphs = read_workload(f"{d}/w", plat.network.npus)
t1 = time.process_time()
r = api.simulate(plat, graphs)
t2 = time.process_time()
h = hashlib.sha256(repr([astuple(x) for x in r.ranks]).encode())
for c in r.collectives:
    if c.rank < 16:  # the representatives' records (the others are theirs renamed)
        h.update(repr(astuple(c)).encode())
print(json.dumps({"read_s": t1 - t0, "classes_s": spent["classes"], "simulation_s": t2 - t1 - spent["classes"],
                  "event_loop_s": spent["loop"], "total_s": t2 - t0, "step_s": repr(r.makespan_s), "digest": h.hexdigest()}))
"""


def base_src(rev: str, into: Path) -> Path:
    """``rev``'s ``src`` folder extracted into ``into``, with this tree's compiled cores."""
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "src"], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    for so in (ROOT / "src").rglob("*.so"):
        target = into / so.relative_to(ROOT)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(so, target)
    return into / "src"


def child(src: Path, folder: Path, shape: str, script: str = _CHILD) -> dict:
    env = {**os.environ, "PYTHONPATH": str(src)}
    out = subprocess.run([sys.executable, "-c", script, str(folder), shape], check=True, capture_output=True, text=True, env=env)
    return json.loads(out.stdout.strip().splitlines()[-1])


def gpt3(base: Path, folder: Path, repeat: int) -> bool:
    """GPT-3 from files (``bench/equivalence_files.py gpt3``'s inputs in ``folder``): the CPU
    split of one process per tree, alternating; whether every run gave the same digest."""
    digests = set()
    for i in range(repeat):
        for name, src in (("base", base), ("this", ROOT / "src")):
            got = child(src, folder, "gpt3", _SPLIT)
            digests.add(got.pop("digest"))
            print(json.dumps({"gpt3": name, "run": i + 1, **{k: round(v, 2) if isinstance(v, float) else v for k, v in got.items()},
                              "loadavg": os.getloadavg()}), flush=True)
    return len(digests) == 1


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", default=BASE, help=f"the base commit (default {BASE})")
    ap.add_argument("--base-src", type=Path, default=None, help="a base src folder instead of --base")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--dir", type=Path, default=None, help="where the inputs are (or are generated)")
    ap.add_argument("--gpt3", type=Path, default=None,
                    help="a folder with bench/equivalence_files.py's gpt3 inputs: measure GPT-3 from files instead (minutes)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="per-collective-") as tmp:
        if args.gpt3 is not None:
            same = gpt3(args.base_src or base_src(args.base, Path(tmp)), args.gpt3, args.repeat)
            print(json.dumps({"gpt3_bit_equal": same}))
            return 0 if same else 1
        folder = (args.dir or Path(tmp)) / "proxy"
        equivalence_files.CASES["proxy"] = CASE
        equivalence_files.write_inputs("proxy", folder)
        base = args.base_src or base_src(args.base, Path(tmp))
        status = 0
        for shape in ("files", "mirrors"):
            runs: dict[str, list[dict]] = {"base": [], "this": []}
            for _ in range(args.repeat):
                runs["base"].append(child(base, folder, shape))
                runs["this"].append(child(ROOT / "src", folder, shape))
            before = min(r["cpu_s"] for r in runs["base"])
            after = min(r["cpu_s"] for r in runs["this"])
            same = len({r["digest"] for rs in runs.values() for r in rs}) == 1
            status |= not same
            line = {"shape": shape, "base_cpu_s": round(before, 3), "this_cpu_s": round(after, 3),
                    "ratio": round(before / after, 2), "records": runs["this"][0]["records"],
                    "events": runs["this"][0]["events"], "bit_equal": same, "loadavg": os.getloadavg()}
            print(json.dumps(line), flush=True)
        # the same files with every collective answered by a fixed delay (this tree): the
        # executor's and event loop's share, which the runtime's work comes on top of
        floor = min(child(ROOT / "src", folder, "floor")["cpu_s"] for _ in range(args.repeat))
        print(json.dumps({"shape": "floor (collectives answered by a fixed delay)", "this_cpu_s": round(floor, 3)}), flush=True)
    return status


if __name__ == "__main__":
    raise SystemExit(main())
