"""Benchmark: reading a real Chakra ET trace into a WorkloadGraph (DESIGN.md, "Speed").

Case: chakra's feeder test trace (3,664 PyTorch-derived nodes, 2.98 MB, from
reference-data/reference-workloads/chakra-tests/feeder_tests_trace.tar.gz). Baseline, measured
in the same run: a plain loop that splits the file on its varint length prefixes and calls
``ParseFromString`` on each message, i.e. the protobuf parse alone, with no graph built.
Prints one line with the ratio (trainsim time / baseline time) and one JSON line. Times are the
best of ``--repeat`` runs, in seconds.

    python bench/chakra_read.py [--archive PATH] [--repeat N]
"""

from __future__ import annotations

import argparse
import json
import sys
import tarfile
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from google.protobuf.internal.decoder import _DecodeVarint32  # noqa: E402

from trainsim.workload import TraceWarning, read_rank  # noqa: E402
from trainsim.workload.chakra.schema import GlobalMetadata, Node  # noqa: E402

ARCHIVE = ROOT / "reference-data/reference-workloads/chakra-tests/feeder_tests_trace.tar.gz"


def protobuf_parse_loop(path: Path) -> int:
    """The baseline, as chakra's own Python reader (protolib.decodeMessage) does it: protobuf's
    varint decoder for the framing, then ParseFromString per message; returns the node count."""
    data = path.read_bytes()
    pos = count = 0
    while pos < len(data):
        length, pos = _DecodeVarint32(data, pos)
        message = GlobalMetadata() if count == 0 else Node()
        message.ParseFromString(data[pos : pos + length])
        pos += length
        count += 1
    return count - 1


def trainsim_read(path: Path) -> int:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TraceWarning)
        return len(read_rank(path))


def best_time(run: Callable[[Path], int], path: Path, repeat: int) -> tuple[float, int]:
    times, nodes = [], 0
    for _ in range(repeat):
        start = time.perf_counter()
        nodes = run(path)
        times.append(time.perf_counter() - start)
    return min(times), nodes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--archive", type=Path, default=ARCHIVE, help="the trace archive (default: the vendored one)")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        with tarfile.open(args.archive) as tar:
            tar.extractall(tmp, filter="data")
        trace = Path(tmp) / "tests" / "data" / "chakra.0.et"
        baseline_s, baseline_nodes = best_time(protobuf_parse_loop, trace, args.repeat)
        trainsim_s, nodes = best_time(trainsim_read, trace, args.repeat)
    assert nodes == baseline_nodes, (nodes, baseline_nodes)
    ratio = trainsim_s / baseline_s
    print(
        f"chakra_read feeder_tests_trace ({nodes} nodes): trainsim {trainsim_s * 1e3:.1f} ms, "
        f"protobuf parse loop {baseline_s * 1e3:.1f} ms, ratio {ratio:.2f}x"
    )
    print(
        json.dumps(
            {
                "bench": "chakra_read",
                "case": "feeder_tests_trace",
                "nodes": nodes,
                "trainsim_s": trainsim_s,
                "baseline_s": baseline_s,
                "ratio": ratio,
            }
        )
    )


if __name__ == "__main__":
    main()
