"""One generated training step priced on a wafer fabric (studies layer; docs/fred.md).

The generator (``workload/generate``) gives rank 0's graph (compute durations from its operator
timer, collectives with sizes and communicator groups, pipeline sends and receives). The step is
rank 0's graph list-scheduled on two lanes, compute and communication, each running one node at
a time in id order once its dependencies are done. A collective lasts what it takes on the
fabric with every sibling group of its role (all tensor-parallel groups, ...) running it at
once (:class:`~trainsim.studies.fred.fabrics.WaferNet`); a send or receive what the stage's
pairs take together. Pipeline parallelism adds the 1F1B fill and drain, ``(pp - 1)`` of a
micro-batch's compute. In weight-streaming execution every rank's parameter shard is streamed
in through the I/O controllers for the forward and again for the backward pass, and the
gradients are written back (reduced on the way on FRED-B/D, reduce-scattered first elsewhere)
instead of the graph's data-parallel collectives; streaming overlaps compute layer by layer,
so the step is the longer of the two plus one layer's streaming (the pipeline's fill).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from trainsim.collectives import wafer as W
from trainsim.enums import CommType, NodeType
from trainsim.errors import ConfigError
from trainsim.studies.fred.fabrics import WaferNet
from trainsim.workload.generate.api import GeneratedWorkload
from trainsim.workload.generate.parallel import Parallelism

_COMM = {int(CommType.ALL_REDUCE): W.ALL_REDUCE, int(CommType.ALL_GATHER): W.ALL_GATHER, int(CommType.REDUCE_SCATTER): W.REDUCE_SCATTER}
_DP_ROLES = ("dp", "edp", "world")


@dataclass(frozen=True)
class StepTime:
    """Seconds: the step, rank 0's compute, communication not hidden behind compute, and the
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


def step_time(work: GeneratedWorkload, par: Parallelism, net: WaferNet, *, streaming: bool = False, layers: int = 1) -> StepTime:
    """Rank 0's step on ``net`` (module docstring); ``par``: what ``work`` was generated with;
    ``layers``: the model's layers (weight streaming fills its pipeline with one of them)."""
    g = work.graphs[0]
    role_of, groups = _role_groups(work)
    ptr, dep = g.dep_indices()
    n = len(g)
    finish = np.zeros(n)
    comp_free = comm_free = 0.0
    compute = 0.0
    stage_pairs = [(r, int(work.graphs[r].comm_dst[np.flatnonzero(work.graphs[r].types == NodeType.COMM_SEND_NODE)[0]]))
                   for r in range(len(work.graphs)) if (work.stage_of_rank[r] if work.stage_of_rank else 0) == 0
                   and (work.graphs[r].types == NodeType.COMM_SEND_NODE).any()]
    types = g.types.tolist()
    for p in range(n):
        deps = dep[ptr[p]:ptr[p + 1]]
        ready = float(finish[deps[deps >= 0]].max()) if deps.size else 0.0
        kind = types[p]
        if kind == NodeType.COMP_NODE:
            dur = float(g.duration_s[p]) * 1e9
            compute += dur
            start = max(ready, comp_free)
            finish[p] = comp_free = start + dur
            continue
        if kind == NodeType.COMM_COLL_NODE:
            role = role_of.get(g.pg_name[p], "other")
            comm = _COMM.get(int(g.comm_type[p]))
            if comm is None:
                raise ConfigError(f"the FRED study prices all-reduce, all-gather and reduce-scatter; node {int(g.ids[p])} is {CommType(int(g.comm_type[p])).name}")
            if streaming and role in _DP_ROLES:
                dur = 0.0  # gradients leave through the I/O controllers instead (below)
            else:
                sib = groups.get(role, [])
                dur = net.collective_ns(sib, [role] * len(sib), comm, float(g.comm_size[p]))
        elif kind in (NodeType.COMM_SEND_NODE, NodeType.COMM_RECV_NODE):
            dur = net.p2p_ns(stage_pairs, float(g.comm_size[p])) if stage_pairs else 0.0
        else:
            dur = 0.0
        start = max(ready, comm_free)
        finish[p] = comm_free = start + dur
    walk = float(finish.max()) if n else 0.0
    if par.pp > 1:
        walk += (par.pp - 1) * compute / max(1, int(work.info.get("microbatches", 1)))
    io = 0.0
    if streaming:
        shard = float(work.info["params"]) / (par.tp * par.pp) * par.param_bytes
        replicas = groups.get("dp") or groups["world"] if par.dp > 1 else [[r] for r in range(len(work.graphs))]
        demand = [(m, shard) for m in replicas]
        io = 2 * net.stream_in_ns(demand) + net.stream_out_ns([(m, shard / par.param_bytes * par.grad_bytes) for m in replicas])
        walk = max(walk, io) + io / max(1, layers)
    return StepTime(walk / 1e9, compute / 1e9, max(0.0, walk - compute) / 1e9, io / 1e9)
