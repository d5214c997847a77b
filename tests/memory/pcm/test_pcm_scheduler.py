"""NVMain's schedulers in the timing model (memory/pcm/timing.py): FRFCFS and FRFCFS-WQF."""

import pytest

from trainsim.engine.kernel import EventQueue
from trainsim.errors import ConfigError
from trainsim.memory.pcm.config import MemoryConfig, PcmConfig, Scheduler
from trainsim.memory.pcm.timing import Controller, FixedService, Request

READ, WRITE = 450.0, 1150.0


def run(requests, cfg, flush=True):
    """Submit ``(time_ns, is_write, line)`` requests; run, flush, run; return the controller."""
    eq = EventQueue()
    ctrl = Controller(eq, cfg, FixedService(READ, WRITE))
    for rid, (t, w, line) in enumerate(requests):
        eq.schedule_at(t, ctrl.submit, Request(rid, w, line))
    eq.run()
    if flush:
        ctrl.flush()
        eq.run()
    return ctrl


def test_defaults_are_nvmains_mlc_example():
    m = PcmConfig().memory
    assert (m.channels, m.banks, m.scheduler, m.queue, m.burst_ns) == (
        1,
        2,
        Scheduler.FRFCFS,
        32,
        10.0,
    )
    assert (m.read_queue, m.write_queue, m.drain_high, m.drain_low) == (32, 32, 32, 16)
    assert m.capacity_bytes == 8 * 2**30


def test_frfcfs_serves_reads_and_writes_in_arrival_order():
    """The three-request trace of issue 11 under FRFCFS: the read waits behind both writes."""
    cfg = MemoryConfig(burst_ns=0.0)
    ctrl = run([(0.0, True, 0), (10.0, True, 2), (20.0, False, 4)], cfg)  # all bank 0 of 2
    got = [(r.rid, r.start_ns, r.done_ns) for r in ctrl.order]
    assert got == [(0, 0.0, 1150.0), (1, 1150.0, 2300.0), (2, 2300.0, 2750.0)]
    assert ctrl.latencies(writes=False).tolist() == [2730.0]


def test_frfcfs_full_queue_blocks_an_idle_bank():
    """A request beyond the channel queue waits outside even though its bank is idle."""
    cfg = MemoryConfig(burst_ns=0.0, queue=2)
    reqs = [(0.0, False, 0), (1.0, False, 2), (2.0, False, 4), (3.0, False, 1)]
    start = {r.rid: r.start_ns for r in run(reqs, cfg).order}
    # bank 0 serves 0, then 1 (t=450) which frees a slot for request 3 (bank 1, idle since 0)
    assert start == {0: 0.0, 1: 450.0, 3: 450.0, 2: 900.0}
    roomy = {r.rid: r.start_ns for r in run(reqs, MemoryConfig(burst_ns=0.0, queue=4)).order}
    assert roomy[3] == 3.0


def test_wqf_holds_writes_until_the_high_watermark():
    cfg = MemoryConfig(
        banks=1, burst_ns=0.0, scheduler="frfcfs-wqf", write_queue=4, drain_high=4, drain_low=2
    )
    held = run([(0.0, True, 0), (1.0, True, 1), (2.0, False, 2)], cfg, flush=False)
    assert [r.rid for r in held.order] == [2]  # below the watermark the writes wait
    flushed = run([(0.0, True, 0), (1.0, True, 1), (2.0, False, 2)], cfg)
    assert [r.rid for r in flushed.order] == [2, 0, 1]  # the end of the run lets them go


def test_wqf_drains_from_high_to_low_and_refuses_writes_meanwhile():
    cfg = MemoryConfig(
        banks=1, burst_ns=0.0, scheduler="frfcfs-wqf", write_queue=4, drain_high=4, drain_low=2
    )
    reqs = [(float(i), True, i) for i in range(4)] + [(3.5, False, 10), (5.0, True, 11)]
    ctrl = run(reqs, cfg)
    # drain at 4 queued: W0 (3 left), W1 (2 left = low): the drain ends, the read goes, then
    # the flush serves W2, W3 and W5 (refused during the drain, admitted after it)
    assert [r.rid for r in ctrl.order] == [0, 1, 4, 2, 3, 5]
    assert ctrl.order[0].start_ns == 3.0  # the drain starts when the fourth write arrives


@pytest.mark.parametrize("scheduler", list(Scheduler))
def test_every_scheduler_completes_everything(scheduler):
    reqs = [(float(i), i % 3 == 0, (7 * i) % 11) for i in range(60)]
    ctrl = run(
        reqs,
        MemoryConfig(
            banks=2, scheduler=scheduler, queue=8, write_queue=8, drain_high=6, drain_low=2
        ),
    )
    assert sorted(r.rid for r in ctrl.done) == list(range(60))


def test_unknown_scheduler_is_refused():
    with pytest.raises(ConfigError, match="MemoryConfig.scheduler.*'fifo'"):
        MemoryConfig(scheduler="fifo")
