import json

import numpy as np
import pytest

from trainsim.cli.main import main
from trainsim.config.platform import load_platform
from trainsim.errors import ConfigError
from trainsim.studies.repurpose.graphs import build_graphs
from trainsim.studies.repurpose.latency import latency_markdown, latency_table, simulator
from trainsim.studies.repurpose.plan import Stage
from trainsim.studies.repurpose.platform import (
    example_platforms,
    free_network,
    load_study_platform,
    platform_name,
    sized_platform,
)
from trainsim.studies.repurpose.study import StudyConfig, run_study


def test_shipped_platforms_load_with_the_native_loader():
    dc, edge = (load_study_platform(p) for p in example_platforms())
    assert (platform_name(dc), platform_name(edge)) == ("datacenter", "edge")
    (d,) = dc.network.dims
    assert (d.kind, d.size, d.bandwidth, d.latency_ns) == ("Switch", 4, 150e9, 500.0)
    assert dc.system.peak_perf == pytest.approx(125e12)
    (e,) = edge.network.dims
    assert (e.bandwidth, e.latency_ns) == pytest.approx((100e6, 43_000.0))
    assert edge.system.peak_perf == pytest.approx(0.5e12)
    assert dc.system.roofline_enabled and edge.system.roofline_enabled


def test_sized_and_free_platforms():
    edge = load_study_platform(example_platforms()[1])
    eight = sized_platform(edge, 8)
    assert eight.network.npus == 8 and eight.system == edge.system
    assert eight.network.dims[0].bandwidth == edge.network.dims[0].bandwidth
    free = free_network(eight)
    assert free.network.dims[0].latency_ns == 0 and free.system == edge.system


def test_study_platform_needs_one_dimension_and_a_peak(tmp_path):
    two = tmp_path / "two.yaml"
    two.write_text(
        "network:\n  dims:\n    - {topology: Switch, size: 2, bandwidth_gbps: 1, latency_ns: 1}\n"
        "    - {topology: Ring, size: 2, bandwidth_gbps: 1, latency_ns: 1}\n"
    )
    with pytest.raises(ConfigError, match="expected exactly one") as info:
        load_study_platform(two)
    assert str(two) in str(info.value)
    nopeak = tmp_path / "nopeak.yaml"
    nopeak.write_text(
        "network:\n  dims:\n    - {topology: Switch, size: 2, bandwidth_gbps: 1, latency_ns: 1}\n"
    )
    with pytest.raises(ConfigError, match="peak_perf_tflops"):
        load_study_platform(nopeak)
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "network:\n  dims:\n    - {topology: Switch, size: 2, bandwidth_gbps: 1, latency_ns: 1, colour: red}\n"
    )
    with pytest.raises(ConfigError, match="colour"):
        load_study_platform(bad)


def test_simulated_latency_by_hand(tmp_path):
    """Two workers: worker 0 sends 250 scalars (1,000 B per sample) to worker 1, which computes.
    Flow backend on a Switch: 2 hops of latency plus the bytes at the link bandwidth."""
    path = tmp_path / "p.yaml"
    path.write_text(
        "network:\n  dims:\n    - {topology: Switch, size: 2, bandwidth_gbps: 1, latency_ns: 100}\n"
        "system: {roofline_enabled: false, peak_perf_tflops: 0.001}\n"
    )
    plat = load_platform(path)
    stages = (
        Stage("a", np.array([[0, 250], [0, 0]]), np.array([0.0, 2e6]), np.zeros(2), np.zeros(2)),
        Stage("b", np.zeros((2, 2), dtype=int), np.array([5e5, 0.0]), np.zeros(2), np.zeros(2)),
    )
    for batch in (1, 3):
        graphs = build_graphs(stages, plat.system.peak_perf, batch=batch)
        t = simulator("flow")(plat, graphs)
        comm = 2 * 100e-9 + batch * 1000 / 1e9
        assert t == pytest.approx(max(comm + batch * 2e6 / 1e9, batch * 5e5 / 1e9), rel=1e-12)


@pytest.fixture(scope="module")
def small_study():
    return run_study(
        StudyConfig(workers=(2,), budgets=(0.0,), seeds=(0,), methods=("repurpose", "direct_tp"))
    )


def test_latency_table_from_the_simulator(small_study):
    rows = latency_table(small_study, batches=(1, 16))
    assert {(r.platform, r.batch, r.method) for r in rows} == {
        (p, b, m)
        for p in ("datacenter", "edge")
        for b in (1, 16)
        for m in ("repurpose", "direct_tp")
    }
    assert all(r.latency_s > r.compute_only_s > 0 for r in rows)
    edge = {(r.batch, r.method): r for r in rows if r.platform == "edge"}
    assert edge[(1, "repurpose")].latency_s < edge[(1, "direct_tp")].latency_s
    assert all(r.communication_share > 0.9 for r in edge.values())  # traffic dominates
    assert edge[(16, "repurpose")].per_sample_s < edge[(1, "repurpose")].per_sample_s
    assert "| edge | 1 | 2 | repurpose | 0 |" in latency_markdown(rows)


def test_latency_table_takes_any_simulator(small_study):
    seen = []

    def fake(platform, graphs):
        seen.append((len(graphs), platform.network.npus))
        return 1e-3

    rows = latency_table(small_study, simulate=fake)
    assert seen == [(2, 2)] * 8  # 2 platforms x 2 records x (network, free network)
    assert all(r.latency_s == 1e-3 and r.communication_share == 0 for r in rows)
    with pytest.raises(ConfigError, match="batch"):
        latency_table(small_study, simulate=fake, batches=(0,))


def test_trainsim_run_on_the_written_workloads_gives_the_table_latency(tmp_path):
    out, et = tmp_path / "out", tmp_path / "et"
    rc = main(
        [
            "repurpose", "--workers", "4", "--budget", "0.05", "--seed", "0",
            "--batch", "8", "--out", str(out), "--et-out", str(et),
        ]
    )  # fmt: skip
    assert rc == 0
    table = {
        (r["platform"], r["method"], r["budget"]): r
        for r in json.loads((out / "latency.json").read_text())
    }
    index = json.loads((et / "index.json").read_text())
    assert len(index) == len(table) and {e["backend"] for e in index} == {"flow"}
    for entry in index:
        if entry["method"] not in ("repurpose", "whole_model_gather"):
            continue
        res = tmp_path / f"{entry['platform']}-{entry['method']}.json"
        rc = main(
            [
                "run", entry["platform_file"], "--workload", entry["workload"],
                "--backend", entry["backend"], "--json", str(res), "--quiet",
            ]
        )  # fmt: skip
        assert rc == 0
        simulated = json.loads(res.read_text())["makespan_s"]
        row = table[(entry["platform"], entry["method"], entry["budget"])]
        assert simulated == pytest.approx(row["latency_s"], rel=1e-9)
        assert simulated == pytest.approx(entry["latency_s"], rel=1e-9)
