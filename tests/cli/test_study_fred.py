"""``trainsim study fred`` end to end: tables printed, JSON written, bad input one line."""

from __future__ import annotations

import json

from trainsim.cli.main import main


def test_study_fred_prints_and_writes(tmp_path, capsys):
    out = tmp_path / "fred.json"
    assert main(["study", "fred", "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "20-way all-reduce" in text and "Transformer-1T" in text and "speed-up D" in text
    doc = json.loads(out.read_text())
    assert {r["workload"] for r in doc["speedups"]} == {"ResNet-152", "Transformer-17B", "GPT-3", "Transformer-1T"}
    assert all(r["speedup"] > 1 for r in doc["speedups"])
    assert doc["io_fraction"]["mesh"][0] < doc["io_fraction"]["fred_d"][0]


def test_study_fred_bad_placement(capsys):
    assert main(["study", "fred", "--placement", "diagonal"]) == 2
    err = capsys.readouterr().err
    assert "placement" in err and "Traceback" not in err
