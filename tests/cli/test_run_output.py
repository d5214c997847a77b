"""What `trainsim run` prints and writes: runs of zero length, ASTRA-sim's per-rank lines, the
summary's digits, every collective in the JSON, plain text when piped."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from trainsim.cli.main import main

from .test_run import EXAMPLE, ROOT, _run, _write_inputs

DATA = ROOT / "tests" / "data"


def _broadcast(b, rank):
    # as chakra's et-generator writes it: 64 KiB, no recorded duration (duration_micros 0)
    b.add(1, 7, "bc", comm_type=5, comm_size=1 << 16)


def _report(result, out):
    args = [sys.executable, "-m", "trainsim.cli.main", "report", str(result), "--out", str(out)]
    return subprocess.run(args, capture_output=True, text=True, timeout=120)


def test_a_run_of_zero_length_writes_its_json_and_report(tmp_path):
    d = _write_inputs(tmp_path, graph=_broadcast)
    proc = _run(d, "--compat", "default", "--json", str(d / "r.json"), "-q")
    assert proc.returncode == 0, proc.stderr
    document = json.loads((d / "r.json").read_text())
    assert document["makespan_s"] == 0
    assert [dim["utilization"] for dim in document["dims"]] == [[]]
    proc = _report(d / "r.json", d / "report")
    assert proc.returncode == 0, proc.stderr
    assert (d / "report" / "index.html").is_file()


def test_a_replayed_broadcast_of_no_duration_takes_1_ns_as_in_astra_sim(tmp_path):
    """ASTRA-sim replays a broadcast for duration_micros x 1000 ns and 1 ns when that is 0
    (Workload::issue_coll_comm, as issue_replay for compute); the default mode keeps 0."""
    d = _write_inputs(tmp_path, graph=_broadcast)
    finish = {}
    for mode in ("astra", "default"):
        proc = _run(d, "--compat", mode, "--json", str(d / f"{mode}.json"), "-q")
        assert proc.returncode == 0, proc.stderr
        finish[mode] = {round(r["finish_s"] * 1e9) for r in json.loads((d / f"{mode}.json").read_text())["ranks"]}
    assert finish == {"astra": {1}, "default": {0}}


ASTRA_TEMPLATE = DATA / "astra_regression_template"
ASTRA_STATS = ("finished, ", "Wall time: ", "Comm time: ")


def _astra_flags(d: Path) -> list[str]:
    return [
        f"--workload-configuration={d / 'workload' / 'all_reduce'}",
        f"--system-configuration={d / 'system_cfg.json'}",
        f"--network-configuration={d / 'network_cfg.yml'}",
        f"--remote-memory-configuration={d / 'remote_memory_cfg.json'}",
    ]


def _sys_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("sys[") and any(k in line for k in ASTRA_STATS)]


@pytest.mark.parametrize("backend", ["congestion_aware", "congestion_unaware"])
def test_astra_inputs_print_astra_sims_per_rank_lines(capsys, backend):
    """ASTRA-sim's regression template: its stdout's result lines, to the character."""
    expected = _sys_lines((ASTRA_TEMPLATE / "expected_stdout.txt").read_text())
    assert len(expected) == 3 * 8 and "sys[7] finished, 117780 cycles, exposed communication 117780 cycles." in expected
    assert main(["run", *_astra_flags(ASTRA_TEMPLATE), "--backend", backend]) == 0
    out = capsys.readouterr().out
    assert _sys_lines(out) == expected
    assert "makespan 117.780 us" in out  # the summary follows, with every digit to the ns


def test_the_lines_are_asked_for_on_a_platform_file_and_refused_on_astra_files(capsys):
    native = ["run", str(EXAMPLE / "platform.yaml"), "--workload", str(EXAMPLE / "workload" / "ring")]
    assert main(native) == 0
    assert "sys[" not in capsys.readouterr().out
    assert main([*native, "--astra-output"]) == 0
    lines = _sys_lines(capsys.readouterr().out)
    # the example by hand (tests/cli/test_run.py): 90,174 ns, of which 7 x 7,000 ns compute
    assert lines[:3] == [
        "sys[0] finished, 90174 cycles, exposed communication 41174 cycles.",
        "sys[0], Wall time: 90174",
        "sys[0], Comm time: 41174",
    ]
    assert len([line for line in lines if "finished" in line]) == 8
    assert main(["run", *_astra_flags(ASTRA_TEMPLATE), "--no-astra-output"]) == 0
    assert "sys[" not in capsys.readouterr().out


TINY_TRANSFORMER = {"num_hidden_layers": 64, "hidden_size": 256, "num_attention_heads": 4, "intermediate_size": 1024, "vocab_size": 1000, "max_position_embeddings": 128}
TWO_NPUS = "network:\n  dims:\n    - {topology: Ring, size: 2, bandwidth_gbps: 50, latency_ns: 500}\nsystem: {endpoint_delay_ns: 10, local_mem_bw_gbps: 1600}\n"


def test_every_collective_is_in_the_json_and_the_report_says_what_it_shows(tmp_path):
    """More than 10,000 collectives (a 64-layer transformer, tensor-parallel on 2 ranks, 40
    micro-batches): the JSON counts every one, its records reach the end of the step, and the
    page says how many of its rows it shows."""
    from trainsim.enums import NodeType
    from trainsim.workload.chakra import read_workload

    (tmp_path / "tiny.json").write_text(json.dumps(TINY_TRANSFORMER))
    (tmp_path / "platform.yaml").write_text(TWO_NPUS)
    prefix = str(tmp_path / "wl")
    assert main(["generate", str(tmp_path / "tiny.json"), "--tp", "2", "--global-batch", "40", "--out", prefix, "-q"]) == 0
    nodes = sum(int((g.types == NodeType.COMM_COLL_NODE).sum()) for g in read_workload(prefix))
    assert nodes > 10_000
    result = tmp_path / "r.json"
    run = ["run", str(tmp_path / "platform.yaml"), "--workload", prefix, "--comm-group-configuration", f"{prefix}.comm_groups.json"]
    assert main([*run, "--json", str(result), "-q"]) == 0
    document = json.loads(result.read_text())
    table = document["collectives"]
    assert table["records"] == sum(table["columns"]["ranks"]) == nodes
    assert table["rows"] == len(table["columns"]["end_s"]) > 10_000
    assert 0.99 * document["makespan_s"] < max(table["columns"]["end_s"]) <= document["makespan_s"]
    assert main(["report", str(result), "--out", str(tmp_path / "report")]) == 0
    page = (tmp_path / "report" / "index.html").read_text()
    assert f"first 200 of {table['rows']:,} rows ({nodes:,} records" in page
