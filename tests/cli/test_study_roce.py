"""``trainsim study roce`` end to end on the 32-NPU fabric: the table printed, CSV and JSON
written, a store resumed, bad input one line."""

from __future__ import annotations

import csv
import json

import pytest

from trainsim.cli.main import main
from trainsim.network.packet import native

ENGINE = "native" if native.available() else "python"


def test_study_roce_prints_and_writes(tmp_path, capsys):
    out, table, store = tmp_path / "roce.json", tmp_path / "roce.csv", tmp_path / "roce.sqlite"
    args = ["study", "roce", "--platform", "32", "--experiments", "incast", "--size-mib", "1", "--schemes", "dcqcn",
            "--engine", ENGINE, "--store", str(store), "--json", str(out), "--csv", str(table)]  # fmt: skip
    assert main(args) == 0
    text = capsys.readouterr().out
    assert "incast 31 -> 1, 32 NPUs, 1 MiB per NPU" in text and "vs PFC only" in text
    rows = json.loads(out.read_text())["rows"]
    assert [r["scheme"] for r in rows] == ["none", "dcqcn"]
    assert rows[0]["vs_pfc_only"] == 1.0 and rows[1]["vs_pfc_only"] != 1.0
    assert f"{rows[1]['vs_pfc_only']:.3f}" in text
    with table.open() as f:
        assert [r["scheme"] for r in csv.DictReader(f)] == ["none", "dcqcn"]
    assert main(args) == 0
    assert capsys.readouterr().out.count("in the store") == 2


def test_study_roce_bad_inputs(capsys):
    for args, word in ((["--schemes", "swift"], "schemes"), (["--experiments", "bert"], "experiments"),
                       (["--size-mib", "0"], "size-mib"), (["--platform", "64"], "platform"),
                       (["--engine", "gpu"], "engine")):  # fmt: skip
        assert main(["study", "roce", *args]) == 2
        err = capsys.readouterr().err
        assert word in err and "Traceback" not in err


@pytest.mark.slow
def test_study_roce_micro_prints_the_comparison(capsys):
    assert main(["study", "roce-micro"]) == 0
    text = capsys.readouterr().out
    assert "HPCC, SIGCOMM'19" in text and "yes (within 0.02 of 0.95)" in text and "no (above 35 us)" in text
