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
