"""Latency of each deployment on the study's platforms, from simulator runs.

Place: ``trainsim.studies.repurpose``; reads a :class:`.study.StudyResult`, turns every record's
plan into per-worker graphs (:func:`.graphs.build_graphs`) and runs them through the simulator
(:func:`trainsim.system.api.simulate`) on each platform file (:mod:`.platform`), resized to the
record's worker count. :func:`latency_table` takes any ``simulate(platform, graphs) -> seconds``;
the default, :func:`simulator`, is trainsim's executor on the ``flow`` network backend: every
message is a flow on its route (the sender's uplink to the Switch, the Switch's downlink to the
receiver), concurrent flows share a link max-min fairly, and a message pays the route's latency once
(two hops on a Switch) plus its bytes at its share of the bandwidth. That is a packet-switched
Ethernet or a datacenter fabric at message granularity: the ``K - 1`` partial sums converging on the
root worker share its downlink.

Per (platform, batch, record) the table holds:

- ``latency_s``: the simulated makespan of one batch (all graphs finished);
- ``per_sample_s``: that over the batch size (at batch 1 it is the latency of one sample);
- ``compute_only_s``: the makespan of the same graphs on :func:`.platform.free_network` (no
  communication cost, compute and dependencies only), so ``communication_share = 1 -
  compute_only_s / latency_s`` is the part of the latency the traffic adds;
- ``messages``: point-to-point messages per batch (one per worker pair per stage).

Rows average the records of one (platform, batch, workers, method, budget) over seeds.
Units: seconds, bytes, FLOP; accuracy a fraction in [0, 1].
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from trainsim.config.types import Platform
from trainsim.errors import ConfigError
from trainsim.studies.repurpose.comm import BYTES_PER_SCALAR
from trainsim.studies.repurpose.graphs import build_graphs
from trainsim.studies.repurpose.platform import (
    example_platforms,
    free_network,
    load_study_platform,
    platform_name,
    sized_platform,
    write_platform,
)
from trainsim.studies.repurpose.study import Record, StudyResult
from trainsim.workload.graph import WorkloadGraph

DEFAULT_BACKEND = "flow"

Simulate = Callable[[Platform, list[WorkloadGraph]], float]
"""``simulate(platform, graphs) -> seconds``: one graph per NPU of ``platform``; returns the
time to run them all (the makespan)."""


def simulator(backend: str = DEFAULT_BACKEND) -> Simulate:
    """trainsim's simulator on network backend ``backend``, as a :data:`Simulate`."""
    from trainsim.system.api import simulate

    def run(platform: Platform, graphs: list[WorkloadGraph]) -> float:
        return simulate(platform, graphs, backend=backend).makespan_s

    return run


@dataclass(frozen=True)
class LatencyRow:
    """Seed-averaged simulated latency of one (platform, batch, workers, method, budget)."""

    platform: str
    batch: int
    workers: int
    method: str
    budget: float | None
    seeds: int
    latency_s: float
    per_sample_s: float
    compute_only_s: float
    communication_share: float
    messages: float
    bytes_per_sample: float
    accuracy: float

    def to_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass(frozen=True)
class _Run:
    platform: str
    batch: int
    record: Record
    latency_s: float
    compute_only_s: float
    messages: int
    platform_obj: Platform
    graphs: list[WorkloadGraph]


def _check_batches(batches: Sequence[int]) -> tuple[int, ...]:
    if not batches:
        raise ConfigError("empty: expected at least one batch size", field="batch")
    for b in batches:
        if not (isinstance(b, int) and not isinstance(b, bool) and b >= 1):
            raise ConfigError(f"{b!r}: expected a batch of at least 1 sample", field="batch")
    return tuple(dict.fromkeys(batches))


def _runs(
    results: StudyResult,
    simulate: Simulate,
    platforms: Sequence[str | Path],
    batches: Sequence[int],
) -> Iterator[_Run]:
    for path in platforms:
        base = load_study_platform(path)
        name = platform_name(base)
        sized: dict[int, tuple[Platform, Platform]] = {}
        for batch in batches:
            for rec in results.records:
                if rec.workers not in sized:
                    p = sized_platform(base, rec.workers)
                    sized[rec.workers] = (p, free_network(p))
                plat, free = sized[rec.workers]
                graphs = build_graphs(
                    rec.stages,
                    plat.system.peak_perf,
                    source=f"repurpose-{rec.method}-k{rec.workers}",
                    batch=batch,
                )
                messages = sum(int((s.transfers > 0).sum()) for s in rec.stages)
                yield _Run(
                    name,
                    batch,
                    rec,
                    float(simulate(plat, graphs)),
                    float(simulate(free, graphs)),
                    messages,
                    plat,
                    graphs,
                )


def _label(rec: Record) -> str:
    budget = "" if rec.budget is None else f"_f{rec.budget:g}"
    return f"k{rec.workers}/seed{rec.seed}/{rec.method}{budget}"


def latency_table(
    results: StudyResult,
    simulate: Simulate | None = None,
    platforms: Sequence[str | Path] | None = None,
    batches: Sequence[int] = (1,),
    backend: str = DEFAULT_BACKEND,
    et_out: str | Path | None = None,
) -> list[LatencyRow]:
    """Simulated latency of every (workers, method, budget) of ``results`` on each platform and
    batch size, averaged over seeds.

    ``simulate`` defaults to :func:`simulator` on ``backend``. Platforms default to the shipped
    ``examples/repurpose/{datacenter,edge}.yaml``. With ``et_out`` every simulated deployment is
    also written there for ``trainsim run`` (:func:`write_runs`).
    """
    batches = _check_batches(batches)
    sim = simulate or simulator(backend)
    paths = [Path(p) for p in (platforms if platforms is not None else example_platforms())]
    runs = list(_runs(results, sim, paths, batches))
    if et_out is not None:
        write_runs(runs, Path(et_out), backend if simulate is None else None)
    groups: dict[tuple[str, int, int, str, float | None], list[_Run]] = {}
    for run in runs:
        r = run.record
        groups.setdefault((run.platform, run.batch, r.workers, r.method, r.budget), []).append(run)
    rows = []
    for (name, batch, k, method, budget), items in groups.items():
        lat = float(np.mean([i.latency_s for i in items]))
        comp = float(np.mean([i.compute_only_s for i in items]))
        rows.append(
            LatencyRow(
                name,
                batch,
                k,
                method,
                budget,
                len(items),
                lat,
                lat / batch,
                comp,
                1.0 - comp / lat if lat > 0 else 0.0,
                float(np.mean([i.messages for i in items])),
                float(np.mean([i.record.communication for i in items])) * BYTES_PER_SCALAR,
                float(np.mean([i.record.accuracy for i in items])),
            )
        )
    return rows


def write_runs(runs: Sequence[_Run], out: Path, backend: str | None) -> Path:
    """Write each run's graphs as Chakra ET files and its sized platform as a native file.

    Layout under ``out``: ``<platform>_k<K>.yaml`` and
    ``<platform>/b<batch>/k<K>/seed<S>/<method>[_f<budget>].<rank>.et``; ``index.json`` lists
    every run (platform file, workload prefix, batch, backend, simulated ``latency_s``) so that
    ``trainsim run <platform file> --workload <prefix> --backend <backend>`` can be checked
    against it. Returns the index path.
    """
    from trainsim.workload.chakra import write_workload

    out.mkdir(parents=True, exist_ok=True)
    written: dict[tuple[str, int], Path] = {}
    index = []
    for run in runs:
        k = run.record.workers
        if (run.platform, k) not in written:
            written[(run.platform, k)] = write_platform(
                run.platform_obj, out / f"{run.platform}_k{k}.yaml"
            )
        prefix = out / run.platform / f"b{run.batch}" / _label(run.record)
        write_workload(prefix, run.graphs)
        index.append(
            {
                "platform": run.platform,
                "platform_file": str(written[(run.platform, k)]),
                "workload": str(prefix),
                "batch": run.batch,
                "workers": k,
                "seed": run.record.seed,
                "method": run.record.method,
                "budget": run.record.budget,
                "backend": backend,
                "latency_s": run.latency_s,
            }
        )
    path = out / "index.json"
    path.write_text(json.dumps(index, indent=1) + "\n", encoding="utf-8")
    return path


def latency_markdown(rows: Sequence[LatencyRow]) -> str:
    """The latency table as Markdown (microseconds)."""
    lines = [
        "| platform | batch | K | method | budget | latency us (batch) | us/sample | of which traffic | messages | bytes/sample | accuracy % |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        budget = "-" if r.budget is None else f"{r.budget:g}"
        lines.append(
            f"| {r.platform} | {r.batch} | {r.workers} | {r.method} | {budget} | {r.latency_s * 1e6:.3f} | "
            f"{r.per_sample_s * 1e6:.3f} | {100 * r.communication_share:.0f}% | {r.messages:.1f} | "
            f"{r.bytes_per_sample:.0f} | {100 * r.accuracy:.2f} |"
        )
    return "\n".join(lines)
