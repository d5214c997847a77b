"""Rank files that differ from a decoded one only in peers and groups are read from it
(workload/chakra/template.py): the same graph as decoding them, arrays shared with it; any
other difference is decoded."""

import dataclasses
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from trainsim.enums import CommType, NodeType
from trainsim.errors import TraceError
from trainsim.workload.chakra import read_workload, write_workload
from trainsim.workload.chakra.reader import _read_graph
from trainsim.workload.graph import GraphBuilder


def _graph(rank: int, npus: int, group: str, micros: float = 5.0):
    b = GraphBuilder(rank=rank)
    b.add(0, NodeType.COMP_NODE, "fwd", duration_s=micros * 1e-6, num_ops=100)
    b.add(1, NodeType.COMM_COLL_NODE, "ar", data_deps=[0], comm_type=int(CommType.ALL_REDUCE), comm_size=1 << 20, pg_name=group)
    b.add(2, NodeType.COMM_SEND_NODE, "send", data_deps=[1], comm_dst=(rank + 2) % npus, comm_size=4096, comm_tag=7)
    b.add(3, NodeType.COMM_RECV_NODE, "recv", data_deps=[1], comm_src=(rank - 2) % npus, comm_size=4096, comm_tag=7)
    b.add(4, NodeType.COMP_NODE, "bwd", data_deps=[2, 3], duration_s=micros * 2e-6)
    return b.build()


def _same(a, b):
    for f in dataclasses.fields(a):
        x, y = getattr(a, f.name), getattr(b, f.name)
        if isinstance(x, np.ndarray):
            assert x.dtype == y.dtype and np.array_equal(x, y), f.name
        else:
            assert x == y, f.name


def _check(prefix: Path, graphs):
    write_workload(prefix, graphs)
    read = read_workload(prefix, len(graphs))
    for rank, got in enumerate(read):
        _same(got, _read_graph(Path(f"{prefix}.{rank}.et"), rank, "both"))
    return read


def test_peers_and_groups_read_from_the_template(tmp_path):
    graphs = [_graph(r, 8, str(1 + r // 4)) for r in range(8)]
    read = _check(tmp_path / "w", graphs)
    # every file has the length of rank 0's: read from it, sharing its arrays
    assert all(g.ids is read[0].ids and g.duration_s is read[0].duration_s for g in read)
    assert [g.pg_name[1] for g in read] == [str(1 + r // 4) for r in range(8)]
    assert [int(g.comm_dst[2]) for g in read] == [(r + 2) % 8 for r in range(8)]


def test_other_differences_are_decoded(tmp_path):
    # rank 3 computes longer (a duration of the same length in bytes): decoded, not matched
    graphs = [_graph(r, 8, "1", micros=7.0 if r == 3 else 5.0) for r in range(8)]
    read = _check(tmp_path / "w", graphs)
    assert read[3].duration_s is not read[0].duration_s
    assert read[3].duration_s[0] == pytest.approx(7e-6)


def test_values_of_another_length_are_decoded(tmp_path):
    graphs = [_graph(r, 200, "1") for r in range(200)]  # peers 2..199: one and two varint bytes
    _check(tmp_path / "w", graphs)


def test_a_damaged_value_is_not_matched(tmp_path):
    graphs = [_graph(r, 8, "1") for r in range(8)]
    write_workload(tmp_path / "w", graphs)
    path = tmp_path / "w.5.et"
    data = bytearray(path.read_bytes())
    at = bytes(data).index(b"\x07pg_name\xea\x01") + 11  # the group's one byte
    data[at] = 0xFF  # not UTF-8
    path.write_bytes(bytes(data))
    with pytest.raises(TraceError) as decoded:
        _read_graph(path, 5, "both")
    with pytest.raises(TraceError) as read:
        read_workload(tmp_path / "w", 8)
    assert str(read.value) == str(decoded.value)


def test_identical_files_share_everything(tmp_path):
    graphs = [replace(_graph(0, 4, "1"), rank=r) for r in range(4)]
    read = _check(tmp_path / "w", graphs)
    assert all(g.pg_name is read[0].pg_name for g in read)


def test_generated_steps_read_as_decoded(tmp_path):
    # a generated step (peers and groups differ by rank, stages differ in content) read with
    # templates equals every file decoded, field by field; groups carry consistent codes
    from trainsim.compute import OperatorTimer
    from trainsim.workload.generate import Parallelism, generate
    from trainsim.workload.models import get_model

    spec = replace(get_model("megatron-1.7b"), layers=4, seq=512)
    par = Parallelism(tp=2, pp=2, dp=4, micro_batch=1, global_batch=16, recompute="full")
    graphs = list(generate(spec, par, OperatorTimer("A100"), network_sizes=(8, 2)).graphs)
    read = _check(tmp_path / "w", graphs)
    assert sum(g.ids is not read[0].ids for g in read) >= 1  # the two stages: two decodes
    for g in read:
        codes, values = g.pg_name.codes, g.pg_name.values
        assert len(set(values)) == len(values)
        assert [values[c] for c in codes.tolist()] == list(g.pg_name)


def _ranks_with_groups(groups_of_rank, npus=8):
    """Rank graphs whose collective ``k`` is on group ``groups_of_rank(rank)[k]``."""
    out = []
    for rank in range(npus):
        b = GraphBuilder(rank=rank)
        b.add(0, NodeType.COMP_NODE, "fwd", duration_s=5e-6, num_ops=100)
        for k, group in enumerate(groups_of_rank(rank)):
            b.add(1 + k, NodeType.COMM_COLL_NODE, f"ar{k}", data_deps=[k], comm_type=int(CommType.ALL_REDUCE), comm_size=1 << 20, pg_name=group)
        out.append(b.build())
    return out


@pytest.mark.parametrize(
    "groups_of_rank",
    [
        lambda r: ["1", "1", "2", "2"] if r == 0 else [str(r % 4 + 1), str(r % 3 + 1), "2", "2"],  # one old value, two new
        lambda r: ["1", "2", "1", "2"] if r == 0 else ["3", "3", "3", "3"],  # two old values, one new
        lambda r: ["group_a_0001", "x"] if r == 0 else [f"group_b_{r:04d}", "y"],  # longer than 7 bytes
        lambda r: ["", "1"] if r == 0 else ["", str(r)],  # an empty group string
    ],
)
def test_group_strings_of_any_pattern(tmp_path, groups_of_rank):
    read = _check(tmp_path / "w", _ranks_with_groups(groups_of_rank))
    assert all(g.ids is read[0].ids for g in read)  # read from rank 0's file
    for rank, g in enumerate(read):
        assert g.pg_name[1:] == groups_of_rank(rank)
        codes = getattr(g.pg_name, "codes", None)
        if codes is not None:
            assert [g.pg_name.values[c] for c in codes.tolist()] == list(g.pg_name)


@pytest.mark.parametrize("pad", range(8))
def test_values_near_the_end_of_the_file(tmp_path, pad):
    # the last node's peer lies in the file's last bytes, at every offset from a multiple of 8
    graphs = []
    for rank in range(4):
        b = GraphBuilder(rank=rank)
        b.add(0, NodeType.COMP_NODE, "c" * (1 + pad), duration_s=5e-6)
        b.add(1, NodeType.COMM_SEND_NODE, "s", data_deps=[0], comm_dst=(rank + 1) % 4, comm_size=64, comm_tag=1)
        graphs.append(b.build())
    read = _check(tmp_path / "w", graphs)
    assert [int(g.comm_dst[1]) for g in read] == [1, 2, 3, 0]
    assert all(g.ids is read[0].ids for g in read)


@pytest.mark.parametrize("byte", [0x80, 0xFF])
def test_a_damaged_peer_gives_the_decoders_answer(tmp_path, byte):
    # a peer byte with its continuation bit set (the varint runs into the next field) or a
    # peer over INT32_MAX: not matched; read_workload answers as decoding the file does
    graphs = [_graph(r, 8, "1") for r in range(8)]
    write_workload(tmp_path / "w", graphs)
    path = tmp_path / "w.5.et"
    data = bytearray(path.read_bytes())
    at = bytes(data).index(b"\x08comm_dst\x38") + 10  # the peer's one byte
    data[at] = byte
    path.write_bytes(bytes(data))
    try:
        want = _read_graph(path, 5, "both")
    except TraceError as exc:
        with pytest.raises(TraceError) as read:
            read_workload(tmp_path / "w", 8)
        assert str(read.value) == str(exc)
        return
    _same(read_workload(tmp_path / "w", 8)[5], want)


def test_coded_names_drop_their_codes_when_changed():
    import copy
    import pickle

    from trainsim.workload.graph import CodedNames

    names = CodedNames(["a", "b", "a"], np.array([0, 1, 0], dtype=np.int32), ("a", "b"))
    assert names == ["a", "b", "a"]
    for twin in (copy.copy(names), pickle.loads(pickle.dumps(names))):
        assert list(twin.codes) == [0, 1, 0] and twin.values == ("a", "b") and twin == names
    for change in (lambda x: x.__setitem__(0, "b"), lambda x: x.append("c"), lambda x: x.sort(), lambda x: x.pop()):
        twin = copy.copy(names)
        change(twin)
        assert twin.codes is None
    assert names.codes is not None
