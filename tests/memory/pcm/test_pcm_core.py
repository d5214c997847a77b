"""Closed-loop ROB cores (memory/pcm/core.py) against a fixed-latency memory."""

import pytest

from trainsim.engine.kernel import EventQueue
from trainsim.memory.pcm.config import CoreConfig, MemoryConfig
from trainsim.memory.pcm.core import Core
from trainsim.memory.pcm.timing import Controller, FixedService

LAT = 300.0


def one_core(rob: int, instructions: int = 200_000, mpki: float = 10.0) -> Core:
    eq = EventQueue()
    # thousands of banks, no bursts: the memory is a pure 300 ns delay
    ctrl = Controller(eq, MemoryConfig(banks=4096, burst_ns=0.0), FixedService(LAT, LAT))
    cfg = CoreConfig(
        cores=1, rob=rob, mpki=mpki, instructions=instructions, writebacks_per_miss=0.0
    )
    core = Core(eq, ctrl.submit, cfg, seed=7, pool_size=1)
    core.start()
    eq.run()
    return core


def test_rob_of_one_serializes_misses():
    core = one_core(rob=1)
    dt = core.dt
    expected_ns = core.cfg.instructions * dt + len(core.m) * (LAT - dt)
    assert core.finish_ns == pytest.approx(expected_ns, rel=0.002)
    assert core.ipc == pytest.approx(
        core.cfg.instructions / (expected_ns * core.cfg.freq_ghz), rel=0.002
    )


def test_huge_rob_hides_all_but_the_longest_latency():
    """Dispatch never stalls, so retirement lags by the longest miss latency, nothing else."""
    core = one_core(rob=10**9, instructions=2_000_000)
    ideal = core.cfg.instructions * core.dt
    longest = max(c - d for c, d in zip(core.C, core.D, strict=True))
    assert LAT <= longest < 4 * LAT  # an occasional bank conflict
    assert core.finish_ns == pytest.approx(ideal + longest, abs=core.dt)
    assert core.ipc == pytest.approx(core.cfg.width, rel=0.01)


def test_bigger_rob_more_mlp_higher_ipc():
    ipcs = [one_core(rob).ipc for rob in (16, 64, 128, 192, 512)]
    assert all(a < b for a, b in zip(ipcs, ipcs[1:], strict=False))


def test_more_misses_lower_ipc():
    assert one_core(128, mpki=5).ipc > one_core(128, mpki=10).ipc > one_core(128, mpki=20).ipc
