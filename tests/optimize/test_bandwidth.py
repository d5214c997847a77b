"""The optimizer against LIBRA's published allocations, closed forms and brute force."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.optimize.conftest import libra_case, libra_path
from trainsim.errors import ConfigError, InfeasibleError
from trainsim.optimize.bandwidth import optimize_bandwidth
from trainsim.optimize.constraints import ConstraintConflictError
from trainsim.optimize.cost import cost_coefficients
from trainsim.optimize.libra_inputs import LibraNetwork, load_cost_model
from trainsim.optimize.traffic import WorkloadTraffic

MULTIPLE = ["sum == 1000", "B0 == 500", "B0 >= B1 >= B2", "B2 + B3 == 200"]  # LIBRA's multiple_constraints


@pytest.mark.parametrize(
    ("workload", "communicator", "dims", "want"),
    [
        ("ResNet_50", "ResNet_50_3d.yml", "3d", [468.9, 27.4, 3.8]),
        ("MSFT_1T", "MSFT_1T_3d.yml", "3d", [402.0, 23.5, 74.4]),
        ("ResNet_50", "ResNet_50_4d.yml", "4d", [375.1, 109.4, 11.7, 3.8]),
    ],
)
def test_libra_allocations_at_500_gbps(workload, communicator, dims, want):
    net, traffic = libra_case(workload, communicator, dims)
    res = optimize_bandwidth(net, [traffic], ["sum == 500"])
    np.testing.assert_allclose(res.bandwidths_gbps, want, rtol=0.01)
    assert res.gap < 1e-8
    assert [c.binding for c in res.constraints] == [True]


def test_resnet_speedup_over_equal_split():
    net, traffic = libra_case("ResNet_50", "ResNet_50_3d.yml", "3d")
    res = optimize_bandwidth(net, [traffic], ["sum == 500"])
    assert res.speedup == pytest.approx(1.28, abs=0.01)
    np.testing.assert_allclose(res.equal_bandwidths_gbps, [500 / 3] * 3)
    assert res.equal_feasible


def test_single_collective_closed_form():
    """One collective: the optimum equalizes the dimensions, B_d proportional to its bytes."""
    net, traffic = libra_case("ResNet_50", "ResNet_50_3d.yml", "3d")
    res = optimize_bandwidth(net, [traffic], ["sum == 500"])
    m = traffic.bytes_per_dim[0]
    np.testing.assert_allclose(res.bandwidths_gbps, 500 * m / m.sum(), rtol=1e-7)
    assert res.time_s == pytest.approx(traffic.compute_s + m.sum() / 500e9, rel=1e-10)


def test_shadow_price_matches_a_finite_difference():
    net, traffic = libra_case("MSFT_1T", "MSFT_1T_3d.yml", "3d")
    res = optimize_bandwidth(net, [traffic], ["sum == 500"])
    up = optimize_bandwidth(net, [traffic], ["sum == 501"])
    (budget,) = res.binding
    assert budget.marginal_s == pytest.approx(up.time_s - res.time_s, rel=0.01)
    assert budget.marginal_s < 0


def test_no_random_allocation_beats_the_optimum():
    net, traffic = libra_case("MSFT_1T", "MSFT_1T_3d.yml", "3d")
    res = optimize_bandwidth(net, [traffic], ["sum == 500"])
    rng = np.random.default_rng(7)
    candidates = 500 * rng.dirichlet(np.ones(3), size=4000)
    candidates = np.vstack([candidates, res.bandwidths_gbps * (1 + 1e-3 * rng.standard_normal((200, 3)))])
    candidates = candidates / candidates.sum(axis=1, keepdims=True) * 500
    times = [traffic.time_s(b) for b in candidates]
    assert min(times) >= res.time_s * (1 - 1e-12)


@pytest.mark.parametrize("workload", ["ResNet_50", "MSFT_1T", "GPT_3", "Turing_NLG"])
def test_multiple_constraints_all_hold(workload):
    comm = {"Turing_NLG": "Turing_NLG_4D.yml"}.get(workload, f"{workload}_4d.yml")
    net, traffic = libra_case(workload, comm, "4d")
    res = optimize_bandwidth(net, [traffic], MULTIPLE)
    b = res.bandwidths_gbps
    assert b.sum() == pytest.approx(1000, rel=1e-9) and b[0] == pytest.approx(500, rel=1e-9)
    assert b[0] >= b[1] - 1e-6 and b[1] >= b[2] - 1e-6 and b[2] + b[3] == pytest.approx(200, rel=1e-9)
    assert all(c.holds for c in res.constraints) and len(res.constraints) == 5
    assert not res.equal_feasible  # 250 each breaks B0 == 500
    assert res.gap < 1e-8


def test_infeasible_constraints_name_the_conflict():
    net, traffic = libra_case("ResNet_50", "ResNet_50_4d.yml", "4d")
    with pytest.raises(ConstraintConflictError) as info:
        optimize_bandwidth(net, [traffic], [*MULTIPLE, "B3 >= 250"])
    assert sorted(info.value.conflicting) == sorted(["B2 + B3 == 200", "B3 >= 250", "B2 >= 0 (bandwidths are non-negative)"])


def test_unbounded_and_starved_dimensions():
    net, traffic = libra_case("ResNet_50", "ResNet_50_3d.yml", "3d")
    with pytest.raises(ConfigError, match="do not bound B"):
        optimize_bandwidth(net, [traffic], ["B0 >= B1"])
    with pytest.raises(InfeasibleError, match="force B2 to 0"):
        optimize_bandwidth(net, [traffic], ["sum == 500", "B2 == 0"])


def test_unloaded_dimension_gets_the_least_bandwidth():
    net = LibraNetwork(("Ring", "Switch", "Switch"), (4, 4, 4))
    traffic = WorkloadTraffic("t", 0.0, np.array([[1e9, 2e9, 0.0]]))
    res = optimize_bandwidth(net, [traffic], ["sum == 300", "B2 >= 10"])
    np.testing.assert_allclose(res.bandwidths_gbps, [290 / 3, 580 / 3, 10], rtol=1e-7)


def test_unpipelined_square_root_rule():
    """Sum over dimensions: minimize sum_d M_d / B_d with sum B = W gives B_d ~ sqrt(M_d)."""
    net, traffic = libra_case("MSFT_1T", "MSFT_1T_3d.yml", "3d", pipelined=False)
    res = optimize_bandwidth(net, [traffic], ["sum == 500"])
    root = np.sqrt(traffic.bytes_on_dims())
    np.testing.assert_allclose(res.bandwidths_gbps, 500 * root / root.sum(), rtol=1e-6)


def test_weighted_workloads_trade_off():
    net, resnet = libra_case("ResNet_50", "ResNet_50_3d.yml", "3d")
    _, msft = libra_case("MSFT_1T", "MSFT_1T_3d.yml", "3d")
    only_r = optimize_bandwidth(net, [resnet], ["sum == 500"]).bandwidths_gbps
    only_m = optimize_bandwidth(net, [msft], ["sum == 500"]).bandwidths_gbps
    both = optimize_bandwidth(net, [(resnet, 100.0), (msft, 1.0)], ["sum == 500"])

    def weighted(b):
        return 100 * resnet.time_s(b) + msft.time_s(b)

    assert both.time_s == pytest.approx(weighted(both.bandwidths_gbps))
    assert both.time_s <= min(weighted(only_r), weighted(only_m)) * (1 + 1e-12)
    assert set(both.workload_times_s) == {"ResNet_50", "MSFT_1T"}


def test_perf_per_cost_is_the_global_minimum_of_time_times_cost():
    net, traffic = libra_case("MSFT_1T", "MSFT_1T_3d.yml", "3d")
    coeffs = cost_coefficients(net, load_cost_model(libra_path("cost_model", "3d_cost_model.yml")))
    res = optimize_bandwidth(net, [traffic], ["sum == 500"], objective="perf_per_cost", cost_coeffs=coeffs)
    perf = optimize_bandwidth(net, [traffic], ["sum == 500"], cost_coeffs=coeffs)
    assert res.time_cost_product < perf.time_cost_product
    assert res.cost < perf.cost and res.time_s > perf.time_s
    rng = np.random.default_rng(3)
    candidates = 500 * rng.dirichlet(np.ones(3), size=20000)
    best = min(traffic.time_s(b) * float(coeffs @ b) for b in candidates)
    assert res.time_cost_product <= best * (1 + 1e-9)
    assert res.gap < 1e-6


def test_perf_per_cost_needs_a_cost_model():
    net, traffic = libra_case("ResNet_50", "ResNet_50_3d.yml", "3d")
    with pytest.raises(ConfigError, match="cost model"):
        optimize_bandwidth(net, [traffic], ["sum == 500"], objective="perf_per_cost")


@settings(max_examples=15, deadline=None)
@given(budget=st.floats(50, 2000), extra=st.floats(1.01, 3.0))
def test_more_budget_is_never_slower(budget, extra):
    net, traffic = libra_case("MSFT_1T", "MSFT_1T_3d.yml", "3d")
    low = optimize_bandwidth(net, [traffic], [f"sum == {budget}"])
    high = optimize_bandwidth(net, [traffic], [f"sum == {budget * extra}"])
    assert high.time_s <= low.time_s * (1 + 1e-9)
    assert low.time_s >= traffic.compute_s


_ONE_THREAD_PROBE = """
import json, sys
from tests.optimize.conftest import libra_case
from trainsim.optimize.bandwidth import optimize_bandwidth
gaps = {}
for workload in ("ResNet_50", "MSFT_1T", "GPT_3", "Turing_NLG"):
    comm = {"Turing_NLG": "Turing_NLG_4D.yml"}.get(workload, workload + "_4d.yml")
    net, traffic = libra_case(workload, comm, "4d")
    gaps[workload] = optimize_bandwidth(net, [traffic], json.loads(sys.argv[1])).gap
print(json.dumps(gaps))
"""


def test_multiple_constraints_certified_with_one_blas_thread_regression():
    """The command line runs numpy with one BLAS thread (trainsim/cli/__init__.py). Rounded that
    way, SLSQP stopped early on MSFT_1T's 4-D case ("positive directional derivative") and the
    polish restarted it from the same point every time, so the certificate stalled at a 1.1% gap;
    the polish now also starts from the cutting-plane LP's point."""
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(root), str(root / "src"), env.get("PYTHONPATH")) if p)
    done = subprocess.run(
        [sys.executable, "-c", _ONE_THREAD_PROBE, json.dumps(MULTIPLE)], env=env, capture_output=True, text=True, timeout=300, cwd=root
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert all(gap < 1e-8 for gap in json.loads(done.stdout).values())
