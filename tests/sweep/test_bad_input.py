"""Hostile or careless sweep files and stores (issue 24): an axis outside the inputs document,
filters that fail at run time or are too large, sizes beyond int64 or infinite, a corrupt store
row. Each is one clear line (exit 2), never a traceback or a silently ignored axis."""

import json
import sqlite3

import pytest

from tests.helpers.cli_errors import cli_error
from tests.sweep.conftest import write_spec
from trainsim.errors import ConfigError
from trainsim.sweep.spec import compile_filter, load_sweep


def test_an_axis_outside_the_inputs_document_is_refused(tmp_path):
    spec = write_spec(tmp_path / "s.yaml")
    spec.write_text(spec.read_text().replace("field: workload.shift.size_bytes", "field: worklaod.shift.size_bytes"))
    with pytest.raises(ConfigError, match=r"axes.1: field 'worklaod.shift.size_bytes' starts with 'worklaod'.*platform, workload, backend, compat"):
        load_sweep(spec)


@pytest.mark.parametrize(
    ("expression", "match"),
    [
        ("size < 'a'", "fails where size=1: TypeError"),
        ("size % 0 == 1", "fails where size=1: ZeroDivisionError"),
        ("9 ** 9 ** 9 > 1", "OverflowError: .* bits; the limit is 4,096"),
        ("'a' * 10 ** 10 == 'a'", "OverflowError: a value of 10,000,000,000 items"),
        ("[size] * 100000 == []", "OverflowError: a value of 100,000 items"),
        ("2.0 ** 1e6 > 1", "OverflowError: an exponent of 1000000.0"),
        (" + ".join(["size"] * 3000) + " > 0", "filter of 21,001 characters; the limit is 2,000"),
        ("+".join(["1"] * 600) + " > size", r"is too large \(1,803 terms"),
        ("-" * 300 + "size > 0", r"is too large .* nesting 30\d\); the limits are 500 terms and nesting 40"),
        ("-" * 5000 + "size > 0", "characters; the limit is 2,000"),
    ],
    ids=lambda v: v[:30],
)
def test_filter_errors_are_config_errors(expression, match):
    with pytest.raises(ConfigError, match=match):
        check = compile_filter(expression, ["size", "bw"], "s.yaml")
        check({"size": 1, "bw": 10})


def test_small_powers_and_repetitions_still_work():
    check = compile_filter("2 ** size == 8 and 'ab' * 2 == 'abab' and size ** 0.5 < 2", ["size"], "s.yaml")
    assert check({"size": 3}) and not check({"size": 4})


def test_sweep_with_a_failing_filter_exits_2(tmp_path, capsys):
    spec = write_spec(tmp_path / "s.yaml", filter="size % 0 == 1", bws=(10,), sizes=(8,))
    cli_error(capsys, ["sweep", str(spec), "--store", str(tmp_path / "s.sqlite")], 2, "ZeroDivisionError")


@pytest.fixture
def store(tmp_path, capsys):
    from trainsim.cli.main import main

    spec = write_spec(tmp_path / "s.yaml", bws=(10, 20), sizes=(8,))
    path = tmp_path / "s.sqlite"
    assert main(["sweep", str(spec), "--store", str(path), "--quiet"]) == 0
    capsys.readouterr()
    return path


@pytest.mark.parametrize("where", ["bw < 'a'", "bw % 0 == 1", "'a' * 10 ** 10 == 'a'"])
def test_show_where_errors_are_one_line(store, capsys, where):
    cli_error(capsys, ["sweep", "show", str(store), "--where", where], 2, "--where: filter")


@pytest.mark.parametrize(("column", "value"), [("params", "{not json"), ("metrics", "[1, 2]"), ("params", "[" * 100_000 + "]" * 100_000)])
@pytest.mark.parametrize("command", ["show", "plot"])
def test_a_corrupt_store_row_names_the_file_and_row(store, capsys, tmp_path, column, value, command):
    with sqlite3.connect(store) as db:
        db.execute(f"UPDATE results SET {column} = ? WHERE rowid = (SELECT MIN(rowid) FROM results)", (value,))
    argv = ["sweep", command, str(store)]
    if command == "plot":
        argv += ["--x", "bw", "--y", "makespan_s", "--out", str(tmp_path / "p.png")]
    line = cli_error(capsys, argv, 2, f"{store}: row ")
    assert f"column {column}" in line


@pytest.mark.parametrize("value", [".inf", "1e400", "99999999999999999999999", ".nan", "1.5"])
def test_sizes_that_are_not_byte_counts_are_recorded_errors(tmp_path, capsys, value):
    spec = write_spec(tmp_path / "s.yaml", bws=(10,), sizes=(8,))
    spec.write_text(spec.read_text().replace("values: [8]", f"values: [{value}]"))
    line = cli_error(capsys, ["sweep", str(spec), "--store", str(tmp_path / "s.sqlite")], 2, "workload.shift.size_bytes: got")
    assert "expected a whole number in 0..9223372036854775807" in line


def test_store_rows_keep_their_json(store):
    with sqlite3.connect(store) as db:
        assert all(isinstance(json.loads(p), dict) for (p,) in db.execute("SELECT params FROM results"))
