"""The congestion-aware backend on its compiled core (DESIGN.md, network layer; the fast path
of ``congestion_aware.py``, which stays the reference that the tests compare against).

``native/link_core`` (Rust, no crates, C ABI) holds the links' FIFO state and the link events
(a message entering, leaving and freeing each link of its route) on its own heap. Its events
keep their place in the kernel's ``(time, seq)`` order: every call takes one fresh number of
the kernel's counter and orders the events it schedules after it (``native/link_core/src/lib.rs``
says why that is the reference's order), and one proxy event in the kernel heap, at the key
of the core's earliest event, wakes the core. The core then runs its events that come before
the kernel's next one and stops at each delivery, whose ``on_arrival`` runs in its place, so
per-rank results are the reference's bit for bit (``tests/network/test_congestion_native.py``).
The kernel's event count includes the core's events (as if they had run on its heap).

The library is built by ``make`` (``cargo build --release`` into ``_native/``) and found
there, or at ``$TRAINSIM_LINK_CORE``; :func:`available` says whether it loads.
``$TRAINSIM_CONGESTION_CORE`` chooses: ``native`` (or unset) the whole core, links and the
collectives' ring phases (``ring_core``); ``links`` the links only (ring phases in Python);
``python`` the Python reference even where the core is built.
"""

from __future__ import annotations

import ctypes
import heapq
import importlib.util
import os
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trainsim.network.congestion_aware import CongestionAwareNetwork
from trainsim.network.core_choice import core_choice

if TYPE_CHECKING:
    from trainsim.config.types import NetworkSpec
    from trainsim.engine import EventQueue
    from trainsim.topology.graph import LinkGraph

_LIB_NAME = "liblink_core.so"
_MODULE = "link_core"
_F64 = ctypes.POINTER(ctypes.c_double)
_TRANSFER_BATCH = 4096


def library_path() -> Path:
    env = os.environ.get("TRAINSIM_LINK_CORE")
    return Path(env) if env else Path(__file__).resolve().parent / "_native" / _LIB_NAME


@cache
def _load() -> ctypes.PyDLL | None:
    path = library_path()
    if not path.is_file():
        return None
    try:
        lib = ctypes.PyDLL(str(path))  # keeps the GIL: no release / re-acquire per call
    except OSError:
        return None
    p, sz, i32 = ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int32
    lib.lc_new.restype = p
    lib.lc_new.argtypes = [sz, _F64, _F64, i32]
    lib.lc_free.argtypes = [p]
    lib.lc_links.argtypes = [p, _F64, _F64, _F64]
    lib.lc_record.argtypes = [p, i32]
    lib.lc_take_transfers.restype = sz
    lib.lc_take_transfers.argtypes = [p, _F64, sz]
    f64 = ctypes.c_double
    lib.lc_ring_endpoint.argtypes = [p, f64, f64, f64, i32]
    lib.lc_sub_limit.argtypes = [p, ctypes.c_uint64]
    return lib


@cache
def _module() -> Any:
    """The same library imported as a CPython extension: its hot calls (``send``, the proxy's
    ``wake``) skip ctypes' per-call conversions (about 2.5 us a call here)."""
    if _load() is None:
        return None
    spec = importlib.util.spec_from_file_location(_MODULE, library_path())
    if spec is None or spec.loader is None:
        return None
    try:
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    except ImportError:
        return None
    return module


def _number(value: float) -> Any:
    """A byte count the core holds as a double, as the reference holds it: an int when whole."""
    return int(value) if value.is_integer() else value


def available() -> bool:
    """Whether the compiled core is built and loads."""
    return _load() is not None and _module() is not None


def make_congestion_aware(
    spec: NetworkSpec | None,
    queue: EventQueue,
    *,
    compat_astra: bool = False,
    graph: LinkGraph | None = None,
    options: Any = None,
) -> CongestionAwareNetwork:
    """The registry's ``congestion_aware`` factory: the compiled core where it is built (and
    ``$TRAINSIM_CONGESTION_CORE`` is not ``python``), else the Python reference."""
    if _core_choice() != "python" and available():
        return NativeCongestionAwareNetwork(spec, queue, compat_astra=compat_astra, graph=graph)
    return CongestionAwareNetwork(spec, queue, compat_astra=compat_astra, graph=graph)


def _core_choice() -> str:
    """``$TRAINSIM_CONGESTION_CORE`` (module docstring); unset or empty is ``native``."""
    return core_choice(
        "TRAINSIM_CONGESTION_CORE",
        ("native", "links", "python"),
        "native: links and ring phases compiled; links: the links only; python: the reference",
    )


class NativeCongestionAwareNetwork(CongestionAwareNetwork):
    """:class:`CongestionAwareNetwork` with its links and link events in the compiled core."""

    def _init_links(self, graph: LinkGraph) -> None:
        lib = _load()
        if lib is None:
            raise RuntimeError(f"the congestion-aware backend's compiled core is not built ({library_path()})")
        n = graph.links
        self._lib = lib
        self._handle = lib.lc_new(
            n,
            (ctypes.c_double * n)(*(bw / 1e9 for bw in graph.bandwidth)),
            (ctypes.c_double * n)(*graph.latency_ns),
            1 if self.compat_astra else 0,
        )
        self._core = _module()
        # the core's builtins: the proxy's callable, send(src, dst, nbytes, on_arrival, arg)
        # and ring_start (``ring_core``)
        attach = self._core.attach
        self._wake, self.send, self._ring_start, self._work_start = attach(self._handle, self.queue, heapq.heappush, graph.route)  # type: ignore[method-assign, attr-defined]
        self._recorded: list[tuple[float, float, int, int]] | None = None
        # the Python reference's per-link state is not used; delay_ns reads these two
        self._bytes_per_ns = [bw / 1e9 for bw in graph.bandwidth]
        self._latency = list(graph.latency_ns)

    def __del__(self) -> None:
        handle = getattr(self, "_handle", None)
        if handle:
            self._lib.lc_free(handle)
            self._handle = None

    # -- transfers: recorded in the core once a list is set --------------------------------

    @property  # type: ignore[override]
    def transfers(self) -> list[tuple[float, float, int, int]] | None:
        if self._recorded is not None:
            self._take_transfers()
        return self._recorded

    @transfers.setter
    def transfers(self, value: list[tuple[float, float, int, int]] | None) -> None:
        if not hasattr(self, "_handle"):  # BackendBase.__init__ sets None before the core exists
            return
        self._recorded = value
        self._lib.lc_record(self._handle, 0 if value is None else 1)

    def _take_transfers(self) -> None:
        buf = (ctypes.c_double * (4 * _TRANSFER_BATCH))()
        dims = self.graph.link_dim
        assert self._recorded is not None
        while n := self._lib.lc_take_transfers(self._handle, buf, _TRANSFER_BATCH):
            flat = buf[: 4 * n]
            self._recorded.extend(
                (flat[i], flat[i + 1], dims[int(flat[i + 2])], _number(flat[i + 3])) for i in range(0, 4 * n, 4)
            )

    # -- the seam ----------------------------------------------------------------------------

    def send(self, src: int, dst: int, nbytes: int, on_arrival: Callable[[Any], None], arg: Any = None) -> None:
        """Replaced on each instance by the core's own ``send`` (see ``_init_links``)."""
        raise RuntimeError("the link core's send is bound in _init_links")

    # -- ring phases in the core (native/link_core/src/ring.rs) -----------------------------

    def ring_core(self, delay_ns: float, fast_ns: float, local_mem_bw: float, compat_astra: bool) -> Any:
        """``(ring_start, None, work_start)``: the core's ``ring_start(rank, dst, src, tag,
        msg, first, later, sends_left, flags, delay, on_end, arg)``, its insertions priced as
        ``endpoint.AstraEndpoint`` with these parameters (E and the Fast path in ns,
        local-mem-bw in B/s), its messages on their routes' links (no delay of the backend's:
        None), and ``work_start`` for a rank's whole collective of rings (``queues.rs``); the
        collective engine hands it ring phases or whole collectives (``collective_engine.Engine``).
        None with ``$TRAINSIM_CONGESTION_CORE=links`` (the links only, the phases in Python)."""
        if _core_choice() == "links":
            return None
        self._lib.lc_ring_endpoint(self._handle, delay_ns, fast_ns, local_mem_bw, 1 if compat_astra else 0)
        return self._ring_start, None, self._work_start

    def ring_waiting(self) -> list[tuple[int, int, int, int]]:
        """(receiver, chunk tag, sender, bytes) of each receive a ring phase in the core posted
        and no message matched."""
        return self._core.ring_waiting(self._handle)  # type: ignore[no-any-return]

    # -- counters kept by the core ----------------------------------------------------------

    @property
    def messages_sent(self) -> int:  # type: ignore[override]
        return int(self._core.sent(self._handle)[0]) if hasattr(self, "_handle") else 0

    @messages_sent.setter
    def messages_sent(self, value: int) -> None:
        """BackendBase sets 0 before the core exists; the core counts from 0."""

    @property
    def bytes_sent(self) -> int:  # type: ignore[override]
        return _number(self._core.sent(self._handle)[1]) if hasattr(self, "_handle") else 0

    @bytes_sent.setter
    def bytes_sent(self, value: int) -> None:
        """BackendBase sets 0 before the core exists; the core counts from 0."""

    @property
    def messages_delivered(self) -> int:  # type: ignore[override]
        return int(self._core.sent(self._handle)[2])

    def carrying(self) -> bool:
        sent, _, delivered = self._core.sent(self._handle)
        return bool(sent != delivered)

    # -- per-link statistics (the reference's attribute names) -----------------------------

    def _link_arrays(self) -> tuple[list[float], list[float], list[float]]:
        n = self.graph.links
        bufs = [(ctypes.c_double * n)() for _ in range(3)]
        self._lib.lc_links(self._handle, *bufs)
        return list(bufs[0]), list(bufs[1]), list(bufs[2])

    @property
    def link_bytes(self) -> list[int]:  # type: ignore[override]
        return [_number(b) for b in self._link_arrays()[0]]

    @property
    def link_busy_ns(self) -> list[float]:  # type: ignore[override]
        return self._link_arrays()[1]

    @property
    def link_peak_queue(self) -> list[int]:  # type: ignore[override]
        return [int(b) for b in self._link_arrays()[2]]
