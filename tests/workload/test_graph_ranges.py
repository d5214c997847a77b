"""Values beyond an integer column's range (issue 24): a TraceError naming the node and the
field, not numpy's OverflowError; through the text-workload converter, one line and exit 2."""

import pytest

from tests.helpers.cli_errors import cli_error
from tests.helpers.reference_data import WORKLOADS
from trainsim.enums import CommType, NodeType
from trainsim.errors import TraceError
from trainsim.workload import GraphBuilder


@pytest.mark.parametrize(
    ("attrs", "match"),
    [
        ({"comm_size": 2**63}, "node 3: comm_size 9223372036854775808 is beyond the int64 range"),
        ({"comm_src": 2**31}, "node 3: comm_src 2147483648 is beyond the int32 range"),
        ({"comm_tag": -(2**63) - 1}, "node 3: comm_tag -9223372036854775809 is beyond the int64 range"),
    ],
)
def test_builder_names_the_node_and_field(attrs, match):
    b = GraphBuilder(source="w.et", rank=2)
    b.add(3, NodeType.COMM_COLL_NODE, "ar", comm_type=int(CommType.ALL_REDUCE), **attrs)
    with pytest.raises(TraceError, match=f"w.et, rank 2, {match}"):
        b.build()


def test_a_dependency_beyond_int64():
    b = GraphBuilder(source="w.et")
    b.add(1, NodeType.COMP_NODE, "c", data_deps=[2**64])
    with pytest.raises(TraceError, match="node 1: a dependency 18446744073709551616 is beyond the int64 range"):
        b.build()


def test_text_workload_size_beyond_int64_is_one_line(tmp_path, capsys):
    text = (WORKLOADS / "astra-sim-1.0-text" / "microAllReduce.txt").read_text()
    bad = tmp_path / "big.txt"
    bad.write_text(text.replace("ALLREDUCE 1048576", "ALLREDUCE 99999999999999999999999"))
    argv = ["workload", "convert", str(bad), "--ranks", "2", "--out", str(tmp_path / "x")]
    cli_error(capsys, argv, 2, "comm_size 99999999999999999999999 is beyond the int64 range")


def test_generate_with_a_huge_sequence_is_one_line(tmp_path, capsys):
    argv = ["generate", "megatron-1.7b", "--seq", "1000000000", "--no-memory-check", "--out", str(tmp_path / "g")]
    cli_error(capsys, argv, 2, "tensor_size 7488004966667297751040 is beyond the int64 range")
