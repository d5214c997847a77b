"""Expert parallelism (GShard-style all-to-all dispatch and combine) and expert groups."""

from trainsim.workload.generate import Parallelism, generate
from trainsim.workload.models import get_model

from .conftest import collectives, toy


def test_moe_all_to_alls_per_layer_and_pass():
    spec = toy(experts=8, top_k=2, layers=2)
    b, ep, dp = 1, 4, 4
    w = generate(spec, Parallelism(dp=dp, ep=ep, micro_batch=b))
    g = w.graphs[0]
    a2a = [c for c in collectives(g) if c[1] == "ALL_TO_ALL"]
    assert len(a2a) == 2 * 2 * 2  # dispatch + combine, 2 layers, forward + backward
    assert {c[2] for c in a2a} == {b * spec.seq * spec.top_k * spec.hidden * 2}
    assert {c[3] for c in a2a} == {""}  # EP group = all 4 ranks
    # expert weights are not data-parallel beyond EP: no expert-gradient reduction here
    assert not collectives(g, "expert_grad")


def test_expert_groups_inside_data_parallel_group():
    spec = toy(experts=4, top_k=1)
    w = generate(spec, Parallelism(dp=8, ep=4, micro_batch=1))
    groups = {w.group_names[k]: v for k, v in w.comm_groups.items()}
    assert groups["ep[0]"] == [0, 1, 2, 3] and groups["ep[1]"] == [4, 5, 6, 7]
    assert groups["edp[0]"] == [0, 4]
    assert len(collectives(w.graphs[0], "expert_grad_allreduce")) == 1


def test_mixtral_tp_needs_sp():
    import pytest

    from trainsim.errors import ConfigError

    with pytest.raises(ConfigError, match="sequence parallelism"):
        generate(get_model("mixtral-8x7b"), Parallelism(tp=2, micro_batch=1))
