import json

from trainsim.cli.main import main


def test_repurpose_command_writes_results_and_plot(tmp_path, capsys):
    out = tmp_path / "out"
    rc = main(["repurpose", "--workers", "2", "--budget", "0", "--seed", "1", "--out", str(out)])
    assert rc == 0
    assert {p.name for p in out.iterdir()} == {
        "results.json",
        "latency.json",
        "table.md",
        "accuracy_vs_communication.png",
    }
    doc = json.loads((out / "results.json").read_text())
    assert doc["config"]["workers"] == [2] and doc["config"]["seeds"] == [1]
    assert {r["method"] for r in doc["summary"]} >= {"repurpose", "naive", "direct_tp"}
    lat = json.loads((out / "latency.json").read_text())
    assert {r["platform"] for r in lat} == {"datacenter", "edge"}
    assert "repurpose" in capsys.readouterr().out


def test_repurpose_command_rejects_bad_workers(tmp_path, capsys):
    rc = main(["repurpose", "--workers", "3", "--budget", "0.05", "--out", str(tmp_path / "o")])
    assert rc == 2
    assert "workers: 3: expected a worker count" in capsys.readouterr().err
