"""The flow backend far from t = 0: a flow ends when what it has left would drain in less than
the clock resolves (one float ulp of ``now``), so a straggler of 10^8 us (1e11 ns, where an ulp
is 1.5e-5 ns) no longer livelocks the step; times stay exact (issue 24)."""

import copy
import re

import numpy as np
import pytest

from tests.network.test_backends_agree import ring_platform
from tests.network.test_flow import flow_net
from trainsim.system.api import simulate
from trainsim.workload.micro import data_parallel_workload

SIZES = (1_000_003, 777_777, 123_457)  # B, three flows on one 100 B/ns link, 10 ns latency


def _expected_ns():
    """Max-min by hand: all three share the link (33.3 B/ns each) until the smallest ends, then two."""
    a, b, c = sorted(SIZES)
    t1 = 3 * a / 100
    t2 = t1 + 2 * (b - a) / 100
    t3 = t2 + (c - b) / 100
    return {SIZES.index(a): 10 + t1, SIZES.index(b): 10 + t2, SIZES.index(c): 10 + t3}


@pytest.mark.parametrize("start_ns", [0.0, 1e11, 1e13, 1e15])
def test_flows_late_in_time_finish_exactly(start_ns):
    net, q = flow_net("Ring", 8)
    got = {}

    def start(_):
        for i, size in enumerate(SIZES):
            net.send(0, 1, size, lambda tag: got.__setitem__(tag, q.now), i)

    q.schedule(start_ns, start)
    q.run()
    ulp_ns = max(1e-9, 4 * start_ns * 2.0**-52)
    want = _expected_ns()
    assert got == {k: pytest.approx(start_ns + v, abs=50 * ulp_ns) for k, v in want.items()}


def _straggler_step(npus: int, layers: int, straggler_s: float):
    """The data-parallel reference step with rank ``npus // 2``'s first compute node lasting ``straggler_s``."""
    graphs = list(data_parallel_workload(npus, layers, 3_000_017))
    slow = copy.copy(graphs[npus // 2])
    slow.duration_s = slow.duration_s.copy()
    slow.duration_s[0] = straggler_s
    graphs[npus // 2] = slow
    return graphs


@pytest.mark.parametrize("npus", [2, 8])
def test_straggler_shifts_the_step_by_its_delay(npus):
    """Once every other rank waits for the straggler, the rest of the step does not depend on
    how long it was late: the step is the straggler's delay plus the same tail."""
    small, big = 1e-3, 100.0  # 10^3 us, 10^8 us
    tail = [
        simulate(ring_platform(npus), _straggler_step(npus, 1, s), backend="flow").makespan_s - s
        for s in (small, big)
    ]
    assert tail[1] == pytest.approx(tail[0], abs=1e-9)
    assert 0 < tail[0] < 2e-3


def test_issue_case_eight_ranks_four_layers_finishes():
    result = simulate(ring_platform(8), _straggler_step(8, 4, 100.0), backend="flow")
    assert 100.0 < result.makespan_s < 100.0 + 2e-3


def _finish_drained_before_the_fix(self):
    """The completion rule of the issue: a fixed 1e-6 B x rate threshold, below what the clock
    resolves at 1e11 ns, so zero-time completion events repeat forever."""
    rem = np.asarray(self._remaining)
    finished = rem <= 1e-6 * np.maximum(1.0, self._rate)
    if not finished.any():
        return
    keep = ~finished
    for idx in np.flatnonzero(finished).tolist():
        on_arrival, arg, latency, _start, _nbytes = self._done[idx]
        self.queue.schedule(latency, on_arrival, arg)
    self._routes = [r for r, k in zip(self._routes, keep.tolist(), strict=True) if k]
    self._done = [d for d, k in zip(self._done, keep.tolist(), strict=True) if k]
    self._remaining = rem[keep].tolist()
    self._rate = self._rate[keep]


def test_the_watchdog_names_the_backend_and_its_flows(monkeypatch):
    """With the old completion rule the 1e11 ns case livelocks; the event loop's watchdog turns
    it into a LivelockError naming the repeating flow events and the flows."""
    from trainsim.errors import LivelockError
    from trainsim.network.flow import FlowNetwork

    monkeypatch.setattr(FlowNetwork, "_finish_drained", _finish_drained_before_the_fix)
    net, q = flow_net("Ring", 8)
    q.stall_limit_events = 1 << 15

    def start(_):
        for i, size in enumerate(SIZES):
            net.send(0, 1, size, lambda _tag: None, i)

    q.schedule(1e11, start)
    with pytest.raises(LivelockError, match=r"no simulated time passed .* FlowNetwork\._") as err:
        q.run()
    assert re.search(
        r"flow backend: \d active flows: 0->1 [\d.e+-]+ B left at [\d.]+ B/ns", str(err.value)
    )
