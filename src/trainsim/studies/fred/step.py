"""One generated training step simulated on a wafer platform (studies layer; docs/fred.md).

The generator (``workload/generate``) gives every rank's graph (compute durations from its
operator timer, collectives with sizes and communicator groups, pipeline sends and receives).
The step is trainsim's simulator run on them (``system.api.simulate``, every rank) on the
study's platform file, whose ``system.collective_tuner: wafer`` prices each collective by the
fabric's flow programs with the groups that become ready in the same tick sharing the fabric
(``system/wafer_pricing.py``); compute, dependencies, the pipeline's schedule (its fill and
drain included) and the overlap of communication with compute are the simulator's.

In weight-streaming execution every rank's parameter shard is streamed in through the I/O
controllers for the forward and again for the backward pass, and the gradients are written back
(reduced on the way on FRED-B/D, reduce-scattered first elsewhere) instead of the graph's
data-parallel collectives (their size is set to 0 before simulating); streaming overlaps compute
layer by layer, so the step is the longer of the simulated step and the streaming, plus one
layer's streaming (the pipeline's fill).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from trainsim.config.types import Platform
from trainsim.enums import NodeType
from trainsim.studies.fred.fabrics import WaferNet
from trainsim.system.api import simulate
from trainsim.workload.generate.api import GeneratedWorkload
from trainsim.workload.generate.parallel import Parallelism

_DP_ROLES = ("dp", "edp", "world")


@dataclass(frozen=True)
class StepTime:
    """Seconds: the step, rank 0's compute, the step not covered by rank 0's compute, and the
    weight-streaming I/O (0 when weight stationary)."""

    step_s: float
    compute_s: float
    exposed_comm_s: float
    io_s: float


def _role_groups(work: GeneratedWorkload) -> tuple[dict[str, str], dict[str, list[list[int]]]]:
    """Role of each group id, and every role's groups."""
    role_of = {"": "world"}
    groups: dict[str, list[list[int]]] = {"world": [list(range(len(work.graphs)))]}
    for gid, members in work.comm_groups.items():
        role = work.group_names.get(gid, "other").split("[")[0]
        role_of[gid] = role
        groups.setdefault(role, []).append(list(members))
    return role_of, groups


def _without_dp_collectives(work: GeneratedWorkload) -> list:
    """The graphs with every data-parallel collective's size set to 0 (streaming replaces it)."""
    role_of, _ = _role_groups(work)
    out = []
    for g in work.graphs:
        dp = np.array([t == NodeType.COMM_COLL_NODE and role_of.get(name, "other") in _DP_ROLES for t, name in zip(g.types.tolist(), g.pg_name, strict=True)], dtype=bool)
        out.append(g.with_comm_sizes(np.where(dp, 0, g.comm_size)) if dp.any() else g)
    return out


def step_time(
    work: GeneratedWorkload, par: Parallelism, net: WaferNet, platform: Platform, *, streaming: bool = False, layers: int = 1, stream_passes: int = 1
) -> StepTime:
    """The step of ``work`` simulated on ``platform`` (module docstring); ``net``: the same
    fabric, for the streaming I/O; ``par``: what ``work`` was generated with; ``layers``: the
    model's layers (weight streaming fills its pipeline with one of them); ``stream_passes``:
    times the weights are streamed in (and gradients out) per step: 1 (the default: once per
    step, every micro-batch using them while on the wafer) or the micro-batch count (streamed
    again for every micro-batch; the sensitivity table of docs/fred.md)."""
    graphs = _without_dp_collectives(work) if streaming else work.graphs
    result = simulate(work.platform(platform), graphs)
    walk = result.makespan_s * 1e9
    compute = result.ranks[0].compute_s * 1e9
    io = 0.0
    if streaming:
        _, groups = _role_groups(work)
        shard = float(work.info["params"]) / (par.tp * par.pp) * par.param_bytes
        replicas = groups.get("dp") or groups["world"] if par.dp > 1 else [[r] for r in range(len(work.graphs))]
        demand = [(m, shard) for m in replicas]
        io = stream_passes * (2 * net.stream_in_ns(demand) + net.stream_out_ns([(m, shard / par.param_bytes * par.grad_bytes) for m in replicas]))
        walk = max(walk, io) + io / max(1, layers)
    return StepTime(walk / 1e9, compute / 1e9, max(0.0, walk - compute) / 1e9, io / 1e9)
