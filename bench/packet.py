"""Speed of the packet backend (issue 22): a collective on the HOTI'22 RoCE fabric
(examples/roce), packets per second, and the same collective on the flow backend.

Per case: simulated time on the packet and flow backends and their ratio, the packet run's
wall and CPU time (and the flow run's) (the machine may be shared: CPU time is the process's own), its data packets (1000 B each, resends included), link transmissions (every
packet kind, every hop), packets per second and kernel events per second. Not a test;
nothing here asserts a time.

    PYTHONPATH=src python bench/packet.py [--npus 32|128] [--size-mib N] [--collective all_reduce]
                                          [--cc dcqcn] [--cells K] [--engine python|native]

``--compare-core OLD.so`` runs the case twice more, each in its own process, on the built core
and on another build of it (``$TRAINSIM_PACKET_CORE``; e.g. main's, built from
``git show main:native/packet_core/src/lib.rs``), and prints the CPU-time ratio old / new (the
children's own CPU time, ``RUSAGE_CHILDREN``), the load average, and whether both gave the
same simulated time and counters.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from trainsim.config.platform import load_platform
from trainsim.config.types import Platform
from trainsim.engine import EventQueue
from trainsim.network.packet.backend import PacketNetwork
from trainsim.network.protocol import NetworkBackend
from trainsim.system.api import simulate
from trainsim.workload.micro import collective_workload

ROCE = Path(__file__).resolve().parents[1] / "examples" / "roce"


def main() -> dict[str, object]:
    ap = argparse.ArgumentParser()
    ap.add_argument("--npus", type=int, default=32, choices=(32, 128))
    ap.add_argument("--size-mib", type=float, default=1.0)
    ap.add_argument("--collective", default="all_reduce")
    ap.add_argument("--cc", default=None)
    ap.add_argument("--cells", type=int, default=1)
    ap.add_argument("--engine", default=None)
    ap.add_argument("--compare-core", default=None, help="another build of the core: CPU ratio")
    ap.add_argument("--repeat", type=int, default=3, help="--compare-core: runs of each, interleaved")
    ap.add_argument("--no-flow", action="store_true", help="skip the flow backend's run")
    args = ap.parse_args()
    if args.compare_core:
        return _compare(args.compare_core, args.repeat)
    platform = load_platform(ROCE / f"platform_{args.npus}.yaml")
    opts = platform.backend_options["packet"]
    changes: dict[str, object] = {"cell_packets": args.cells}
    if args.cc:
        changes["cc"] = args.cc
    if args.engine:
        changes["engine"] = args.engine
    opts = opts.model_copy(update=changes)
    platform = dataclasses.replace(
        platform, backend_options={**platform.backend_options, "packet": opts}
    )
    graphs = collective_workload(args.npus, args.collective, int(args.size_mib * 2**20))

    captured: list[tuple[NetworkBackend, EventQueue]] = []
    import trainsim.system.api as api

    original = api.make_network

    def spy(platform: Platform, queue: EventQueue, backend: str, *, compat_astra: bool) -> NetworkBackend:
        net = original(platform, queue, backend, compat_astra=compat_astra)
        captured.append((net, queue))
        return net

    api.make_network = spy
    t0, c0 = time.perf_counter(), time.process_time()
    packet = simulate(platform, graphs, backend="packet")
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    api.make_network = original
    net, queue = captured[-1]
    assert isinstance(net, PacketNetwork)  # backend="packet"
    counters = net.counters()
    t1, c1 = time.perf_counter(), time.process_time()
    flow = packet if args.no_flow else simulate(platform, graphs, backend="flow")
    flow_wall, flow_cpu = time.perf_counter() - t1, time.process_time() - c1
    out = {
        "npus": args.npus,
        "collective": args.collective,
        "size_mib": args.size_mib,
        "cc": opts.cc,
        "cells": args.cells,
        "engine": getattr(opts, "engine", "python"),
        "packet_us": packet.makespan_s * 1e6,
        "flow_us": flow.makespan_s * 1e6,
        "packet_over_flow": packet.makespan_s / flow.makespan_s,
        "wall_s": wall,
        "cpu_s": cpu,
        "flow_wall_s": flow_wall,
        "flow_cpu_s": flow_cpu,
        "data_packets": counters["packets_sent"],
        "link_transmissions": counters["link_transmissions"],
        "packets_per_s": counters["packets_sent"] / wall,
        "packets_per_cpu_s": counters["packets_sent"] / cpu,
        "events": queue.events_processed + getattr(net.engine, "core_events", 0),
        "pause_frames": counters["pause_frames"],
        "ecn_marks": counters["ecn_marks"],
        "drops": counters["drops"],
        "total_pause_ns": counters["total_pause_ns"],
    }
    for key, value in out.items():
        print(f"{key:20s} {value:.4g}" if isinstance(value, float) else f"{key:20s} {value}")
    print(json.dumps(out))
    return out


def _compare(old_core: str, repeat: int) -> dict[str, object]:
    """The same case on the built core and on ``old_core``, each in its own child process,
    ``repeat`` times each, interleaved (old, new, old, new, ...): the medians' ratio."""
    from trainsim.network.packet.native import library_path

    skip = {"--compare-core", "--repeat"}
    argv = [a for i, a in enumerate(sys.argv[1:]) if a not in skip and sys.argv[i] not in skip]
    runs: dict[str, list[dict[str, Any]]] = {"old": [], "new": []}  # the children's JSON lines
    for _ in range(repeat):
        for name, core in (("old", old_core), ("new", str(library_path()))):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            done = subprocess.run(
                [sys.executable, __file__, *argv, "--engine", "native", "--no-flow"],
                env={**os.environ, "TRAINSIM_PACKET_CORE": core},
                capture_output=True, text=True, check=True,
            )  # fmt: skip
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            run = json.loads(done.stdout.strip().splitlines()[-1])
            run["process_cpu_s"] = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
            runs[name].append(run)
    keys = ("packet_us", "data_packets", "link_transmissions", "pause_frames", "ecn_marks", "drops", "total_pause_ns")
    first = runs["old"][0]
    same = all(r[k] == first[k] for rs in runs.values() for r in rs for k in keys)
    cpu = {name: sorted(float(r["cpu_s"]) for r in rs) for name, rs in runs.items()}
    median = {name: values[len(values) // 2] for name, values in cpu.items()}
    out = {
        "old_cpu_s": cpu["old"],
        "new_cpu_s": cpu["new"],
        "old_over_new_cpu": median["old"] / median["new"],
        "new_packets_per_cpu_s": float(first["data_packets"]) / median["new"],
        "old_process_cpu_s": [r["process_cpu_s"] for r in runs["old"]],
        "new_process_cpu_s": [r["process_cpu_s"] for r in runs["new"]],
        "same_results": same,
        "load_average": os.getloadavg(),
    }
    for key, value in out.items():
        print(f"{key:22s} {value:.4g}" if isinstance(value, float) else f"{key:22s} {value}")
    print(json.dumps(out))
    return out


if __name__ == "__main__":
    main()
