import json

import numpy as np
import pytest

from trainsim.enums import NodeType as T
from trainsim.report.breakdown import breakdown
from trainsim.report.intervals import intersection_length, union_length
from trainsim.report.perfetto import trace_events, write_trace
from trainsim.system.api import simulate

from ..system.conftest import ring_platform
from ..system.test_executor import graphs_for


def test_interval_union_and_intersection():
    assert union_length(np.array([0, 1, 5]), np.array([2, 3, 6])) == 4
    assert intersection_length((np.array([0.0]), np.array([4.0])), (np.array([1, 3.5]), np.array([2, 10]))) == 1.5


def _pipeline(b, rank):
    # rank 0 computes then sends; rank 1 computes while waiting for the message
    if rank == 0:
        b.add(1, T.COMP_NODE, "fwd", duration_s=10e-6)
        b.add(2, T.COMM_SEND_NODE, "send", comm_dst=1, comm_tag=1, comm_size=1 << 20, data_deps=[1])
    else:
        b.add(1, T.COMM_RECV_NODE, "recv", comm_src=0, comm_tag=1, comm_size=1 << 20)
        b.add(2, T.COMP_NODE, "overlapped", duration_s=5e-6)
        b.add(3, T.COMP_NODE, "after", duration_s=10e-6, data_deps=[1, 2])


def test_breakdown_overlap_idle_and_astra_exposed_comm():
    res = simulate(ring_platform(2), graphs_for(2, _pipeline), compat="astra")
    by_rank = {b.ranks[0]: b for b in breakdown(res)}
    r1 = by_rank[1]
    arrival = res.ranks[0].finish_s
    assert r1.compute_s == pytest.approx(15e-6)
    assert r1.comm_s == pytest.approx(arrival)
    assert r1.overlap_s == pytest.approx(5e-6)
    assert r1.exposed_comm_s == pytest.approx(r1.finish_s - 15e-6)
    assert r1.idle_s == pytest.approx(0.0, abs=1e-12)


def test_trace_event_structure(tmp_path):
    res = simulate(ring_platform(4), graphs_for(4, lambda b, r: _pipeline(b, r % 2) if r < 2 else b.add(1, T.COMP_NODE, "x", duration_s=1e-6)), compat="astra")
    events = trace_events(res)
    complete = [e for e in events if e["ph"] == "X"]
    assert complete and all({"name", "ts", "dur", "pid", "tid"} <= e.keys() for e in complete)
    assert all(e["dur"] >= 0 for e in complete)
    ts = [e["ts"] for e in events if e["ph"] != "M"]
    assert ts == sorted(ts)
    names = {e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "process_name"}
    assert "ranks 2..3 (2 identical)" in names
    path = write_trace(tmp_path / "t.json", res, expand=True)
    doc = json.loads(path.read_text())
    assert len({e["pid"] for e in doc["traceEvents"]}) == 4


def test_a_trace_over_the_node_budget_is_refused_unless_forced(tmp_path, monkeypatch):
    """The ``trace_events`` budget (docs/limits.md): an expanded trace counts every rank's
    nodes, a folded one each class's once; --force lets it through."""
    from dataclasses import replace

    from trainsim import budget
    from trainsim.budget import BudgetError

    res = simulate(ring_platform(4), graphs_for(4, lambda b, r: b.add(1, T.COMP_NODE, "x", duration_s=1e-6)), compat="astra")
    monkeypatch.setitem(budget.LIMITS, "trace_events", replace(budget.LIMITS["trace_events"], value=3))
    assert len(trace_events(res)) > 0  # one class of four identical ranks: 1 node
    with pytest.raises(BudgetError, match=r"--expand: a trace of every rank's timeline \(4 ranks\): estimated 4 nodes"):
        write_trace(tmp_path / "t.json", res, expand=True)
    assert not (tmp_path / "t.json").exists()
    with budget.forced():
        write_trace(tmp_path / "t.json", res, expand=True)
    assert len({e["pid"] for e in json.loads((tmp_path / "t.json").read_text())["traceEvents"]}) == 4
