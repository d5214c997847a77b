"""The compiled packet engine behind the same interface as the Python one (DESIGN.md,
network layer; the packet backend's fast path).

``native/packet_core`` (Rust, no crates, C ABI) runs the reference engine's model on its own
event heap. Its set-up is the Python engine's: a :class:`PacketEngine` is built for the
parameters (headroom, PFC shifts, ECN thresholds per link, window, base RTT) and its arrays
handed over, so both engines share one configuration. The backend steps the core on the
shared kernel: one kernel event at the core's next event time runs every core event at that
time and schedules ``on_arrival`` of the messages delivered then.

The library is built by ``make`` (``cargo build --release`` into ``_native/``) and found
there, or at ``$TRAINSIM_PACKET_CORE``; :func:`available` says whether it loads.
"""

from __future__ import annotations

import ctypes
import os
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trainsim.network.packet.engine import PRIORITIES, PacketEngine

if TYPE_CHECKING:
    from trainsim.engine import EventQueue
    from trainsim.network.packet.cc import CongestionControl
    from trainsim.network.packet.config import PacketOptions
    from trainsim.topology.graph import LinkGraph

_LIB_NAME = "libpacket_core.so"
_CC_CODE = {"none": 0, "dcqcn": 1, "dctcp": 2, "timely": 3, "hpcc": 4}
_BATCH = 4096
_F64 = ctypes.POINTER(ctypes.c_double)
_U32 = ctypes.POINTER(ctypes.c_uint32)


def library_path() -> Path:
    env = os.environ.get("TRAINSIM_PACKET_CORE")
    return Path(env) if env else Path(__file__).resolve().parent / "_native" / _LIB_NAME


@cache
def _load() -> ctypes.CDLL | None:
    path = library_path()
    if not path.is_file():
        return None
    try:
        lib = ctypes.CDLL(str(path))
    except OSError:
        return None
    p, sz, f64, u64 = ctypes.c_void_p, ctypes.c_size_t, ctypes.c_double, ctypes.c_uint64
    lib.pc_new.restype = p
    new_args: list[Any] = [sz, sz, _F64, _F64, _U32, ctypes.POINTER(ctypes.c_int32)]
    lib.pc_new.argtypes = new_args + [_F64] * 7 + [_U32, sz, _F64, sz]
    lib.pc_free.argtypes = [p]
    lib.pc_send.argtypes = [p, f64, u64, u64, _U32, sz, _U32, sz, f64, f64]
    lib.pc_next_time.restype = f64
    lib.pc_next_time.argtypes = [p]
    lib.pc_run.restype = sz
    lib.pc_run.argtypes = [p, f64, ctypes.POINTER(u64), sz, _F64]
    lib.pc_counters.argtypes = [p, _F64]
    lib.pc_links.argtypes = [p, _F64, _F64, _F64, _F64]
    lib.pc_samples.argtypes = [p, _F64, ctypes.POINTER(ctypes.c_int64)]
    lib.pc_lose.argtypes = [p, sz, ctypes.c_int64]
    return lib


def available() -> bool:
    """Whether the compiled core is built and loads."""
    return _load() is not None


def _params(o: PacketOptions, ref: PacketEngine) -> list[float]:
    """The core's ``Params`` in its order (native/packet_core/src/lib.rs, ``pc_new``)."""
    from trainsim.network.packet.cc import _mbps as mb  # Mb/s -> B/ns, the same rounding

    return [
        _CC_CODE[o.cc], o.mtu_bytes, o.header_bytes, o.ack_bytes, o.int_hop_bytes,
        o.pfc_frame_bytes, ref.unit, o.data_priority, o.ack_high_priority, o.pfc, ref.buffer,
        o.reserve_bytes, o.resume_offset_bytes, o.ecn, o.seed, o.ack_interval_packets,
        o.nack_interval_us * 1e3, o.rto_us * 1e3, o.var_window, mb(o.min_rate_mbps),
        mb(o.rate_ai_mbps), mb(o.rate_hai_mbps), o.ewma_gain,
        o.dcqcn_alpha_resume_interval_us * 1e3, o.dcqcn_rate_decrease_interval_us * 1e3,
        o.dcqcn_rp_timer_us * 1e3, o.dcqcn_fast_recovery_times, o.dcqcn_clamp_target_rate,
        o.cnp_interval_us * 1e3, mb(o.dctcp_rate_ai_mbps), o.timely_alpha, o.timely_beta,
        o.timely_t_low_us * 1e3, o.timely_t_high_us * 1e3, o.timely_min_rtt_us * 1e3,
        o.hpcc_eta, o.hpcc_max_stage, o.hpcc_fast_react, o.monitor_interval_us * 1e3,
    ]  # fmt: skip


def _arr(ctype: Any, values: Any) -> Any:
    values = list(values)
    return (ctype * len(values))(*values)


class NativeEngine:
    """The compiled core with the attributes :mod:`.counters` and the backend read."""

    def __init__(
        self, graph: LinkGraph, queue: EventQueue, opts: PacketOptions, cc: CongestionControl
    ) -> None:
        lib = _load()
        if lib is None:
            raise RuntimeError(
                f"the packet backend's compiled core is not built ({library_path()})"
            )
        self.lib = lib
        ref = PacketEngine(graph, queue, opts, cc)  # set-up only: parameters, window, RTT
        self.graph, self.queue, self.opts, self.cc = graph, queue, opts, cc
        self.npus, self.unit, self.bw, self.lat = ref.npus, ref.unit, ref.bw, ref.lat
        self.window_bytes, self.max_rtt_ns = ref.window_bytes, ref.max_rtt_ns
        self._base_rtt = ref.base_rtt
        self._monitored = ref._monitored
        n = graph.links
        ecn = ref._ecn
        f64 = ctypes.c_double
        self.handle = lib.pc_new(
            n,
            graph.devices,
            _arr(f64, ref.bw),
            _arr(f64, ref.lat),
            _arr(ctypes.c_uint32, ref.dst),
            _arr(ctypes.c_int32, ref.rev),
            _arr(f64, ref.headroom),
            _arr(f64, (float(1 << s) for s in ref.shift)),
            _arr(f64, (e[0] for e in ecn)),
            _arr(f64, (e[1] for e in ecn)),
            _arr(f64, (e[2] for e in ecn)),
            _arr(f64, ref.total_hdrm),
            _arr(f64, ref.total_rsrv),
            _arr(ctypes.c_uint32, self._monitored),
            len(self._monitored),
            _arr(f64, (float(x) for x in _params(opts, ref))),
            len(_params(opts, ref)),
        )
        self._messages: dict[int, tuple[Callable[[Any], None], Any, int, int, int, float]] = {}
        self._key = 0
        self._scheduled = float("inf")
        self._token = 0
        self._out = (ctypes.c_uint64 * _BATCH)()
        self._at = ctypes.c_double(0.0)
        self.completions: list[tuple[int, int, int, float, float]] = []
        self._sync()

    def __del__(self) -> None:
        handle = getattr(self, "handle", None)
        if handle:
            self.lib.pc_free(handle)
            self.handle = None

    def start_message(
        self, src: int, dst: int, nbytes: int, on_arrival: Callable[[Any], None], arg: Any
    ) -> None:
        g = self.graph
        route = g.route(src, dst)  # type: ignore[attr-defined]
        back = g.route(dst, src)  # type: ignore[attr-defined]
        self._key += 1
        now = self.queue.now
        self._messages[self._key] = (on_arrival, arg, src, dst, nbytes, now)
        rtt = self.max_rtt_ns or self._base_rtt(route, back)
        u32 = ctypes.c_uint32
        self.lib.pc_send(
            self.handle,
            now,
            self._key,
            nbytes,
            _arr(u32, route),
            len(route),
            _arr(u32, back),
            len(back),
            rtt,
            self.window_bytes,
        )
        self._arm()

    def lose(self, link: int, packets: int = 1) -> None:
        self.lib.pc_lose(self.handle, link, packets)

    @property
    def active(self) -> int:
        return int(self._scalars()[0])

    def _arm(self) -> None:
        t = self.lib.pc_next_time(self.handle)
        if t < self._scheduled:
            self._scheduled = t
            self._token += 1  # the step scheduled before is stale now
            self.queue.schedule_at(t, self._step, self._token)

    def _step(self, token: int) -> None:
        """Run the core up to the kernel's next event (nothing can send before it), or up to
        its first delivery, whose ``on_arrival`` then runs at its time."""
        if token != self._token:
            return  # an earlier step took over
        self._scheduled = float("inf")
        heap = self.queue._heap  # the kernel's next event bounds how far the core may run
        limit = heap[0][0] if heap else float("inf")
        out, at = self._out, self._at
        n = self.lib.pc_run(self.handle, limit, out, _BATCH, ctypes.byref(at))
        when = at.value
        for i in range(n):
            on_arrival, arg, src, dst, nbytes, start = self._messages.pop(out[i])
            self.completions.append((src, dst, nbytes, start, when))
            self.queue.schedule_at(when, on_arrival, arg)
        self._arm()

    # -- counters (the Python engine's attribute names) -------------------------------------

    def _scalars(self) -> list[float]:
        buf = (ctypes.c_double * 10)()
        self.lib.pc_counters(self.handle, buf)
        return list(buf)

    def _sync(self) -> None:
        s = self._scalars()
        (_, sent, resent, hops, drops, frames, marks, cnps, events, samples) = s
        self.packets_sent, self.packets_resent, self.hops = int(sent), int(resent), int(hops)
        self.drops, self.pause_frames, self.ecn_marks, self.cnps = (
            int(drops),
            int(frames),
            int(marks),
            int(cnps),
        )
        self.core_events = int(events)
        n = self.graph.links
        bufs = [(ctypes.c_double * n)() for _ in range(4)]
        self.lib.pc_links(self.handle, *bufs)
        self.link_bytes = [int(b) for b in bufs[0]]
        self.peak_queue_bytes = [int(b) for b in bufs[1]]
        self.pause_ns = list(bufs[2])
        self.pause_since = [[since] + [-1.0] * (PRIORITIES - 1) for since in bufs[3]]
        count = int(samples)
        times = (ctypes.c_double * max(count, 1))()
        queues = (ctypes.c_int64 * max(count * len(self._monitored), 1))()
        self.lib.pc_samples(self.handle, times, queues)
        m = len(self._monitored)
        self.samples_t = list(times)[:count]
        flat = list(queues)
        self.samples_q = [flat[i * m : (i + 1) * m] for i in range(count)]

    def sync(self) -> None:
        """Bring the counters up to date (before reading them)."""
        self._sync()
