from pathlib import Path

import numpy as np
import pytest

from trainsim.errors import ConfigError
from trainsim.inference.latency import analytical_latency, latency_markdown, latency_table
from trainsim.inference.plan import Stage
from trainsim.inference.platform import example_platforms, load_platform, resized_platform
from trainsim.inference.study import StudyConfig, run_study


def test_shipped_platforms_in_si_units():
    dc, edge = (load_platform(p) for p in example_platforms())
    assert (dc.name, dc.npus) == ("datacenter", 4)
    assert (dc.bandwidth, dc.peak_flops, dc.latency) == pytest.approx((150e9, 125e12, 500e-9))
    assert edge.name == "edge"
    assert (edge.bandwidth, edge.peak_flops) == pytest.approx((100e6, 0.5e12))
    assert dc.roofline_enabled and edge.roofline_enabled


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("network: {dims: []}\nsystem: {}\n", "network.dims: 0 dims: expected exactly one"),
        (
            "network:\n  dims:\n    - {topology: Switch, size: 4, bandwidth_gbps: 1, latency_ns: 1, colour: red}\nsystem: {}\n",
            r"network.dims\[0\].colour: unknown key 'colour'",
        ),
        (
            "network:\n  dims:\n    - {topology: Ring, size: 4, bandwidth_gbps: 1, latency_ns: 1}\n"
            "system: {endpoint_delay_ns: 10, roofline_enabled: true, peak_perf_tflops: 1, local_mem_bw_gbps: 1}\n",
            r"network.dims\[0\].topology: 'Ring': expected 'Switch'",
        ),
        (
            "network:\n  dims:\n    - {topology: Switch, size: 4, bandwidth_gbps: 0, latency_ns: 1}\n"
            "system: {endpoint_delay_ns: 10, roofline_enabled: true, peak_perf_tflops: 1, local_mem_bw_gbps: 1}\n",
            r"network.dims\[0\].bandwidth_gbps: 0: expected a value > 0",
        ),
        (
            "network:\n  dims:\n    - {topology: Switch, size: 4, bandwidth_gbps: 1, latency_ns: 1}\n"
            "system: {endpoint_delay_ns: 10, roofline_enabled: yes please, peak_perf_tflops: 1, local_mem_bw_gbps: 1}\n",
            r"system.roofline_enabled: 'yes please': expected bool",
        ),
    ],
)
def test_bad_platform_files_are_config_errors_naming_file_and_field(tmp_path, text, match):
    path = tmp_path / "p.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=match) as info:
        load_platform(path)
    assert str(path) in str(info.value)


def test_resized_platform_changes_only_the_size(tmp_path):
    src = example_platforms()[1]
    out = resized_platform(src, 8, tmp_path)
    a, b = load_platform(src), load_platform(out)
    assert b.npus == 8 and (a.bandwidth, a.latency, a.peak_flops) == (
        b.bandwidth,
        b.latency,
        b.peak_flops,
    )


def test_analytical_latency_by_hand(tmp_path):
    path = tmp_path / "p.yaml"
    path.write_text(
        "network:\n  dims:\n    - {topology: Switch, size: 2, bandwidth_gbps: 1, latency_ns: 100}\n"
        "system: {endpoint_delay_ns: 10, roofline_enabled: false, peak_perf_tflops: 0.001, local_mem_bw_gbps: 1}\n"
    )
    plat = load_platform(path)
    stages = (
        Stage("a", np.array([[0, 250], [0, 0]]), np.array([1e6, 2e6]), np.zeros(2)),
        Stage("b", np.zeros((2, 2), dtype=int), np.array([5e5, 0.0]), np.zeros(2)),
    )
    est = analytical_latency(stages, plat)
    comm = 10e-9 + 2 * 100e-9 + (1000 + 1000) / 1e9
    assert est.communication == pytest.approx(comm)
    assert est.compute == pytest.approx(2e6 / 1e9 + 5e5 / 1e9)
    assert est.total == pytest.approx(est.communication + est.compute)


@pytest.fixture(scope="module")
def small_study():
    return run_study(
        StudyConfig(workers=(2,), budgets=(0.0,), seeds=(0,), methods=("repurpose", "direct_tp"))
    )


def test_latency_table_analytical_and_with_a_simulator(small_study):
    rows = latency_table(small_study)
    assert {(r.platform, r.method) for r in rows} == {
        (p, m) for p in ("datacenter", "edge") for m in ("repurpose", "direct_tp")
    }
    assert all(r.source == "analytical" and r.latency_s > 0 for r in rows)
    edge = {r.method: r for r in rows if r.platform == "edge"}
    assert edge["repurpose"].latency_s < edge["direct_tp"].latency_s
    assert "| edge | 2 | repurpose | 0 |" in latency_markdown(rows)

    seen = []

    def simulate(graphs, platform_path: Path) -> float:
        seen.append((len(graphs), load_platform(platform_path).npus))
        return 1e-3

    sim = latency_table(small_study, simulate=simulate)
    assert seen == [(2, 2)] * 4
    assert all(r.source == "simulated" and r.latency_s == 1e-3 and r.compute_s is None for r in sim)
