"""Themis' fallback to the baseline order, decided on predicted finish times (system layer).

Themis' greedy (``inter_dim.ThemisGreedy``; arXiv 2110.04478 §4.2, ASTRA-sim's
``OfflineGreedy``) balances per-dimension *loads* (bytes x (n-1)/n / bandwidth) and keeps the
baseline order only while those loads are within ``chunk / 16`` bytes of each other. Loads are
not finish times: they leave out pipeline fill and drain (the first chunk's phases on the
other dimensions before the busiest one starts, and the last chunk's after it ends), latencies
and endpoint delays, and the queue discipline of each dimension. With few chunks or a slow
small dimension the greedy's orders can finish later than the baseline's (Switch 8 at 100 GB/s
x Switch 4 at 25 GB/s, 8 chunks: 13% later; docs/collectives.md).

The guard (trainsim's; Themis plans offline, so a plan can be checked before it runs): for a
collective whose every phase is symmetric (ring, direct, halving-doubling), both candidate
plans - Themis' chunk orders and the baseline orders a ``baseline`` run would use - are
simulated for one representative rank on a private clock with the runtime's own
``SymmetricEngine`` (the backend's uncontended ``delay_ns``, the same endpoint, reduction,
chunking, queue and injection rules), starting from idle queues. The collective runs Themis'
plan only if its predicted finish is not later than the baseline's. On the congestion-unaware
backend, for a collective issued by every rank at the same tick with nothing else in flight,
the prediction *is* the result (the symmetric run is exact), so Themis is never slower than
baseline there. Elsewhere (congestion-aware backends, overlapping collectives) it is a
prediction. Plans with a double binary tree phase are not symmetric and keep the greedy's
choice. Times in ns.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from trainsim.collectives import ASYMMETRIC_KINDS, LogicalLayout, PhaseSpec
from trainsim.engine import EventQueue
from trainsim.network.injection import InjectionPorts
from trainsim.system.collective_engine import (
    CollectiveRecord,
    EngineOptions,
    RankWork,
    SymmetricEngine,
)
from trainsim.topology import MultiDimTopology

Plan = list[list[PhaseSpec]]


@dataclass(frozen=True, slots=True)
class ThemisChoice:
    """One guarded decision: predicted finish (ns from the collective's start) of each plan."""

    themis_ns: float
    baseline_ns: float

    @property
    def themis_kept(self) -> bool:
        return self.themis_ns <= self.baseline_ns


def symmetric_plan(plan: Plan) -> bool:
    """True when every phase runs the same schedule on every member (no double binary tree,
    no in-switch reduction)."""
    return all(spec.algo.kind not in ASYMMETRIC_KINDS for chunk in plan for spec in chunk)


def predict_finish_ns(
    network: Any,
    topology: MultiDimTopology,
    layout: LogicalLayout,
    plan: Plan,
    options: EngineOptions,
    injection: InjectionPorts | None,
) -> float:
    """Finish time (ns after the start) of ``plan`` run alone by every rank at once, from one
    representative (rank 0) on a private clock, with the runtime's engine ``options`` less the
    rendezvous protocol (a representative cannot stand for its peers' control messages: both
    plans are predicted without them)."""
    queue = EventQueue()
    engine = SymmetricEngine(
        queue,
        network,
        topology,
        replace(options, rendezvous=False) if options.rendezvous else options,
        injection=injection,
        on_rank_done=lambda _work: None,
    )
    record = CollectiveRecord(
        0, -1, -1, 0, "", 0.0, dim_bytes=[0] * len(topology.sizes), chunks=len(plan)
    )
    work = RankWork(0, len(plan), lambda _arg: None, None, record, "Themis prediction")
    engine.start_rank(work, layout, plan, 0, 0)
    queue.run()
    return record.end_ns


def guard(
    themis_plan: Plan, baseline_plan: Plan, predict: Callable[[Plan], float]
) -> tuple[Plan, ThemisChoice | None]:
    """The plan to run: Themis' unless the baseline's is predicted to finish earlier; the
    decision (None when the plans are not symmetric and the greedy's choice stands)."""
    if not (symmetric_plan(themis_plan) and symmetric_plan(baseline_plan)):
        return themis_plan, None
    choice = ThemisChoice(predict(themis_plan), predict(baseline_plan))
    return (themis_plan if choice.themis_kept else baseline_plan), choice
