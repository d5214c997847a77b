"""ASTRA-sim 1.0's training loop as graphs: involved dimensions per mode, acyclicity, passes,
transformer boundary and recomputation, per-layer parallelism, DLRM, shared rank arrays."""

from __future__ import annotations

import pytest

from tests.workload.astra_text.helpers import (
    TEXT_DIR,
    deps_by_position,
    topological_order_exists,
)
from trainsim.enums import CommType, NodeType
from trainsim.errors import ConfigError, TraceError
from trainsim.workload.astra_text import parse_text, parse_text_workload, text_to_graphs
from trainsim.workload.graph import WorkloadGraph

T, F = True, False
FILES = {
    "microAllReduce": None,
    "microAllToAll": None,
    "Resnet50_DataParallel": None,
    "DLRM_HybridParallel": None,
    "MLP_ModelParallel": None,
    "MLP_HybridParallel_Data_Model": None,
    "MLP_HybridParallel_Model_Data": None,
    "Transformer_HybridParallel": (4, 2),
    "Transformer_HybridParallel_Fwd_In_Bckwd": (4, 2),
    "sample_per_layer_parallel_HybridCustomized": None,
}


def graph_of(name: str, *, sizes=(2, 4), passes: int = 1, update_delays: bool = True, npus=None):
    wl = parse_text_workload(TEXT_DIR / f"{name}.txt")
    npus = npus or (sizes[0] * sizes[1] if sizes else 8)
    return text_to_graphs(
        wl, npus, dim_sizes=sizes, num_passes=passes, update_delays=update_delays
    )[0]


def collectives(g: WorkloadGraph) -> list[tuple[str, str, tuple[bool, ...]]]:
    """(name, phase, involved dims) of every collective; the phase is read off the compute
    node that issued it (MICRO's have none: weight gradient)."""
    index = g.position_of()
    out = []
    for pos in range(len(g)):
        if g.types[pos] != NodeType.COMM_COLL_NODE:
            continue
        deps = g.deps_of(pos)
        issuer = g.names[index[deps[0]]] if deps else "_BWD_WG"
        phase = "fwd" if "_FWD" in issuer else "ig" if issuer.endswith("_BWD_IG") else "wg"
        out.append((g.names[pos], phase, g.involved_dim[pos]))
    return out


def dims_by_phase(g: WorkloadGraph) -> dict[str, set[tuple[bool, ...]]]:
    out: dict[str, set[tuple[bool, ...]]] = {}
    for _, phase, dims in collectives(g):
        out.setdefault(phase, set()).add(dims)
    return out


# dims 0 and 1 of a 2 x 4 network (a 4 x 2 one for the transformers, model_parallel_NPU_group 4)
MODE_DIMS = {
    "microAllReduce": {"wg": {(T, T)}},
    "Resnet50_DataParallel": {"wg": {(T, T)}},
    "MLP_ModelParallel": {"fwd": {(T, T)}, "ig": {(T, T)}},
    "MLP_HybridParallel_Data_Model": {"fwd": {(T, F)}, "ig": {(T, F)}, "wg": {(F, T)}},
    "MLP_HybridParallel_Model_Data": {"fwd": {(F, T)}, "ig": {(F, T)}, "wg": {(T, F)}},
    "Transformer_HybridParallel": {"fwd": {(T, F)}, "ig": {(T, F)}, "wg": {(F, T)}},
    "Transformer_HybridParallel_Fwd_In_Bckwd": {"fwd": {(T, F)}, "ig": {(T, F)}, "wg": {(F, T)}},
    # the embedding's all-to-alls on every dimension, the MLPs' weight gradients on every one
    "DLRM_HybridParallel": {"fwd": {(T, T)}, "ig": {(T, T)}, "wg": {(T, T)}},
}


@pytest.mark.parametrize("name", sorted(MODE_DIMS))
def test_involved_dims_per_mode(name: str) -> None:
    sizes = FILES[name] or (2, 4)
    assert dims_by_phase(graph_of(name, sizes=sizes)) == MODE_DIMS[name]


def test_involved_dims_default_to_astra_sim_1s_ten() -> None:
    g = graph_of("MLP_HybridParallel_Data_Model", sizes=None)
    assert dims_by_phase(g) == {
        "fwd": {(T,) + (F,) * 9},
        "ig": {(T,) + (F,) * 9},
        "wg": {(F,) + (T,) * 9},
    }
    wl = parse_text_workload(TEXT_DIR / "Resnet50_DataParallel.txt")
    three = text_to_graphs(wl, 8, network_dims=3)[0]
    assert {d for _, _, d in collectives(three)} == {(T, T, T)}


def test_dlrm_embedding_uses_every_dimension() -> None:
    g = graph_of("DLRM_HybridParallel")
    embedding = [(phase, dims) for name, phase, dims in collectives(g) if "Embedding" in name]
    assert embedding == [("fwd", (T, T)), ("ig", (T, T))]


def test_customized_layers_use_their_own_parallelism() -> None:
    g = graph_of("sample_per_layer_parallel_HybridCustomized")
    found = {
        (name.removeprefix("COMM_COLL_NODE_").rsplit("_", 1)[0], phase): dims
        for name, phase, dims in collectives(g)
    }
    assert found == {
        ("layer_64_2_mlp0", "fwd"): (T, F),  # HYBRID_DATA_MODEL
        ("layer_64_2_mlp0", "wg"): (F, T),  # its IG is the first layer's: not issued
        ("layer_64_2_mlp1", "fwd"): (F, T),  # HYBRID_MODEL_DATA
        ("layer_64_2_mlp1", "ig"): (F, T),
        ("layer_64_2_mlp1", "wg"): (T, F),
        ("layer_64_2_mlp2", "wg"): (T, T),  # DATA
        ("layer_64_2_mlp3", "fwd"): (T, T),  # MODEL
        ("layer_64_2_mlp3", "ig"): (T, T),
        ("layer_64_2_mlp4", "fwd"): (T, T),  # MODEL
        ("layer_64_2_mlp4", "ig"): (T, T),
        ("layer_64_2_mlp5", "fwd"): (F, T),  # HYBRID_MODEL_DATA
        ("layer_64_2_mlp5", "ig"): (F, T),
        ("layer_64_2_mlp5", "wg"): (T, F),
    }
    ig = [int(g.comm_type[p]) for p in range(len(g)) if g.names[p].endswith("REDUCESCATTER")]
    assert ig and set(ig) == {CommType.REDUCE_SCATTER}


def test_collective_on_dimensions_of_one_rank_is_not_issued() -> None:
    # HYBRID_DATA_MODEL's forward and input-gradient collectives use dimension 0 only
    g = graph_of("MLP_HybridParallel_Data_Model", sizes=(1, 8))
    assert dims_by_phase(g) == {"wg": {(F, T)}}
    # ... and its weight gradients use dimensions >= 1, absent on a 1-D network
    one_d = text_to_graphs(
        parse_text_workload(TEXT_DIR / "MLP_HybridParallel_Data_Model.txt"), 8, dim_sizes=[8]
    )[0]
    assert dims_by_phase(one_d) == {"fwd": {(T,)}, "ig": {(T,)}}


@pytest.mark.parametrize("passes", [1, 3])
@pytest.mark.parametrize("name", sorted(FILES))
def test_graphs_are_acyclic_and_depend_only_on_earlier_nodes(name: str, passes: int) -> None:
    g = graph_of(name, sizes=FILES[name] or (2, 4), passes=passes)
    assert topological_order_exists(g)
    assert g.ids.tolist() == list(range(len(g)))
    assert all(max(deps, default=-1) < pos for pos, deps in enumerate(deps_by_position(g)))
    single = graph_of(name, sizes=FILES[name] or (2, 4))
    assert len(g) == passes * len(single)


def test_durations_are_seconds() -> None:
    g = graph_of("Resnet50_DataParallel", update_delays=True)
    pos = g.names.index("COMP_NODE_conv1_FWD")
    assert g.duration_s[pos] == 13003e-9
    update = g.names.index("COMP_NODE_conv1_WG_UPDATE")
    assert g.duration_s[update] == 3229e-9
    assert g.is_cpu_op[update]
    assert not g.is_cpu_op[pos]


@pytest.mark.parametrize(
    ("name", "update_prefix"),
    [
        ("Resnet50_DataParallel", "WG"),
        ("MLP_HybridParallel_Data_Model", "WG"),
        ("MLP_ModelParallel", None),
    ],
)
def test_next_pass_forward_waits_for_weight_gradient_collective_and_update(
    name: str, update_prefix
) -> None:
    g = graph_of(name, passes=2)
    index = g.position_of()
    wl = parse_text_workload(TEXT_DIR / f"{name}.txt")
    half = len(g) // 2
    for layer in wl.layers:
        second_fwd = g.names.index(f"COMP_NODE_{layer.name}_FWD", half)
        deps = {g.names[index[d]] for d in g.deps_of(second_fwd)}
        if update_prefix:  # the update-delay node after the weight-gradient collective
            assert f"COMP_NODE_{layer.name}_{update_prefix}_UPDATE" in deps
        else:  # MODEL: no weight-gradient collective; the chain from the last pass suffices
            assert g.names.index(f"COMP_NODE_{layer.name}_BWD_WG") < second_fwd


def test_micro_issues_first_layer_collective_once_per_pass() -> None:
    g = graph_of("microAllToAll", passes=3, update_delays=False)
    assert g.names == ["COMM_COLL_NODE_conv1_ALLTOALL"] * 3
    assert all(not d for d in deps_by_position(g))
    text = "MICRO\n2\na -1 5 NONE 0 5 NONE 0 5 ALLREDUCE 64 0\nb -1 5 NONE 0 5 NONE 0 5 ALLREDUCE 64 0\n"
    g2 = text_to_graphs(parse_text(text), 2)[0]
    assert g2.names == ["COMM_COLL_NODE_a_ALLREDUCE"]
    assert "only the first layer" in g2.warnings[0]


def test_data_parallel_skips_first_layer_input_gradient() -> None:
    g = graph_of("Resnet50_DataParallel", update_delays=False)
    assert "COMP_NODE_conv1_BWD_IG" not in g.names
    assert g.names[-2:] == ["COMP_NODE_conv1_BWD_WG", "COMM_COLL_NODE_conv1_ALLREDUCE"]


def test_transformer_input_gradient_collective_blocks_and_first_layer_keeps_it() -> None:
    text = (
        "HYBRID_TRANSFORMER model_parallel_NPU_group: 2\n2\n"
        "emb -1 10 NONE 0 20 ALLREDUCE 64 30 ALLREDUCE 128 0\n"
        "q -1 10 ALLGATHER 32 20 ALLREDUCE 64 30 ALLREDUCE 128 0\n"
    )
    g = text_to_graphs(parse_text(text), 4, dim_sizes=[2, 2])[0]
    index = g.position_of()
    names = g.names
    deps = {names[p]: sorted(names[index[d]] for d in g.deps_of(p)) for p in range(len(g))}
    # the weight gradient waits for the (blocking) input-gradient collective
    assert names.count("COMM_COLL_NODE_emb_ALLREDUCE") == 2  # emb's IG and WG collectives
    q_ig_comm = names.index("COMM_COLL_NODE_q_ALLREDUCE")
    assert deps["COMP_NODE_q_BWD_WG"] == [names[q_ig_comm]]
    assert deps["COMP_NODE_emb_BWD_IG"] == ["COMP_NODE_q_BWD_WG"]
    emb_ig_comm = names.index("COMM_COLL_NODE_emb_ALLREDUCE")
    assert deps["COMP_NODE_emb_BWD_WG"] == [names[emb_ig_comm]]
    assert g.involved_dim[q_ig_comm] == (T, F)


def test_fwd_in_bckwd_recomputes_from_the_checkpoint_below_each_initiating_layer() -> None:
    g = graph_of("Transformer_HybridParallel_Fwd_In_Bckwd", sizes=(4, 2), update_delays=False)
    wl = parse_text_workload(TEXT_DIR / "Transformer_HybridParallel_Fwd_In_Bckwd.txt")
    names = [layer.name for layer in wl.layers]
    computes = [n for n in g.names if n.startswith("COMP_NODE_")]
    backward = computes[len(names) :]
    expected: list[str] = []
    for i in reversed(range(len(names))):
        start = {19: 11, 10: 2}.get(i)
        if start is not None:
            expected += [f"COMP_NODE_{names[k]}_FWD_RECOMPUTE" for k in range(start, i)]
        expected += [f"COMP_NODE_{names[i]}_BWD_IG", f"COMP_NODE_{names[i]}_BWD_WG"]
    assert backward == expected
    # the recomputed forward collectives run again, and block
    assert "COMM_COLL_NODE_concat2_RECOMPUTE_ALLREDUCE" in g.names
    index = g.position_of()
    ig19 = g.names.index("COMP_NODE_layerNorm2_BWD_IG")
    (before,) = g.deps_of(ig19)
    assert g.names[index[before]] == "COMM_COLL_NODE_Xw2b2_RECOMPUTE_ALLREDUCE"
    assert g.names.count("COMM_COLL_NODE_concat2_RECOMPUTE_ALLREDUCE") == 1
    assert g.names.count("COMM_COLL_NODE_concat1_RECOMPUTE_ALLREDUCE") == 1


def _deps(g: WorkloadGraph, name: str, start: int = 0) -> set[str]:
    index = g.position_of()
    return {g.names[index[d]] for d in g.deps_of(g.names.index(name, start))}


def test_dlrm_all_to_all_waits_follow_astra_sim_1() -> None:
    g = graph_of("DLRM_HybridParallel", passes=2)
    # the forward all-to-all is awaited after the last bottom layer (4), before the top MLP
    assert _deps(g, "COMP_NODE_MLP_Top_0_FWD") == {
        "COMP_NODE_MLP_Bottom_3_FWD",
        "COMP_NODE_Embedding_FWD_UPDATE",
    }
    assert _deps(g, "COMP_NODE_MLP_Bottom_3_FWD") == {"COMP_NODE_MLP_Bottom_2_FWD"}
    # the backward all-to-all is issued after the input gradient of the layer above (5) ...
    bwd_a2a = g.names.index(
        "COMM_COLL_NODE_Embedding_ALLTOALL", g.names.index("COMP_NODE_MLP_Top_0_BWD_IG")
    )
    assert _deps(g, "COMM_COLL_NODE_Embedding_ALLTOALL", bwd_a2a) == {"COMP_NODE_MLP_Top_0_BWD_IG"}
    # ... does not hold back the embedding's weight gradient, but does the next pass
    assert _deps(g, "COMP_NODE_Embedding_BWD_WG") == {"COMP_NODE_MLP_Bottom_0_BWD_IG"}
    next_fwd = g.names.index("COMP_NODE_Embedding_FWD", 1)
    assert _deps(g, "COMP_NODE_Embedding_FWD", next_fwd) == {
        "COMP_NODE_Embedding_BWD_WG",
        "COMP_NODE_Embedding_IG_UPDATE",
    }
    # the embedding has no weight-gradient collective (NONE); the MLPs' are all-reduces
    assert "COMM_COLL_NODE_Embedding_NONE" not in g.names


def test_dlrm_enhanced_does_not_wait_for_the_backward_all_to_all() -> None:
    text = (
        (TEXT_DIR / "DLRM_HybridParallel.txt")
        .read_text()
        .replace("HYBRID_DLRM", "HYBRID_DLRM_ENHANCED", 1)
    )
    g = text_to_graphs(parse_text(text), 8, dim_sizes=[2, 4], num_passes=2)[0]
    next_fwd = g.names.index("COMP_NODE_Embedding_FWD", 1)
    assert _deps(g, "COMP_NODE_Embedding_FWD", next_fwd) == {"COMP_NODE_Embedding_BWD_WG"}


def test_distributed_inference_is_forward_with_blocking_collectives() -> None:
    text = "DISTRIBUTED_INFERENCE\n2\na -1 5 ALLGATHER 64 5 NONE 0 5 ALLREDUCE 64 0\nb -1 7 NONE 0 5 NONE 0 5 ALLREDUCE 64 0\n"
    g = text_to_graphs(parse_text(text), 4, num_passes=2)[0]
    assert g.names == ["COMP_NODE_a_FWD", "COMM_COLL_NODE_a_ALLGATHER", "COMP_NODE_b_FWD"] * 2
    assert deps_by_position(g) == [set(), {0}, {1}, {2}, {3}, {4}]


def test_ranks_share_one_graphs_arrays() -> None:
    wl = parse_text_workload(TEXT_DIR / "Resnet50_DataParallel.txt")
    graphs = text_to_graphs(wl, 1024, dim_sizes=[32, 32])
    assert [g.rank for g in graphs] == list(range(1024))
    assert all(g.ids is graphs[0].ids and g.duration_s is graphs[0].duration_s for g in graphs)
    assert graphs[7].source == str(TEXT_DIR / "Resnet50_DataParallel.txt")


def test_transformer_boundary_from_the_dimension_sizes() -> None:
    wl = parse_text_workload(TEXT_DIR / "Transformer_HybridParallel.txt")  # group 4
    assert dims_by_phase(text_to_graphs(wl, 16, dim_sizes=[2, 2, 4])[0]) == {
        "fwd": {(T, T, F)},
        "ig": {(T, T, F)},
        "wg": {(F, F, T)},
    }
    # the whole machine is the model-parallel group: no weight-gradient collective at all
    assert set(dims_by_phase(text_to_graphs(wl, 4, dim_sizes=[4])[0])) == {"fwd", "ig"}
    one = parse_text(
        "HYBRID_TRANSFORMER model_parallel_NPU_group: 1\n1\na -1 1 ALLGATHER 8 1 ALLREDUCE 8 1 ALLREDUCE 8 0\n"
    )
    assert dims_by_phase(text_to_graphs(one, 8)[0]) == {"wg": {(T,) * 10}}


def test_transformer_boundary_errors() -> None:
    wl = parse_text_workload(TEXT_DIR / "Transformer_HybridParallel.txt")  # group 4
    with pytest.raises(TraceError, match="does not end on a dimension boundary") as info:
        text_to_graphs(wl, 8, dim_sizes=[2, 4])
    assert info.value.hint is not None and "2,2,2" in info.value.hint
    with pytest.raises(TraceError, match="larger than the network"):
        text_to_graphs(wl, 2, dim_sizes=[2])
    with pytest.raises(TraceError, match="needs the network's dimension sizes") as info:
        text_to_graphs(wl, 8)
    assert info.value.hint is not None and "--dims" in info.value.hint


def test_conversion_errors() -> None:
    bad = parse_text("DATA\n1\na -1 5 NONE 0 5 NONE 0 5 ALLREDUCEALLTOALL 64 0\n", path="a2a.txt")
    with pytest.raises(
        TraceError, match="a2a.txt: line 3: layer 'a' issues a ALLREDUCEALLTOALL wg collective"
    ):
        text_to_graphs(bad, 2)
    libra = parse_text("a -1 5 NONE 0 5 NONE 0 5 ALLREDUCE 64 0\n", path="libra.txt")
    with pytest.raises(TraceError, match="no parallelism header") as info:
        text_to_graphs(libra, 2)
    assert info.value.hint is not None and "header" in info.value.hint
    ok = parse_text("DATA\n1\na -1 5 NONE 0 5 NONE 0 5 ALLREDUCE 64 0\n")
    for kwargs, field in [
        ({"npus": 0}, "npus"),
        ({"npus": 8, "dim_sizes": [2, 2]}, "dim_sizes"),
        ({"npus": 8, "dim_sizes": [8, 0]}, "dim_sizes"),
        ({"npus": 8, "dim_sizes": [2, 4], "network_dims": 3}, "network_dims"),
        ({"npus": 8, "network_dims": 0}, "network_dims"),
        ({"npus": 8, "num_passes": 0}, "num_passes"),
    ]:
        with pytest.raises(ConfigError) as err:
            text_to_graphs(ok, **kwargs)
        assert err.value.field == field
