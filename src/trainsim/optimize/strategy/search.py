"""The strategy search: enumerate, prune by memory, estimate, simulate the best (DESIGN.md,
optimize layer: strategy search).

1. :func:`~.space.enumerate_strategies` lists every combination; those the model cannot run
   keep the generator's reason;
2. each valid strategy's peak memory per GPU is the generator's own
   (:func:`trainsim.workload.generate.memory.stage_memory` on its first and last stage, the
   two that hold the most: stage 0 has the most micro-batches in flight and the embedding,
   the last the head and the logits); over the device's capacity it is rejected with the
   numbers;
3. the rest are ranked by the analytical estimate (:mod:`.estimate`);
4. the best ``top_k`` are generated and simulated as a sweep combination is
   (``sweep.evaluate``: in memory, the replica slice where it is exact), on local processes,
   and the estimate's error against each simulated step is reported.

Every valid strategy is a row of the sweep store (``sweep/store.py``; status ``ok`` with its
estimate, or ``infeasible`` with the memory it needs), keyed by the hash of its inputs; a
simulated row gains ``makespan_s``, ``tflops_per_gpu`` and ``estimate_error``. A search run
again on the same store re-inserts nothing and re-simulates nothing it finds there, so an
interrupted search resumes, and ``trainsim sweep show/plot`` read its rows. Times in seconds,
sizes in bytes.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

from trainsim.errors import ConfigError, InfeasibleError
from trainsim.memory.expansion import resolve_memory
from trainsim.optimize.strategy.estimate import Estimate, StepEstimator
from trainsim.optimize.strategy.space import SearchSpace, enumerate_strategies
from trainsim.optimize.strategy.subplatform import sub_platform_document
from trainsim.units import GB
from trainsim.workload.generate import Parallelism
from trainsim.workload.generate.memory import MemoryBreakdown, check_offload, stage_memory
from trainsim.workload.models.transformer import TransformerSpec

SIMULATED_METRICS = ("makespan_s", "tflops_per_gpu", "exposed_comm_max_s")

Item = tuple[str, dict[str, Any], dict[str, Any]]
RunItems = Callable[[list[Item], int, Callable[[list[dict[str, Any]]], None]], None]
"""Evaluates sweep combinations ``(key, params, document)`` on ``jobs`` processes, handing
rows to a callback (``trainsim.sweep.runner.run_items``; injected, optimize does not import sweep)."""


class ResultStore(Protocol):
    """What the search needs of a result store (``trainsim.sweep.store.SweepStore``)."""

    def add(self, rows: Iterable[dict[str, Any]]) -> int: ...
    def replace(self, rows: Iterable[dict[str, Any]]) -> int: ...
    def rows(self, keys: Iterable[str] | None = None) -> list[dict[str, Any]]: ...
    def set_meta(self, name: str, value: Any) -> None: ...


def _json(document: Any) -> str:
    return json.dumps(document, sort_keys=True, separators=(",", ":"), default=str)


def row_key(context_json: str, params: dict[str, Any]) -> str:
    """Stable hash of a search row's inputs: the search's context (model, GPUs, batch, device,
    platform document) and the strategy."""
    return hashlib.sha256((context_json + _json(params)).encode()).hexdigest()[:32]


@dataclass(frozen=True)
class SearchInputs:
    """What one search is about: model, GPUs, the global batch, device and platform file."""

    model: str
    gpus: int
    global_batch: int
    platform: str
    device: str = "A100"
    seq: int | None = None
    backend: str = "congestion_unaware"


@dataclass
class Row:
    """One strategy that fits, with its estimate and (when simulated) its simulated step."""

    params: dict[str, Any]
    parallelism: Parallelism
    estimate: Estimate
    memory: MemoryBreakdown
    simulated_s: float | None = None
    metrics: dict[str, Any] = field(default_factory=dict)
    sim_error: str | None = None

    @property
    def error(self) -> float | None:
        """(estimate - simulation) / simulation."""
        return None if self.simulated_s is None else self.estimate.step_s / self.simulated_s - 1


@dataclass
class Rejection:
    """One class of rejected strategies: how many, and the extremes of the cause."""

    count: int = 0
    example: str = ""
    least_gb: float = float("inf")
    most_gb: float = 0.0


@dataclass
class SearchResult:
    rows: list[Row]  # fitting strategies, best estimate first
    rejections: dict[str, Rejection]
    enumerated: int
    valid: int
    capacity_bytes: float
    simulated_now: int = 0
    simulated_reused: int = 0
    wall_s: dict[str, float] = field(default_factory=dict)
    platform_npus: int = 0
    skipped: list[Row] = field(default_factory=list)
    """Rows ranked above the simulated ones that were not simulated: their simulation needs
    every rank (ZeRO-3/FSDP, overlapped gradient reduction, offload to a per-node or pooled
    tier: the replica slice does not apply, :func:`needs_every_rank`) and the job has more
    ranks than ``max_every_rank``."""
    estimator: StepEstimator | None = field(default=None, repr=False)
    context: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def simulated(self) -> list[Row]:
        return [r for r in self.rows if r.simulated_s is not None]

    def max_abs_error(self) -> float | None:
        errs = [abs(r.error) for r in self.simulated if r.error is not None]
        return max(errs) if errs else None

    @property
    def best(self) -> Row | None:
        """The fastest strategy: the best simulated one, or the best estimate if none ran."""
        sims = self.simulated
        if sims:
            return min(sims, key=lambda r: r.simulated_s or 0.0)
        return self.rows[0] if self.rows else None


def load_platform_document(path: str) -> dict[str, Any]:
    from trainsim.config.files import load_yaml_mapping

    return load_yaml_mapping(path)


def _memory(spec: Any, par: Parallelism, capacity: float) -> MemoryBreakdown:
    stages = {0, par.pp - 1}
    return max(
        (stage_memory(spec, par, s, capacity=capacity) for s in stages), key=lambda m: m.total
    )


def _oom_class(mem: MemoryBreakdown) -> str:
    states = mem.weights + mem.gradients + mem.optimizer
    if states > mem.capacity:
        return "does not fit: model states alone exceed the device memory"
    return "does not fit: model states + activations exceed the device memory"


def _oom_message(mem: MemoryBreakdown) -> str:
    return (
        f"stage {mem.stage} needs {mem.total / GB:.2f} GB per GPU (weights {mem.weights / GB:.1f}, gradients "
        f"{mem.gradients / GB:.1f}, optimizer {mem.optimizer / GB:.1f}, activations {mem.activations / GB:.1f}, "
        f"working set {mem.transient / GB:.1f}) > {mem.capacity / GB:.2f} GB"
    )


def search(
    inputs: SearchInputs,
    *,
    space: SearchSpace | None = None,
    top_k: int = 3,
    store: ResultStore | None = None,
    run: RunItems | None = None,
    jobs: int = 1,
    max_every_rank: int = 64,
    progress: Callable[[str], None] | None = None,
) -> SearchResult:
    """Run the search; see the module docstring."""
    from trainsim.compute import OperatorTimer, get_device
    from trainsim.config.platform import parse_platform
    from trainsim.workload.models import get_model

    say = progress or (lambda _msg: None)
    t0 = time.perf_counter()
    full_doc = load_platform_document(inputs.platform)
    doc = sub_platform_document(full_doc, inputs.gpus, inputs.platform)
    platform = parse_platform(doc, inputs.platform)
    full_npus = (
        parse_platform(full_doc, inputs.platform).network.npus
        if doc is not full_doc
        else platform.network.npus
    )
    spec = get_model(inputs.model, seq=inputs.seq)
    if not isinstance(spec, TransformerSpec):
        raise ConfigError(
            f"{inputs.model} is not a transformer; the strategy search covers transformers (TP/PP/SP need one)",
            field="model",
        )
    timer = OperatorTimer(get_device(inputs.device, platform.devices))  # a built-in or the file's own
    capacity = timer.memory_capacity
    estimator = StepEstimator(spec, timer, platform)
    context = {"model": inputs.model, "seq": inputs.seq, "gpus": inputs.gpus, "global_batch": inputs.global_batch,
               "device": inputs.device, "platform": doc, "backend": inputs.backend}  # fmt: skip
    context_json = _json(context)
    has_tier = platform.memory.mode != "NO_MEMORY_EXPANSION"
    tier_per_npu = resolve_memory(platform.memory).capacity_per_npu(inputs.gpus)
    space = space or SearchSpace()
    both = (False, True) if has_tier else (False,)
    space = replace(
        space,
        offload=both if space.offload is None else space.offload,
        offload_params=both if space.offload_params is None else space.offload_params,
        offload_activations=both if space.offload_activations is None else space.offload_activations,
    )
    if True in (*(space.offload or ()), *(space.offload_params or ()), *(space.offload_activations or ())) and not has_tier:
        raise ConfigError(
            "offloading needs an expanded-memory tier: the platform's memory section has mode none",
            file=inputs.platform,
            field="memory.mode",
        )
    rejections: dict[str, Rejection] = {}
    rows: list[Row] = []
    store_rows: list[dict[str, Any]] = []
    enumerated = valid = 0
    for cand in enumerate_strategies(spec, inputs.gpus, inputs.global_batch, space):
        enumerated += 1
        par = cand.parallelism
        if par is None:
            rej = rejections.setdefault(cand.reason_class, Rejection(example=cand.reason))
            rej.count += 1
            continue
        valid += 1
        mem = _memory(spec, par, capacity)
        key = row_key(context_json, cand.params)
        if par.offloads:
            try:
                check_offload([stage_memory(spec, par, s) for s in {0, par.pp - 1}], tier_per_npu)
            except InfeasibleError as exc:
                kinds = [name for on, name in ((par.offload_optimizer, "optimizer states"), (par.offload_params, "weights"),
                                               (par.offload_activations, "activations")) if on]  # fmt: skip
                rej = rejections.setdefault(
                    f"does not fit: offloaded {' + '.join(kinds)} exceed the expanded-memory tier",
                    Rejection(),
                )
                rej.count += 1
                rej.example = rej.example or str(exc).split(" (hint")[0]
                store_rows.append(
                    _store_row(
                        key,
                        cand.params,
                        "infeasible",
                        {"memory_per_gpu_bytes": mem.total},
                        str(exc),
                        context,
                    )
                )
                continue
        if mem.total > capacity:
            cls = _oom_class(mem)
            rej = rejections.setdefault(cls, Rejection())
            rej.count += 1
            if mem.total / GB < rej.least_gb:
                rej.least_gb, rej.example = mem.total / GB, _oom_message(mem)
            rej.most_gb = max(rej.most_gb, mem.total / GB)
            store_rows.append(
                _store_row(
                    key,
                    cand.params,
                    "infeasible",
                    {"memory_per_gpu_bytes": mem.total},
                    _oom_message(mem),
                    context,
                )
            )
            continue
        est = estimator.estimate(par)
        rows.append(Row(cand.params, par, est, mem))
        store_rows.append(
            _store_row(key, cand.params, "ok", _estimate_metrics(est, mem), None, context)
        )
    rows.sort(key=lambda r: r.estimate.step_s)
    t1 = time.perf_counter()
    result = SearchResult(
        rows,
        rejections,
        enumerated,
        valid,
        capacity,
        platform_npus=full_npus,
        estimator=estimator,
        context=context,
    )
    done: dict[str, dict[str, Any]] = {}
    if store is not None:
        store.add(store_rows)
        store.set_meta("strategy_search", {k: v for k, v in context.items() if k != "platform"})
    t2 = time.perf_counter()
    if top_k > 0 and rows:
        if run is None:
            raise ConfigError(
                "simulating the best candidates needs a runner (trainsim.sweep.runner.run_items)",
                field="top_k",
            )
        chosen: list[Row] = []
        for row in rows:
            if len(chosen) == top_k:
                break
            if needs_every_rank(row.parallelism, platform.memory.mode) and row.parallelism.world > max_every_rank:
                result.skipped.append(row)
            else:
                chosen.append(row)
        _simulate(result, chosen, context, context_json, store, done, run, jobs, say)
    result.wall_s = {"estimate": t1 - t0, "store": t2 - t1, "simulate": time.perf_counter() - t2}
    return result


def needs_every_rank(par: Parallelism, memory_mode: str) -> bool:
    """Whether simulating ``par`` on a platform whose expanded memory has ``memory_mode``
    (``MemorySpec.mode``) runs every rank: the replica slice (``system/symmetry/replica.py``)
    takes every strategy of the generator (ZeRO-3, overlapped reduction, pipelines, context and
    expert parallelism) but refuses any offload to a per-node or pooled tier, whose accesses
    of one node or pool queue together across replicas (a per-NPU tier's are the rank's own).
    What the network decides besides (rings with no period short of every replica) shows only
    when the step runs, which then runs every rank."""
    from trainsim.system.symmetry.partial import SHARED_MEMORY_MODES

    return par.dp > 1 and bool(par.offloads) and memory_mode in SHARED_MEMORY_MODES


def simulate_strategies(result: SearchResult, strategies: list[dict[str, Any]], run: RunItems, jobs: int = 1,
                        store: ResultStore | None = None) -> list[Row]:  # fmt: skip
    """Estimate and simulate further strategies (``tp``, ``pp``, ``dp``, ``micro_batch``,
    ``schedule``, ``virtual_stages``, ``sp``, ``zero``, ``recompute``) in ``result``'s search:
    a published strategy, say, to compare with the search's pick. Rows of the ranking are
    reused when they are there."""
    assert result.estimator is not None
    spec = result.estimator.spec
    out: list[Row] = []
    todo: list[Row] = []
    ranked = {_json(r.params): r for r in result.rows}
    for params in strategies:
        row = ranked.get(_json(params))
        if row is None:
            par = Parallelism(global_batch=result.context["global_batch"], **params)
            row = Row(
                dict(params),
                par,
                result.estimator.estimate(par),
                _memory(spec, par, result.capacity_bytes),
            )
        out.append(row)
        if row.simulated_s is None and row.sim_error is None:
            todo.append(row)
    if todo:
        _simulate(
            result,
            todo,
            result.context,
            _json(result.context),
            store,
            {},
            run,
            jobs,
            lambda _m: None,
        )
    return out


def _estimate_metrics(est: Estimate, mem: MemoryBreakdown) -> dict[str, float]:
    return {
        "estimate_s": est.step_s, "est_compute_s": est.compute_s, "est_tp_s": est.tp_s, "est_p2p_s": est.p2p_s,
        "est_bubble_s": est.bubble_s, "est_dp_s": est.dp_s, "memory_per_gpu_bytes": mem.total,
    }  # fmt: skip


def _store_row(
    key: str,
    params: dict[str, Any],
    status: str,
    metrics: dict[str, Any],
    error: str | None,
    context: dict[str, Any],
) -> dict[str, Any]:
    return {"key": key, "params": params, "status": status, "metrics": metrics, "error": error,
            "inputs": {**context, "strategy": params}, "wall_s": 0.0}  # fmt: skip


def _document(context: dict[str, Any], params: dict[str, Any]) -> dict[str, Any]:
    """The sweep combination that generates and simulates one strategy."""
    gen = {
        "model": context["model"],
        "device": context["device"],
        "global_batch": context["global_batch"],
        **params,
    }
    if context["seq"]:
        gen["seq"] = context["seq"]
    return {
        "platform": context["platform"],
        "workload": {"generate": gen},
        "backend": context["backend"],
    }


def _simulate(result: SearchResult, best: list[Row], context: dict[str, Any], context_json: str, store: ResultStore | None,
              done: dict[str, dict[str, Any]], run: RunItems, jobs: int, say: Callable[[str], None]) -> None:  # fmt: skip
    by_key: dict[str, Row] = {}
    items = []
    if store is not None:  # simulated by an earlier run of this search
        keys = [row_key(context_json, row.params) for row in best]
        done = {
            **done,
            **{r["key"]: r for r in store.rows(keys) if r.get("makespan_s") is not None},
        }
    for row in best:
        key = row_key(context_json, row.params)
        hit = done.get(key)
        if hit is not None:
            row.simulated_s = float(hit["makespan_s"])
            row.metrics = {m: hit[m] for m in SIMULATED_METRICS if m in hit}
            result.simulated_reused += 1
            continue
        by_key[key] = row
        items.append((key, row.params, _document(context, row.params)))
    if not items:
        return
    say(f"simulating {len(items)} candidate(s) on {jobs} process(es)")

    def record(sim_rows: list[dict[str, Any]]) -> None:
        out = []
        for sim in sim_rows:
            row = by_key[sim["key"]]
            result.simulated_now += 1
            if sim["status"] != "ok":
                row.sim_error = sim["error"] or sim["status"]
                continue
            row.simulated_s = float(sim["metrics"]["makespan_s"])
            row.metrics = {m: sim["metrics"][m] for m in SIMULATED_METRICS if m in sim["metrics"]}
            metrics = {
                **_estimate_metrics(row.estimate, row.memory),
                **row.metrics,
                "estimate_error": row.error,
            }
            out.append(
                _store_row(
                    sim["key"], row.params, "ok", metrics, None, {**context, "strategy": row.params}
                )
                | {"wall_s": sim["wall_s"]}
            )
        if store is not None and out:
            store.replace(out)

    run(items, jobs, record)


def check_inputs(inputs: SearchInputs) -> None:
    if inputs.gpus < 1:
        raise ConfigError(f"--gpus {inputs.gpus}: expected a positive number of GPUs", field="gpus")
    if inputs.global_batch < 1:
        raise ConfigError(
            f"--global-batch {inputs.global_batch}: expected a positive number of sequences",
            field="global_batch",
        )
    if not Path(inputs.platform).is_file():
        raise ConfigError("no such platform file", file=inputs.platform)
