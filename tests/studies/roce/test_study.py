"""The RoCE study (studies/roce/study.py) on the 32-NPU fabric at small sizes: rows from real
runs, ratios against PFC only, a store that keeps finished rows and resumes."""

from __future__ import annotations

import pytest

from trainsim.errors import ConfigError
from trainsim.network.packet import native
from trainsim.studies.roce import study
from trainsim.sweep.store import SweepStore
from trainsim.system.api import simulate
from trainsim.workload.micro import collective_workload

P32 = study.platform_path("32")
ENGINE = "native" if native.available() else "python"


def test_cases_put_pfc_only_first_and_models_have_no_size():
    got = study.cases(["incast", "dlrm"], [0.5, 2], ["hpcc", "dcqcn"])
    assert [(c.experiment, c.size_mib, c.scheme) for c in got] == [
        ("incast", 0.5, "none"), ("incast", 0.5, "hpcc"), ("incast", 0.5, "dcqcn"),
        ("incast", 2, "none"), ("incast", 2, "hpcc"), ("incast", 2, "dcqcn"),
        ("dlrm", None, "none"), ("dlrm", None, "hpcc"), ("dlrm", None, "dcqcn"),
    ]  # fmt: skip


def test_incast_ratios_come_from_the_runs(tmp_path):
    """PFC only's ratio is exactly 1; DCQCN reacts to the 31 -> 1 incast of 1 MiB each (its
    time differs), and every ratio is that row's own time over PFC only's."""
    with SweepStore(tmp_path / "s.sqlite") as st:
        rows = study.run_study(P32, study.cases(["incast"], [1.0], ["dcqcn", "hpcc"]), st, engine=ENGINE)
    by = {r["scheme"]: r for r in rows}
    assert by["none"]["vs_pfc_only"] == 1.0
    assert by["dcqcn"]["vs_pfc_only"] != 1.0 and by["dcqcn"]["time_us"] != by["none"]["time_us"]
    for r in rows:
        assert r["vs_pfc_only"] == r["time_us"] / by["none"]["time_us"]
    # lossless under PFC; the incast pauses upstream links and every packet of 31 MiB is sent
    assert by["none"]["drops"] == 0 and by["none"]["pause_us"] > 0
    assert by["none"]["packets"] >= 31 * 2**20 // 1000
    # 31 MiB through one 200 Gb/s port of 1000 B payload in 1048 B on the wire: a lower bound
    assert by["none"]["time_us"] > 31 * 2**20 * 1048 / 1000 * 8 / 200e3


def test_a_collective_row_is_the_simulated_time(tmp_path):
    platform = study.with_options(study.load_study_platform(P32), cc="none", engine=ENGINE)
    size = int(0.25 * 2**20)
    direct = simulate(platform, collective_workload(32, "all_reduce", size), backend="packet").makespan_s * 1e6
    with SweepStore(tmp_path / "s.sqlite") as st:
        rows = study.run_study(P32, study.cases(["allreduce"], [0.25], ["none"]), st, engine=ENGINE)
    assert rows[0]["time_us"] == pytest.approx(direct, rel=1e-12)


def test_an_interrupted_study_keeps_its_rows_and_resumes(tmp_path, monkeypatch):
    wanted = study.cases(["alltoall", "alltoall_naive"], [0.125], ["hpcc"])
    ran: list[study.Case] = []
    real = study.run_case

    def counting(platform, case, engine="auto"):
        ran.append(case)
        if len(ran) == 3:
            raise KeyboardInterrupt
        return real(platform, case, engine)

    monkeypatch.setattr(study, "run_case", counting)
    with SweepStore(tmp_path / "s.sqlite") as st, pytest.raises(KeyboardInterrupt):
        study.run_study(P32, wanted, st, engine=ENGINE)
    with SweepStore(tmp_path / "s.sqlite") as st:
        assert st.count() == 2
        ran.clear()
        rows = study.run_study(P32, wanted, st, engine=ENGINE)
    assert ran == wanted[2:]
    assert [(r["experiment"], r["scheme"]) for r in rows] == [(c.experiment, c.scheme) for c in wanted]
    naive = {r["scheme"]: r for r in rows if r["experiment"] == "alltoall_naive"}
    assert naive["none"]["vs_pfc_only"] == 1.0
    # HPCC paces below line rate at its 95% target: slower than PFC only, by less than 10%
    assert 1.0 < naive["hpcc"]["vs_pfc_only"] < 1.1


def test_bad_inputs_are_config_errors(tmp_path):
    with pytest.raises(ConfigError, match="platform"):
        study.platform_path(tmp_path / "missing.yaml")
    with pytest.raises(ConfigError, match="schemes"):
        study.parse_names("dcqcn,swift", study.SCHEMES, "schemes")
    with pytest.raises(ConfigError, match="size-mib"):
        study.parse_sizes("1,-2")
    plain = tmp_path / "plain.yaml"
    plain.write_text("network:\n  dims:\n    - {topology: Ring, size: 4, bandwidth_gbps: 100 Gb/s, latency_ns: 500}\n")
    with pytest.raises(ConfigError, match="backends.packet"):
        study.load_study_platform(plain)


@pytest.mark.slow
def test_resnet50_step_on_32_npus(tmp_path):
    with SweepStore(tmp_path / "s.sqlite") as st:
        rows = study.run_study(P32, study.cases(["resnet50"], [1.0], ["hpcc"]), st, engine=ENGINE)
    by = {r["scheme"]: r for r in rows}
    assert by["none"]["exposed_vs_pfc_only"] == 1.0
    assert by["hpcc"]["time_us"] > by["hpcc"]["compute_us"] > 0
