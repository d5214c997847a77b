"""Breakdown against ASTRA-sim's exposed communication, and the trace-event format of a
3-layer data-parallel step on 8 ranks."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.reference_data import RESULTS
from trainsim.cli.main import main
from trainsim.config.types import CollectiveImpl, DimSpec, NetworkSpec, Platform, SystemSpec
from trainsim.report.breakdown import breakdown, breakdown_dataframe
from trainsim.report.perfetto import trace_events
from trainsim.system.api import simulate
from trainsim.workload.micro import data_parallel_workload

ROOT = Path(__file__).resolve().parents[2]


def _run_case(tmp_path, workload, system="1d_ring.json"):
    out = tmp_path / "r.json"
    code = main([
        "run", f"--workload-configuration={RESULTS / 'inputs/workload' / workload}",
        f"--system-configuration={RESULTS / 'inputs/system' / system}",
        f"--network-configuration={RESULTS / 'inputs/network/ring8.yml'}",
        f"--remote-memory-configuration={RESULTS / 'inputs/remote_memory.json'}", "--json", str(out), "-q",
    ])
    assert code == 0
    return json.loads(out.read_text())


@pytest.mark.parametrize(
    ("workload", "compute_ns"),
    [("all_reduce/8npus_1MiB/et", 0), ("dp/8npus_8layers_64MiB/et", 8 * (100_000 + 200_000))],
)
def test_exposed_comm_is_astra_definition(tmp_path, workload, compute_ns):
    # ASTRA-sim: exposed communication = finish time - summed compute (reference-results/README.md)
    doc = _run_case(tmp_path, workload)
    for row in doc["breakdown"]:
        assert row["compute_s"] == pytest.approx(compute_ns * 1e-9)
        assert row["exposed_comm_s"] == pytest.approx(row["finish_s"] - compute_ns * 1e-9)
    assert len(doc["breakdown"]) == 1 and doc["breakdown"][0]["ranks"] == list(range(8))


def dp_result():
    system = SystemSpec(preferred_dataset_splits=4, collective_optimization="localBWAware", implementations=CollectiveImpl(all_reduce=("ring",)))
    plat = Platform(NetworkSpec((DimSpec("Ring", 8, 50e9, 500.0),)), system)
    return simulate(plat, data_parallel_workload(8, 3, 64 << 20))


def test_dp_step_trace_follows_the_trace_event_format():
    events = trace_events(dp_result(), expand=True)
    assert {e["ph"] for e in events} <= {"M", "X", "C", "B", "E"}
    for e in events:
        assert {"ph", "pid", "tid", "name"} <= e.keys()
        if e["ph"] == "X":
            assert isinstance(e["ts"], float) and e["dur"] >= 0 and e["cat"]
        if e["ph"] == "M":
            assert e["name"] in {"process_name", "process_sort_index", "thread_name"} and e["args"]
    stamps = [e["ts"] for e in events if e["ph"] != "M"]
    assert stamps == sorted(stamps)
    begins = [e for e in events if e["ph"] == "B"]
    ends = [e for e in events if e["ph"] == "E"]
    assert len(begins) == len(ends)
    complete = [e for e in events if e["ph"] == "X" and e["cat"] != "chunk"]
    assert len(complete) == 8 * 9  # 3 forward, 3 backward, 3 all-reduces per rank
    chunk_slices = [e for e in events if e["ph"] == "X" and e["cat"] == "chunk"]
    assert len(chunk_slices) == 8 * 3 * 4  # 4 chunks per all-reduce, nested in its slice
    colls = [e for e in complete if e["cat"] == "comm"]
    for ch in chunk_slices:
        assert any(c["pid"] == ch["pid"] and c["ts"] <= ch["ts"] + 1e-9 and ch["ts"] + ch["dur"] <= c["ts"] + c["dur"] + 1e-9 for c in colls)
    assert {e["args"]["name"] for e in events if e["name"] == "process_name"} == {f"rank {r}" for r in range(8)}
    json.dumps({"traceEvents": events})


def test_result_and_breakdown_as_dataframes():
    result = dp_result()
    frame = result.to_dataframe()
    assert list(frame.index) == list(range(8)) and "exposed_comm_s" in frame.columns
    bd = breakdown_dataframe(breakdown(result))
    assert len(bd) == 1 and bd.loc[0, "compute_s"] == pytest.approx(3 * 300e-6)


def test_no_progress_bar_when_piped_or_json_to_stdout():
    example = ROOT / "examples" / "ring_allreduce"
    proc = subprocess.run(
        [sys.executable, "-m", "trainsim.cli.main", "run", str(example / "platform.yaml"), "--workload", str(example / "workload" / "ring"), "--json", "-"],
        capture_output=True, text=True, timeout=60,
    )
    assert proc.returncode == 0
    json.loads(proc.stdout)  # nothing but the JSON document on stdout
    assert "simulating" not in proc.stderr and "\x1b[" not in proc.stdout
