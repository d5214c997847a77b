"""The graph executor: runs every rank's workload graph on the platform (DESIGN.md, system).

Each node kind has one handler, looked up in a table by node type (no if/elif ladder in the
hot path). Handlers start the work on the right model, each handed in behind its seam and
built by ``system.build`` (compute: a ``compute.ComputeModel``, replay or roofline; memory: a
``memory.MemoryModel``, remote memory; GPU compute under an endpoint model that shares the
rank's HBM and units with collectives: ``system.contention.SharedCompute``, which re-rates
kernels as the endpoint's share changes; send/receive: the network backend and
:class:`SendRecvMatcher`; collectives: the :class:`CollectiveRuntime`) and arrange for
:meth:`Executor._complete` to run when it is done. A run that ends with unfinished nodes
raises :class:`DeadlockError` naming each blocked node and what it waits for.

System knobs the executor applies (docs/astra-compat.md):

- ``replay_only`` (ASTRA-sim's ``replay-only``, ``Workload::issue``): every node, whatever its
  type, waits its recorded duration (the compute model's replay: ASTRA-sim's
  ``duration_micros x 1000`` ns, 1 ns when it is 0) in the slot its type takes; nothing is sent,
  no memory is touched, no collective runs. As in ASTRA-sim the time counts as GPU (or, for
  ``is_cpu_op`` nodes, CPU) work, so exposed communication is what is left of the finish time;
- ``rendezvous`` (``--rendezvous-protocol``): a RECV sends its SEND's rank an 8 KiB control
  message when it is issued and is posted when that arrives; the SEND's data leaves when both
  the SEND is issued and the control message has arrived (``collective_engine``, same rule);
- ``trace_enabled`` (``trace-enabled``): a DEBUG record per node issued and per node finished on
  the ``trainsim.workload`` logger, in ASTRA-sim's words (``issue,sys->id=...``, ``callback,...``).

Time is the event kernel's ns; results are converted to seconds.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from functools import partial
from heapq import heappush
from typing import TYPE_CHECKING, cast

from trainsim.compute import ComputeModel
from trainsim.config.types import RENDEZVOUS_BYTES, Platform
from trainsim.endpoint import EndpointModel
from trainsim.endpoint.protocol import SharedResources
from trainsim.engine import EventQueue, collector_paused
from trainsim.enums import CommType, NodeType
from trainsim.errors import DeadlockError, TraceError
from trainsim.memory import MemoryModel
from trainsim.network.protocol import NetworkBackend
from trainsim.system.collective_api import CollectiveRequest, CollectiveRuntime
from trainsim.system.contention import SharedCompute
from trainsim.system.p2p import SendRecvMatcher
from trainsim.system.rank import (
    CPU,
    FREE,
    DependencyIndex,
    RankState,
    resource_classes,
)
from trainsim.system.result import NodeTimeline, RankResult, RunResult
from trainsim.workload.cycles import find_cycle
from trainsim.workload.graph import ABSENT, WorkloadGraph

if TYPE_CHECKING:
    import logging

Handler = Callable[[RankState, int], None]



def workload_log(level: str) -> logging.Logger | None:
    """ASTRA-sim's ``workload`` logger (``trainsim.workload``: per-node lines with
    ``trace-enabled``, each rank's finish) when it takes records of ``level`` (``"DEBUG"``,
    ``"INFO"``), else None. While Python's logging is not imported nothing can have enabled it
    (the root logger's default level is WARNING): None at once, and a run does not import it."""
    module = sys.modules.get("logging")
    if module is None:
        return None
    log: logging.Logger = module.getLogger("trainsim.workload")
    return log if log.isEnabledFor(getattr(module, level)) else None


class Executor:
    """Simulates one training step: ``Executor(...).run()`` returns a :class:`RunResult`."""

    def __init__(
        self,
        platform: Platform,
        graphs: Sequence[WorkloadGraph],
        network: NetworkBackend,
        queue: EventQueue,
        *,
        memory: MemoryModel,
        compute: ComputeModel,
        collectives: CollectiveRuntime | None = None,
        use_ctrl_deps: bool = True,
        endpoint: EndpointModel | None = None,
    ) -> None:
        self.platform = platform
        self.queue = queue
        self.network = network
        self.collectives = collectives
        self.memory = memory
        self.compute = compute
        self._compute_ns = compute.node_ns
        self._memory_access = memory.access
        self.matcher = SendRecvMatcher()
        self.ranks = self._build_ranks(graphs, use_ctrl_deps)
        self._members: dict[tuple[int, str], object] = {}  # (rank, group name) -> its checked members
        self._columns: dict[int, _CollectiveColumns] = {}  # id(graph) -> its columns (the graphs outlive the run)
        system = platform.system
        self._handlers: dict[int, Handler] = {
            NodeType.INVALID_NODE: self._run_instant,
            NodeType.METADATA_NODE: self._run_instant,
            NodeType.COMP_NODE: self._run_compute,
            NodeType.MEM_LOAD_NODE: self._run_memory,
            NodeType.MEM_STORE_NODE: self._run_memory,
            NodeType.COMM_SEND_NODE: self._run_send,
            NodeType.COMM_RECV_NODE: self._run_recv,
            NodeType.COMM_COLL_NODE: self._run_collective,
        }
        self.controls: SendRecvMatcher | None = None  # rendezvous control messages
        # an endpoint whose collectives take HBM bandwidth and units from compute re-rates the
        # GPU kernels in flight (``system/contention.py``); ASTRA-sim's takes nothing
        self.shared: SharedCompute | None = None
        if endpoint is not None and not endpoint.time_invariant and not system.replay_only:
            self.shared = SharedCompute(cast(SharedResources, endpoint), compute, queue, self._shared_done)
            self._handlers[NodeType.COMP_NODE] = self._run_compute_shared
        if system.replay_only:
            self._handlers = dict.fromkeys(self._handlers, self._run_replay)
        elif system.rendezvous:
            self.controls = SendRecvMatcher()
            self._handlers[NodeType.COMM_SEND_NODE] = self._run_send_rendezvous
            self._handlers[NodeType.COMM_RECV_NODE] = self._run_recv_rendezvous
        self._log = workload_log("DEBUG") if system.trace_enabled else None
        if self._log is not None:
            self._handlers = {t: partial(self._issue_logged, h) for t, h in self._handlers.items()}
            self._complete = self._complete_logged  # type: ignore[method-assign]
        self._recv_done_cb = self._recv_done  # one bound method for every collective
        self._replays: dict[float, float] = {}  # duration s -> compute.replay_ns of it
        # per node type list: each node's handler (None: unsupported), per distinct graph
        self._handler_lists: dict[int, tuple[list[int], list[Handler | None]]] = {}
        for state in self.ranks:
            state.handlers = self._handler_list(state.types)

    # -- set-up ---------------------------------------------------------------------------

    @staticmethod
    def _build_ranks(graphs: Sequence[WorkloadGraph], use_ctrl_deps: bool) -> list[RankState]:
        # Ranks whose graphs have the same nodes and dependencies share one resource list and
        # one dependency index: ranks built from one graph share its arrays (found by
        # identity), ranks read from files have equal ones (found by content).
        by_array: dict[int, tuple[list[int], DependencyIndex, list[int]]] = {}
        by_content: dict[bytes, tuple[list[int], DependencyIndex, list[int]]] = {}
        ranks = []
        for rank, graph in enumerate(graphs):
            found = by_array.get(id(graph.ids))
            if found is None:
                key = _structure_key(graph) if len(graphs) > 1 else b""
                found = by_content.get(key)
                if found is None:
                    _reject_cycles(graph, use_ctrl_deps)
                    found = by_content[key] = (
                        resource_classes(graph).tolist(),
                        DependencyIndex(graph, use_ctrl_deps=use_ctrl_deps),
                        graph.types.tolist(),
                    )
                by_array[id(graph.ids)] = found
            resource, deps, types = found
            ranks.append(RankState(rank, graph, resource, deps, types))
        return ranks

    # -- main loop -----------------------------------------------------------------------

    def run(self, progress: Callable[[float, int, int], None] | None = None) -> RunResult:
        """Simulate to the end. ``progress(simulated_ns, nodes_done, nodes_total)`` is called
        every 100,000 events when given."""
        for state in self.ranks:
            self._issue_ready(state)
        ranks, network = self.ranks, self.network
        # the event loop's livelock watchdog: work completes when a node finishes or a message leaves
        self.queue.progress_probe = lambda: (sum(s.done for s in ranks), network.messages_sent)
        with collector_paused():  # engine.kernel.collector_paused: the loop makes no garbage cycles
            if progress is None:
                self.queue.run()
            else:
                total = sum(len(s.graph) for s in self.ranks)
                self.queue.run(tick=lambda: progress(self.queue.now, sum(s.done for s in self.ranks), total))
        unfinished = [s for s in self.ranks if not s.finished]
        if unfinished:
            raise DeadlockError(
                f"simulation stopped at {self.queue.now:.0f} ns with {len(unfinished)} of "
                f"{len(self.ranks)} ranks unfinished; nothing left can run",
                self._blocked_nodes(unfinished),
            )
        return self._result()

    def _replay_ns(self, duration_s: float) -> float:
        """``compute.replay_ns``, once per distinct duration (a pure function of it; most
        collective nodes record 0)."""
        known = self._replays.get(duration_s)
        if known is None:
            known = self._replays[duration_s] = self.compute.replay_ns(duration_s)
        return known

    def _handler_list(self, types: list[int]) -> list[Handler | None]:
        """Each node's handler, for a graph with these node types (once per distinct list)."""
        known = self._handler_lists.get(id(types))
        if known is None or known[0] is not types:
            get = self._handlers.get
            known = self._handler_lists[id(types)] = (types, [get(t) for t in types])
        return known[1]

    def _issue_ready(self, state: RankState) -> None:
        handlers: list[Handler | None] = state.handlers
        start_ns = state.start_ns
        next_issuable = state.next_issuable
        queue = self.queue
        while (pos := next_issuable()) >= 0:
            start_ns[pos] = queue.now
            handler = handlers[pos]
            if handler is None:
                raise TraceError(
                    f"unsupported node type {state.types[pos]}",
                    file=state.graph.source or None,
                    rank=state.rank,
                    node_id=int(state.graph.ids[pos]),
                )
            handler(state, pos)

    def _complete(self, token: tuple[RankState, int]) -> None:
        state, pos = token
        now = self.queue.now
        state.end_ns[pos] = now
        # state.release(pos), inlined (every node passes here)
        cls = state.resource[pos]
        if cls != FREE:
            state.busy[cls] = False
        state.done += 1
        state.completed[pos] = 1
        children = state.children[pos]
        if children:
            pending, ready, resource = state.pending, state.ready, state.resource
            for child in children:
                left = pending[child] - 1
                pending[child] = left
                if left == 0:
                    heappush(ready[resource[child]], child)
        if state.done == state.n:
            state.finish_ns = now
        self._issue_ready(state)

    # -- trace-enabled: ASTRA-sim's per-node debug lines (Workload::issue / Workload::call) --

    def _log_node(self, what: str, state: RankState, pos: int) -> None:
        graph = state.graph
        assert self._log is not None  # set when the logged handlers are
        self._log.debug(
            "%s,sys->id=%d, tick=%d, node->id=%d, node->name=%s, node->type=%d",
            what, state.rank, int(self.queue.now), int(graph.ids[pos]), graph.names[pos], int(graph.types[pos]),
        )

    def _issue_logged(self, handler: Handler, state: RankState, pos: int) -> None:
        self._log_node("issue", state, pos)
        handler(state, pos)

    def _complete_logged(self, token: tuple[RankState, int]) -> None:
        self._log_node("callback", *token)
        Executor._complete(self, token)

    # -- handlers --------------------------------------------------------------------------

    def _run_instant(self, state: RankState, pos: int) -> None:
        self.queue.schedule(0.0, self._complete, (state, pos))

    def _run_compute(self, state: RankState, pos: int) -> None:
        self._run_timed(state, pos, state.resource[pos] == CPU)

    def _run_compute_shared(self, state: RankState, pos: int) -> None:
        if state.resource[pos] == CPU:
            self._run_timed(state, pos, True)
            return
        assert self.shared is not None
        self.shared.start(state.rank, state.graph, pos, (state, pos))

    def _shared_done(self, token: tuple[RankState, int]) -> None:
        state, pos = token
        state.compute_ns += self.queue.now - state.start_ns[pos]
        self._complete(token)

    def _run_replay(self, state: RankState, pos: int) -> None:
        """``replay_only``: any node waits its recorded duration (module docstring)."""
        self._run_timed(state, pos, bool(state.graph.is_cpu_op[pos]))

    def _run_timed(self, state: RankState, pos: int, is_cpu: bool) -> None:
        duration = self._compute_ns(state.graph, pos, is_cpu)
        if is_cpu:
            state.cpu_ns += duration
        else:
            state.compute_ns += duration
        self.queue.schedule(duration, self._complete, (state, pos))

    def _run_memory(self, state: RankState, pos: int) -> None:
        graph = state.graph
        if not self.memory.enabled:
            raise TraceError(
                f"{NodeType(int(graph.types[pos])).name} needs remote memory, but the remote-memory "
                "configuration is NO_MEMORY_EXPANSION",
                file=graph.source or None,
                rank=state.rank,
                node_id=int(graph.ids[pos]),
                hint="give a remote-memory file with memory-type PER_NPU_MEMORY_EXPANSION, "
                "PER_NODE_MEMORY_EXPANSION or MEMORY_POOL",
            )
        self._memory_access(state.rank, int(graph.tensor_size[pos]), self._memory_done, (state, pos))

    def _memory_done(self, token: tuple[RankState, int]) -> None:
        state, pos = token
        state.memory_ns += self.queue.now - state.start_ns[pos]
        self._complete(token)

    def _start_p2p(self, state: RankState, pos: int, peer_field: str) -> tuple[int, int]:
        """A SEND's or RECV's peer (``comm_dst`` / ``comm_src``) and tag, checked; the rank's
        communication starts."""
        graph = state.graph
        peer = int(getattr(graph, peer_field)[pos])
        tag = int(graph.comm_tag[pos])
        self._require_peer(state, pos, peer, peer_field)
        self._require_attr(state, pos, tag != ABSENT, "comm_tag")
        self._comm_started(state)
        return peer, tag

    def _run_send(self, state: RankState, pos: int) -> None:
        self._start_p2p(state, pos, "comm_dst")
        self._send_now((state, pos))

    def _send_now(self, token: tuple[RankState, int]) -> None:
        state, pos = token
        graph = state.graph
        dst = int(graph.comm_dst[pos])
        size = int(graph.comm_size[pos])
        key = (state.rank, dst, int(graph.comm_tag[pos]))
        self.network.send(state.rank, dst, size, self._send_arrived, (state, pos, key, size))

    def _send_arrived(self, payload: tuple[RankState, int, tuple[int, int, int], int]) -> None:
        state, pos, key, size = payload
        self._comm_finished(state)
        self._complete((state, pos))
        self.matcher.arrive(key, int(state.graph.ids[pos]), size)

    def _run_recv(self, state: RankState, pos: int) -> None:
        graph = state.graph
        src, tag = self._start_p2p(state, pos, "comm_src")
        key = (src, state.rank, tag)
        if self.matcher.post(key, int(graph.ids[pos]), int(graph.comm_size[pos]), self._recv_done, (state, pos)):
            self.queue.schedule(0.0, self._recv_done, (state, pos))

    def _recv_done(self, token: tuple[RankState, int]) -> None:
        state = token[0]
        # _comm_finished, inlined: the per-collective path
        state.comm_active -= 1
        if state.comm_active == 0:
            state.comm_ns += self.queue.now - state.comm_since
        self._complete(token)

    # -- the rendezvous protocol (module docstring) ------------------------------------------

    def _run_send_rendezvous(self, state: RankState, pos: int) -> None:
        dst, tag = self._start_p2p(state, pos, "comm_dst")
        # the control message of this SEND's RECV comes from dst (keyed src, dst, tag as it goes)
        assert self.controls is not None
        if self.controls.post((dst, state.rank, tag), int(state.graph.ids[pos]), RENDEZVOUS_BYTES, self._send_now, (state, pos)):
            self.queue.schedule(0.0, self._send_now, (state, pos))

    def _run_recv_rendezvous(self, state: RankState, pos: int) -> None:
        src, _tag = self._start_p2p(state, pos, "comm_src")
        self.network.send(state.rank, src, RENDEZVOUS_BYTES, self._control_arrived, (state, pos))

    def _control_arrived(self, token: tuple[RankState, int]) -> None:
        """The RECV's control message reached its sender: the RECV is posted, then the SEND
        waiting for it (if any) sends (ASTRA-sim: the send handler before the receive's)."""
        state, pos = token
        graph = state.graph
        src = int(graph.comm_src[pos])
        key = (src, state.rank, int(graph.comm_tag[pos]))
        if self.matcher.post(key, int(graph.ids[pos]), int(graph.comm_size[pos]), self._recv_done, token):
            self.queue.schedule(0.0, self._recv_done, token)
        assert self.controls is not None
        self.controls.arrive((state.rank, src, key[2]), int(graph.ids[pos]), RENDEZVOUS_BYTES)

    def _run_collective(self, state: RankState, pos: int) -> None:
        graph = state.graph
        cols: _CollectiveColumns | None = state.columns
        if cols is None:
            cols = state.columns = self._columns.get(id(graph))
            if cols is None:
                cols = state.columns = self._columns[id(graph)] = _CollectiveColumns(graph)
        node_id = cols.ids[pos]
        if self.collectives is None:
            raise TraceError(
                "collective nodes need a collective runtime, and none was configured",
                file=graph.source or None,
                rank=state.rank,
                node_id=node_id,
            )
        comm_type = cols.comm_type[pos]
        if comm_type not in _COMM_TYPES:
            self._require_attr(state, pos, False, "comm_type")
        group_name = graph.pg_name[pos]
        rank = state.rank
        members = self._members.get((rank, group_name), _UNKNOWN)
        if members is _UNKNOWN:
            members = self._members[(rank, group_name)] = self._group_members(state, pos, group_name)
        duration_s = cols.duration_s[pos]
        duration_ns = self._replays.get(duration_s)
        if duration_ns is None:
            duration_ns = self._replay_ns(duration_s)
        request = CollectiveRequest(
            rank,
            node_id,
            comm_type,
            cols.comm_size[pos],
            members,  # type: ignore[arg-type]  # a checked group (tuple) or None
            group_name,
            graph.involved_dim.get(pos),
            cols.comm_priority[pos],
            duration_ns,
            graph.names[pos],
        )
        # _comm_started, inlined
        if state.comm_active == 0:
            state.comm_since = self.queue.now
        state.comm_active += 1
        self.collectives.issue(request, self._recv_done_cb, (state, pos))

    # -- helpers ---------------------------------------------------------------------------

    def _group_members(self, state: RankState, pos: int, group_name: str) -> tuple[int, ...] | None:
        groups = self.platform.comm_groups
        if group_name in groups:
            members = groups[group_name]
        elif group_name in ("", "0"):
            return None
        else:
            known = ", ".join(sorted(groups)) or "none"
            raise TraceError(
                f"collective names communicator group {group_name!r}, which the comm-group "
                f"configuration does not define (defined: {known})",
                file=state.graph.source or None,
                rank=state.rank,
                node_id=int(state.graph.ids[pos]),
                hint="pass --comm-group-configuration with that group, or clear pg_name",
            )
        if state.rank not in members:
            raise TraceError(
                f"collective on communicator group {group_name!r} {list(members)}, which does not "
                f"contain this rank",
                file=state.graph.source or None,
                rank=state.rank,
                node_id=int(state.graph.ids[pos]),
            )
        return members

    def _require_peer(self, state: RankState, pos: int, peer: int, field: str) -> None:
        if not 0 <= peer < len(self.ranks):
            got = "missing" if peer == ABSENT else str(peer)
            raise TraceError(
                f"{field} is {got}; expected a rank in 0..{len(self.ranks) - 1}",
                file=state.graph.source or None,
                rank=state.rank,
                node_id=int(state.graph.ids[pos]),
            )

    @staticmethod
    def _require_attr(state: RankState, pos: int, ok: bool, field: str) -> None:
        if not ok:
            raise TraceError(
                f"attribute {field} is missing or invalid",
                file=state.graph.source or None,
                rank=state.rank,
                node_id=int(state.graph.ids[pos]),
            )

    def _comm_started(self, state: RankState) -> None:
        if state.comm_active == 0:
            state.comm_since = self.queue.now
        state.comm_active += 1

    def _comm_finished(self, state: RankState) -> None:
        state.comm_active -= 1
        if state.comm_active == 0:
            state.comm_ns += self.queue.now - state.comm_since

    def _blocked_nodes(self, unfinished: list[RankState]) -> list[tuple[int, int, str]]:
        """(rank, node id, what it waits for) for the nodes that hold each unfinished rank."""
        waiting: dict[tuple[int, int], str] = {}
        for rank, node_id, why in self.matcher.waiting_receives():
            waiting[(rank, node_id)] = why
        if self.controls is not None:  # SENDs waiting for their RECV's rendezvous control message
            for sender, node_id, _why in self.controls.waiting_receives():
                waiting[(sender, node_id)] = "SEND waiting for its RECV's rendezvous control message (no matching RECV was issued)"
        if self.collectives is not None:
            for rank, node_id, why in self.collectives.pending():
                waiting[(rank, node_id)] = why
        blocked: list[tuple[int, int, str]] = []
        for state in unfinished:
            graph = state.graph
            ids = graph.ids.tolist()
            in_flight = [p for p in range(len(graph)) if state.issued[p] and not state.completed[p]]
            for pos in in_flight:
                why = waiting.get((state.rank, ids[pos]), "issued but never completed")
                blocked.append((state.rank, ids[pos], why))
            if in_flight:
                continue
            position = graph.position_of()
            for pos in range(len(graph)):
                if state.issued[pos]:
                    continue
                unmet = [d for d in graph.deps_of(pos) if not state.completed[position[d]]]
                if unmet and all(state.issued[position[d]] or state.pending[position[d]] > 0 for d in unmet):
                    blocked.append((state.rank, ids[pos], f"waits for node(s) {unmet[:5]}, which never completed"))
        return blocked

    def _result(self) -> RunResult:
        ranks = []
        for s in self.ranks:
            finish = s.finish_ns * 1e-9
            compute = s.compute_ns * 1e-9
            ranks.append(
                RankResult(
                    rank=s.rank,
                    finish_s=finish,
                    compute_s=compute,
                    comm_s=s.comm_ns * 1e-9,
                    exposed_comm_s=max(0.0, finish - compute),
                    cpu_s=s.cpu_ns * 1e-9,
                    memory_s=s.memory_ns * 1e-9,
                    nodes=len(s.graph),
                )
            )
        makespan = max((r.finish_s for r in ranks), default=0.0)
        timelines = [NodeTimeline(s.graph, s.start_ns, s.end_ns) for s in self.ranks]
        records = list(getattr(self.collectives, "records", []))
        result = RunResult(makespan_s=makespan, ranks=ranks, events=self.queue.events_processed, timelines=timelines, collectives=records)
        if self.shared is not None:
            result.resources = self.shared.results()
        return result



_COMM_TYPES = frozenset(int(c) for c in CommType)
_UNKNOWN = object()


class _CollectiveColumns:
    """The columns of one graph a collective node reads, as Python lists (a numpy scalar per
    read costs more than the list; made once per graph, on its first collective)."""

    __slots__ = ("ids", "comm_type", "comm_size", "comm_priority", "duration_s")

    def __init__(self, graph: WorkloadGraph) -> None:
        self.ids: list[int] = graph.ids.tolist()
        self.comm_type: list[int] = graph.comm_type.tolist()
        self.comm_size: list[int] = graph.comm_size.tolist()
        self.comm_priority: list[int] = graph.comm_priority.tolist()
        self.duration_s: list[float] = graph.duration_s.tolist()


def _reject_cycles(graph: WorkloadGraph, use_ctrl_deps: bool) -> None:
    """A graph whose dependencies form a cycle can never finish: say which nodes, up front."""
    cycle = find_cycle(graph, ctrl=use_ctrl_deps)
    if cycle:
        shown = " -> ".join(str(n) for n in [*cycle[:12], cycle[0]]) if len(cycle) <= 12 else " -> ".join(map(str, cycle[:12])) + " -> ..."
        raise TraceError(
            f"dependency cycle of {len(cycle)} node(s): {shown} (each waits for the one before it)",
            file=graph.source or None,
            rank=graph.rank,
            node_id=cycle[0],
            hint="a workload graph must be acyclic; remove one of these dependencies",
        )


def _structure_key(graph: WorkloadGraph) -> bytes:
    """What resource classes and dependencies are made of (node ids, types, CPU flags, both
    dependency lists) as one bytes key; dict lookups hash it (no hashlib to import)."""
    parts: list[bytes] = []
    for column in (graph.ids, graph.types, graph.is_cpu_op, graph.data_dep_ptr, graph.data_dep_ids, graph.ctrl_dep_ptr, graph.ctrl_dep_ids):
        parts += (column.dtype.str.encode(), len(column).to_bytes(8, "little"), column.tobytes())
    return b"".join(parts)
