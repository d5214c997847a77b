"""Output paths every command checks before its work: a folder where a file is expected, a
missing folder, a file where a folder is expected, a plot format matplotlib cannot write, a
prefix that names a folder. Exit code 2 and one line naming the option, never a traceback.
The inputs need not exist: the checks come first."""

import pytest

from trainsim.cli.main import main

CASES = {
    "run --json in a missing folder": (["run", "p.yaml", "--workload", "w", "--json", "{t}/no/r.json"], "--json: cannot write"),
    "run --trace is a folder": (["run", "p.yaml", "--workload", "w", "--trace", "{t}"], "--trace: '{t}' is a folder"),
    "schema --out in a missing folder": (["schema", "--out", "{t}/no/s.json"], "the folder '{t}/no' does not exist"),
    "generate --json is a folder": (["generate", "gpt-9", "--out", "{t}/x", "--json", "{t}"], "--json: '{t}' is a folder"),
    "generate --out names a folder": (["generate", "gpt-9", "--out", "{t}/"], "--out: '{t}/' names a folder"),
    "workload convert --out names a folder": (["workload", "convert", "w.txt", "--ranks", "2", "--out", "{t}/"], "names a folder"),
    "sweep show --export in a missing folder": (["sweep", "show", "s.sqlite", "--export", "{t}/no/x.csv"], "--export: cannot write"),
    "sweep show --export format": (["sweep", "show", "s.sqlite", "--export", "{t}/x.xlsx"], "ending in .csv, .parquet"),
    "sweep plot --out format": (["sweep", "plot", "s.sqlite", "--x", "a", "--out", "{t}/p.xyz"], "ending in .png"),
    "optimize --plot in a missing folder": (
        ["optimize", "bandwidth", "--network", "n.yml", "--workload", "w.txt", "--constraint", "sum == 1", "--plot", "{t}/no/p.png"],
        "--plot: cannot write",
    ),
    "optimize --write-network is a folder": (
        ["optimize", "bandwidth", "--network", "n.yml", "--workload", "w.txt", "--constraint", "sum == 1", "--write-network", "{t}"],
        "--write-network: '{t}' is a folder",
    ),
    "optimize --verify of two workloads fails before optimizing": (
        ["optimize", "bandwidth", "--network", "n.yml", "--workload", "a.txt", "--workload", "b.txt", "--constraint", "sum == 1", "--verify"],
        "--verify simulates one text workload",
    ),
    "repurpose --et-out is a file": (["repurpose", "--workers", "2", "--budget", "0.5", "--out", "{t}/o", "--et-out", "{t}/f"], "--et-out: '{t}/f' is a file"),
    "pcm study --out is a file": (["pcm", "study", "--out", "{t}/f"], "--out: '{t}/f' is a file"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_output_path_is_one_line(tmp_path, capsys, case):
    argv, match = CASES[case]
    (tmp_path / "f").write_text("a file\n")
    assert main([a.format(t=tmp_path) for a in argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("trainsim: error: ") and len(err.splitlines()) == 1, err
    assert match.format(t=tmp_path) in err


def test_report_checks_the_result_then_the_folder(tmp_path, capsys):
    result = tmp_path / "r.json"
    result.write_text('{"makespan_s": "soon", "ranks": []}')
    assert main(["report", str(result), "--out", str(tmp_path / "rep")]) == 2
    assert "makespan_s: got 'soon'; expected a number of seconds >= 0" in capsys.readouterr().err
    result.write_text('{"makespan_s": 1.0, "ranks": 8}')
    assert main(["report", str(result), "--out", str(tmp_path / "rep")]) == 2
    assert "ranks: got an integer; expected a list of objects" in capsys.readouterr().err
    result.write_text('{"makespan_s": 1.0, "ranks": []}')
    (tmp_path / "f").write_text("")
    assert main(["report", str(result), "--out", str(tmp_path / "f")]) == 2
    assert "--out: " in capsys.readouterr().err
    result.write_bytes(b"\xff\xfe\x00garbage")
    assert main(["report", str(result), "--out", str(tmp_path / "rep")]) == 2
    assert "not UTF-8 text" in capsys.readouterr().err
