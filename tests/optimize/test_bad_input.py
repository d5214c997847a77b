"""Bad input to LIBRA's optimizer: redundant constraints still reach the true optimum,
non-finite numbers are refused in one line, an uncertified optimum is an error."""

import numpy as np
import pytest

from tests.helpers.cli_errors import cli_error
from tests.optimize.conftest import libra_case, libra_path
from trainsim.errors import SolverError
from trainsim.optimize import bandwidth as bandwidth_module
from trainsim.optimize.bandwidth import optimize_bandwidth
from trainsim.optimize.solver import ConvexSolution

OPTIMUM_S = 1.2992874856e-3  # ResNet-50 on LIBRA's 3D network, sum == 500 (docs/libra.md)
EQUAL_SPLIT_S = 1.6691295e-3


@pytest.fixture(scope="module")
def resnet():
    return libra_case("ResNet_50", "ResNet_50_3d.yml", "3d")


@pytest.mark.parametrize(
    "constraints",
    [
        ["sum == 500", "sum <= 500"],
        ["sum == 500", "sum == 500"],
        ["B0+B1+B2 == 500"],
        ["sum == 500", "B0+B1+B2 == 500"],
        ["sum <= 500", "sum >= 500"],
        ["sum == 500", "2*sum == 1000", "sum >= 100", "B0 >= 0"],
    ],
    ids=str,
)
def test_redundant_constraints_reach_the_true_optimum(resnet, constraints):
    net, traffic = resnet
    res = optimize_bandwidth(net, [traffic], constraints)
    assert res.time_s == pytest.approx(OPTIMUM_S, rel=1e-6)
    assert res.equal_time_s == pytest.approx(EQUAL_SPLIT_S, rel=1e-6)
    assert res.bandwidths_gbps == pytest.approx([468.86, 27.35, 3.785], rel=1e-3)
    assert res.gap < 1e-8
    assert all(c.holds for c in res.constraints)


def test_redundant_constraints_perf_per_cost(resnet):
    net, traffic = resnet
    coeffs = [1.0, 2.0, 3.0]
    once = optimize_bandwidth(
        net, [traffic], ["sum == 500"], objective="perf_per_cost", cost_coeffs=coeffs
    )
    twice = optimize_bandwidth(
        net,
        [traffic],
        ["sum == 500", "sum <= 500", "sum == 500"],
        objective="perf_per_cost",
        cost_coeffs=coeffs,
    )
    assert twice.time_cost_product == pytest.approx(once.time_cost_product, rel=1e-6)


def test_fixed_cost_equality_is_not_added_twice(resnet):
    """Prices equal on every dimension: the cost is fixed by ``sum == 500``, so the cost level
    set the branch and bound adds depends on it."""
    net, traffic = resnet
    res = optimize_bandwidth(
        net, [traffic], ["sum == 500"], objective="perf_per_cost", cost_coeffs=[2.0, 2.0, 2.0]
    )
    assert res.time_s == pytest.approx(OPTIMUM_S, rel=1e-6)


def test_an_uncertified_optimum_is_an_error(resnet, monkeypatch):
    net, traffic = resnet
    b = np.full(3, 500 / 3)

    def weak(k, w, c, poly, **_):
        return ConvexSolution(
            b, EQUAL_SPLIT_S, OPTIMUM_S, np.zeros(len(poly.b_ub)), np.zeros(len(poly.b_eq)), 60
        )

    monkeypatch.setattr(bandwidth_module, "solve_perf", weak)
    with pytest.raises(SolverError, match="not certified: .* gap .* is 0.222"):
        optimize_bandwidth(net, [traffic], ["sum == 500"])


def _args(*extra):
    return [
        "optimize",
        "bandwidth",
        "--network",
        str(libra_path("network", "3d_network.yml")),
        "--workload",
        str(libra_path("workload", "ResNet_50.txt")),
        "--communicator",
        str(libra_path("communicator", "ResNet_50_3d.yml")),
        "--quiet",
        *extra,
    ]


@pytest.mark.parametrize(
    ("extra", "match"),
    [
        (["--constraint", "sum == 1e309"], "'sum == 1e309': a number beyond the float range"),
        (["--constraint", "1e200*1e200*B0 == 5"], "beyond the float range"),
        (
            ["--constraint", "sum == 500", "--weight", "inf"],
            "weight inf must be positive and finite",
        ),
        (
            ["--constraint", "sum == 500", "--weight", "nan"],
            "weight nan must be positive and finite",
        ),
    ],
    ids=str,
)
def test_non_finite_numbers_are_one_line(capsys, extra, match):
    cli_error(capsys, _args(*extra), 2, match)


@pytest.mark.parametrize("price", [".inf", ".nan", "-1", "0"])
def test_cost_model_price_must_be_finite(tmp_path, capsys, price):
    cost = tmp_path / "cost.yml"
    text = (
        libra_path("cost_model", "3d_cost_model.yml")
        .read_text()
        .replace("Link: 4.00001", f"Link: {price}")
    )
    cost.write_text(text)
    cli_error(
        capsys,
        _args("--constraint", "sum == 500", "--cost", str(cost)),
        2,
        "InterPackage.Link: price",
    )


def test_duplicate_constraint_cli_reports_the_optimum(capsys, tmp_path):
    import json

    out = tmp_path / "r.json"
    from trainsim.cli.main import main

    assert (
        main(_args("--constraint", "sum == 500", "--constraint", "sum <= 500", "--json", str(out)))
        == 0
    )
    data = json.loads(out.read_text())
    assert data["time_s"] == pytest.approx(OPTIMUM_S, rel=1e-6) and data["gap"] < 1e-8
