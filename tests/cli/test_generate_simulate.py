"""`trainsim generate --platform`: the generated step simulated in memory, no rank files."""

import io
import json

import numpy as np
import pytest
from rich.console import Console

from trainsim.cli.main import main
from trainsim.compute import OperatorTimer
from trainsim.config.platform import load_platform
from trainsim.enums import NodeType
from trainsim.report.collectives import rows_of
from trainsim.system.api import simulate
from trainsim.workload.generate import Parallelism, generate
from trainsim.workload.models import get_model

# TP 2 fills the first dimension, so each data-parallel group lies in the second one: a
# group crossing dimensions unevenly (TP 2 on 4-rank nodes) ends at different times on its
# members, so the replica slice runs more than one replica (tests/system/test_replica.py)
PLATFORM = """\
network:
  dims:
    - {topology: Switch, size: 2, bandwidth_gbps: 300, latency_ns: 700}
    - {topology: Switch, size: 8, bandwidth_gbps: 25, latency_ns: 2000}
"""
SMALL = ["megatron-1.7b", "--tp", "2", "--pp", "2", "--dp", "4", "--micro-batch", "1", "--global-batch", "8", "--seq", "512"]


@pytest.fixture
def platform_file(tmp_path):
    path = tmp_path / "platform.yaml"
    path.write_text(PLATFORM)
    return path


def _generate_on_switches(tmp_path, capsys, sizes):
    """`trainsim generate` SMALL on two Switch dimensions of ``sizes`` (fast in-node, slow
    between nodes) with --json: the platform file, the printed text (one line) and the JSON."""
    platform_file = tmp_path / "platform.yaml"
    platform_file.write_text(
        f"network:\n  dims:\n    - {{topology: Switch, size: {sizes[0]}, bandwidth_gbps: 300, latency_ns: 700}}\n"
        f"    - {{topology: Switch, size: {sizes[1]}, bandwidth_gbps: 25, latency_ns: 2000}}\n"
    )
    summary_path = tmp_path / "s.json"
    assert main(["generate", *SMALL, "--platform", str(platform_file), "--json", str(summary_path)]) == 0
    return platform_file, " ".join(capsys.readouterr().out.split()), json.loads(summary_path.read_text())


def _full_makespan(platform_file, sizes) -> float:
    par = Parallelism(tp=2, pp=2, dp=4, micro_batch=1, global_batch=8)
    from dataclasses import replace

    w = generate(replace(get_model("megatron-1.7b"), seq=512), par, OperatorTimer("A100"), network_sizes=sizes)
    return simulate(w.platform(load_platform(platform_file)), w.graphs, symmetry=False).makespan_s


def test_simulates_one_replica_and_writes_no_files(tmp_path, capsys):
    # the pipeline stages and the data-parallel groups in different dimensions: on (2, 8) the
    # stages' tied-embedding all-reduce may still hold the dimension's injection port when
    # the data-parallel reduction starts, and the slice refuses (tests/system/test_replica.py)
    platform_file, printed, document = _generate_on_switches(tmp_path, capsys, (8, 2))
    assert "2 of 16 ranks simulated" in printed
    assert "data-parallel replica 0 (4 ranks) stands for every replica; one rank per pipeline stage" in printed
    assert "TFLOP/s per GPU" in printed
    assert sorted(p.name for p in tmp_path.iterdir()) == ["platform.yaml", "s.json"]
    sim = document["simulation"]
    assert sim["mode"] == "replica slice" and sim["ranks_simulated"] == 2 and sim["world"] == 16
    # every rank, those that did not run with the times of the rank they repeat
    assert [r["rank"] for r in document["ranks"]] == list(range(16))
    assert document["makespan_s"] == pytest.approx(_full_makespan(platform_file, (8, 2)), rel=1e-12)
    assert sim["flops_per_gpu"] == pytest.approx(sim["flop_per_gpu"] / document["makespan_s"])


def test_every_rank_on_request_and_when_the_backend_needs_it(tmp_path, platform_file):
    for extra, why in ((["--every-rank"], ""), (["--backend", "congestion_aware"], "pairwise symmetry class")):
        summary_path = tmp_path / "s.json"
        assert main(["generate", *SMALL, "--platform", str(platform_file), "--json", str(summary_path), "-q", *extra]) == 0
        sim = json.loads(summary_path.read_text())["simulation"]
        assert sim["mode"] == "every rank" and sim["ranks_simulated"] == 16
        assert why in sim["why_every_rank"]
    assert sim["backend"] == "congestion_aware"


def test_writes_and_simulates_together(tmp_path, platform_file):
    prefix = tmp_path / "out" / "w"
    assert main(["generate", *SMALL, "--platform", str(platform_file), "--out", str(prefix), "-q"]) == 0
    assert len(list(prefix.parent.glob("w.*.et"))) == 16


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "nothing to do: no --out and no --platform"),
        (["--platform", "{p}", "--network-dims", "16"], "--network-dims 16 differs from the platform's dimensions 2,8"),
        (["--platform", "{p}", "--dp", "2"], "network has 16 NPUs (2 x 8) but TP x PP x DP = 8"),
        (["--platform", "{p}", "--backend", "nonesuch"], "unknown network backend 'nonesuch'"),
    ],
)
def test_mistakes(platform_file, capsys, args, message):
    base = [a for a in SMALL]
    if "--dp" in args:
        i = base.index("--dp")
        del base[i : i + 2]
    args = [str(platform_file) if a == "{p}" else a for a in args]
    assert main(["generate", *base, *args]) == 2
    assert message in capsys.readouterr().err


def test_a_layered_model_is_not_told_it_records_no_parallelism(platform_file, capsys):
    """resnet50 data-parallel: its collectives all span every rank, so there is no replica to
    slice and nothing to explain (it used to print "records no parallelism ... generate it
    with trainsim.workload.generate.generate", about a workload that had just been generated)."""
    assert main(["generate", "resnet50", "--dp", "16", "--platform", str(platform_file)]) == 0
    printed = " ".join(capsys.readouterr().out.split())
    assert "no parallelism" not in printed and "every rank simulated:" not in printed
    assert "16 of 16 ranks simulated" in printed


def test_json_is_a_result_that_report_reads(tmp_path, platform_file, capsys):
    """--json holds what `trainsim run --json` writes (every rank, the breakdown with the step's
    categories, collectives, utilization) beside the generator's summary; `trainsim report`
    turns it into a page."""
    path = tmp_path / "g.json"
    assert main(["generate", *SMALL, "--recompute", "full", "--platform", str(platform_file), "--json", str(path), "-q"]) == 0
    document = json.loads(path.read_text())
    for key in ("makespan_s", "ranks", "breakdown", "collectives", "dims", "inputs", "memory", "simulation"):
        assert key in document, key
    steps = [row["step"] for row in document["breakdown"]]
    assert sorted(r for row in document["breakdown"] for r in row["ranks"]) == list(range(16))
    for step in steps:
        assert sum(step.values()) == pytest.approx(document["makespan_s"], rel=1e-12)
        assert step["recompute"] > 0 and step["tp_comm"] > 0 and step["pipeline_bubble"] > 0
    assert {row["step_from"] for row in document["breakdown"]} == {"roles"}
    # rows of the ranks that ran, each counting the ranks that repeat it: every collective node
    par = Parallelism(tp=2, pp=2, dp=4, micro_batch=1, global_batch=8, recompute="full")
    from dataclasses import replace

    w = generate(replace(get_model("megatron-1.7b"), seq=512), par, OperatorTimer("A100"), network_sizes=(2, 8))
    assert sum(c["ranks"] for c in rows_of(document["collectives"])) == sum(int(np.sum(g.types == NodeType.COMM_COLL_NODE)) for g in w.graphs)
    out = tmp_path / "report"
    capsys.readouterr()
    assert main(["report", str(path), "--out", str(out)]) == 0
    page = (out / "index.html").read_text()
    assert "Where the step goes" in page and "bubble" in page and "Of bound" in page


def test_trace_writes_a_chrome_trace(tmp_path, platform_file):
    path = tmp_path / "t.json"
    assert main(["generate", *SMALL, "--platform", str(platform_file), "--trace", str(path), "-q"]) == 0
    document = json.loads(path.read_text())
    events = document["traceEvents"]
    slices = [e for e in events if e["ph"] == "X"]
    assert slices and all(isinstance(e["ts"], float) and e["dur"] >= 0 and {"pid", "tid", "name"} <= e.keys() for e in slices)
    names = [e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "process_name"]
    # ranks with the same timeline folded: one process per pipeline stage, covering all 16
    assert len(names) == 2 and all("identical" in n for n in names)
    assert sum(int(n.split("(")[1].split()[0]) for n in names) == 16
    expanded = tmp_path / "e.json"
    assert main(["generate", *SMALL, "--platform", str(platform_file), "--trace", str(expanded), "--expand", "-q"]) == 0
    assert len({e["pid"] for e in json.loads(expanded.read_text())["traceEvents"] if e["ph"] == "X"}) == 16


def test_an_expanded_trace_over_the_budget_is_refused_before_the_step_runs(tmp_path, platform_file, capsys, monkeypatch):
    from dataclasses import replace

    from trainsim import budget
    from trainsim.system.symmetry import replica

    monkeypatch.setitem(budget.LIMITS, "trace_events", replace(budget.LIMITS["trace_events"], value=100))
    ran = []
    monkeypatch.setattr(replica, "simulate_replica", lambda *a, **k: ran.append(1))
    path = tmp_path / "e.json"
    assert main(["generate", *SMALL, "--platform", str(platform_file), "--trace", str(path), "--expand", "-q"]) == 2
    err = capsys.readouterr().err
    assert "--expand: a trace of every rank's timeline (16 ranks)" in err and "--force" in err
    assert not ran and not path.exists()  # refused before any simulation
    monkeypatch.undo()
    monkeypatch.setitem(budget.LIMITS, "trace_events", replace(budget.LIMITS["trace_events"], value=100))
    assert main(["generate", *SMALL, "--platform", str(platform_file), "--trace", str(path), "--expand", "-q", "--force"]) == 0
    assert len({e["pid"] for e in json.loads(path.read_text())["traceEvents"] if e["ph"] == "X"}) == 16


def test_trace_needs_a_platform(tmp_path, capsys):
    assert main(["generate", *SMALL, "--out", str(tmp_path / "w"), "--trace", str(tmp_path / "t.json")]) == 2
    assert "--trace needs a simulation" in capsys.readouterr().err


def test_progress_bar_on_a_terminal(platform_file, monkeypatch):
    """The progress display gets the step's simulations as one count of nodes, up to all of
    them; on a terminal it draws a bar (a forced-terminal console here; no wall-clock)."""
    from trainsim.cli import run_cmd

    screen = io.StringIO()
    calls = []

    class Display(run_cmd.ProgressDisplay):
        def __init__(self, *, enabled):
            super().__init__(enabled=enabled, delay_s=0.0)
            self.console = Console(file=screen, force_terminal=True, width=100)
            self.enabled = enabled and self.console.is_terminal

        def update(self, now_ns, done, total):
            calls.append((now_ns, done, total))
            super().update(now_ns, done, total)

    monkeypatch.setattr(run_cmd, "ProgressDisplay", Display)
    assert main(["generate", *SMALL, "--platform", str(platform_file)]) == 0
    assert calls
    done = [c[1] for c in calls]
    assert done == sorted(done) and done[-1] == calls[-1][2] > 0
    assert "simulating" in screen.getvalue()
    drawn = len(screen.getvalue())
    assert main(["generate", *SMALL, "--platform", str(platform_file), "-q"]) == 0
    assert len(screen.getvalue()) == drawn  # --quiet: no bar


def test_says_which_replicas_stand_for_all(tmp_path, capsys):
    """TP 2 on 4-GPU nodes: the data-parallel rings leave the node on every second edge, so
    replicas 0 and 1 run and the output says so (tests/system/test_replica.py)."""
    platform_file, printed, document = _generate_on_switches(tmp_path, capsys, (4, 4))
    assert "data-parallel replicas 0-1 (8 ranks) stand for every replica (replica k repeats replica k mod 2" in printed
    sim = document["simulation"]
    assert sim["mode"] == "replica slice" and sim["replicas_simulated"] == 2 and sim["ranks_simulated"] == 4
    assert document["makespan_s"] == _full_makespan(platform_file, (4, 4))
