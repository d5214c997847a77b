"""Closed forms of the collectives and sends of a generated step on a platform (DESIGN.md,
optimize layer: strategy search; the estimate's communication terms).

They price what the simulator does under the congestion-unaware backend (astra-sim-semantics.md
A1-A2, D5; ``network/analytical.py``, ``collectives/logical.py``, ``endpoint/astra.py``):

- a message of ``b`` bytes between two ranks costs ``hops x latency + b / bandwidth`` on the
  first network dimension where their coordinates differ in ``compat: astra``; in the default
  mode ``sum(hops_d x latency_d) + b / min(bandwidth_d)`` over every dimension where they
  differ (the path rule of ``topology/multidim.py``, as the backend prices it), plus the endpoint's insertion delay
  (``endpoint_delay_ns``; the fixed 10 ns "fast" path for a communicator group's ring); each
  phase of a collective starts with one insertion before its first send (E1-E3, D1-D2: a
  ring phase is ``E + sends x (net + E)``);
- a collective on a communicator group smaller than the machine runs one flat ring over the
  members in their listed order (ring algorithm, one chunk per step). Ring all-reduce on ``n``
  members is ``n - 1`` reduce-scatter steps and ``n - 1`` all-gather steps of ``S / n`` bytes;
  a reduce-scatter step also reduces its ``S / n`` bytes, which costs 3 x ``S / n`` bytes of
  local memory traffic at ``local_mem_bw`` (read two operands, write one); an all-gather of
  ``S`` bytes (each rank's input) sends ``S`` bytes in each of its ``n - 1`` steps. A step
  waits for the message of the step before on the previous member, so the time is the longest
  chain of ``steps`` consecutive ring edges (one per member as the start); when the edges
  differ (members crossing different dimensions) a member's next send also waits for its
  injection port, which a slow edge keeps busy longer than a chain step (``_ring_with_ports``);
- repeated passes (a layer's compute and collectives) on such an uneven ring do not start
  together: each member starts its next collective when its own part of the previous one
  ended, so the members drift apart until the slow edges' ports stay busy
  (:meth:`CommModel.ring_pass_s`, the steady-state period, send by send);
- a collective on every rank runs on the network dimensions, one per entry of the system's
  implementation list for its type, extended to every dimension as the planner does, with one
  chunk (astra-sim-semantics.md E1-E3): a reduce-scatter dimension by dimension ascending, the
  data divided by each dimension's members; an all-gather descending, multiplied; an all-reduce
  a full all-reduce on each dimension (``baseline``) or reduce-scatters, an all-reduce on the
  last dimension and all-gathers back (``localBWAware``); ring or direct per dimension.

With ``system.collective_tuner: nccl`` (default mode) the collectives NCCL tunes take NCCL's
price instead (``system/nccl_pricing.py``, docs/nccl.md), as the simulation does.

``tests/optimize/strategy/test_comm.py`` checks every form against a simulation. Sizes in bytes,
times in seconds.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from trainsim.collectives.algorithms import parse_algorithm
from trainsim.collectives.logical import spanning_list, spans_all
from trainsim.config.types import Platform
from trainsim.enums import CommType
from trainsim.errors import ConfigError
from trainsim.system.nccl_pricing import TUNED_TYPES, NcclPricing
from trainsim.topology import MultiDimTopology

FAST_PATH_NS = (
    10.0  # ASTRA-sim MemBus's fixed insertion delay of a group's ring (endpoint/astra.py)
)
_PERIOD_REPS = 8  # repetitions of a pass on an uneven ring before its period is read
_REDUCE_TRAFFIC = 3.0  # bytes of local memory traffic per byte reduced (two reads, one write)

AR, AG, RS = int(CommType.ALL_REDUCE), int(CommType.ALL_GATHER), int(CommType.REDUCE_SCATTER)


class CommModel:
    """Prices collectives on member lists and sends between two ranks of one platform."""

    def __init__(self, platform: Platform) -> None:
        self.platform = platform
        dims = platform.network.dims
        self.topology = MultiDimTopology.of_network(platform.network, compat_astra=platform.compat == "astra")
        self.npus = platform.network.npus
        self.latency_s = [d.latency_ns * 1e-9 for d in dims]
        self.bandwidth = [d.bandwidth for d in dims]
        self.endpoint_s = platform.system.endpoint_delay_ns * 1e-9
        self.reduce_bw = platform.system.local_mem_bw
        self.collective = lru_cache(maxsize=None)(self._collective)
        self.ring_pass_s = lru_cache(maxsize=None)(self._ring_pass_s)
        self.ring_edges = lru_cache(maxsize=None)(self._ring_edges)
        # NCCL's choice prices collectives when the platform asks for it (docs/nccl.md)
        tuned = platform.system.collective_tuner == "nccl" and platform.compat != "astra"
        self._nccl = NcclPricing(platform) if tuned else None

    def edge(self, src: int, dst: int) -> tuple[float, float]:
        """(fixed seconds, seconds per byte) of one message from ``src`` to ``dst``."""
        topo = self.topology
        path = topo.path(src, dst)
        if not path:
            return 0.0, 0.0
        fixed = sum(topo.hops(d, src, dst) * self.latency_s[d] for d in path)
        return fixed, 1.0 / min(self.bandwidth[d] for d in path)

    def send_s(self, src: int, dst: int, nbytes: float) -> float:
        """One point-to-point message (a pipeline SEND/RECV pair)."""
        fixed, per_byte = self.edge(src, dst)
        return self.endpoint_s + fixed + nbytes * per_byte

    def _collective(self, comm_type: int, size: float, members: tuple[int, ...]) -> float:
        n = len(members)
        if n <= 1 or size <= 0:
            return 0.0
        if self._nccl is not None and comm_type in TUNED_TYPES:
            return self._nccl.price(comm_type, int(size), members).duration_ns * 1e-9
        if n == self.npus:
            return self._on_dims(comm_type, size)
        phases = _ring_phases(comm_type, size, n)
        fixed, per_byte = self.ring_edges(members)
        if np.ptp(fixed) or np.ptp(per_byte):  # uneven edges: a slow edge's port can bind
            red = _REDUCE_TRAFFIC * (size / n) / self.reduce_bw
            return _ring_with_ports(phases, fixed, per_byte, red)
        chains = []
        for count, chunk, reduce in phases:
            extra = _REDUCE_TRAFFIC * chunk / self.reduce_bw if reduce else 0.0
            chains.append((count, FAST_PATH_NS * 1e-9 + fixed + chunk * per_byte + extra))
        return FAST_PATH_NS * 1e-9 + _longest_chain(chains, n)  # the start's insertion (D1)

    def _ring_edges(self, members: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
        """(fixed seconds, seconds per byte) of each edge of the ring over ``members``, member
        ``i`` to member ``i + 1``."""
        n = len(members)
        fixed = np.empty(n)
        per_byte = np.empty(n)
        for i in range(n):
            fixed[i], per_byte[i] = self.edge(members[i], members[(i + 1) % n])
        return fixed, per_byte

    def uneven_ring(self, members: tuple[int, ...]) -> bool:
        """Whether collectives on ``members`` run as one group ring whose edges cost unevenly
        (members crossing different network dimensions, e.g. a TP group over part of the
        machine that spans nodes), priced send by send rather than by the longest chain."""
        if len(members) <= 1 or len(members) == self.npus or self._nccl is not None:
            return False
        fixed, per_byte = self.ring_edges(members)
        return bool(np.ptp(fixed) or np.ptp(per_byte))

    def _ring_pass_s(self, steps: tuple[tuple[float, int, int], ...], tail_s: float, members: tuple[int, ...]) -> float:
        """Seconds per repetition of a pass (a layer's forward or backward) that runs on every
        member of an uneven ring, in the steady state of back-to-back repetitions: ``steps``
        are (compute seconds before, comm type, bytes) of its collectives, ``tail_s`` the
        compute after the last one.

        Each member starts a collective when its previous one ended there plus the compute
        between (the collectives block the member's program), its injection port still busy
        with its last sends (:func:`_ring_sends`). The member that sends over a slow edge
        ends its part first (its own last message is still on the wire), so the members
        drift apart and, after a few repetitions, that edge's port stays busy: a repetition
        then takes the slow ports' work with the compute behind it, not the compute and each
        collective from a common start in turn (docs/comet.md, "COMET's 2-D space"). Run
        for ``_PERIOD_REPS`` repetitions from a common start; the last one's span (its
        slowest member) is the period."""
        n = len(members)
        fixed, per_byte = self.ring_edges(members)
        start = np.zeros(n)
        port = np.zeros(n)
        spans: list[float] = []
        before = 0.0
        for _ in range(_PERIOD_REPS):
            for compute, comm_type, size in steps:
                red = _REDUCE_TRAFFIC * (size / n) / self.reduce_bw
                start, port = _ring_sends(_ring_phases(comm_type, size, n), fixed, per_byte, red, start + compute, port)
            start = start + tail_s
            spans.append(float(start.max()) - before)
            before = float(start.max())
        return spans[-1]

    def _on_dims(self, comm_type: int, size: float) -> float:
        impl = self.platform.system.implementations
        names = {AR: impl.all_reduce, RS: impl.reduce_scatter, AG: impl.all_gather}.get(comm_type)
        if names is None:
            raise ConfigError(f"no closed form for collective type {comm_type}", field="comm_type")
        system = self.platform.system
        if spans_all(system.collective_span, self.platform.compat == "astra"):
            names = spanning_list(names, self.topology)
        sizes = [d.size for d in self.platform.network.dims]
        active = [d for d in range(min(len(names), len(sizes))) if sizes[d] > 1]
        data = float(size)
        if comm_type == RS:  # one phase per dimension, ascending, each keeping 1/n
            order = [(d, RS) for d in active]
        elif comm_type == AG:  # descending, each multiplying the data by n (E3)
            order = [(d, AG) for d in reversed(active)]
        elif system.collective_optimization == "localBWAware" and active:  # E1
            order = [(d, RS) for d in active[:-1]] + [(active[-1], AR)] + [(d, AG) for d in reversed(active[:-1])]
        else:  # baseline: a full all-reduce on each dimension, ascending (E2)
            order = [(d, AR) for d in active]
        total = 0.0
        for d, kind in order:
            t, data = self._phase(d, kind, data, parse_algorithm(names[d]).kind == "direct")
            total += t
        return total

    def _phase(self, d: int, kind: int, data: float, direct: bool) -> tuple[float, float]:
        """(seconds, output bytes) of one ``kind`` phase of ``data`` input bytes on dimension
        ``d``: ring steps of ``data / n`` (an all-gather's of ``data``), or one step to every
        peer for direct."""
        n = self.topology.sizes[d]
        steps = 1 if direct else n - 1
        hop = self.topology.hops(d, 0, self.topology.strides[d])
        chunk = data if kind == AG else data / n
        move = steps * (self.endpoint_s + hop * self.latency_s[d] + chunk / self.bandwidth[d])
        reduce = (n - 1) * _REDUCE_TRAFFIC * chunk / self.reduce_bw
        start = self.endpoint_s  # the phase's start action: one insertion (D1, D2)
        if kind == AR:
            return start + 2 * move + reduce, data
        if kind == RS:
            return start + move + reduce, data / n
        return start + move, data * n


def _ring_phases(comm_type: int, size: float, n: int) -> list[tuple[int, float, bool]]:
    """(sends, chunk bytes, reducing) of each phase of a flat ring collective on ``n`` members:
    all-reduce ``n - 1`` reduce-scatter and ``n - 1`` all-gather sends of ``S / n``, a
    reduce-scatter the first half, an all-gather ``n - 1`` sends of ``S``."""
    if comm_type == AR:
        return [(n - 1, size / n, True), (n - 1, size / n, False)]
    if comm_type == RS:
        return [(n - 1, size / n, True)]
    if comm_type == AG:
        return [(n - 1, float(size), False)]
    raise ConfigError(f"no closed form for collective type {comm_type}", field="comm_type")


def _ring_with_ports(phases: Sequence[tuple[int, float, bool]], fixed: np.ndarray, per_byte: np.ndarray, red: float) -> float:
    """A group ring whose edges differ (members crossing different network dimensions), every
    member starting together with idle ports: the time of its slowest member
    (:func:`_ring_sends`). With equal edges the port never binds and this is the longest chain
    (:func:`_longest_chain`)."""
    n = len(fixed)
    end, _ = _ring_sends(phases, fixed, per_byte, red, np.zeros(n), np.zeros(n))
    return float(end.max())


def _ring_sends(
    phases: Sequence[tuple[int, float, bool]],
    fixed: np.ndarray,
    per_byte: np.ndarray,
    red: float,
    start: np.ndarray,
    port: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """One collective on a ring with uneven edges, send by send (astra-sim-semantics.md D1,
    B4): (when each member's part ends, when each member's injection port frees), from when
    each member starts it and when its port frees. Insertion ``j`` (an endpoint delay, plus a
    reduction of ``red`` seconds when B4 processes it: the reduce-scatter half's insertions 1
    to n - 1) comes before send ``j``, insertion 0 at the member's start and each later one
    when the previous step's message arrives; a send also waits for the member's injection
    port, busy ``chunk x per_byte`` with its previous send (``network/injection.py``), and
    arrives ``fixed + chunk x per_byte`` after it starts; a member's last arrival is followed
    by a final insertion. ``phases``: (sends, chunk bytes, reducing) as in
    :meth:`CommModel._collective`."""
    n = len(fixed)
    fast = FAST_PATH_NS * 1e-9
    ready = start.astype(float)  # when each member's last receive arrived
    arrive = np.empty(n)
    reducing = any(reduce for _, _, reduce in phases)
    j = 0  # insertion index; B4 processes insertions 1 to n - 1 of a reducing ring

    def lead(j: int) -> float:
        return fast + (red if reducing and 1 <= j <= n - 1 else 0.0)

    for count, chunk, _ in phases:
        busy = chunk * per_byte
        for _ in range(count):
            send = np.maximum(ready + lead(j), port)
            port = send + busy
            np.add(send, fixed + busy, out=arrive)
            ready = np.concatenate((arrive[-1:], arrive[:-1]))  # member i + 1 receives from member i
            j += 1
    return ready + lead(j), port  # the final insertion (a reduce-scatter's is reduced)


def _longest_chain(phases: Sequence[tuple[int, np.ndarray]], n: int) -> float:
    """Longest sum over ``sum(count)`` consecutive ring edges (phase by phase, each with its own
    per-edge costs), over every starting member: a ring step waits for the previous member's."""
    if all(np.ptp(cost) == 0 for _, cost in phases):
        return float(sum(count * cost[0] for count, cost in phases))
    best = 0.0
    for start in range(n):
        offset = 0
        total = 0.0
        for count, cost in phases:
            total += float(cost[(start + offset + np.arange(count)) % n].sum())
            offset += count
        best = max(best, total)
    return best
