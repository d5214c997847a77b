"""The congestion-aware backend's compiled link core against its pure-Python reference, in
the same run: CPU seconds, events per second and the ratio compiled / Python per case, the
per-rank results compared with ``==``, and, for the anchor case, the ratio to ASTRA-sim.

The anchor is issue 18's congestion-aware 256-rank asymmetric step
(reference-results/real-workloads.md, ``megatron18b-256-ring-aware``): Megatron 18B, TP 8,
PP 4, DP 8, micro-batch 1, global batch 64, full recomputation (``trainsim generate``), written
as Chakra files and read back as ASTRA-sim reads them (durations in whole units of the file
format, so the step differs from the in-memory one), on a Ring of 256 at 100 GB/s (ASTRA-sim's
GB/s = 2**30 B/s) and 500 ns, compatibility mode, ASTRA-sim's ``dp``/``main`` system
(``reference-data/.../system/1d_ring.json``: LIFO, endpoint delay 10 ns, 1 active chunk, 4
splits, localBWAware, local-mem-bw 1600, ``ring`` for every collective). ASTRA-sim's
congestion-aware binary took 40.9 s wall / 40.8 s CPU on this machine class on the files of
commit 62e992e (1,741,148,342 ns, 235 distinct rank times, 33.8M events); on this commit's
files it gives 1,725,824,530 ns with 256 distinct rank times, every rank equal to ours to the
ns (measured side by side, docs/speed.md). ``--global-batch 8`` is the same step with one
micro-batch per replica (a quicker case); ``--small`` adds a 32-rank step (TP 4, PP 2, DP 4).

    PYTHONPATH=src python bench/congestion_core.py [--global-batch 64] [--small] [--skip-python] [--links]

``--links`` also runs the core with the links only (``TRAINSIM_CONGESTION_CORE=links``: the
ring phases in Python, as before they moved into the core) and prints the ratio to it.

CPU time is ``time.process_time()`` of this process around ``simulate`` (the machine is
shared: compare CPU seconds, and the load average printed with them). Not a test.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from trainsim.compute import OperatorTimer  # noqa: E402
from trainsim.config.astra import load_astra_platform  # noqa: E402
from trainsim.config.types import Platform  # noqa: E402
from trainsim.network import congestion_native  # noqa: E402
from trainsim.system.api import simulate  # noqa: E402
from trainsim.workload.chakra import read_workload, write_workload  # noqa: E402
from trainsim.workload.generate import GeneratedWorkload, Parallelism, generate  # noqa: E402
from trainsim.workload.graph import WorkloadGraph  # noqa: E402
from trainsim.workload.models import get_model  # noqa: E402

ASTRA_AWARE_256_WALL_S = 40.9  # reference-results/real-workloads.md, megatron18b-256-ring-aware
ASTRA_AWARE_256_CPU_S = 40.8
ANCHOR_MAKESPAN_NS = 1_725_824_530  # ASTRA-sim on this commit's files (docs/speed.md)
SYSTEM = Path(__file__).resolve().parents[1] / "reference-data/reference-results/inputs/system/1d_ring.json"
MEMORY = SYSTEM.parents[1] / "remote_memory.json"


def from_files(w: GeneratedWorkload, folder: Path, npus: int) -> tuple[Platform, list[WorkloadGraph]]:
    """The step as ASTRA-sim runs it: rank files, communicator groups, network, system."""
    write_workload(folder / "w", w.graphs)
    w.write_comm_groups(folder / "w.comm_groups.json")
    (folder / "ring.yml").write_text(f"topology: [ Ring ]\nnpus_count: [ {npus} ]\nbandwidth: [ 100.0 ]\nlatency: [ 500.0 ]\n")
    plat = load_astra_platform(folder / "ring.yml", SYSTEM, MEMORY, folder / "w.comm_groups.json")
    return plat, read_workload(folder / "w", npus)


def run(plat: Platform, graphs: object, core: str) -> tuple[object, float, float]:
    os.environ["TRAINSIM_CONGESTION_CORE"] = core
    try:
        cpu, wall = time.process_time(), time.perf_counter()
        result = simulate(plat, graphs, backend="congestion_aware")  # type: ignore[arg-type]
        return result, time.process_time() - cpu, time.perf_counter() - wall
    finally:
        del os.environ["TRAINSIM_CONGESTION_CORE"]


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--global-batch", type=int, default=64, help="64: the anchor case; 8: one micro-batch per replica")
    parser.add_argument("--small", action="store_true", help="also a 32-rank step (TP 4, PP 2, DP 4)")
    parser.add_argument("--skip-python", action="store_true", help="the compiled core only (no ratio to Python)")
    parser.add_argument("--links", action="store_true", help="also the core with the links only (the ring phases in Python)")
    args = parser.parse_args()
    if not congestion_native.available():
        raise SystemExit(f"the link core is not built ({congestion_native.library_path()}): run make")
    cases = [("Megatron 18B TP8 PP4 DP8, Ring 256", 8, 4, 8, args.global_batch)]
    if args.small:
        cases.insert(0, ("Megatron 18B TP4 PP2 DP4, Ring 32", 4, 2, 4, 16))
    rows = []
    for name, tp, pp, dp, gb in cases:
        world = tp * pp * dp
        par = Parallelism(tp=tp, pp=pp, dp=dp, micro_batch=1, global_batch=gb, recompute="full")
        w = generate(get_model("megatron-18b"), par, OperatorTimer("A100"))
        with tempfile.TemporaryDirectory() as tmp:
            plat, graphs = from_files(w, Path(tmp), world)
        native, n_cpu, n_wall = run(plat, graphs, "native")
        row = {
            "case": f"{name}, global batch {gb}",
            "makespan_ns": round(native.makespan_s * 1e9),  # type: ignore[attr-defined]
            "distinct_rank_times": len({r.finish_s for r in native.ranks}),  # type: ignore[attr-defined]
            "events": native.events,  # type: ignore[attr-defined]
            "native_cpu_s": n_cpu,
            "native_wall_s": n_wall,
            "native_events_per_cpu_s": native.events / n_cpu,  # type: ignore[attr-defined]
            "load_after_native": load(),
        }
        line = (
            f"{row['case']}: {row['makespan_ns']:,} ns, {row['distinct_rank_times']} distinct rank times, "
            f"{row['events']:,} events\n  compiled core: {n_cpu:.2f} s CPU ({n_wall:.2f} s wall), "
            f"{row['native_events_per_cpu_s']:,.0f} events/s  [load {row['load_after_native']}]"
        )
        if args.links:
            links, l_cpu, l_wall = run(plat, graphs, "links")
            same = list(links.ranks) == list(native.ranks) and links.events == native.events  # type: ignore[attr-defined]
            row.update(links_cpu_s=l_cpu, links_wall_s=l_wall, speedup_over_links_cpu=l_cpu / n_cpu, identical_to_links=same)
            line += (
                f"\n  links-only core: {l_cpu:.2f} s CPU ({l_wall:.2f} s wall), {native.events / l_cpu:,.0f} events/s; "  # type: ignore[attr-defined]
                f"whole core {l_cpu / n_cpu:.2f}x faster; per-rank results identical: {same}"
            )
        if not args.skip_python:
            ref, p_cpu, p_wall = run(plat, graphs, "python")
            same = list(ref.ranks) == list(native.ranks) and ref.events == native.events  # type: ignore[attr-defined]
            row.update(
                python_cpu_s=p_cpu,
                python_wall_s=p_wall,
                python_events_per_cpu_s=ref.events / p_cpu,  # type: ignore[attr-defined]
                speedup_cpu=p_cpu / n_cpu,
                identical=same,
                load_after_python=load(),
            )
            line += (
                f"\n  Python reference: {p_cpu:.2f} s CPU ({p_wall:.2f} s wall), {row['python_events_per_cpu_s']:,.0f} events/s"
                f"  [load {row['load_after_python']}]\n  compiled / Python: {row['speedup_cpu']:.2f}x faster (CPU); "
                f"per-rank results identical: {same}"
            )
        if world == 256 and gb == 64:
            row.update(
                astra_ratio_cpu=ASTRA_AWARE_256_CPU_S / n_cpu,
                astra_ratio_wall=ASTRA_AWARE_256_WALL_S / n_wall,
                anchor_makespan_matches=row["makespan_ns"] == ANCHOR_MAKESPAN_NS,
            )
            line += (
                f"\n  ASTRA-sim (recorded {ASTRA_AWARE_256_WALL_S} s wall / {ASTRA_AWARE_256_CPU_S} s CPU) / compiled: "
                f"{row['astra_ratio_cpu']:.2f}x (CPU), {row['astra_ratio_wall']:.2f}x (wall); "
                f"makespan = ASTRA-sim's on these files ({ANCHOR_MAKESPAN_NS:,} ns): {row['anchor_makespan_matches']}"
            )
        print(line, flush=True)
        rows.append(row)
    print(json.dumps(rows))


if __name__ == "__main__":
    main()
