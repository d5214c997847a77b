"""`trainsim generate --platform`: the generated step simulated in memory, no rank files."""

import json

import pytest

from trainsim.cli.main import main
from trainsim.compute import OperatorTimer
from trainsim.config.platform import load_platform
from trainsim.system.api import simulate
from trainsim.workload.generate import Parallelism, generate
from trainsim.workload.models import get_model

PLATFORM = """\
network:
  dims:
    - {topology: Switch, size: 4, bandwidth_gbps: 300, latency_ns: 700}
    - {topology: Switch, size: 4, bandwidth_gbps: 25, latency_ns: 2000}
"""
SMALL = ["megatron-1.7b", "--tp", "2", "--pp", "2", "--dp", "4", "--micro-batch", "1", "--global-batch", "8", "--seq", "512"]


@pytest.fixture
def platform_file(tmp_path):
    path = tmp_path / "platform.yaml"
    path.write_text(PLATFORM)
    return path


def _full_makespan(platform_file) -> float:
    par = Parallelism(tp=2, pp=2, dp=4, micro_batch=1, global_batch=8)
    from dataclasses import replace

    w = generate(replace(get_model("megatron-1.7b"), seq=512), par, OperatorTimer("A100"), network_sizes=(4, 4))
    return simulate(w.platform(load_platform(platform_file)), w.graphs).makespan_s


def test_simulates_one_replica_and_writes_no_files(tmp_path, platform_file, capsys):
    summary_path = tmp_path / "s.json"
    assert main(["generate", *SMALL, "--platform", str(platform_file), "--json", str(summary_path)]) == 0
    printed = " ".join(capsys.readouterr().out.split())
    assert "2 of 16 ranks simulated" in printed
    assert "data-parallel replica 0 (4 ranks) stands for every replica; one rank per pipeline stage" in printed
    assert "TFLOP/s per GPU" in printed
    assert sorted(p.name for p in tmp_path.iterdir()) == ["platform.yaml", "s.json"]
    sim = json.loads(summary_path.read_text())["simulation"]
    assert sim["mode"] == "replica slice" and sim["ranks_simulated"] == 2 and sim["world"] == 16
    assert len(sim["ranks"]) == 4
    assert sim["makespan_s"] == pytest.approx(_full_makespan(platform_file), rel=1e-12)
    assert sim["flops_per_gpu"] == pytest.approx(sim["flop_per_gpu"] / sim["makespan_s"])


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
        (["--platform", "{p}", "--network-dims", "16"], "--network-dims 16 differs from the platform's dimensions 4,4"),
        (["--platform", "{p}", "--dp", "2"], "network has 16 NPUs (4 x 4) but TP x PP x DP = 8"),
        (["--platform", "{p}", "--backend", "packet"], "unknown network backend 'packet'"),
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
