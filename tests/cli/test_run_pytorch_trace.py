"""`trainsim run` on a real PyTorch-derived Chakra trace (chakra's feeder test trace,
reference-data/reference-workloads/chakra-tests). ASTRA-sim refuses it (a ctrl_dep on an absent node; then "Comm node
should not be on CPU"), and with its cycle-closing ctrl_deps left in it runs 1,381 of the 3,664
nodes. Here every node runs, under three rules with one warning each (docs/workloads.md,
"PyTorch traces")."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from trainsim.cli.main import main
from trainsim.report.collectives import rows_of
from trainsim.workload import TraceWarning
from trainsim.workload.chakra.reader import read_rank

NET = "topology: [ Ring ]\nnpus_count: [ 2 ]\nbandwidth: [ 50.0 ]\nlatency: [ 500.0 ]\n"
SYS = {
    "scheduling-policy": "LIFO",
    "endpoint-delay": 10,
    "active-chunks-per-dimension": 1,
    "preferred-dataset-splits": 4,
    "collective-optimization": "localBWAware",
    "local-mem-bw": 1600,
    **{f"{c}-implementation": ["ring"] for c in ("all-reduce", "all-gather", "reduce-scatter", "all-to-all")},
}
WARNINGS = (
    "1277 ctrl_deps name nodes absent from the file; dropped",
    "14 communication node(s) marked is_cpu_op",
    "937 ctrl_deps closed a dependency cycle with other deps; dropped",
)


def test_every_node_of_a_real_pytorch_trace_runs(pytorch_trace, tmp_path, capsys):
    # One rank's trace: a network has 2 NPUs at least and one file per NPU, so both ranks get
    # the same file, as two data-parallel replicas of the job would.
    for rank in (0, 1):
        shutil.copy(pytorch_trace, tmp_path / f"trace.{rank}.et")
    (tmp_path / "net.yml").write_text(NET)
    (tmp_path / "sys.json").write_text(json.dumps(SYS))
    out = tmp_path / "r.json"
    code = main([
        "run", "--workload", str(tmp_path / "trace"),
        "--network-configuration", str(tmp_path / "net.yml"),
        "--system-configuration", str(tmp_path / "sys.json"),
        "--json", str(out),
    ])
    assert code == 0  # a node left unfinished would be a DeadlockError (exit 4)
    stderr = " ".join(capsys.readouterr().err.split())
    for warning in WARNINGS:
        assert stderr.count(warning) == 1, warning
    result = json.loads(out.read_text())
    assert [r["nodes"] for r in result["ranks"]] == [3664, 3664]
    # the 14 host-side c10d calls run on the CPU for their duration, beside the trace's other
    # CPU ops: CPU busy time is every CPU compute node's duration (0 us replays as 1 ns)
    with pytest.warns(TraceWarning):
        graph = read_rank(pytorch_trace)
    cpu = graph.is_cpu_op & (graph.types == 4)
    cpu_ns = np.maximum(np.round(graph.duration_s[cpu] * 1e9), 1).sum()
    assert result["ranks"][0]["cpu_s"] == pytest.approx(cpu_ns / 1e9, abs=1e-12)
    # the collectives are the 7 GPU NCCL kernels: 2 broadcasts (replayed) and 5 all-reduces
    kinds = [c["type"] for c in rows_of(result["collectives"])]
    assert sorted(kinds) == ["all_reduce"] * 5 + ["broadcast"] * 2
