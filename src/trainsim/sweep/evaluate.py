"""Runs one resolved combination: inputs document -> status and metrics (executed in workers).

Metric names (seconds unless said): ``makespan_s``, ``finish_min_s``, ``compute_mean_s``,
``comm_mean_s``, ``exposed_comm_max_s``, ``events`` (count), ``tflops_per_gpu`` (FLOPs of the
compute nodes per GPU and second of the step, 1e12; recomputation included).

A ``generate`` workload is a model and a parallelization (``trainsim generate``'s options as
keys): the step is generated in memory for the combination's platform and simulated as
``trainsim generate --platform`` does (one data-parallel replica standing for all when it
can, ``system/symmetry/replica.py``); a strategy that does not fit the device is ``infeasible``.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from trainsim.errors import ConfigError, InfeasibleError, TrainsimError
from trainsim.workload.graph import WorkloadGraph

METRICS = ("makespan_s", "finish_min_s", "compute_mean_s", "comm_mean_s", "exposed_comm_max_s", "events", "tflops_per_gpu")

PARALLELISM_KEYS = (
    "tp", "pp", "dp", "ep", "sp", "zero", "fsdp", "recompute", "micro_batch", "global_batch",
    "schedule", "virtual_stages", "order", "overlap_grad_reduce", "granularity", "offload_optimizer",
    "offload_params", "offload_activations", "cp", "first_stage_layers", "last_stage_layers", "zero3_prefetch", "reshard_after_forward",
)  # fmt: skip
"""Keys of a ``generate`` workload that are :class:`~trainsim.workload.generate.Parallelism` fields."""


WORKLOAD_KEYS = {
    "collective": (("type", "size_bytes"), ("involved_dim",)),
    "data_parallel": (("layers", "allreduce_bytes"), ("forward_s", "backward_s")),
    "shift": (("size_bytes",), ("steps", "distance")),
    "generate": (("model",), (*PARALLELISM_KEYS, "seq", "device", "memory_check", "every_rank")),
}
"""Per workload kind: its required and optional keys (``chakra`` takes a prefix string)."""


def check_workload(spec: Any, *, complete: bool = True, file: str | None = None, at: str = "workload") -> None:
    """A workload mapping has one known kind and no unknown key; ``complete``: none missing
    (a sweep file's base may leave a key to an axis)."""
    kinds = ", ".join([*WORKLOAD_KEYS, "chakra"])
    if not isinstance(spec, dict) or len(spec) != 1:
        got = sorted(spec) if isinstance(spec, dict) else repr(spec)
        raise ConfigError(f"workload needs exactly one of {kinds}; got {got}", file=file, field=at)
    kind, args = next(iter(spec.items()))
    if kind == "chakra":
        if not isinstance(args, str):
            raise ConfigError(f"got {args!r}; expected the prefix of PREFIX.<rank>.et files", file=file, field=f"{at}.chakra")
        return
    if kind not in WORKLOAD_KEYS:
        raise ConfigError(f"unknown workload kind {kind!r}; expected one of {kinds}", file=file, field=at)
    required, optional = WORKLOAD_KEYS[kind]
    if not isinstance(args, dict):
        raise ConfigError(f"got {args!r}; expected a mapping with {', '.join(required)}", file=file, field=f"{at}.{kind}")
    unknown = sorted(set(args) - {*required, *optional})
    if unknown:
        raise ConfigError(f"unknown key {unknown[0]!r}; expected {', '.join((*required, *optional))}", file=file, field=f"{at}.{kind}.{unknown[0]}")
    missing = [k for k in required if k not in args]
    if complete and missing:
        raise ConfigError(f"missing {', '.join(missing)}", file=file, field=f"{at}.{kind}")


INT64_MAX = 2**63 - 1


def _whole_number(value: Any, field: str) -> int:
    """``value`` as an int in 0..2**63-1 (a count or bytes), else a ConfigError naming ``field``."""
    ok = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value) and float(value).is_integer()
    if not ok or not 0 <= int(value) <= INT64_MAX:
        raise ConfigError(f"got {value!r}; expected a whole number in 0..{INT64_MAX}", field=field)
    return int(value)


def _finite(value: Any, field: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value < math.inf:
        raise ConfigError(f"got {value!r}; expected a finite number of seconds >= 0", field=field)
    return float(value)


def build_workload(spec: dict[str, Any], npus: int) -> Sequence[WorkloadGraph]:
    """Rank graphs from a workload mapping (one key: collective, data_parallel, shift or chakra;
    ``generate`` needs the platform: :func:`evaluate`)."""
    from trainsim.workload import micro

    check_workload(spec)
    kind, args = next(iter(spec.items()))

    def whole(key: str, default: int | None = None) -> int:
        return _whole_number(args[key] if default is None else args.get(key, default), f"workload.{kind}.{key}")

    if kind == "collective":
        dims = args.get("involved_dim")
        return micro.collective_workload(npus, args["type"], whole("size_bytes"), involved_dim=tuple(dims) if dims else None)
    if kind == "data_parallel":
        times = {k: _finite(v, f"workload.{kind}.{k}") for k, v in args.items() if k in ("forward_s", "backward_s")}
        return micro.data_parallel_workload(npus, whole("layers"), whole("allreduce_bytes"), **times)
    if kind == "shift":
        return micro.shift_workload(npus, whole("size_bytes"), steps=whole("steps", 1), distance=whole("distance", 1))
    if kind == "chakra":
        from trainsim.workload.chakra import read_workload

        return read_workload(str(args), npus)
    raise ConfigError(f"a {kind!r} workload is built for its platform by evaluate()", field="workload")


def evaluate(document: dict[str, Any]) -> tuple[str, dict[str, Any], str | None]:
    """``(status, metrics, error)`` for one combination; never raises for a user's mistake."""
    from trainsim.config.platform import parse_platform
    from trainsim.system.api import simulate
    from trainsim.workload.graph import executed_flop

    backend = document.get("backend", "congestion_unaware")
    try:
        platform = parse_platform(document["platform"], "<sweep combination>")
        workload = document["workload"]
        if isinstance(workload, dict) and "generate" in workload:
            check_workload(workload)
            if document.get("compat"):
                platform = replace(platform, compat=document["compat"])
            makespan, ranks, events, flop = _generated_step(platform, workload["generate"], backend)
        else:
            graphs = build_workload(workload, platform.network.npus)
            result = simulate(platform, graphs, backend=backend, compat=document.get("compat"))
            makespan, ranks, events, flop = result.makespan_s, result.ranks, result.events, executed_flop(graphs)
    except InfeasibleError as exc:
        return "infeasible", {}, str(exc)
    except (TrainsimError, KeyError, ValueError, TypeError, ArithmeticError) as exc:
        return "error", {}, f"{type(exc).__name__}: {exc}"
    n = max(1, len(ranks))
    metrics = {
        "makespan_s": makespan,
        "finish_min_s": min((r.finish_s for r in ranks), default=0.0),
        "compute_mean_s": sum(r.compute_s for r in ranks) / n,
        "comm_mean_s": sum(r.comm_s for r in ranks) / n,
        "exposed_comm_max_s": max((r.exposed_comm_s for r in ranks), default=0.0),
        "events": events,
        "tflops_per_gpu": flop / n / makespan / 1e12 if makespan > 0 else 0.0,
    }
    return "ok", metrics, None


def _generated_step(platform: Any, args: dict[str, Any], backend: str) -> tuple[float, Sequence[Any], int, float]:
    """Generate a ``generate`` workload for ``platform`` and simulate one step: (makespan s,
    per-rank results, events, FLOPs executed by all ranks). The ranks of a replica slice stand
    for all."""
    from trainsim.compute import OperatorTimer, get_device
    from trainsim.system.symmetry.replica import simulate_generated
    from trainsim.workload.generate import Parallelism, generate
    from trainsim.workload.models import get_model

    spec = get_model(str(args["model"]), seq=int(args["seq"]) if args.get("seq") else None)
    par = Parallelism(**{k: args[k] for k in PARALLELISM_KEYS if k in args})
    timer = OperatorTimer(get_device(str(args.get("device", "A100")), getattr(platform, "devices", None)))
    workload = generate(spec, par, timer, network_sizes=platform.network.sizes, check_memory=bool(args.get("memory_check", True)))
    if par.offloads:
        from trainsim.memory.expansion import resolve_memory
        from trainsim.workload.generate.memory import check_offload

        check_offload(workload.memory, resolve_memory(platform.memory).capacity_per_npu(par.world))
    run = simulate_generated(platform, workload, backend=backend, replica_slice=not args.get("every_rank", False))
    return run.makespan_s, run.ranks, run.events, workload.executed_flop()


def run_batch(items: list[tuple[str, dict[str, Any], dict[str, Any]]]) -> list[dict[str, Any]]:
    """Evaluate a batch of ``(key, params, document)``; the unit of work sent to a worker."""
    rows = []
    for key, params, document in items:
        start = time.perf_counter()
        status, metrics, error = evaluate(document)
        rows.append(
            {
                "key": key,
                "params": params,
                "status": status,
                "metrics": metrics,
                "error": error,
                "inputs": document,
                "wall_s": time.perf_counter() - start,
            }
        )
    return rows
