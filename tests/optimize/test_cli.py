"""`trainsim optimize bandwidth` end to end on LIBRA's files."""

import json

import pytest

from tests.optimize.conftest import libra_path
from trainsim.cli.main import EXIT_INFEASIBLE, EXIT_USER_ERROR, main
from trainsim.optimize.verify import has_collective_runtime


def _args(dims="3d", workload="ResNet_50", comm="ResNet_50_3d.yml"):
    return [
        "optimize", "bandwidth",
        "--network", str(libra_path("network", f"{dims}_network.yml")),
        "--cost", str(libra_path("cost_model", f"{dims}_cost_model.yml")),
        "--workload", str(libra_path("workload", f"{workload}.txt")),
        "--communicator", str(libra_path("communicator", comm)),
    ]


def test_json_result(tmp_path):
    out = tmp_path / "r.json"
    assert main([*_args(), "--constraint", "sum == 500", "--json", str(out), "--quiet"]) == 0
    data = json.loads(out.read_text())
    assert data["bandwidths_gbps"] == pytest.approx([468.9, 27.4, 3.8], rel=0.01)
    assert data["speedup"] == pytest.approx(1.2846, abs=1e-3)
    assert data["cost"] < data["equal_split"]["cost"]
    assert data["constraints"][0]["binding"] and data["constraints"][0]["holds"]


def test_table_plot_and_network(tmp_path, capsys):
    plot, net = tmp_path / "p.png", tmp_path / "n.yml"
    code = main([*_args("4d", "GPT_3", "GPT_3_4d.yml"), "--constraint", "sum == 1000", "--constraint", "B0 == 500",
                 "--constraint", "B0 >= B1 >= B2", "--constraint", "B2 + B3 == 200",
                 "--plot", str(plot), "--budgets", "400:1200:4", "--write-network", str(net)])
    assert code == 0
    text = capsys.readouterr().out
    assert "speed-up" in text and "B2 + B3 == 200" in text and "breaks the constraints" in text
    assert plot.stat().st_size > 10_000 and plot.read_bytes()[:4] == b"\x89PNG"
    assert "npus_count: [ 4, 8, 4, 32 ]" in net.read_text()


def test_perf_per_cost_objective(tmp_path):
    out = tmp_path / "r.json"
    assert main([*_args("3d", "MSFT_1T", "MSFT_1T_3d.yml"), "--constraint", "sum == 500",
                 "--objective", "perf_per_cost", "--json", str(out)]) == 0
    data = json.loads(out.read_text())
    assert data["objective"] == "perf_per_cost" and data["gap"] < 1e-6


def test_conflicting_constraints_exit_infeasible(capsys):
    code = main([*_args(), "--constraint", "sum == 500", "--constraint", "B0 >= 600"])
    assert code == EXIT_INFEASIBLE
    err = capsys.readouterr().err
    assert "'sum == 500'; 'B0 >= 600'" in err


def test_bad_constraint_is_a_user_error(capsys):
    assert main([*_args(), "--constraint", "B7 == 1"]) == EXIT_USER_ERROR
    assert "B7 names dimension 7" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("option", "content", "match"),
    [
        ("--network", b"Topology: [ Ring, Switch\n", "invalid YAML at line 2"),
        ("--network", b"\xff\xfe\x00", "not UTF-8 text"),
        ("--network", b"", "the file is empty"),
        ("--communicator", b"\xff\xfe\x00", "not UTF-8 text"),
        ("--cost", b"InterPod: {Link: 1\n", "invalid YAML"),
        ("--workload", b"\x00\x01binary", "a file, but not a .txt text workload"),
    ],
)
def test_bad_libra_file_is_one_line(tmp_path, capsys, option, content, match):
    bad = tmp_path / "bad.bin"
    bad.write_bytes(content)
    args = _args()
    args[args.index(option) + 1] = str(bad)
    assert main([*args, "--constraint", "sum == 500", "--quiet"]) == EXIT_USER_ERROR
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and match in err and str(bad) in err


@pytest.mark.parametrize("budgets", ["1:2", "1:2:0", "-100:-1:3", "100:10:3", "1:nan:3", "1:2:2.5"])
def test_bad_budget_range_is_a_user_error(tmp_path, capsys, budgets):
    code = main([*_args(), "--constraint", "sum == 500", "--quiet", "--plot", str(tmp_path / "p.png"), "--budgets", budgets])
    assert code == EXIT_USER_ERROR
    assert f"--budgets {budgets!r}: expected START:STOP:COUNT" in capsys.readouterr().err



@pytest.mark.skipif(has_collective_runtime(), reason="checks the message shown without the collective runtime")
def test_verify_without_runtime_says_why(capsys):
    assert main([*_args(), "--constraint", "sum == 500", "--verify"]) == EXIT_USER_ERROR
    assert "collective runtime" in capsys.readouterr().err


@pytest.mark.slow
def test_verify_simulates_both_allocations(capsys):
    pytest.importorskip("trainsim.system.collective_runtime", reason="simulating collectives needs the collective runtime")
    assert main([*_args(), "--constraint", "sum == 500", "--verify"]) == 0
    assert "simulated: optimum" in capsys.readouterr().out
