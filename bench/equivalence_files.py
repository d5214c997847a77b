"""Benchmark: training steps read from Chakra files, equivalent ranks folded (issue 18).

Generates the inputs (``trainsim generate --out``; ASTRA-sim's network, system and memory
files written here) into ``--dir`` (default: a temporary folder), then runs each case in child
processes, whole process from interpreter start to exit:

- ``fast``: ``trainsim run``'s path (``load_inputs`` + ``simulate``): files that differ only in
  peers and groups read from a decoded one (``workload/chakra/template.py``), ranks proved
  equivalent folded (``system/symmetry/equivalence.py``);
- ``before``: the same with both off (``read_workload(templates=False)``,
  ``simulate(fold=False)``): every distinct file decoded, every rank run (the default
  symmetric collectives still on): today's path before this change;
- ``astra`` (``--astra``): ASTRA-sim's binary for the case's backend on the same files.

The ``small-*`` cases are generated steps of 8-64 ranks (issue 18's "no input slower than
ASTRA-sim" row), with ``fast_work_cpu_s``: the CPU time of reading and simulating inside the
child, and ``x_astra_work``: ASTRA-sim's whole process over it (a Python process's start-up,
~0.1-0.2 s whatever the input, is beyond any simulator's reach).

The first three cases are issue 18's speed anchors with the inputs
``reference-data/reference-results/real-workloads.md`` records (generate command, network, the common
system file with ``local-mem-bw`` 1600); ``gpt3-1536`` is GPT-3's full batch, with no recorded
ASTRA-sim time. Prints per case the CPU time (``RUSAGE_CHILDREN``) and wall time of each, the
ratio to ASTRA-sim's recorded wall time (same machine class) with the recorded makespan beside
ours (today's generator's durations differ from the recording's, so the files are the same
shape, not the same bytes: ``--astra`` runs ASTRA-sim on these very files), and to ``before``,
whether every rank's finish and exposed communication are equal to ``before``'s (and to
ASTRA-sim's lines with ``--astra``), and the load average. Compatibility mode (ASTRA-sim's
files), congestion-unaware backend, except ``megatron18b-ring-aware``: issue 18's
congestion-aware anchor (Megatron 18B on a Ring of 256, 235-256 distinct rank times), on the
congestion-aware backend and ASTRA-sim's congestion-aware binary; no rank is folded there (the
backend is not pairwise), so its ``fast`` is the compiled core's rank-by-rank run.

    PYTHONPATH=src python bench/equivalence_files.py [CASE ... | small] [--dir DIR] [--astra] [--no-before]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ASTRA_BINS = "/tmp/c16/astra/build/astra_analytical/build/bin"
ASTRA_BIN = {"congestion_unaware": f"{ASTRA_BINS}/AstraSim_Analytical_Congestion_Unaware",
             "congestion_aware": f"{ASTRA_BINS}/AstraSim_Analytical_Congestion_Aware"}  # fmt: skip

# name: (trainsim generate arguments, topology, sizes, GB/s, ns, ASTRA-sim's recorded wall s or
# None, its recorded makespan ns or None): the first three are the speed anchors of
# reference-data/reference-results/real-workloads.md (issue 18's table), inputs as recorded there
CASES = {
    "gpt3": (
        "gpt3-175b --tp 8 --pp 16 --dp 8 --micro-batch 1 --global-batch 64 --recompute full --network-dims 8,128",
        ("Switch", "Switch"), (8, 128), (300.0, 25.0), (500.0, 2000.0), 132.9, 3_687_268_559,
    ),
    "megatron18b": (
        "megatron-18b --tp 8 --pp 4 --dp 8 --micro-batch 1 --global-batch 64 --recompute full --network-dims 8,32",
        ("Switch", "Switch"), (8, 32), (300.0, 25.0), (500.0, 2000.0), 51.5, 984_127_115,
    ),
    "resnet50": (
        "resnet50 --dp 256 --overlap-grad-reduce --micro-batch 32 --network-dims 8,32",
        ("Ring", "Switch"), (8, 32), (200.0, 25.0), (500.0, 2000.0), 6.3, 20_986_831,
    ),
    # issue 18's congestion-aware anchor (real-workloads.md, megatron18b-256-ring-aware: the
    # recorded makespan is on older files; ASTRA-sim gives 1,725,824,530 ns on today's)
    "megatron18b-ring-aware": (
        "megatron-18b --tp 8 --pp 4 --dp 8 --micro-batch 1 --global-batch 64 --recompute full",
        ("Ring",), (256,), (100.0,), (500.0,), 40.9, 1_741_148_342,
    ),
    # the same files on the congestion-unaware backend: no two ranks fold (the data-parallel
    # rings are segments of the Ring; the step is asymmetric), every rank runs
    "megatron18b-ring": (
        "megatron-18b --tp 8 --pp 4 --dp 8 --micro-batch 1 --global-batch 64 --recompute full",
        ("Ring",), (256,), (100.0,), (500.0,), None, None,
    ),
    # tensor-parallel groups of 8 consecutive ranks, data-parallel rings around the whole Ring:
    # the replicas fold (8 of 256 ranks run)
    "megatron18b-ring-dp32": (
        "megatron-18b --tp 8 --pp 1 --dp 32 --micro-batch 1 --global-batch 64 --recompute full",
        ("Ring",), (256,), (100.0,), (500.0,), None, None,
    ),
    # GPT-3's full batch of 1,536 (192 micro-batches per pipeline): no ASTRA-sim time recorded
    "gpt3-1536": (
        "gpt3-175b --tp 8 --pp 16 --dp 8 --micro-batch 1 --global-batch 1536 --recompute full --network-dims 8,128",
        ("Switch", "Switch"), (8, 128), (300.0, 25.0), (500.0, 2000.0), None, None,
    ),
    # small generated steps (8-64 ranks): issue 18's "no input slower than ASTRA-sim" row; no
    # recorded time (compare with --astra)
    "small-tp2pp2dp2": (
        "megatron-1.7b --tp 2 --pp 2 --dp 2 --micro-batch 1 --global-batch 16 --recompute full --network-dims 4,2",
        ("Switch", "Switch"), (4, 2), (300.0, 25.0), (500.0, 2000.0), None, None,
    ),
    "small-tp4pp2dp4": (
        "megatron-1.7b --tp 4 --pp 2 --dp 4 --micro-batch 1 --global-batch 32 --recompute full --network-dims 8,4",
        ("Switch", "Switch"), (8, 4), (300.0, 25.0), (500.0, 2000.0), None, None,
    ),
    "small-tp8pp4dp2": (
        "megatron-18b --tp 8 --pp 4 --dp 2 --micro-batch 1 --global-batch 16 --recompute full --network-dims 8,8",
        ("Switch", "Switch"), (8, 8), (300.0, 25.0), (500.0, 2000.0), None, None,
    ),
    "small-resnet-dp16": (
        "resnet50 --dp 16 --overlap-grad-reduce --micro-batch 32 --network-dims 8,2",
        ("Ring", "Switch"), (8, 2), (200.0, 25.0), (500.0, 2000.0), None, None,
    ),
    "small-resnet-dp64": (
        "resnet50 --dp 64 --overlap-grad-reduce --micro-batch 32 --network-dims 8,8",
        ("Ring", "Switch"), (8, 8), (200.0, 25.0), (500.0, 2000.0), None, None,
    ),
}  # fmt: skip
SMALL = [case for case in CASES if case.startswith("small-")]
BACKEND = {"megatron18b-ring-aware": "congestion_aware"}  # else congestion_unaware

_CHILD = r"""
import json, sys, time
import trainsim.cli  # the console script's process settings (one BLAS thread), before numpy
from trainsim.config.astra import load_astra_platform
from trainsim.system.api import simulate
from trainsim.workload.chakra import read_workload
d, fast, backend = sys.argv[1], sys.argv[2] == "fast", sys.argv[4]
work = time.process_time()
groups = f"{d}/w.comm_groups.json"
plat = load_astra_platform(f"{d}/network.yml", f"{d}/system.json", f"{d}/memory.json", groups)
graphs = read_workload(f"{d}/w", plat.network.npus, templates=fast)
r = simulate(plat, graphs, fold=fast, backend=backend)
work = time.process_time() - work  # reading and simulating: the process less start-up and exit
from trainsim.report.astra_lines import whole_ns
ranks = [(whole_ns(x.finish_s), whole_ns(x.finish_s) - whole_ns(x.compute_s)) for x in r.ranks]  # ASTRA-sim's lines
with open(sys.argv[3], "w") as out:
    json.dump({"ranks": ranks, "makespan_s": r.makespan_s, "symmetry": r.info.get("symmetry"), "events": r.events, "work_cpu_s": work}, out)
import os
os._exit(0)  # as the console script ends (cli/main.py): no teardown of the run's objects
"""


def write_inputs(case: str, folder: Path) -> None:
    args, topo, sizes, bw, lat, _, _ = CASES[case]
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "network.yml").write_text(
        f"topology: [ {', '.join(topo)} ]\nnpus_count: [ {', '.join(map(str, sizes))} ]\n"
        f"bandwidth: [ {', '.join(map(str, bw))} ]  # GB/s\nlatency: [ {', '.join(map(str, lat))} ]  # ns\n"
    )
    rings = json.dumps(["ring"] * len(sizes))
    (folder / "system.json").write_text(
        '{"scheduling-policy": "LIFO", "endpoint-delay": 10, "active-chunks-per-dimension": 1, '
        f'"preferred-dataset-splits": 4, "all-reduce-implementation": {rings}, "all-gather-implementation": {rings}, '
        f'"reduce-scatter-implementation": {rings}, "all-to-all-implementation": {rings}, '
        '"collective-optimization": "localBWAware", "local-mem-bw": 1600, "boost-mode": 0}\n'
    )
    (folder / "memory.json").write_text('{"memory-type": "NO_MEMORY_EXPANSION"}\n')
    if not (folder / "w.comm_groups.json").exists():
        cmd = [sys.executable, "-c", "from trainsim.cli.main import main; main()", "generate", *args.split(), "--out", str(folder / "w"), "-q"]
        subprocess.run(cmd, check=True)


def child(cmd: list[str]) -> tuple[float, float]:
    """(CPU s, wall s) of one child process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, wall


def run_trainsim(folder: Path, mode: str, backend: str) -> tuple[float, float, dict]:
    out = folder / f"result.{mode}.json"
    cpu, wall = child([sys.executable, "-c", _CHILD, str(folder), mode, str(out), backend])
    return cpu, wall, json.loads(out.read_text())


def run_astra(folder: Path, backend: str, npus: int) -> tuple[float, float, list[tuple[int, int]]]:
    folder = folder.resolve()  # ASTRA-sim runs there (below): every path absolute
    log = folder / "astra.log"
    cmd = [
        ASTRA_BIN[backend], f"--workload-configuration={folder}/w", f"--system-configuration={folder}/system.json",
        f"--network-configuration={folder}/network.yml", f"--remote-memory-configuration={folder}/memory.json",
        f"--comm-group-configuration={folder}/w.comm_groups.json",
    ]  # fmt: skip
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    with open(log, "w") as stream:
        # in the inputs' folder: ASTRA-sim writes its log/ folder into the working directory
        done = subprocess.run(cmd, stdout=stream, stderr=subprocess.STDOUT, cwd=folder)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    found = re.findall(r"sys\[(\d+)\] finished, (\d+) cycles, exposed communication (\d+) cycles", log.read_text())
    if done.returncode and len(found) < npus:
        raise SystemExit(f"ASTRA-sim exited with {done.returncode} after {len(found)} of {npus} ranks: see {log}")
    # its congestion-aware binary may abort in its teardown (malloc_consolidate) after every
    # rank printed its line: the run is complete, and the time is the whole process's
    ranks = [(0, 0)] * len(found)
    for rank, finish, exposed in found:
        ranks[int(rank)] = (int(finish), int(exposed))
    return after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, wall, ranks


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("cases", nargs="*", default=list(CASES), help=f"of {', '.join(CASES)}; 'small' for every small-* case")
    ap.add_argument("--dir", type=Path, default=None, help="where the inputs are (or are generated); default: a temporary folder")
    ap.add_argument("--astra", action="store_true", help="also run ASTRA-sim's binary on the same files")
    ap.add_argument("--no-before", action="store_true", help="skip the run without folding")
    args = ap.parse_args()
    args.cases = [c for case in args.cases for c in (SMALL if case == "small" else [case])]
    unknown = [c for c in args.cases if c not in CASES]
    if unknown:
        ap.error(f"unknown case {unknown[0]!r}; expected one of {', '.join(CASES)}")
    root = args.dir or Path(tempfile.mkdtemp(prefix="equivalence-"))
    for case in args.cases:
        folder = root / case
        write_inputs(case, folder)
        recorded, recorded_ns = CASES[case][5:]
        backend = BACKEND.get(case, "congestion_unaware")
        cpu, wall, fast = run_trainsim(folder, "fast", backend)
        line = {"case": case, "ranks": len(fast["ranks"]), "step_s": fast["makespan_s"], "fast_cpu_s": round(cpu, 2), "fast_wall_s": round(wall, 2),
                "fast_work_cpu_s": round(fast["work_cpu_s"], 3), "symmetry": fast["symmetry"]}
        if recorded is not None:
            # the anchor's makespan too: these inputs are the recorded ones only if it matches
            line.update(x_astra_recorded_cpu=round(recorded / cpu, 1), x_astra_recorded_wall=round(recorded / wall, 1),
                        makespan_ns=max(f for f, _ in fast["ranks"]), astra_recorded_makespan_ns=recorded_ns)
        if not args.no_before:
            bcpu, bwall, before = run_trainsim(folder, "before", backend)
            line.update(before_cpu_s=round(bcpu, 2), before_wall_s=round(bwall, 2), x_before_cpu=round(bcpu / cpu, 1),
                        same_ranks_as_before=fast["ranks"] == before["ranks"])
        if args.astra:
            acpu, awall, ranks = run_astra(folder, backend, len(fast["ranks"]))
            # x_astra_work: ASTRA-sim's whole process against our reading and simulating alone
            # (docs/speed.md, "Which time the ratio is taken on"; start-up is the same for every input)
            line.update(astra_cpu_s=round(acpu, 2), astra_wall_s=round(awall, 2), x_astra_cpu=round(acpu / cpu, 1),
                        x_astra_work=round(acpu / max(fast["work_cpu_s"], 1e-3), 1),
                        same_ranks_as_astra=[tuple(r) for r in fast["ranks"]] == ranks)
        line["loadavg"] = os.getloadavg()
        print(json.dumps(line), flush=True)


if __name__ == "__main__":
    main()
