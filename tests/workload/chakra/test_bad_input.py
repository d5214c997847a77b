"""Bad ET input gives a TraceError naming the file, the rank and the node or byte offset, and
never an exception of another type."""

from __future__ import annotations

import contextlib
import gzip
import warnings
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers.reference_data import REFERENCE_DATA
from trainsim.errors import TraceError
from trainsim.workload import TraceWarning, read_rank
from trainsim.workload.chakra.wire import encode_varint

METADATA = b"\x0a\x050.0.4"  # GlobalMetadata(version="0.0.4")


def frame(message: bytes) -> bytes:
    return encode_varint(len(message)) + message


def node(node_id: int, *data_deps: int, name: bytes = b"n") -> bytes:
    """A COMP_NODE by hand: id (1), name (2), type (3) = 4, packed data_deps (5)."""
    body = (
        b"\x08" + encode_varint(node_id) + b"\x12" + encode_varint(len(name)) + name + b"\x18\x04"
    )
    if data_deps:
        packed = b"".join(encode_varint(d) for d in data_deps)
        body += b"\x2a" + encode_varint(len(packed)) + packed
    return frame(body)


HEAD = frame(METADATA)
VALID = HEAD + node(1) + node(2, 1)

BAD_INPUTS = {
    "empty file": (b"", "the file is empty", None),
    "truncated length prefix": (HEAD + b"\x85", "truncated length prefix at byte 8", None),
    "overlong varint": (HEAD + b"\xff" * 11, "malformed length prefix at byte 8", None),
    "length over 2 GiB": (HEAD + encode_varint(2**40), "over protobuf's 2 GiB limit", None),
    "truncated message": (
        HEAD + b"\x32\x08\x01",
        "truncated message at byte 8: its length prefix says 50 bytes, the file ends after 2",
        None,
    ),
    "garbage node": (
        HEAD + frame(b"\xff\xff\xff\xff"),
        "message at byte 8 is not a valid Chakra Node",
        None,
    ),
    "garbage metadata": (frame(b"\x0a\xff") + node(1), "not a valid GlobalMetadata", None),
    "bad UTF-8 name": (HEAD + node(1, name=b"\xff"), "bad UTF-8", None),
    "node id over int64": (HEAD + node(2**63), "node id or type out of range", 2**63),
    "duplicate node id": (HEAD + node(1) + node(1), "node id 1 appears more than once", 1),
    "data_deps cycle": (
        HEAD + node(1, 3) + node(2, 1) + node(3, 2),
        "data_deps form a cycle of 3 node",
        1,
    ),
    "self dependency": (HEAD + node(1) + node(2, 2), "cycle of 1 node(s): 2 -> 2", 2),
    "corrupt gzip": (b"\x1f\x8b" + b"\x00" * 30, "cannot read the file", None),
    "truncated gzip": (gzip.compress(VALID)[:-12], "cannot read the file", None),
}


@pytest.mark.parametrize("case", sorted(BAD_INPUTS))
def test_bad_input_is_a_trace_error_naming_file_rank_and_place(tmp_path, case):
    content, message, node_id = BAD_INPUTS[case]
    path = tmp_path / "bad.3.et"
    path.write_bytes(content)
    with pytest.raises(TraceError) as info:
        read_rank(path)
    text = str(info.value)
    assert text.startswith(f"{path}, rank 3")
    assert message in text
    assert info.value.node_id == node_id
    assert "\n" not in text


def test_the_valid_baseline_of_the_table_reads(tmp_path):
    path = tmp_path / "ok.0.et"
    path.write_bytes(VALID)
    assert read_rank(path).ids.tolist() == [1, 2]


@pytest.mark.parametrize("make", [lambda p: p / "absent.0.et", lambda p: p])
def test_unreadable_paths_are_trace_errors(tmp_path, make):
    with pytest.raises(TraceError, match="cannot read the file"):
        read_rank(make(tmp_path))


def _read_or_trace_error(path: Path) -> None:
    with warnings.catch_warnings(), contextlib.suppress(TraceError):
        warnings.simplefilter("ignore", TraceWarning)
        read_rank(path)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(tail=st.binary(max_size=64))
def test_random_bytes_after_metadata_never_escape_as_other_errors(tmp_path, tail):
    path = tmp_path / "fuzz.0.et"
    path.write_bytes(HEAD + tail)
    _read_or_trace_error(path)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_corrupted_real_files_never_escape_as_other_errors(tmp_path, data):
    original = (
        REFERENCE_DATA
        / "reference-workloads/astra-sim-examples/custom_ring_allreduce_8npus_1MB/custom_allreduce.0.et"
    ).read_bytes()
    content = bytearray(original)
    for _ in range(data.draw(st.integers(1, 4))):
        content[data.draw(st.integers(0, len(content) - 1))] = data.draw(st.integers(0, 255))
    content = content[: data.draw(st.integers(0, len(content)))]
    path = tmp_path / "fuzz.0.et"
    path.write_bytes(bytes(content))
    _read_or_trace_error(path)
