"""``trainsim pcm`` (cli/pcm_cmd.py): tables, plots and results.json."""

import json
from pathlib import Path

from trainsim.cli.main import main


def test_study_without_sweeps_writes_results(tmp_path: Path):
    rc = main(["pcm", "study", "--no-sweeps", "--instructions", "20000", "--out", str(tmp_path)])
    assert rc == 0
    res = json.loads((tmp_path / "results.json").read_text())
    assert set(res["main"]["results"]) == {"base", "tri", "tri+fpc"}
    assert res["main"]["tri+fpc_write_reduction"] > 0
    assert (tmp_path / "latency.png").stat().st_size > 0


def test_study_with_sweeps_plots_everything(tmp_path: Path):
    rc = main(["pcm", "study", "--scheme", "tri", "--instructions", "8000", "--out", str(tmp_path)])
    assert rc == 0
    names = {p.name for p in tmp_path.glob("*.png")}
    assert names == {
        "latency.png",
        "ipc_band.png",
        "sweep_spare_bits.png",
        "sweep_faults.png",
        "sweep_load.png",
        "sweep_data.png",
        "conditions.png",
    }
    res = json.loads((tmp_path / "results.json").read_text())
    assert [p["value"] for p in res["sweeps"]["faults"]] == [0, 1, 2, 3, 4, 5, 6]
    assert len(res["ipc_band"]) == 6
    grid = res["conditions"]  # banks {2, 16} x load {cores, .5, .7, .9} x share {pool, .5 .. 1}
    assert len(grid) == 40 and {p["banks"] for p in grid} == {2, 16}
    assert {p["qualifying"] for p in grid if p["qualifying"] >= 0.5} == {0.5, 0.7, 0.9, 1.0}


def test_study_replays_a_trace(tmp_path: Path):
    trace = tmp_path / "t.trace"
    trace.write_text("0 W 0x0\n10 W 0x400\n20 R 0x800\n")
    rc = main(["pcm", "study", "--trace", str(trace), "--no-sweeps", "--out", str(tmp_path)])
    assert rc == 0
    assert (
        json.loads((tmp_path / "results.json").read_text())["main"]["results"]["base"]["reads"] == 1
    )


def test_bad_options_exit_2_with_one_line(tmp_path: Path, capsys):
    assert main(["pcm", "study", "--scheme", "quad", "--out", str(tmp_path)]) == 2
    assert "--scheme: got 'quad', expected base, tri, tri+fpc or all" in capsys.readouterr().err
    assert main(["pcm", "study", "--spare-bits", "-3", "--out", str(tmp_path)]) == 2
    assert "SpareConfig.spare_bits: got -3, expected an integer >= 0" in capsys.readouterr().err
    assert main(["pcm", "study", "--scheduler", "fifo", "--out", str(tmp_path)]) == 2
    assert "--scheduler: got 'fifo', expected frfcfs, frfcfs-wqf, read-first" in (
        capsys.readouterr().err
    )
    assert main(["pcm", "study", "--banks", "0", "--out", str(tmp_path)]) == 2
    assert "--banks: got 0, expected an integer >= 1" in capsys.readouterr().err
