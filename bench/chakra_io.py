"""Benchmark: writing and reading the Chakra ET files of the generated GPT-3 175B workload
(DESIGN.md, "Speed").

Case: GPT-3 175B on 1024 ranks (TP 8, PP 16, DP 8, micro-batch 1, global batch 1536, full
recompute, A100), generated in memory as bench/generate_gpt3.py does; the first ``--ranks``
rank graphs (default 64, about 15,200 nodes each) are written with ``write_rank`` and read back
with ``read_rank`` (each file alone) and ``read_workload`` (all of them, sharing caches).

Baselines, measured in the same run on the same nodes:

* protobuf: ``SerializeToString`` of ready-made ``Node`` messages plus the varint framing, and
  ``ParseFromString`` of every message of the files (protobuf's own work alone, no graph);
* messages: trainsim's message-object path (one ``Node`` message per node, the writer and reader
  before the column-wise paths; they remain for nodes those paths do not cover). Skip it with
  ``--no-messages``.

Prints one line per operation with nodes/s and the ratio (trainsim time / baseline time), then
one JSON line. Times are the best of ``--repeat`` runs, in seconds.

    PYTHONPATH=src python bench/chakra_io.py [--ranks 64] [--repeat 3] [--no-messages]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from google.protobuf.internal.decoder import _DecodeVarint32  # noqa: E402

from trainsim.compute import OperatorTimer  # noqa: E402
from trainsim.workload import TraceWarning, WorkloadGraph, chakra  # noqa: E402
from trainsim.workload.chakra import reader  # noqa: E402
from trainsim.workload.chakra.schema import Node  # noqa: E402
from trainsim.workload.chakra.wire import encode_varint  # noqa: E402
from trainsim.workload.generate import Parallelism, generate  # noqa: E402
from trainsim.workload.models import get_model  # noqa: E402


def gpt3_graphs(ranks: int) -> list[WorkloadGraph]:
    parallelism = Parallelism(
        tp=8, pp=16, dp=8, micro_batch=1, global_batch=1536, recompute="full"
    )
    workload = generate(
        get_model("gpt3-175b"), parallelism, OperatorTimer("A100"), network_sizes=(8, 128)
    )
    return list(workload.graphs[:ranks])


def best_time(run: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


def split_frames(data: bytes) -> list[bytes]:
    pos, out = 0, []
    while pos < len(data):
        length, pos = _DecodeVarint32(data, pos)
        out.append(data[pos : pos + length])
        pos += length
    return out


def write_with_messages(graphs: list[WorkloadGraph], prefix: Path) -> None:
    for rank, graph in enumerate(graphs):
        path = chakra.rank_file(prefix, rank)
        parts = [encode_varint(len(graph.metadata)), graph.metadata]
        for data in chakra.encode_nodes_with_messages(graph, str(path)):
            parts += (encode_varint(len(data)), data)
        path.write_bytes(b"".join(parts))


def decline_file(
    data: bytes,
    tails: dict[bytes, tuple[tuple, Any] | None],
    names_cache: dict[str, str] | None = None,
    layout: dict[str, Any] | None = None,
) -> None:
    """``decode_file``'s stand-in (same signature): declines every file, so the row-by-row
    reader reads it."""
    return None


def read_with_messages(paths: list[Path]) -> None:
    """read_rank with the column-wise and row fast paths switched off."""
    decode_file, row = reader.decode_file, reader.RowCache.row
    reader.decode_file = decline_file
    reader.RowCache.row = lambda self, data: None  # type: ignore[method-assign]
    try:
        for path in paths:
            chakra.read_rank(path)
    finally:
        reader.decode_file, reader.RowCache.row = decode_file, row  # type: ignore[method-assign]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", type=int, default=64)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-messages", action="store_true", help="skip the message-path baseline")
    args = parser.parse_args()
    warnings.simplefilter("ignore", TraceWarning)
    graphs = gpt3_graphs(args.ranks)
    nodes = sum(len(g) for g in graphs)
    with tempfile.TemporaryDirectory() as tmp:
        prefix = Path(tmp) / "gpt3"
        paths = [chakra.rank_file(prefix, rank) for rank in range(len(graphs))]
        times = {
            "write_s": best_time(
                lambda: [chakra.write_rank(p, g) for p, g in zip(paths, graphs, strict=True)],
                args.repeat,
            ),
            "read_rank_s": best_time(lambda: [chakra.read_rank(p) for p in paths], args.repeat),
            "read_workload_s": best_time(
                lambda: chakra.read_workload(prefix, len(paths)), args.repeat
            ),
        }
        frames = [split_frames(p.read_bytes()) for p in paths]
        messages = [[Node.FromString(f) for f in file_frames[1:]] for file_frames in frames]

        def serialize() -> None:
            for file_messages in messages:
                parts: list[bytes] = []
                for message in file_messages:
                    data = message.SerializeToString()
                    parts += (encode_varint(len(data)), data)
                b"".join(parts)

        def parse() -> None:
            node = Node()
            for file_frames in frames:
                for frame in file_frames[1:]:
                    node.ParseFromString(frame)

        times["protobuf_serialize_s"] = best_time(serialize, args.repeat)
        times["protobuf_parse_s"] = best_time(parse, args.repeat)
        if not args.no_messages:
            other = Path(tmp) / "messages"
            times["messages_write_s"] = best_time(lambda: write_with_messages(graphs, other), 1)
            times["messages_read_s"] = best_time(lambda: read_with_messages(paths), 1)
    out: dict[str, object] = {"bench": "chakra_io", "case": "gpt3_175b", "ranks": len(graphs)}
    out.update(nodes=nodes, **times)
    rows = [
        ("write_rank", "write_s", "protobuf_serialize_s", "messages_write_s"),
        ("read_rank", "read_rank_s", "protobuf_parse_s", "messages_read_s"),
        ("read_workload", "read_workload_s", "protobuf_parse_s", "messages_read_s"),
    ]
    for label, key, protobuf_key, messages_key in rows:
        seconds = times[key]
        line = (
            f"chakra_io {label} gpt3-175b ({len(graphs)} ranks, {nodes} nodes): "
            f"{seconds:.3f} s, {nodes / seconds / 1e6:.2f} M nodes/s, "
            f"{seconds / len(graphs) * 1e3:.1f} ms/file; ratio {seconds / times[protobuf_key]:.2f}x "
            f"protobuf {protobuf_key.split('_')[1]}"
        )
        out[f"{label}_nodes_per_s"] = nodes / seconds
        out[f"{label}_ratio_protobuf"] = seconds / times[protobuf_key]
        if messages_key in times:
            out[f"{label}_ratio_messages"] = seconds / times[messages_key]
            line += f", {seconds / times[messages_key]:.3f}x message path"
        print(line)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
