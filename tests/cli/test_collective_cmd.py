"""`trainsim collective`: the nccl-tests-style table and its JSON (issue 17)."""

from __future__ import annotations

import json
from pathlib import Path

from trainsim.cli.main import main

DGX = str(Path(__file__).resolve().parents[2] / "examples" / "dgx_a100" / "platform.yaml")


def test_prints_one_row_per_size(capsys):
    assert main(["collective", "all_reduce", "--platform", DGX, "--sizes", "32M..128M"]) == 0
    out = capsys.readouterr().out
    assert "1024 ranks" in out and "busbw (GB/s)" in out
    for size in (33554432, 67108864, 134217728):
        assert str(size) in out


def test_json_rows(tmp_path):
    path = tmp_path / "r.json"
    assert main(["collective", "all_gather", "--platform", DGX, "--sizes", "1G,2G", "--json", str(path)]) == 0
    doc = json.loads(path.read_text())
    assert doc["ranks"] == 1024 and [r["size_bytes"] for r in doc["rows"]] == [1 << 30, 2 << 30]
    r = doc["rows"][0]
    assert r["algbw_gbps"] == (1 << 30) / r["time_s"] / 1e9


def test_bad_input_is_one_line(capsys):
    assert main(["collective", "all_reduce", "--platform", DGX, "--sizes", "8G..1G"]) == 2
    assert main(["collective", "allreduce2", "--platform", DGX, "--sizes", "1G"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.count("trainsim: error") == 2
