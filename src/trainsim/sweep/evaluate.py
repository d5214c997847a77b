"""Runs one resolved combination: inputs document -> status and metrics (executed in workers).

Metric names (seconds unless said): ``makespan_s``, ``finish_min_s``, ``compute_mean_s``,
``comm_mean_s``, ``exposed_comm_max_s``, ``events`` (count).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from trainsim.errors import ConfigError, InfeasibleError, TrainsimError
from trainsim.workload.graph import WorkloadGraph

METRICS = ("makespan_s", "finish_min_s", "compute_mean_s", "comm_mean_s", "exposed_comm_max_s", "events")


WORKLOAD_KEYS = {
    "collective": (("type", "size_bytes"), ("involved_dim",)),
    "data_parallel": (("layers", "allreduce_bytes"), ("forward_s", "backward_s")),
    "shift": (("size_bytes",), ("steps", "distance")),
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


def build_workload(spec: dict[str, Any], npus: int) -> Sequence[WorkloadGraph]:
    """Rank graphs from a workload mapping (one key: collective, data_parallel, shift or chakra)."""
    from trainsim.workload import micro

    check_workload(spec)
    kind, args = next(iter(spec.items()))
    if kind == "collective":
        dims = args.get("involved_dim")
        return micro.collective_workload(npus, args["type"], int(args["size_bytes"]), involved_dim=tuple(dims) if dims else None)
    if kind == "data_parallel":
        return micro.data_parallel_workload(npus, int(args["layers"]), int(args["allreduce_bytes"]), **{k: float(v) for k, v in args.items() if k in ("forward_s", "backward_s")})
    if kind == "shift":
        return micro.shift_workload(npus, int(args["size_bytes"]), steps=int(args.get("steps", 1)), distance=int(args.get("distance", 1)))
    if kind == "chakra":
        from trainsim.workload.chakra import read_workload

        return read_workload(str(args), npus)
    raise AssertionError(kind)  # check_workload knows every kind


def evaluate(document: dict[str, Any]) -> tuple[str, dict[str, Any], str | None]:
    """``(status, metrics, error)`` for one combination; never raises for a user's mistake."""
    from trainsim.config.platform import parse_platform
    from trainsim.system.api import simulate

    try:
        platform = parse_platform(document["platform"], "<sweep combination>")
        graphs = build_workload(document["workload"], platform.network.npus)
        result = simulate(platform, graphs, backend=document.get("backend", "congestion_unaware"), compat=document.get("compat"))
    except InfeasibleError as exc:
        return "infeasible", {}, str(exc)
    except (TrainsimError, KeyError, ValueError, TypeError) as exc:
        return "error", {}, f"{type(exc).__name__}: {exc}"
    ranks = result.ranks
    n = max(1, len(ranks))
    metrics = {
        "makespan_s": result.makespan_s,
        "finish_min_s": min((r.finish_s for r in ranks), default=0.0),
        "compute_mean_s": sum(r.compute_s for r in ranks) / n,
        "comm_mean_s": sum(r.comm_s for r in ranks) / n,
        "exposed_comm_max_s": max((r.exposed_comm_s for r in ranks), default=0.0),
        "events": result.events,
    }
    return "ok", metrics, None


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
