"""A generated GPT-style step on a 3-tier Clos (a clos fabric's derived dims, with a tapered
top tier) takes the replica fast path and gives the every-rank result."""

from dataclasses import replace

import pytest

from trainsim.compute import OperatorTimer
from trainsim.config.platform import parse_platform
from trainsim.system.api import simulate
from trainsim.system.symmetry.replica import simulate_generated
from trainsim.workload.generate import Parallelism, generate
from trainsim.workload.models import get_model

TIERS = [
    {"name": "node", "size": 2, "bandwidth_gbps": 300, "latency_ns": 700},
    {"name": "leaf", "size": 2, "bandwidth_gbps": "200 Gb/s", "latency_ns": 1000, "rail": True},
    {"name": "spine", "size": 2, "latency_ns": 1000, "switches": 2},
    {"name": "core", "size": 2, "latency_ns": 1000, "oversubscription": 4},
]


def _platform():
    doc = {"network": {"fabric": {"kind": "clos", "tiers": TIERS}},
           "system": {"all_reduce": ["ring"], "all_gather": ["ring"], "reduce_scatter": ["ring"]}}
    return parse_platform(doc, "<clos>")


# (pp, dp, extra): a data-parallel group of 4 with TP 2 (ranks 0, 2, 4, 6) crosses tiers
# unevenly under the default mode's path rule, so its reduce-scatter ends at different times on
# its members: replicas 0 and 1 run and the others repeat them (test_replica.py)
@pytest.mark.parametrize(("pp", "dp", "extra"), [(2, 4, {}), (4, 2, {"zero": 1}), (2, 4, {"zero": 1})])
def test_generated_step_on_a_clos_takes_the_replica_path(pp, dp, extra):
    platform = _platform()
    assert platform.network.sizes == (2, 2, 2, 2)
    model = replace(get_model("megatron-1.7b"), layers=4, seq=512)
    par = Parallelism(tp=2, pp=pp, dp=dp, micro_batch=1, global_batch=16, recompute="full", **extra)
    w = generate(model, par, OperatorTimer("A100"), network_sizes=platform.network.sizes)
    full = simulate(w.platform(platform), w.graphs)
    run = simulate_generated(platform, w)
    assert run.mode == "replica slice"
    assert run.result.makespan_s == pytest.approx(full.makespan_s, rel=1e-12)
    for got, want in zip(run.result.ranks, full.ranks, strict=True):
        for name in ("finish_s", "compute_s", "comm_s", "exposed_comm_s"):
            assert getattr(got, name) == pytest.approx(getattr(want, name), rel=1e-9, abs=1e-12), name
    # the tapered top tier is on the data-parallel path: without the taper the step is faster
    flat = [dict(t) for t in TIERS]
    flat[3]["oversubscription"] = 1
    untapered = parse_platform({"network": {"fabric": {"kind": "clos", "tiers": flat}},
                                "system": {"all_reduce": ["ring"], "all_gather": ["ring"], "reduce_scatter": ["ring"]}}, "<flat>")
    assert simulate_generated(untapered, w).result.makespan_s < run.result.makespan_s
