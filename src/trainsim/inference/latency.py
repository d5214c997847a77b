"""Latency per sample of each deployment on the two platforms: analytical now, simulated later.

Place: ``trainsim.inference``; reads a :class:`.study.StudyResult` and the platform files
(:mod:`.platform`). :func:`latency_table` takes an optional ``simulate(graphs, platform_path)
-> seconds`` so that the simulator (``trainsim run``) can replace the estimate.

The analytical estimate (:func:`analytical_latency`) walks the plan the graphs are built from,
stage after stage, as the graphs' dependencies serialize it (a stage's receives before its
compute, its compute before the next stage's sends):

- communication of a stage with any transfer: ``E + 2 L + (max_link_bytes + max_msg_bytes) / BW``
  on a Switch (every message crosses the sender's uplink and the receiver's downlink, two
  store-and-forward hops of latency ``L``; the busiest link carries ``max_link_bytes``, the
  last message's second hop adds ``max_msg_bytes / BW``; ``E`` is the endpoint delay);
- compute of a stage: the slowest worker, ``max_k t_k`` with ``t_k = flops_k / peak`` or, with the
  roofline enabled, ``max(flops_k / peak, mem_bytes_k / local_mem_bw)``.

It ignores overlap between workers at different stages (a bulk-synchronous bound).
Units: seconds per sample, bytes, FLOP, FLOP/s, B/s.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from trainsim.inference.comm import BYTES_PER_SCALAR
from trainsim.inference.graphs import build_graphs
from trainsim.inference.plan import Stage
from trainsim.inference.platform import Platform, example_platforms, load_platform, resized_platform
from trainsim.inference.study import StudyResult
from trainsim.workload.graph import WorkloadGraph

Simulate = Callable[[list[WorkloadGraph], Path], float]
"""``simulate(graphs, platform_path) -> seconds``: one graph per worker, a platform file whose
NPU count equals the number of graphs; returns the time of one sample (one pass of the graphs)."""


@dataclass(frozen=True)
class LatencyBreakdown:
    """Analytical time of one sample: total, and its communication and compute parts (s)."""

    total: float
    communication: float
    compute: float


def analytical_latency(stages: Sequence[Stage], platform: Platform) -> LatencyBreakdown:
    """The bulk-synchronous estimate of the module docstring for one sample."""
    comm = comp = 0.0
    for st in stages:
        if st.transfers.any():
            nbytes = st.transfers * BYTES_PER_SCALAR
            link = max(float(nbytes.sum(axis=1).max()), float(nbytes.sum(axis=0).max()))
            comm += (
                platform.endpoint_delay
                + 2 * platform.latency
                + (link + float(nbytes.max())) / platform.bandwidth
            )
        t = st.flops / platform.peak_flops
        if platform.roofline_enabled:
            t = np.maximum(t, st.mem_bytes / platform.local_mem_bw)
        comp += float(t.max())
    return LatencyBreakdown(comm + comp, comm, comp)


@dataclass(frozen=True)
class LatencyRow:
    """Seed-averaged latency of one (workers, method, budget) on one platform."""

    platform: str
    workers: int
    method: str
    budget: float | None
    source: str  # "analytical" or "simulated"
    latency_s: float
    communication_s: float | None  # analytical part; None when simulated
    compute_s: float | None
    bytes_per_sample: float
    accuracy: float

    def to_dict(self) -> dict:
        return dict(self.__dict__)


def latency_table(
    results: StudyResult,
    simulate: Simulate | None = None,
    platforms: Sequence[str | Path] | None = None,
) -> list[LatencyRow]:
    """Latency per sample of every (workers, method, budget) of ``results`` on each platform.

    Without ``simulate`` the latency is :func:`analytical_latency`. With it, each record's plan
    becomes per-worker graphs (:func:`.graphs.build_graphs`, durations at the platform's peak)
    and ``simulate`` times them on a copy of the platform file sized to the worker count.
    Platforms default to the shipped ``examples/repurpose/{datacenter,edge}.yaml``.
    """
    paths = [Path(p) for p in (platforms if platforms is not None else example_platforms())]
    specs = [load_platform(p) for p in paths]
    groups: dict[
        tuple[str, int, str, float | None],
        list[tuple[float, float | None, float | None, float, float]],
    ] = {}
    with tempfile.TemporaryDirectory(prefix="repurpose-platforms-") as tmp:
        for path, spec in zip(paths, specs, strict=True):
            for rec in results.records:
                est = analytical_latency(rec.stages, spec)
                nbytes = float(rec.communication * BYTES_PER_SCALAR)
                row: tuple[float, float | None, float | None, float, float]
                if simulate is None:
                    row = (est.total, est.communication, est.compute, nbytes, rec.accuracy)
                else:
                    sized = (
                        path
                        if spec.npus == rec.workers
                        else resized_platform(path, rec.workers, tmp)
                    )
                    graphs = build_graphs(
                        rec.stages, spec.peak_flops, source=f"{rec.method}-k{rec.workers}"
                    )
                    row = (float(simulate(graphs, sized)), None, None, nbytes, rec.accuracy)
                groups.setdefault((spec.name, rec.workers, rec.method, rec.budget), []).append(row)
    out = []
    source = "analytical" if simulate is None else "simulated"
    for (name, k, method, budget), vals in groups.items():
        arr = np.array([[np.nan if v is None else v for v in row] for row in vals], dtype=float)
        mean = arr.mean(axis=0)
        out.append(
            LatencyRow(
                name,
                k,
                method,
                budget,
                source,
                float(mean[0]),
                None if simulate else float(mean[1]),
                None if simulate else float(mean[2]),
                float(mean[3]),
                float(mean[4]),
            )
        )
    return out


def latency_markdown(rows: Sequence[LatencyRow]) -> str:
    """The latency table as Markdown (microseconds per sample)."""
    lines = [
        "| platform | K | method | budget | latency us/sample | of which communication | bytes/sample | accuracy % | source |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        budget = "-" if r.budget is None else f"{r.budget:g}"
        share = (
            "-" if r.communication_s is None else f"{100 * r.communication_s / r.latency_s:.0f}%"
        )
        lines.append(
            f"| {r.platform} | {r.workers} | {r.method} | {budget} | {r.latency_s * 1e6:.3f} | {share} | "
            f"{r.bytes_per_sample:.0f} | {100 * r.accuracy:.2f} | {r.source} |"
        )
    return "\n".join(lines)
