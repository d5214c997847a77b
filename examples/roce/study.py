"""The HOTI'22 RoCE study on the 32-NPU fabric (platform_32.yaml): does congestion control
change the time of training collectives? Each scheme against PFC only.

Cases (sizes per NPU):
- all-reduce, two-level ring (topology-aware: a ring inside each rack, then across racks);
- all-to-all, two-level direct (inside the rack, then across) against naive direct (one flat
  dimension of 32: every NPU sends to all 31 others at once, across the 2:1 core);
- incast: 31 NPUs send to NPU 0 at once (one message each).

With ``--models``: one data-parallel training step of ResNet-50 (batch 32 per NPU) and DLRM
(batch 2048 per NPU, tables sharded: all-to-alls of the pooled embeddings and their
gradients, MLP all-reduces), generated for the A100 (``workload/generate``), on the
32-NPU fabric or with ``--npus 128`` on the paper's full one (platform_128.yaml).

Prints, per case and scheme, the simulated time, its ratio to PFC only, pause time summed
over links, ECN marks and drops (for the models also the exposed communication: step time
minus compute); then one JSON line.

    PYTHONPATH=src python examples/roce/study.py [--size-mib 4] [--engine native]
    PYTHONPATH=src python examples/roce/study.py --models [--npus 128]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import time
from pathlib import Path
from typing import Any

from trainsim.config.platform import load_platform
from trainsim.config.types import DimSpec, Platform
from trainsim.engine import EventQueue
from trainsim.network.registry import make_backend
from trainsim.system.api import simulate
from trainsim.workload.micro import collective_workload

HERE = Path(__file__).resolve().parent
SCHEMES = ("none", "dcqcn", "dctcp", "timely", "hpcc")


def _with(platform: Platform, **changes: Any) -> Platform:
    opts = platform.backend_options["packet"].model_copy(update=changes)
    return dataclasses.replace(
        platform, backend_options={**platform.backend_options, "packet": opts}
    )


def _flat(platform: Platform) -> Platform:
    """The same fabric seen as one flat dimension (naive, topology-unaware collectives)."""
    d0 = platform.network.dims[0]
    dim = DimSpec(
        kind="Switch", size=platform.network.npus, bandwidth=d0.bandwidth, latency_ns=d0.latency_ns
    )
    network = dataclasses.replace(platform.network, dims=(dim,))
    impl = platform.system.implementations
    impl = dataclasses.replace(impl, all_to_all=impl.all_to_all[:1], all_reduce=impl.all_reduce[:1])
    system = dataclasses.replace(platform.system, implementations=impl)
    return dataclasses.replace(platform, network=network, system=system)


def _collective(platform: Platform, collective: str, size: int) -> dict[str, float]:
    result = simulate(
        platform, collective_workload(platform.network.npus, collective, size), backend="packet"
    )
    assert result.network_counters is not None
    return _summary(result.makespan_s * 1e6, result.network_counters)


def _model(platform: Platform, name: str) -> dict[str, float]:
    """One training step of a zoo model, data parallel over every NPU."""
    from trainsim.compute import OperatorTimer, get_device
    from trainsim.workload.generate.api import generate
    from trainsim.workload.generate.parallel import Parallelism
    from trainsim.workload.models.zoo import get_model

    model = get_model(name)
    npus = platform.network.npus
    par = Parallelism(dp=npus, micro_batch=model.default_batch)  # type: ignore[union-attr]
    sizes = [d.size for d in platform.network.dims]
    graphs = generate(model, par, OperatorTimer(get_device("A100", {})), network_sizes=sizes).graphs
    cpu = time.process_time()
    result = simulate(platform, graphs, backend="packet")
    assert result.network_counters is not None
    row = _summary(result.makespan_s * 1e6, result.network_counters)
    row["exposed_comm_us"] = max(r.exposed_comm_s for r in result.ranks) * 1e6
    row["compute_us"] = max(r.compute_s for r in result.ranks) * 1e6
    row["packets"] = result.network_counters["packets_sent"]
    row["cpu_s"] = time.process_time() - cpu
    return row


def _incast(platform: Platform, size: int) -> dict[str, float]:
    queue = EventQueue()
    net: Any = make_backend(
        "packet",
        platform.network,
        queue,
        compat_astra=False,
        options=platform.backend_options["packet"],
    )
    done: list[float] = []
    for src in range(1, platform.network.npus):
        net.send(src, 0, size, lambda _: done.append(queue.now))
    queue.run()
    return _summary(max(done) / 1e3, net.counters())


def _summary(time_us: float, counters: dict[str, Any]) -> dict[str, float]:
    return {
        "time_us": time_us,
        "pause_us": counters["total_pause_ns"] / 1e3,
        "ecn_marks": counters["ecn_marks"],
        "drops": counters["drops"],
    }


def main() -> dict[str, Any]:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size-mib", type=float, default=4.0)
    ap.add_argument("--engine", default="auto")
    ap.add_argument("--models", action="store_true", help="ResNet-50 and DLRM steps instead of collectives")
    ap.add_argument("--npus", type=int, default=32, choices=(32, 128), help="fabric for --models")
    ap.add_argument("--schemes", default=",".join(SCHEMES))
    args = ap.parse_args()
    size = int(args.size_mib * 2**20)
    schemes = [s for s in args.schemes.split(",") if s]
    if args.models:
        base = load_platform(HERE / f"platform_{args.npus}.yaml")
        cases: dict[str, Any] = {
            f"ResNet-50 step, {args.npus} NPUs": lambda p: _model(p, "resnet50"),
            f"DLRM step, {args.npus} NPUs": lambda p: _model(p, "dlrm"),
        }
    else:
        base = load_platform(HERE / "platform_32.yaml")
        cases = {
            "all-reduce, two-level ring": lambda p: _collective(p, "all_reduce", size),
            "all-to-all, two-level direct": lambda p: _collective(p, "all_to_all", size),
            "all-to-all, naive direct": lambda p: _collective(_flat(p), "all_to_all", size),
            "incast 31 -> 1": lambda p: _incast(p, size),
        }
    out: dict[str, Any] = {}
    for case, run in cases.items():
        rows = {}
        for cc in schemes:
            rows[cc] = run(_with(base, cc=cc, engine=args.engine))
        pfc = rows[schemes[0]]["time_us"]
        print(f"\n{case}" + ("" if args.models else f" ({args.size_mib:g} MiB per NPU)"))
        extra = f" {'exposed us':>11s} {'vs PFC':>8s} {'packets':>10s} {'CPU s':>7s}" if args.models else ""
        print(f"  {'scheme':8s} {'time us':>10s} {'vs PFC':>8s} {'pause us':>10s} {'ECN':>8s} {'drops':>6s}{extra}")
        epfc = rows[schemes[0]].get("exposed_comm_us", 0.0)
        for cc, r in rows.items():
            r["vs_pfc_only"] = r["time_us"] / pfc
            line = f"  {cc:8s} {r['time_us']:10.1f} {r['vs_pfc_only']:8.3f} {r['pause_us']:10.1f} {r['ecn_marks']:8d} {r['drops']:6d}"
            if args.models:
                r["exposed_vs_pfc_only"] = r["exposed_comm_us"] / epfc if epfc else 1.0
                line += f" {r['exposed_comm_us']:11.1f} {r['exposed_vs_pfc_only']:8.3f} {r['packets']:10d} {r['cpu_s']:7.1f}"
            print(line, flush=True)
        out[case] = rows
    print(json.dumps(out))
    return out


if __name__ == "__main__":
    main()
