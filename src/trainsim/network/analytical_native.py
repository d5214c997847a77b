"""The congestion-unaware analytical backend with its collectives' ring phases in the compiled
core (DESIGN.md, network layer; ``analytical.py`` stays the model and the reference).

:class:`NativeAnalyticalNetwork` is ``AnalyticalNetwork`` plus the ``ring_core`` offer that
``system/collective_engine.Engine`` takes for rank-by-rank ring phases: the core of
``native/link_core`` with no links, each ring message one event at the backend's own
``delay_ns`` (priced by Python once per ring), the phases' insertions and matching on the
core's heap under the kernel's keys (``native/link_core/src/ring.rs``), so per-rank results
are the reference's bit for bit (``tests/network/test_ring_core.py``). Everything else (point
to point messages, ``delay_ns``, symmetric runs, which fork a plain ``AnalyticalNetwork``) is
the reference's code. The core is created on the first offer: a run whose collectives are all
folded never loads it.

``$TRAINSIM_ANALYTICAL_CORE``: ``native`` (or unset) makes the offer where the core is built;
``python`` never does. A backend that records its transfers (``transfers`` set) makes no offer
(the core does not record them), and refuses to start recording once it has made one.
"""

from __future__ import annotations

import heapq
from typing import Any

from trainsim.config.types import NetworkSpec
from trainsim.engine import EventQueue
from trainsim.network.analytical import AnalyticalNetwork
from trainsim.network.core_choice import core_choice


def _core_choice() -> str:
    """``$TRAINSIM_ANALYTICAL_CORE`` (module docstring); unset or empty is ``native``."""
    return core_choice(
        "TRAINSIM_ANALYTICAL_CORE",
        ("native", "python"),
        "native: ring phases in the compiled core where it is built; python: the reference",
    )


def make_congestion_unaware(
    spec: NetworkSpec, queue: EventQueue, *, compat_astra: bool = False, options: Any = None
) -> AnalyticalNetwork:
    """The registry's ``congestion_unaware`` factory: the backend that offers the compiled
    core (unless ``$TRAINSIM_ANALYTICAL_CORE`` is ``python``), else the reference."""
    if _core_choice() == "python":
        return AnalyticalNetwork(spec, queue, compat_astra=compat_astra)
    return NativeAnalyticalNetwork(spec, queue, compat_astra=compat_astra)


def _no_route(_src: int, _dst: int) -> tuple[int, ...]:
    return ()  # never asked: every ring message here has the backend's delay


class NativeAnalyticalNetwork(AnalyticalNetwork):
    """:class:`AnalyticalNetwork` whose rank-by-rank ring phases may run in the compiled core.
    Until the core is made it is the reference, plain attributes and all (a run of the default
    mode, which has injection ports and so no offer, pays nothing); making the core turns it
    into :class:`_AnalyticalWithCore`, whose counters add the core's messages."""

    _handle: int | None = None
    _messages = 0  # once the core is made (``_AnalyticalWithCore``): Python's messages and bytes
    _bytes = 0.0

    def ring_core(self, delay_ns: float, fast_ns: float, local_mem_bw: float, compat_astra: bool) -> Any:
        """``(ring_start, delay_ns, work_start)`` for ``collective_engine.Engine`` (as
        ``congestion_native``'s offer, with this backend's message delay), or None where the
        core is not built, ``$TRAINSIM_ANALYTICAL_CORE`` is ``python`` or transfers are
        being recorded."""
        from trainsim.network import congestion_native as native

        if _core_choice() == "python" or self.transfers is not None or not native.available():
            return None
        lib = native._load()
        assert lib is not None
        if self._handle is None:
            core = native._module()
            handle = lib.lc_new(0, None, None, 1 if self.compat_astra else 0)
            _, _, ring_start, work_start = core.attach(handle, self.queue, heapq.heappush, _no_route)
            messages, nbytes = self.messages_sent, self.bytes_sent
            for name in ("messages_sent", "bytes_sent", "transfers"):
                self.__dict__.pop(name, None)
            self.__class__ = _AnalyticalWithCore
            self._lib, self._core, self._handle = lib, core, handle
            self._ring_start, self._work_start = ring_start, work_start
            self._messages, self._bytes = messages, float(nbytes)
        lib.lc_ring_endpoint(self._handle, delay_ns, fast_ns, local_mem_bw, 1 if compat_astra else 0)
        return self._ring_start, self.delay_ns, self._work_start

    def ring_waiting(self) -> list[tuple[int, int, int, int]]:
        """(receiver, chunk tag, sender, bytes) of each receive a ring phase in the core posted
        and no message matched."""
        return [] if self._handle is None else self._core.ring_waiting(self._handle)  # type: ignore[no-any-return]

    def __del__(self) -> None:
        handle = self._handle
        if handle:
            self._lib.lc_free(handle)
            self._handle = None


class _AnalyticalWithCore(NativeAnalyticalNetwork):
    """The backend once its core is made: the counters are its Python messages' plus the
    core's ring messages', and transfers cannot be recorded any more (the core does not)."""

    def _core_sent(self) -> tuple[int, float]:
        messages, nbytes, _ = self._core.sent(self._handle)
        return messages, nbytes

    @property  # type: ignore[override]
    def messages_sent(self) -> int:
        return self._messages + self._core_sent()[0]

    @messages_sent.setter
    def messages_sent(self, value: int) -> None:
        self._messages = value - self._core_sent()[0]

    @property  # type: ignore[override]
    def bytes_sent(self) -> int:
        total = self._bytes + self._core_sent()[1]
        return int(total) if float(total).is_integer() else total  # type: ignore[return-value]

    @bytes_sent.setter
    def bytes_sent(self, value: int) -> None:
        self._bytes = value - self._core_sent()[1]

    @property  # type: ignore[override]
    def transfers(self) -> list[tuple[float, float, int, int]] | None:
        return None

    @transfers.setter
    def transfers(self, value: list[tuple[float, float, int, int]] | None) -> None:
        if value is not None:
            raise RuntimeError("transfers must be recorded from the start: ring phases already run in the compiled core")
