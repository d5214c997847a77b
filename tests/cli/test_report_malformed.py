"""`trainsim report` on a result JSON damaged by hand (issue 24): a missing finish_s, a string
where seconds go, a step or utilization that is not numbers: one line naming the file and the
field, exit 2, never a KeyError or a format ValueError."""

import copy
import json

import pytest

from tests.helpers.cli_errors import cli_error
from trainsim.cli.main import main


@pytest.fixture(scope="module")
def result(tmp_path_factory):
    from trainsim.workload.chakra import write_workload
    from trainsim.workload.micro import collective_workload

    tmp = tmp_path_factory.mktemp("result")
    write_workload(tmp / "w", list(collective_workload(4, "all_reduce", 1 << 16)))
    platform = tmp / "p.yaml"
    platform.write_text(
        "network:\n  dims:\n    - {topology: Ring, size: 4, bandwidth_gbps: 50, latency_ns: 500}\n"
    )
    assert (
        main(
            [
                "run",
                str(platform),
                "--workload",
                str(tmp / "w"),
                "--json",
                str(tmp / "r.json"),
                "-q",
            ]
        )
        == 0
    )
    return json.loads((tmp / "r.json").read_text())


def _damage(doc, case):
    d = copy.deepcopy(doc)
    if case == "no finish_s":
        del d["ranks"][0]["finish_s"]
    elif case == "string seconds":
        d["ranks"][0]["compute_s"] = "fast"
    elif case == "step of strings":
        d["breakdown"][0]["step"] = {"compute": "x"}
    elif case == "utilization not pairs":
        d["dims"][0]["utilization"] = [[0.0, "a"]]
    elif case == "breakdown without ranks":
        del d["breakdown"][0]["ranks"]
    return d


@pytest.mark.parametrize(
    ("case", "match"),
    [
        ("no finish_s", "ranks[0]: missing 'finish_s'"),
        ("string seconds", "ranks[0].compute_s: got 'fast'; expected a number of seconds"),
        ("step of strings", "breakdown[0].step: got"),
        (
            "utilization not pairs",
            "dims[0].utilization: expected a list of [time s, utilization] pairs",
        ),
        ("breakdown without ranks", "breakdown[0]: missing 'ranks'"),
    ],
)
def test_malformed_result_is_one_line(tmp_path, capsys, result, case, match):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(_damage(result, case)))
    cli_error(
        capsys, ["report", str(path), "--out", str(tmp_path / "out")], 2, f"bad.json: {match}"
    )


def test_the_undamaged_result_still_reports(tmp_path, capsys, result):
    path = tmp_path / "ok.json"
    path.write_text(json.dumps(result))
    assert main(["report", str(path), "--out", str(tmp_path / "out")]) == 0
    assert (tmp_path / "out" / "index.html").exists()


def test_json_nested_past_the_parser_is_one_line(tmp_path, capsys):
    """Found by bench/fuzz.py (10,000 cases): a result whose line is repeated a thousand times
    inside arrays ended in a RecursionError from the JSON decoder."""
    path = tmp_path / "deep.json"
    path.write_text("[" * 100_000 + "]" * 100_000)
    cli_error(capsys, ["report", str(path), "--out", str(tmp_path / "out")], 2, "deep.json: not a trainsim result: JSON nested too deep")
