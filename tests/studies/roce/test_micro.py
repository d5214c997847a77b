"""The papers' micro-benchmarks (studies/roce/micro.py) against the published figures, on the
rows where our model agrees (docs/roce.md, "Against the papers' micro-benchmarks"); the one
that does not is checked for what it is, not for the paper's number."""

from __future__ import annotations

import pytest

from trainsim.studies.roce import micro


def test_hpcc_holds_eta_with_a_near_empty_queue():
    # HPCC (SIGCOMM'19): eta = 95% utilization, near-zero queue
    r = micro.long_flows("hpcc")
    assert r["utilization"] == pytest.approx(0.95, abs=0.02)
    assert r["queue_mean_bytes"] < 1048 and r["pause_frames"] == 0


def test_hpcc_restores_the_long_flow_at_once_and_dcqcn_after_2_ms():
    # HPCC (SIGCOMM'19) long + short flow: HPCC restores the long flow's rate immediately;
    # DCQCN's is not back at line rate more than 2 ms after the short flow ends
    hpcc = micro.long_short("hpcc", step_us=2.0)
    assert hpcc["recovery_us"] is not None and hpcc["recovery_us"] <= 10.0
    dcqcn = micro.long_short("dcqcn", has_window=False)
    assert dcqcn["recovery_us"] is None or dcqcn["recovery_us"] > 2000.0
    assert dcqcn["gbps_at_2ms"] < 0.9 * 25.0


def test_mice_latency_beside_elephants():
    # HPCC: 1 KB mice close to the base RTT (agrees). DCQCN: the paper has > 35 us; ours is
    # lower (no standing queue above Kmin with the code base's timers: docs/roce.md), but
    # still several times HPCC's
    hpcc = micro.mice_latency("hpcc")
    assert hpcc["median_us"] <= 1.2 * hpcc["base_us"]
    dcqcn = micro.mice_latency("dcqcn", has_window=False)
    assert dcqcn["median_us"] > 3 * hpcc["median_us"]


@pytest.mark.slow
def test_dcqcn_paper_two_flows_reach_equal_shares_late():
    # DCQCN (SIGCOMM'15) Fig. 10: two flows to ~20 + 20 Gb/s of 40 Gb/s; with the paper's
    # parameters (no byte counter) ours are within 5% only after ~40 ms (docs/roce.md)
    r = micro.two_flows("dcqcn", from_us=40000.0, to_us=50000.0, **micro.DCQCN_PAPER)
    for rate in (r["a_gbps"], r["b_gbps"]):
        assert rate == pytest.approx(r["fair_gbps"], rel=0.05)
