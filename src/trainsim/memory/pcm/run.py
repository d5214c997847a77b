"""One run of the PCM model: a content pool stored under a scheme, the memory, a driver.

Part of ``memory/pcm`` (DESIGN.md, "Layers": memory). Times in ns, rates in requests per ns.

A run couples a content pool (``content``) stored under a scheme (``trilevel``), the memory
timing model (``timing``) and a driver: the closed-loop cores (``core``) or an open-loop trace
(``trace``), and condenses what the controller saw into a :class:`RunResult`. The tier
estimate (``tier``) and the studies (``trainsim.studies.pcm``) are built on these runs.

Capacity, the unit of open-loop load: ``channels * banks / E[s]`` requests per ns, ``E[s]`` the
mean bank time of a request (read fraction ``r``: ``r (E[read] + burst) + (1 - r)(E[write] +
burst)``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from trainsim.engine.kernel import EventQueue
from trainsim.errors import ConfigError
from trainsim.memory.pcm.config import PcmConfig, Scheme
from trainsim.memory.pcm.content import content_lines
from trainsim.memory.pcm.core import Core
from trainsim.memory.pcm.timing import Controller, LineStore, Request
from trainsim.memory.pcm.trace import Trace
from trainsim.memory.pcm.trilevel import LineProfiles, profile_lines


@dataclass(frozen=True)
class Pool:
    """Line contents that writes store and the initial memory image is drawn from."""

    name: str
    lines: NDArray[np.uint8]

    @classmethod
    def of(cls, source: str = "mix", size: int = 4096, seed: int = 0) -> Pool:
        if not isinstance(size, int) or size < 1:
            raise ConfigError(f"got {size!r}, expected an integer >= 1", field="pool.size")
        return cls(source, content_lines(source, size, seed))


@dataclass(frozen=True)
class RunResult:
    """One scheme under one driver. Latencies are means over completed requests (ns)."""

    scheme: str
    read_latency_ns: float
    write_latency_ns: float
    read_p95_ns: float
    write_p95_ns: float
    read_service_ns: float
    write_service_ns: float
    relaxed_write_fraction: float
    tri_read_fraction: float
    bank_utilization: float
    reads: int
    writes: int
    horizon_ns: float
    ipc: float = float("nan")


def _run(
    cfg: PcmConfig, profiles: LineProfiles, drive: Callable[[EventQueue, Controller], None]
) -> tuple[Controller, LineStore, EventQueue]:
    """Build the memory for ``profiles``, let ``drive`` schedule its requests, run to the end."""
    eq = EventQueue()
    store = LineStore(profiles, cfg.cell, seed=cfg.seed)
    ctrl = Controller(eq, cfg.memory, store)
    drive(eq, ctrl)
    eq.run()
    ctrl.flush()  # writes an FRFCFS-WQF controller still holds for a drain (NVMain: Drain)
    eq.run()
    return ctrl, store, eq


def _result(
    scheme: Scheme, ctrl: Controller, store: LineStore, horizon: float, ipc: float
) -> RunResult:
    r, w = ctrl.latencies(False), ctrl.latencies(True)
    rs = [q.done_ns - q.start_ns for q in ctrl.done if not q.is_write]
    ws = [q.done_ns - q.start_ns for q in ctrl.done if q.is_write]

    def mean(x: Sequence[float] | NDArray[np.float64]) -> float:
        return float(np.mean(x)) if len(x) else float("nan")

    def p95(x: NDArray[np.float64]) -> float:
        return float(np.percentile(x, 95)) if x.size else float("nan")

    return RunResult(
        scheme=scheme.value,
        read_latency_ns=mean(r),
        write_latency_ns=mean(w),
        read_p95_ns=p95(r),
        write_p95_ns=p95(w),
        read_service_ns=mean(rs),
        write_service_ns=mean(ws),
        relaxed_write_fraction=store.relaxed_writes / store.writes if store.writes else 0.0,
        tri_read_fraction=store.tri_reads / store.reads if store.reads else 0.0,
        bank_utilization=ctrl.utilization(horizon),
        reads=int(r.size),
        writes=int(w.size),
        horizon_ns=horizon,
        ipc=ipc,
    )


def run_closed_loop(
    cfg: PcmConfig, scheme: Scheme | str, pool: Pool, profiles: LineProfiles | None = None
) -> RunResult:
    """Cores (``cfg.core``) against the memory; IPC is the mean over the cores."""
    scheme = Scheme(scheme)
    profiles = profiles if profiles is not None else profile_lines(pool.lines, scheme, cfg)
    cores: list[Core] = []

    def drive(eq: EventQueue, ctrl: Controller) -> None:
        for c in range(cfg.core.cores):
            core = Core(
                eq, ctrl.submit, cfg.core, seed=cfg.seed * 1000 + c + 1, pool_size=len(pool.lines)
            )
            cores.append(core)
            core.start()

    ctrl, store, eq = _run(cfg, profiles, drive)
    ipc = float(np.mean([c.ipc for c in cores]))
    return _result(scheme, ctrl, store, eq.now, ipc)


def run_trace(cfg: PcmConfig, scheme: Scheme | str, pool: Pool, trace: Trace) -> RunResult:
    """Replay an open-loop trace (requests arrive at their times whatever the memory does)."""
    scheme = Scheme(scheme)
    lines = pool.lines if trace.data.shape[0] == 0 else np.concatenate([pool.lines, trace.data])
    profiles = profile_lines(lines, scheme, cfg)
    n_pool = len(pool.lines)
    content = np.where(
        trace.content >= 0,
        trace.content + n_pool,
        (np.arange(len(trace)) * 2654435761 >> 5) % n_pool,
    )

    def drive(eq: EventQueue, ctrl: Controller) -> None:
        times, writes, line, cont = (
            trace.time_ns.tolist(),
            trace.is_write.tolist(),
            trace.line.tolist(),
            content.tolist(),
        )

        def arrive(i: int) -> None:
            ctrl.submit(Request(i, writes[i], line[i], content=cont[i] if writes[i] else -1))
            if i + 1 < len(times):
                eq.schedule_at(times[i + 1], arrive, i + 1)

        eq.schedule_at(times[0], arrive, 0)

    ctrl, store, eq = _run(cfg, profiles, drive)
    return _result(scheme, ctrl, store, eq.now, float("nan"))


def capacity_per_ns(cfg: PcmConfig, profiles: LineProfiles, read_fraction: float) -> float:
    """Requests per ns the banks can serve with lines stored as ``profiles`` say.

    ``channels * banks / E[s]``, ``E[s]`` the mean bank time of a request (module docstring).
    """
    burst = cfg.memory.burst_ns
    read = float(profiles.read_ns.mean()) + burst
    write = float(profiles.expected_write_ns.mean()) + burst
    return (
        cfg.memory.channels
        * cfg.memory.banks
        / (read_fraction * read + (1 - read_fraction) * write)
    )


def base_capacity_per_ns(cfg: PcmConfig, pool: Pool, read_fraction: float) -> float:
    """Requests per ns the base scheme's banks can serve (the unit of open-loop load)."""
    return capacity_per_ns(cfg, profile_lines(pool.lines, Scheme.BASE, cfg), read_fraction)
