"""The FRED study (studies/fred): placement, collectives measured on the shipped platforms,
I/O streaming, and a generated step priced on two fabrics."""

from __future__ import annotations

import pytest

from trainsim.errors import ConfigError
from trainsim.studies.fred import study
from trainsim.studies.fred.fabrics import WaferNet
from trainsim.studies.fred.placement import npu_of_rank
from trainsim.studies.fred.step import step_time
from trainsim.studies.fred.workloads import Workload
from trainsim.topology.wafer import paper_fred, paper_mesh, wafer_fabric
from trainsim.workload.generate.parallel import Parallelism


@pytest.fixture(scope="module")
def nets():
    return study.load_nets()


def test_placements():
    mesh = paper_mesh()
    assert npu_of_rank(mesh, "linear") == tuple(range(20))
    snake = npu_of_rank(mesh, "snake")
    assert snake[4:6] == (4, 9)  # the end of row 0, then back along row 1
    column = npu_of_rank(mesh, "column")
    assert [column[r] for r in (0, 4, 8, 12, 16)] == [0, 1, 2, 3, 4]  # a DP group of MP2 x PP2 x DP5 is row 0
    assert npu_of_rank(paper_fred("D"), "snake") == tuple(range(20))
    with pytest.raises(ConfigError, match="placement"):
        npu_of_rank(mesh, "diagonal")


def test_collective_bandwidths_come_out_of_the_fabrics(nets):
    rows = {(r.fabric, r.what): r for r in study.collective_rows(nets)}
    wide = "20-way all-reduce"
    # mesh: the 2-D algorithm keeps both dimensions busy, about 2 x 750 GB/s
    assert 1.3e3 < rows[("mesh", wide)].per_npu_gbps < 1.5e3
    assert rows[("fred_a", wide)].per_npu_gbps > rows[("mesh", wide)].per_npu_gbps
    assert rows[("fred_c", wide)].per_npu_gbps == pytest.approx(3e3, rel=1e-3)
    # in-network: D bytes per NPU instead of 2 (N-1)/N D, in about half the time
    assert rows[("fred_d", wide)].bytes_per_npu == pytest.approx(1e9)
    assert rows[("fred_c", wide)].bytes_per_npu == pytest.approx(1.9e9)
    assert rows[("fred_d", wide)].time_us == pytest.approx(rows[("fred_c", wide)].time_us / 1.9, rel=1e-3)
    assert rows[("mesh", "DP 5 groups")].per_npu_gbps == pytest.approx(750, rel=1e-3)
    assert rows[("fred_d", "DP 5 groups")].per_npu_gbps == pytest.approx(3e3, rel=1e-3)


def test_mesh_io_falls_short_of_line_rate(nets):
    io = study.io_rows(nets)
    assert 0.3 < io["mesh"][0] < 0.9
    assert io["fred_d"][0] == pytest.approx(1.0, rel=1e-3)
    # sharded weights reach every controller's line rate on the mesh too: the broadcast is the hotspot
    assert io["mesh"][1] == pytest.approx(1.0, rel=1e-3)


def test_step_prices_a_generated_workload():
    w = Workload("tiny", "gpt3-175b", Parallelism(tp=2, pp=2, dp=5, micro_batch=1, global_batch=10), True, 1.0)
    from dataclasses import replace

    tiny = replace(w, model="megatron-1.7b")
    work = tiny.generate()
    mesh = WaferNet(wafer_fabric(paper_mesh()), "mesh", npu_of_rank(paper_mesh(), "column"))
    fred = WaferNet(wafer_fabric(paper_fred("D")), "fred_d")
    for streaming in (False, True):
        on_mesh = step_time(work, tiny.parallelism, mesh, streaming=streaming, layers=tiny.layers)
        on_fred = step_time(work, tiny.parallelism, fred, streaming=streaming, layers=tiny.layers)
        assert on_mesh.compute_s == on_fred.compute_s > 0
        assert on_fred.step_s < on_mesh.step_s
        assert (on_mesh.io_s > 0) == streaming
        if streaming:  # streaming overlaps compute: the step is the longer plus one layer's streaming
            assert on_mesh.step_s <= max(on_mesh.compute_s + on_mesh.exposed_comm_s, on_mesh.io_s) + on_mesh.io_s / tiny.layers + 1e-12


def test_missing_platform_folder(tmp_path):
    with pytest.raises(ConfigError, match="mesh.yaml"):
        study.load_nets(tmp_path)
