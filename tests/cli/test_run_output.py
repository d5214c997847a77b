"""What `trainsim run` prints and writes: runs of zero length, ASTRA-sim's per-rank lines, the
summary's digits, every collective in the JSON, plain text when piped."""

import json
import subprocess
import sys

from .test_run import _run, _write_inputs


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
