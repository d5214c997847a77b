"""HBM bandwidth over time of compute and collectives (``report/hbm.py``) and its plot and
table on the report page, for a run whose endpoint model shares HBM (docs/ace.md)."""

from __future__ import annotations

import pytest

from trainsim.config.platform import parse_platform
from trainsim.report.hbm import hbm_over_time
from trainsim.report.html import write_report
from trainsim.system.api import simulate
from trainsim.workload.micro import data_parallel_workload

PLATFORM = {
    "network": {
        "dims": [{"topology": "Ring", "size": 4, "bandwidth_gbps": 100, "latency_ns": 500}]
    },
    "system": {"all_reduce": ["ring"], "local_mem_bw_gbps": 1000},
    "endpoint": {"model": "shared", "compute_units": 10, "comm_units": 2, "comm_hbm_gbps": 200},
}


def test_series_conserve_bytes_and_reach_the_page(tmp_path):
    result = simulate(parse_platform(PLATFORM, "<test>"), data_parallel_workload(4, 2, 2**20))
    [series] = hbm_over_time(result, buckets=50)
    width_ns = series["t_s"][1] * 1e9
    comm = sum(series["comm_gbps"]) * width_ns
    assert comm == pytest.approx(result.resources[0].comm_hbm_bytes, rel=1e-9)
    assert max(series["comm_gbps"]) <= 200 + 1e-9  # never above the collectives' share
    document = result.to_dict()
    document["hbm"] = [series]
    page = write_report(document, tmp_path).read_text()
    assert "HBM bandwidth: compute and collectives" in page and "compute slowdown" in page


def test_no_resources_no_series():
    platform = parse_platform({k: v for k, v in PLATFORM.items() if k != "endpoint"}, "<test>")
    assert hbm_over_time(simulate(platform, data_parallel_workload(4, 1, 2**20))) == []
