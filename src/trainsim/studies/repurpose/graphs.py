"""Per-worker Chakra-style execution graphs of a deployment, for the simulator.

Place: ``trainsim.studies.repurpose``; turns a plan (:mod:`.plan`) into one
:class:`~trainsim.workload.graph.WorkloadGraph` per worker with the workload layer's
:class:`~trainsim.workload.graph.GraphBuilder`, so that ``trainsim run`` can execute it.

The graphs run one batch of ``batch`` samples through the plan. Activation transfers are
batched per layer: one message per (source, destination) pair per stage, carrying every
scalar that pair moves for the whole batch. For each stage ``s`` of the plan and each worker
``k``, in this order:

- a ``COMM_SEND_NODE`` per destination that ``k`` sends to in stage ``s`` (``comm_src = k``,
  ``comm_dst``, ``comm_tag = s``, ``comm_size = scalars per sample x batch x 4`` bytes),
  depending on ``k``'s last compute node (the producer of what is sent; none for the sensor
  data of stage 0);
- a ``COMM_RECV_NODE`` per source that ``k`` receives from in stage ``s`` (same attributes);
- a ``COMP_NODE`` when ``k`` computes in stage ``s`` (``num_ops = FLOP per sample x batch``,
  ``tensor_size = weight bytes + batch x activation bytes``, ``duration_s = num_ops / peak``,
  used when the platform's roofline is off), depending on ``k``'s previous compute node and on
  the stage's receives.

Node ids are 0, 1, 2, ... per worker. Units: seconds, bytes, FLOP (as the workload layer).
"""

from __future__ import annotations

from trainsim.enums import NodeType
from trainsim.errors import ConfigError
from trainsim.studies.repurpose.comm import BYTES_PER_SCALAR
from trainsim.studies.repurpose.plan import Stage
from trainsim.workload.graph import GraphBuilder, WorkloadGraph


def build_graphs(
    stages: tuple[Stage, ...], peak_flops: float, source: str = "repurpose", batch: int = 1
) -> list[WorkloadGraph]:
    """One graph per worker for ``stages`` and ``batch`` samples; compute durations at
    ``peak_flops`` FLOP/s."""
    if not peak_flops > 0:
        raise ConfigError(
            f"{peak_flops!r}: expected a peak compute rate > 0 FLOP/s", field="peak_flops"
        )
    if not (isinstance(batch, int) and batch >= 1):
        raise ConfigError(f"{batch!r}: expected a batch of at least 1 sample", field="batch")
    workers = stages[0].workers if stages else 0
    builders = [GraphBuilder(source=source, rank=k) for k in range(workers)]
    next_id = [0] * workers
    last_comp: list[int | None] = [None] * workers

    def add(k: int, node_type: int, name: str, **kw: object) -> int:
        nid = builders[k].add(next_id[k], node_type, name, **kw)  # type: ignore[arg-type]
        next_id[k] += 1
        return nid

    for s, stage in enumerate(stages):
        recvs: list[list[int]] = [[] for _ in range(workers)]
        for src in range(workers):
            for dst in range(workers):
                n = int(stage.transfers[src, dst])
                if n == 0 or src == dst:
                    continue
                attrs = dict(
                    comm_size=n * batch * BYTES_PER_SCALAR, comm_src=src, comm_dst=dst, comm_tag=s
                )
                prod = last_comp[src]
                add(
                    src,
                    NodeType.COMM_SEND_NODE,
                    f"{stage.name}.send.{src}->{dst}",
                    data_deps=() if prod is None else (prod,),
                    **attrs,
                )
                recvs[dst].append(
                    add(dst, NodeType.COMM_RECV_NODE, f"{stage.name}.recv.{src}->{dst}", **attrs)
                )
        mem = stage.mem_bytes(batch)
        for k in range(workers):
            flops = float(stage.flops[k]) * batch
            if flops <= 0:
                continue
            deps = list(recvs[k]) if last_comp[k] is None else [last_comp[k], *recvs[k]]
            last_comp[k] = add(
                k,
                NodeType.COMP_NODE,
                f"{stage.name}.comp",
                num_ops=flops,
                tensor_size=int(mem[k]),
                duration_s=flops / peak_flops,
                data_deps=deps,
            )
    return [b.build() for b in builders]
