"""A comm_size that is present but not a byte count (negative, fractional, a string) is a
TraceError naming the file, rank, node and value, not a missing size read as 0 B (issue 24)."""

import re

import pytest

from tests.helpers.cli_errors import cli_error
from trainsim.enums import CommType, NodeType
from trainsim.errors import TraceError
from trainsim.workload import read_rank
from trainsim.workload.chakra import schema
from trainsim.workload.chakra.wire import encode_varint


def _write(path, **size):
    node = schema.Node(id=5, name="ar", type=int(NodeType.COMM_COLL_NODE))
    node.attr.add(name="comm_type", int64_val=int(CommType.ALL_REDUCE))
    node.attr.add(name="comm_size", **size)
    metadata = schema.GlobalMetadata(version="1.0.0").SerializeToString()
    with open(path, "wb") as out:
        for message in (metadata, node.SerializeToString()):
            out.write(encode_varint(len(message)) + message)
    return path


@pytest.mark.parametrize(
    ("size", "shown"),
    [({"int64_val": -1024}, "-1024 (int64_val)"), ({"double_val": 10.5}, "10.5 (double_val)"), ({"string_val": "1k"}, "'1k' (string_val)")],
    ids=str,
)
def test_a_size_that_is_not_a_byte_count_is_refused(tmp_path, size, shown):
    path = _write(tmp_path / "w.0.et", **size)
    with pytest.raises(TraceError, match=re.escape(f"w.0.et, rank 0, node 5: comm_size {shown} is not a byte count")):
        read_rank(path)


def test_cli_run_on_a_negative_size_is_one_line(tmp_path, capsys):
    for rank in range(2):
        _write(tmp_path / f"w.{rank}.et", int64_val=-1)
    platform = tmp_path / "p.yaml"
    platform.write_text("network:\n  dims:\n    - {topology: Ring, size: 2, bandwidth_gbps: 50, latency_ns: 500}\n")
    cli_error(capsys, ["run", str(platform), "--workload", str(tmp_path / "w")], 2, "node 5: comm_size -1 (int64_val)")
