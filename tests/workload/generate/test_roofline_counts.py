"""Generated COMP nodes carry a real operation count and byte count, so a roofline can time
each of them. In ASTRA-sim's roofline, `num_ops = 0` makes 0 / 0, and no rank ever finishes.
An embedding lookup counts one operation per element it writes, so its intensity is small and
it is memory-bound (docs/generator.md, "Operators and time")."""

from __future__ import annotations

import math

import numpy as np
import pytest

from trainsim.compute import OperatorTimer, roofline_time_ns
from trainsim.config.types import CollectiveImpl, DimSpec, NetworkSpec, Platform, SystemSpec
from trainsim.enums import NodeType
from trainsim.system.api import simulate
from trainsim.workload.generate.api import generate
from trainsim.workload.generate.parallel import Parallelism
from trainsim.workload.models.zoo import get_model

from .conftest import toy

CASES = {
    "dlrm": ("dlrm", Parallelism(dp=4, micro_batch=64)),
    "gnmt": ("gnmt", Parallelism(dp=2, micro_batch=4)),
    "resnet50": ("resnet50", Parallelism(dp=2, micro_batch=4)),
    "toy-tp-sp-op": (toy(), Parallelism(tp=2, sp=True, dp=2, micro_batch=1, global_batch=4, granularity="op")),
    "toy-pp-block": (toy(layers=4), Parallelism(tp=2, pp=2, micro_batch=1, global_batch=4)),
    "toy-zero3-recompute": (toy(), Parallelism(dp=2, zero=3, micro_batch=1, global_batch=2, granularity="op", recompute="full")),
    "toy-moe": (toy(experts=4, top_k=2), Parallelism(tp=2, sp=True, ep=2, dp=2, micro_batch=1, global_batch=2, granularity="op")),
}


def _generated(name):
    model, par = CASES[name]
    model = get_model(model) if isinstance(model, str) else model
    return generate(model, par, OperatorTimer("H100"), check_memory=False)


@pytest.mark.parametrize("name", CASES)
def test_every_generated_compute_node_has_ops_and_bytes(name):
    wl = _generated(name)
    for graph in {id(g): g for g in wl.graphs}.values():
        comp = graph.types == NodeType.COMP_NODE
        names = np.asarray(graph.names)
        assert comp.any()
        assert not list(names[comp & (graph.num_ops <= 0)]), "num_ops 0: ASTRA-sim's roofline divides 0 by 0"
        assert not list(names[comp & (graph.tensor_size <= 0)]), "tensor_size 0: ASTRA-sim skips the node"


def test_an_embedding_lookup_is_memory_bound_with_one_operation_per_element():
    graph = _generated("dlrm").graphs[0]
    pos = next(i for i, n in enumerate(graph.names) if n == "mb0.embedding_lookup")
    tables, b, world, dim, elem_bytes = 26, 64, 4, 128, 4
    elements = -(-tables // world) * b * world * dim  # pooling 1: one row per table and sample
    assert graph.num_ops[pos] == elements
    assert graph.tensor_size[pos] == elements * elem_bytes * 2  # rows read, pooled rows written
    # far below any device's ridge point, so the roofline gives bytes / bandwidth
    peak, bw = 989e12, 3.35e12
    assert roofline_time_ns(graph.num_ops[pos], graph.tensor_size[pos], peak, bw, compat_astra=True) == math.trunc(
        graph.tensor_size[pos] / bw * 1e9
    )


@pytest.mark.parametrize("name", ["dlrm", "gnmt"])
def test_roofline_mode_times_every_generated_compute_node(name):
    """trainsim's roofline mode (ASTRA-sim's `roofline-enabled`) runs a generated step to the
    end, and every compute node takes time, embedding lookups included."""
    wl = _generated(name)
    peak, bw = 989e12, 3.35e12
    system = SystemSpec(
        roofline_enabled=True,
        peak_perf=peak,
        local_mem_bw=bw,
        preferred_dataset_splits=4,
        implementations=CollectiveImpl(*((("ring",),) * 4)),
    )
    n = len(wl.graphs)
    platform = wl.platform(Platform(NetworkSpec((DimSpec("Ring", n, 50 * 2**30, 500.0),)), system, compat="astra"))
    result = simulate(platform, wl.graphs)
    graph = wl.graphs[0]
    comp = np.flatnonzero(graph.types == NodeType.COMP_NODE)
    times = [roofline_time_ns(graph.num_ops[p], graph.tensor_size[p], peak, bw, compat_astra=True) for p in comp]
    assert min(times) > 0
    assert [r.compute_s for r in result.ranks] == [pytest.approx(sum(times) * 1e-9, rel=1e-12)] * n
    assert all(r.finish_s >= r.compute_s > 0 for r in result.ranks)
