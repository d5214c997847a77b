"""`trainsim generate` end to end (needs the Chakra writer)."""

import json

import pytest

from trainsim.cli.main import main

pytest.importorskip("trainsim.workload.chakra.reader")


def test_generate_writes_rank_files_and_groups(tmp_path):
    prefix = tmp_path / "out" / "gpt"
    code = main(["generate", "megatron-1.7b", "--tp", "2", "--pp", "2", "--dp", "2", "--micro-batch", "1",
                 "--global-batch", "4", "--seq", "512", "--out", str(prefix), "--json", str(tmp_path / "s.json"), "-q"])
    assert code == 0
    assert sorted(p.name for p in prefix.parent.glob("gpt.*.et")) == [f"gpt.{r}.et" for r in range(8)]
    groups = json.loads((tmp_path / "out" / "gpt.comm_groups.json").read_text())
    assert [0, 1] in groups.values()
    summary = json.loads((tmp_path / "s.json").read_text())
    assert summary["world"] == 8 and len(summary["memory"]) == 2
    from trainsim.workload.chakra import read_workload

    graphs = read_workload(str(prefix), 8)
    # Megatron order (TP innermost, then DP, then PP): rank 3 is (tp 1, dp 1) of stage 0, rank 4 starts stage 1
    assert len(graphs[3]) == summary["nodes_per_stage"][0]
    assert len(graphs[4]) == summary["nodes_per_stage"][1]


def test_generate_infeasible_exit_code(tmp_path, capsys):
    code = main(["generate", "gpt3-175b", "--out", str(tmp_path / "x"), "-q"])
    assert code == 3
    assert "GB per rank" in capsys.readouterr().err
