"""Reading Chakra ET files: every reference file, legacy warnings, the PyTorch trace, whole
workloads, ctrl_deps policies, gzip."""

from __future__ import annotations

import gzip
import shutil
import warnings
from pathlib import Path

import numpy as np
import pytest

from tests.helpers.reference_data import REFERENCE_DATA
from trainsim.enums import CommType, NodeType
from trainsim.errors import TraceError
from trainsim.workload import (
    Attr,
    TraceWarning,
    count_rank_files,
    find_cycle,
    read_rank,
    read_workload,
    write_workload,
)

from ..conftest import reference_et_files, reference_id

LEGACY = {
    "reference-workloads/astra-sim-legacy-2024/resnet_dp/Resnet50_DataParallel.0.et": (
        "54 communication node(s) lack comm_size; taken as 0 bytes"
    ),
    "reference-workloads/astra-sim-legacy-2024/onecomm_allreduce/one_comm_coll_node_allreduce.0.et": (
        "1 comm_size attribute(s) stored as uint64_val, not int64_val; converted"
    ),
    "reference-workloads/generated-by-chakra-1.0.0/et-generator/one_comm_send_node.0.et": (
        "1 communication node(s) lack comm_size; taken as 0 bytes"
    ),
    "reference-workloads/generated-by-chakra-1.0.0/et-generator/one_comm_recv_node.0.et": (
        "1 communication node(s) lack comm_size; taken as 0 bytes"
    ),
}
"""The one warning each reference file gives (rank 1 files as their rank 0 twin); others give none."""


@pytest.mark.parametrize("path", reference_et_files(), ids=reference_id)
def test_every_reference_file_reads(path: Path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TraceWarning)
        graph = read_rank(path)
    assert len(graph) >= 1
    assert np.all(np.diff(graph.ids) > 0)
    assert find_cycle(graph) is None
    expected = LEGACY.get(reference_id(path).replace(".1.et", ".0.et"))
    assert graph.warnings == ([expected] if expected else [])


@pytest.mark.parametrize("name", sorted(LEGACY))
def test_legacy_problems_are_emitted_as_trace_warnings_naming_the_file(name):
    with pytest.warns(TraceWarning) as record:
        read_rank(REFERENCE_DATA / name)
    assert [str(w.message) for w in record] == [f"{REFERENCE_DATA / name}: {LEGACY[name]}"]


def test_microbenchmark_all_reduce_attributes():
    graph = read_rank(
        REFERENCE_DATA
        / "reference-workloads/astra-sim-examples/microbenchmarks/all_reduce/4npus_1MB/all_reduce.1.et"
    )
    assert graph.rank == 1
    assert graph.ids.tolist() == [1]
    assert graph.types[0] == NodeType.COMM_COLL_NODE
    assert graph.comm_type[0] == CommType.ALL_REDUCE
    assert graph.comm_size[0] == 1_048_576
    assert graph.present[0] == Attr.IS_CPU_OP | Attr.COMM_TYPE | Attr.COMM_SIZE
    assert graph.extra == [b""]


def test_send_recv_attributes_of_the_custom_ring():
    graph = read_rank(
        REFERENCE_DATA
        / "reference-workloads/astra-sim-examples/custom_ring_allreduce_8npus_1MB/custom_allreduce.0.et"
    )
    assert len(graph) == 35
    sends = graph.types == NodeType.COMM_SEND_NODE
    recvs = graph.types == NodeType.COMM_RECV_NODE
    assert set(graph.comm_dst[sends].tolist()) == {1}
    assert set(graph.comm_src[recvs].tolist()) == {7}
    assert np.all(graph.comm_src[sends] == -1) and np.all(graph.comm_dst[recvs] == -1)
    assert np.all(graph.comm_size[sends | recvs] == 131_072)


def test_legacy_involved_dim_bool_list_and_durations():
    with pytest.warns(TraceWarning):
        graph = read_rank(
            REFERENCE_DATA
            / "reference-workloads/astra-sim-legacy-2024/resnet_dp/Resnet50_DataParallel.0.et"
        )
    assert len(graph.involved_dim) == 54
    assert graph.duration_s[0] == pytest.approx(13003e-6)
    assert np.all(graph.present[graph.types == NodeType.COMM_COLL_NODE] & Attr.COMM_SIZE)


def test_pytorch_trace_is_read_with_its_known_problems(pytorch_trace):
    with pytest.warns(TraceWarning):
        graph = read_rank(pytorch_trace)
    assert len(graph) == 3664
    assert graph.warnings == [
        "1277 ctrl_deps name nodes absent from the file; dropped",
        "14 communication node(s) marked is_cpu_op (host-side calls such as c10d::allreduce_) "
        "run as CPU compute nodes of their duration; the GPU kernel nodes hold the collectives",
        "937 ctrl_deps closed a dependency cycle with other deps; dropped",
    ]
    # the host-side c10d calls are CPU compute nodes now; the 7 GPU NCCL kernels stay collectives
    host = np.isin(graph.ids, [432, 433, 619, 620, 3254, 3255, 3511, 3513, 3688, 3689, 4488])
    assert np.all(graph.types[host] == NodeType.COMP_NODE) and np.all(graph.is_cpu_op[host])
    comm = graph.types == NodeType.COMM_COLL_NODE
    assert int(comm.sum()) == 7 and not graph.is_cpu_op[comm].any()
    assert all(name.startswith("ncclKernel_") for name in np.asarray(graph.names)[comm])
    rows = np.repeat(graph.ids, np.diff(graph.data_dep_ptr))
    assert int(np.sum(graph.data_dep_ids > rows)) == 53  # data deps on higher ids are kept
    assert find_cycle(graph, ctrl=True) is None
    assert all(graph.extra)  # IOInfo and PyTorch attributes travel in extra
    assert graph.metadata  # schema, pid, time, ... kept as read


def test_data_only_policy_keeps_ctrl_deps_but_does_not_follow_them(pytorch_trace):
    with pytest.warns(TraceWarning):
        graph = read_rank(pytorch_trace, ctrl_deps="data_only")
    assert graph.use_ctrl_deps is False
    assert graph.ctrl_dep_ids.size > 0
    pos = int(np.flatnonzero(np.diff(graph.ctrl_dep_ptr))[0])
    assert graph.deps_of(pos) == graph.deps_of(pos, ctrl=False)


def test_unknown_ctrl_policy_is_a_value_error():
    with pytest.raises(ValueError, match="ctrl_deps"):
        read_rank(
            REFERENCE_DATA / "reference-results/inputs/workload/all_reduce/8npus_1MiB/et.0.et",
            ctrl_deps="all",
        )


def test_gzip_is_detected_by_magic(tmp_path):
    plain = (
        REFERENCE_DATA
        / "reference-workloads/astra-sim-examples/custom_ring_allreduce_8npus_1MB/custom_allreduce.3.et"
    )
    packed = tmp_path / "ring.3.et"  # no .gz suffix: detection is by content
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    a, b = read_rank(plain), read_rank(packed)
    assert b.rank == 3
    assert a.ids.tolist() == b.ids.tolist() and a.extra == b.extra and a.names == b.names


def test_read_workload_shares_identical_files():
    prefix = REFERENCE_DATA / "reference-results/inputs/workload/all_reduce/8npus_1MiB/et"
    assert count_rank_files(prefix) == 8
    graphs = read_workload(prefix, 8)
    assert [g.rank for g in graphs] == list(range(8))
    assert [Path(g.source).name for g in graphs] == [f"et.{r}.et" for r in range(8)]
    assert all(g.ids is graphs[0].ids and g.extra is graphs[0].extra for g in graphs)


def test_read_workload_counts_ranks_when_npus_is_not_given():
    graphs = read_workload(
        REFERENCE_DATA
        / "reference-workloads/astra-sim-examples/custom_ring_allreduce_8npus_1MB/custom_allreduce"
    )
    assert len(graphs) == 8
    # distinct files, distinct graphs: they differ only in peers, so they share the other
    # arrays (workload/chakra/template.py) and each has its own peers
    assert len({id(g) for g in graphs}) == 8
    assert len({(g.comm_src.tobytes(), g.comm_dst.tobytes()) for g in graphs}) == 8


def test_identical_legacy_files_warn_once_for_all(tmp_path):
    source = (
        REFERENCE_DATA / "reference-workloads/astra-sim-legacy-2024/resnet_dp/Resnet50_DataParallel.0.et"
    )
    for rank in range(3):
        shutil.copyfile(source, tmp_path / f"w.{rank}.et")
    with pytest.warns(TraceWarning) as record:
        read_workload(tmp_path / "w", 3)
    assert len(record) == 1
    assert "(and 2 identical rank files)" in str(record[0].message)


def test_missing_rank_file_names_the_file_and_the_expected_count(tmp_path):
    source = REFERENCE_DATA / "reference-results/inputs/workload/all_reduce/8npus_1MiB"
    for rank in (0, 1, 3):
        shutil.copyfile(source / f"et.{rank}.et", tmp_path / f"et.{rank}.et")
    assert count_rank_files(tmp_path / "et") == 2
    with pytest.raises(
        TraceError, match=r"et\.2\.et, rank 2: rank file missing: the workload needs 4 files"
    ):
        read_workload(tmp_path / "et", 4)


def test_no_rank_files_at_all(tmp_path):
    with pytest.raises(TraceError, match=r"no rank files .*nothing\.0\.et"):
        read_workload(tmp_path / "nothing")


def test_write_workload_encodes_shared_graphs_once_and_reads_back(tmp_path):
    graphs = read_workload(
        REFERENCE_DATA / "reference-results/inputs/workload/dp/8npus_8layers_64MiB/et", 8
    )
    paths = write_workload(tmp_path / "out" / "dp", graphs)
    assert [p.name for p in paths] == [f"dp.{r}.et" for r in range(8)]
    assert len({p.read_bytes() for p in paths}) == 1
    again = read_workload(tmp_path / "out" / "dp", 8)
    assert again[7].rank == 7 and again[7].ids is again[0].ids
    assert again[0].names == graphs[0].names


def _tolerance_file(path: Path) -> Path:
    """Two nodes with every tolerated oddity: non-standard integer cases, an int list for
    involved_dim, unusable and repeated standard attributes, an unknown node type and an
    unknown Node field (11, as chakra's proposed storage nodes add)."""
    from trainsim.workload.chakra import schema
    from trainsim.workload.chakra.wire import encode_varint

    odd = schema.Node(id=1, name="odd", type=NodeType.COMM_COLL_NODE)
    odd.attr.add(name="is_cpu_op", int32_val=0)  # STG writes int32
    odd.attr.add(name="comm_type", uint32_val=CommType.ALL_GATHER)
    odd.attr.add(name="comm_size", double_val=1024.0)
    odd.attr.add(name="pg_name", int64_val=3)
    odd.attr.add(name="involved_dim").int32_list.values.extend([1, 0, 1])
    odd.attr.add(name="tensor_size", string_val="big")  # unusable: dropped
    odd.attr.add(name="comm_src", uint64_val=5_000_000_000)  # out of int32: dropped
    odd.attr.add(name="comm_tag", sint32_val=7)
    odd.attr.add(name="comm_tag", int32_val=8)  # repeated: the first wins
    odd.attr.add(name="rf_id", int64_val=-1)  # not standard: kept in extra
    storage = schema.Node(id=2, name="storage", type=8, data_deps=[1]).SerializeToString()
    storage += b"\x5a\x02\x08\x01"  # field 11 (LEN) = {1: 1}, unknown to the schema
    metadata = schema.GlobalMetadata(version="1.0.0").SerializeToString()
    with open(path, "wb") as out:
        for message in (metadata, odd.SerializeToString(), storage):
            out.write(encode_varint(len(message)) + message)
    return path


def test_tolerated_oddities_are_converted_or_dropped_with_one_warning_each(tmp_path):
    with pytest.warns(TraceWarning):
        graph = read_rank(_tolerance_file(tmp_path / "odd.0.et"))
    assert graph.warnings == [
        "1 is_cpu_op attribute(s) stored as int32_val, not bool_val; converted",
        "1 comm_type attribute(s) stored as uint32_val, not int64_val; converted",
        "1 comm_size attribute(s) stored as double_val, not int64_val; converted",
        "1 pg_name attribute(s) stored as int64_val, not string_val; converted",
        "1 involved_dim attribute(s) stored as int32_list, not bool_list; converted",
        "1 tensor_size attribute(s) ignored: given as string_val",
        "1 comm_src attribute(s) ignored: outside 0..2147483647",
        "1 comm_tag attribute(s) stored as sint32_val, not int32_val; converted",
        "1 repeated comm_tag attribute(s) ignored; the first one is used",
        "1 node(s) of a type unknown to trainsim ([8]) kept as read",
    ]
    assert not graph.is_cpu_op[0] and graph.present[0] & Attr.IS_CPU_OP
    assert graph.comm_type[0] == CommType.ALL_GATHER and graph.comm_size[0] == 1024
    assert graph.pg_name[0] == "3" and graph.involved_dim[0] == (True, False, True)
    assert graph.comm_tag[0] == 7 and graph.comm_src[0] == -1
    assert not graph.present[0] & (Attr.TENSOR_SIZE | Attr.COMM_SRC)
    assert graph.types[1] == 8
    assert b"rf_id" in graph.extra[0] and graph.extra[1] == b"\x5a\x02\x08\x01"


def test_tolerated_file_is_rewritten_strictly_and_then_reads_clean(tmp_path):
    from trainsim.workload import write_rank

    with pytest.warns(TraceWarning):
        graph = read_rank(_tolerance_file(tmp_path / "odd.0.et"))
    rewritten = write_rank(tmp_path / "strict.0.et", graph)
    with warnings.catch_warnings():
        warnings.simplefilter("error", TraceWarning)
        with pytest.raises(TraceWarning, match=r"type unknown to trainsim \(\[8\]\)"):
            read_rank(rewritten)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TraceWarning)
        again = read_rank(rewritten)
    assert again.warnings == ["1 node(s) of a type unknown to trainsim ([8]) kept as read"]
    assert again.extra == graph.extra and again.pg_name == graph.pg_name
