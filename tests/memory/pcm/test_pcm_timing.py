"""Memory timing model (memory/pcm/timing.py): queue discipline, drain, interleaving, channel."""

from pathlib import Path

import pytest

from trainsim.engine.kernel import EventQueue
from trainsim.memory.pcm.config import MemoryConfig
from trainsim.memory.pcm.timing import Controller, FixedService, Request
from trainsim.memory.pcm.trace import read_trace

READ, WRITE = 450.0, 1150.0


# issue 11's discipline and organization (16 banks, per-bank queues, reads first)
ISSUE11 = {"banks": 16, "scheduler": "read-first"}
NO_BURST = MemoryConfig(burst_ns=0.0, **ISSUE11)
FIXED = FixedService(READ, WRITE)


def run(requests, cfg=NO_BURST, service=FIXED):
    """Submit ``(time_ns, is_write, line)`` requests; return the controller after the run."""
    eq = EventQueue()
    ctrl = Controller(eq, cfg, service)
    for rid, (t, w, line) in enumerate(requests):
        eq.schedule_at(t, ctrl.submit, Request(rid, w, line))
    eq.run()
    return ctrl


def test_three_request_trace_reads_first_non_preemptive(tmp_path: Path):
    """W at 0 starts at once; R (20) waits for it (no preemption) but goes before W (10)."""
    path = tmp_path / "three.trace"
    path.write_text("# time_ns op address\n0 W 0x0\n10 W 0x400\n20 R 0x800\n")
    tr = read_trace(path)
    assert tr.line.tolist() == [0, 16, 32]  # 16 banks: lines 0, 16 and 32 share bank 0
    ctrl = run(zip(tr.time_ns.tolist(), tr.is_write.tolist(), tr.line.tolist(), strict=True))
    got = [(r.rid, r.start_ns, r.done_ns) for r in ctrl.order]
    assert got == [(0, 0.0, 1150.0), (2, 1150.0, 1600.0), (1, 1600.0, 2750.0)]
    assert ctrl.latencies(writes=False).tolist() == [1580.0]
    assert sorted(ctrl.latencies(writes=True).tolist()) == [1150.0, 2740.0]


def test_write_drain_between_watermarks():
    # a read occupies bank 0 while 33 writes (one over the queue) and then 3 reads arrive
    reqs = (
        [(0.0, False, 0)]
        + [(1.0 + i, True, 16 * (i + 1)) for i in range(33)]
        + [(40.0 + i, False, 16 * (40 + i)) for i in range(3)]
    )
    ctrl = run(reqs)
    kinds = ["W" if r.is_write else "R" for r in ctrl.order]
    # full queue (32) -> drain down to 16 left: 17 writes (the waiting one refills the queue)
    assert kinds == ["R"] + ["W"] * 17 + ["R"] * 3 + ["W"] * 16
    assert [r.rid for r in ctrl.order[1:18]] == list(range(1, 18))  # oldest write first


def test_reads_go_first_below_the_watermark():
    reqs = [(0.0, False, 0), (1.0, True, 16), (2.0, True, 32), (3.0, False, 48), (4.0, False, 64)]
    kinds = ["W" if r.is_write else "R" for r in run(reqs).order]
    assert kinds == ["R", "R", "R", "W", "W"]


def test_line_interleaving_over_channels_then_banks():
    ctrl = Controller(
        EventQueue(), MemoryConfig(channels=2, banks=4, scheduler="read-first"), FixedService(1, 1)
    )
    assert [ctrl.bank_of(a) for a in range(10)] == [0, 4, 1, 5, 2, 6, 3, 7, 0, 4]


def test_channel_serializes_bursts_of_its_banks():
    cfg = MemoryConfig(burst_ns=5.0, **ISSUE11)
    ctrl = run([(0.0, False, 0), (0.0, False, 1), (0.0, True, 2)], cfg, FixedService(100.0, 200.0))
    done = {r.rid: r.done_ns for r in ctrl.done}
    # the write takes the bus first (0-5) and programs 5-205; reads sense 0-100, then 100-105 and 105-110
    assert done == {2: 205.0, 0: 105.0, 1: 110.0}


def test_full_read_queue_overflows_in_order_and_everything_completes():
    reqs = [(float(i), False, 16 * i) for i in range(40)]
    ctrl = run(reqs)
    assert [r.rid for r in ctrl.order] == list(range(40))
    assert len(ctrl.done) == 40
    assert ctrl.utilization(ctrl.done[-1].done_ns) == pytest.approx(
        40 * READ / ctrl.done[-1].done_ns / 16
    )


def test_read_of_a_queued_write_is_forwarded():
    # bank 0 busy with a read; a write to line 16 waits; a read of line 16 is answered from it
    ctrl = run(
        [(0.0, False, 0), (1.0, True, 16), (2.0, False, 16)], MemoryConfig(burst_ns=5.0, **ISSUE11)
    )
    fwd = next(r for r in ctrl.done if r.rid == 2)
    assert (fwd.start_ns, fwd.done_ns) == (2.0, 7.0)
    assert ctrl.forwarded == 1
    assert [r.rid for r in ctrl.order] == [0, 1]  # the forwarded read never used the bank
