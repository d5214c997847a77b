"""The fast Chakra paths give exactly what protobuf message objects give: the column-wise writer
the same bytes as serializing one Node message per node, and the column-wise and row readers
the same graphs, warnings and errors as parsing every node as a message."""

from __future__ import annotations

import dataclasses
import random
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trainsim.enums import NodeType
from trainsim.errors import TraceError
from trainsim.workload import GraphBuilder, TraceWarning, WorkloadGraph, chakra, read_rank
from trainsim.workload.chakra import encode_nodes_with_messages, encode_rank_file, reader
from trainsim.workload.chakra.wire import encode_varint
from trainsim.workload.generate import Parallelism, generate

from ..conftest import reference_et_files, reference_id
from ..generate.conftest import toy
from .test_write import _every_attribute_graph, _node, frames


def encoded_with_messages(graph: WorkloadGraph) -> bytes:
    """The writer as it was before the column-wise encoder: one protobuf message per node."""
    metadata = graph.metadata or b"\x0a\x050.0.4"
    parts = [encode_varint(len(metadata)), metadata]
    for data in encode_nodes_with_messages(graph, "g.0.et"):
        parts += [encode_varint(len(data)), data]
    return b"".join(parts)


def outcome(encode: Any, graph: WorkloadGraph) -> bytes | str:
    try:
        return encode(graph)
    except TraceError as exc:
        return f"TraceError: {exc}"


def assert_same_bytes(graph: WorkloadGraph) -> None:
    assert outcome(lambda g: encode_rank_file(g, "g.0.et"), graph) == outcome(
        encoded_with_messages, graph
    )


def quiet_read(path: Path, **options: str) -> WorkloadGraph:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TraceWarning)
        return read_rank(path, **options)


# --- writer --------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", reference_et_files(), ids=reference_id)
def test_reference_graphs_are_written_as_message_objects_write_them(path):
    assert_same_bytes(quiet_read(path))


def test_pytorch_trace_with_extra_fields_is_written_as_message_objects_write_it(pytorch_trace):
    graph = quiet_read(pytorch_trace)
    assert sum(1 for e in graph.extra if e) > 1000
    assert_same_bytes(graph)


def test_generated_pipeline_ranks_are_written_as_message_objects_write_them():
    workload = generate(toy(), Parallelism(tp=2, pp=2, dp=2, micro_batch=1, global_batch=4))
    for graph in workload.graphs:
        assert_same_bytes(graph)


_odd_number = st.sampled_from([-(2**40), -1, 2**31, 2**62, 2**63 - 1]) | st.integers(-5, 5)


@settings(max_examples=80, deadline=None)
@given(nodes=st.lists(_node, min_size=1, max_size=10), odd=st.data())
def test_any_graph_is_written_or_refused_as_message_objects_do(nodes, odd):
    builder = GraphBuilder()
    for node_id, node in enumerate(nodes):
        builder.add(node_id * 997, data_deps=[0] * (node_id % 3), **node)
    graph = builder.build()
    if odd.draw(st.booleans()):  # a value outside ASTRA-sim's types somewhere
        column = odd.draw(
            st.sampled_from(
                ["comm_size", "comm_tag", "comm_src", "comm_priority", "tensor_size", "comm_type"]
            )
        )
        pos = odd.draw(st.integers(0, len(graph) - 1))
        array = getattr(graph, column)
        limits = np.iinfo(array.dtype)
        array[pos] = min(max(odd.draw(_odd_number), limits.min), limits.max)
    assert_same_bytes(graph)


@pytest.mark.parametrize(
    "change",
    [
        {"duration_s": np.array([np.nan, 0, 0, 0])},
        {"duration_s": np.array([0, 2.0**64, 0, 0])},
        {"duration_s": np.array([0, 2.0**63 / 1e6, 0, 0])},  # written, by the message path
        {"num_ops": np.array([2.0**63, 0, 0, 0])},
        {"num_ops": np.array([-0.0, 0, 0, 0])},
        {"ids": np.array([-3, 3, 4, 5])},
        {"types": np.array([0, -1, 6, 7], dtype=np.int8)},
        {"names": ["first", "\ud800", "recv", "ar"]},
        {"names": ["é", "", "récv", "ar"]},
        {"pg_name": ["", "", "", "grüppe"]},
        {"involved_dim": {}},
        {"extra": [b"", b"\x30\x05", b"", b""]},  # start_time_micros on one node
    ],
    ids=lambda change: next(iter(change)),
)
def test_odd_values_are_written_or_refused_as_message_objects_do(change):
    graph = dataclasses.replace(_every_attribute_graph(), **change)
    try:
        expected = encoded_with_messages(graph)
    except (TraceError, ValueError, KeyError, UnicodeEncodeError) as exc:
        with pytest.raises(type(exc)):
            encode_rank_file(graph, "g.0.et")
    else:
        assert encode_rank_file(graph, "g.0.et") == expected


# --- readers -------------------------------------------------------------------------------------


def read_outcome(path: Path, **options: str) -> tuple[Any, ...]:
    """Everything a read gives: the graph's fields and warnings, or the error."""
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            graph = read_rank(path, **options)
    except TraceError as exc:
        return ("TraceError", str(exc))
    fields = []
    for field in dataclasses.fields(WorkloadGraph):
        value = getattr(graph, field.name)
        fields.append((value.tolist(), value.dtype.str) if isinstance(value, np.ndarray) else value)
    return (*fields, [str(w.message) for w in caught])


@pytest.fixture
def read_with_messages(monkeypatch):
    """Reads as the reader did before its fast paths: every node parsed as a protobuf message."""

    def read(path: Path, **options: str) -> tuple[Any, ...]:
        with monkeypatch.context() as patch:
            patch.setattr(reader, "decode_file", lambda data, tails, names=None, layout=None: None)
            patch.setattr(reader.RowCache, "row", lambda self, data: None)
            return read_outcome(path, **options)

    return read


@pytest.mark.parametrize("path", reference_et_files(), ids=reference_id)
def test_reference_files_read_as_message_parsing_reads_them(path, read_with_messages):
    assert read_outcome(path) == read_with_messages(path)


@pytest.mark.parametrize("policy", ["both", "data_only"])
def test_pytorch_trace_reads_as_message_parsing_reads_it(pytorch_trace, read_with_messages, policy):
    assert read_outcome(pytorch_trace, ctrl_deps=policy) == read_with_messages(
        pytorch_trace, ctrl_deps=policy
    )


def test_generated_ranks_read_as_message_parsing_reads_them(tmp_path, read_with_messages):
    workload = generate(toy(), Parallelism(tp=2, pp=2, dp=2, micro_batch=1, global_batch=4))
    paths = chakra.write_workload(tmp_path / "toy", workload.graphs)
    from_files = chakra.read_workload(tmp_path / "toy")
    for path, graph in zip(paths, from_files, strict=True):
        assert read_outcome(path) == read_with_messages(path)
        again = chakra.write_rank(tmp_path / f"again.{graph.rank}.et", graph)
        assert again.read_bytes() == path.read_bytes()


def _damaged(data: bytes, rng: random.Random) -> bytes:
    """A few bytes changed, inserted or removed."""
    out = bytearray(data)
    for _ in range(rng.randint(1, 3)):
        at = rng.randrange(len(out))
        action = rng.random()
        if action < 0.5:  # another value, the same varint structure
            out[at] ^= 1 << rng.randrange(7)
        elif action < 0.8:
            out[at] = rng.choice([0x00, 0x01, 0x7F, 0x80, 0xFF, 0x08, 0x52, 0x0A])
        elif action < 0.9:
            out.insert(at, rng.randrange(256))
        else:
            del out[at]
    return bytes(out)


def _mutated(data: bytes, rng: random.Random) -> bytes:
    """A rank file damaged in its framing (a quarter of the time) or, re-framed, inside one or
    two node messages."""
    if rng.random() < 0.25:
        return _damaged(data, rng)
    messages = frames(data)
    for _ in range(rng.randint(1, 2)):
        at = rng.randrange(1, len(messages))
        messages[at] = _damaged(messages[at], rng) if messages[at] else b"\x08"
    return b"".join(encode_varint(len(m)) + m for m in messages)


@pytest.mark.parametrize("seed", range(300))
def test_damaged_files_read_or_fail_as_message_parsing_does(tmp_path, read_with_messages, seed):
    rng = random.Random(seed)
    source = encode_rank_file(_every_attribute_graph() if seed % 2 else _chain_graph())
    path = tmp_path / "damaged.0.et"
    path.write_bytes(_mutated(source, rng))
    assert read_outcome(path) == read_with_messages(path)


def _chain_graph() -> WorkloadGraph:
    builder = GraphBuilder()
    for node_id in range(1, 40):
        builder.add(
            node_id, NodeType.COMP_NODE if node_id % 3 else NodeType.COMM_COLL_NODE,
            f"n{node_id}", duration_s=node_id * 1e-6, num_ops=float(node_id), is_cpu_op=False,
            comm_type=node_id % 3 or -1, comm_size=node_id if node_id % 3 == 0 else None,
            pg_name="7" if node_id % 3 == 0 else None, data_deps=[node_id - 1] if node_id > 1 else [],
        )  # fmt: skip
    return builder.build()


def test_rank_files_of_one_workload_share_their_node_names(tmp_path):
    """A 1,024-rank workload repeats each stage's names on every rank: one string object each."""
    from trainsim.workload.chakra import read_workload, write_workload
    from trainsim.workload.graph import GraphBuilder

    graphs = []
    for rank in range(3):  # files that differ (a per-rank duration), names that do not
        b = GraphBuilder()
        for i in range(50):
            b.add(i, 1, f"layer_{i}_fwd", duration_s=(rank + 1) * 1e-6, data_deps=[i - 1] if i else [])
        graphs.append(b.build())
    write_workload(str(tmp_path / "w"), graphs)
    graphs = read_workload(str(tmp_path / "w"), 3)
    assert graphs[0].names == graphs[2].names
    assert all(a is b for a, b in zip(graphs[0].names, graphs[2].names, strict=True))
