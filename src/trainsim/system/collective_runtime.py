"""The collective runtime behind the executor's seam (``collective_api.CollectiveRuntime``).

Place in the map: system layer. It pairs the requests of the ranks of one communicator group
in the order each rank issues them, has each collective planned (``planner``: layout, chunks,
dimension order per chunk, phases; Themis guarded by this runtime's own prediction) and runs
the phases per rank on the network backend (``collective_engine``, with the platform's
endpoint model: ``build.build_endpoint``), then calls ``on_done(arg)`` per rank. Every rank's
part is recorded (``records``: start and end ns, bytes sent per network dimension).

Modes: ``compat_astra=True`` reproduces ASTRA-sim 518bd51's arithmetic (whole-ns endpoint
delay and reductions, untrimmed chunks, unbounded injection: astra-sim-semantics.md);
``compat_astra=False`` is the physical model (exact arithmetic, trimmed chunks, and on the
analytical backend a rank's injection serialized per outgoing link: ``network/injection.py``). docs/collectives.md lists the
differences.

Symmetry: when every member of a whole-machine collective issues it at the same tick, the
runtime is otherwise idle, the backend allows it (``symmetry.collective.symmetric_backend``: its
declared symmetry class, ``network/protocol.py``) and every phase's algorithm is symmetric (ring, direct, halving-doubling), one
representative rank is simulated (``symmetry.collective.SymmetricRunner``) and every member finishes at
its time; the result is the rank-by-rank one (tests/system/test_symmetry.py) except under
order-dependent same-tick ties, where rank by rank differs by rank and ``symmetry="strict"``
runs rank by rank instead (``symmetry/collective.py``). Times in ns, sizes in bytes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, cast

from trainsim.collectives import (
    ASYMMETRIC_KINDS,
    ROOTED_TYPES,
    LogicalLayout,
    PhaseSpec,
    RootedPhaseSpec,
)
from trainsim.config.types import Platform
from trainsim.endpoint import EndpointModel
from trainsim.endpoint.protocol import SharedResources
from trainsim.engine import EventQueue
from trainsim.enums import CommType
from trainsim.errors import TraceError
from trainsim.network.injection import InjectionPorts
from trainsim.network.protocol import NetworkBackend
from trainsim.system import themis_guard
from trainsim.system.build import build_endpoint
from trainsim.system.collective_api import CollectiveRequest
from trainsim.system.collective_engine import (
    CollectiveRecord,
    Engine,
    EngineOptions,
    RankWork,
)
from trainsim.system.collective_pricing import Price, PriceRequest, make_pricer
from trainsim.system.planner import CollectivePlanner
from trainsim.system.symmetry.collective import (
    SymmetricOutcome,
    SymmetricRunner,
    knobs_blocking_symmetry,
    symmetric_backend,
)
from trainsim.system.symmetry.group import GroupSymmetry
from trainsim.system.symmetry.group_replay import GroupReplay, GroupReplayConflict

_BROADCAST = int(CommType.BROADCAST)

# reduce-scatter-block is a reduce-scatter; reduce, gather, scatter, barrier and a simulated
# broadcast run their own algorithms (collectives.rooted, docs/collectives.md).
_MAPPED = {int(CommType.REDUCE_SCATTER_BLOCK): int(CommType.REDUCE_SCATTER)}
_NAMES = {int(c): c.name.lower() for c in CommType}
_UNCHECKED = object()
_PER_MEMBER = (int(CommType.GATHER), int(CommType.SCATTER))  # sizes are per member


@dataclass(slots=True)
class CollectiveInstance:
    """One collective across its group."""

    key: tuple[str, int]
    comm_type: int  # as requested
    phase_type: int  # the type the phases run
    size: int
    members: tuple[int, ...]
    layout: LogicalLayout | None = None
    chunks: list[list[PhaseSpec]] = field(default_factory=list)
    tag_base: int = 0
    planned: bool = False
    pending: list[tuple[int, CollectiveRequest, Callable[[Any], None], Any, float]] = field(
        default_factory=list
    )
    issued: int = 0
    flush_scheduled: bool = False
    first_issue_ns: float = 0.0
    same_tick: bool = True
    held: list[tuple[int, CollectiveRequest, Callable[[Any], None], Any, float]] = field(
        default_factory=list
    )  # members waiting for their peers under the NCCL tuner (``_flush_tuned``)
    # group replay (``symmetry/group_replay.py``): None undecided, False not replayed, else the
    # members held so far (``group_replay.Held``)
    replay: list[tuple[int, Any, float]] | Literal[False] | None = None


def _algorithm_of(graphs: Any) -> str:
    return "a built-in algorithm" if graphs is None else f"the custom graph {graphs.source!r}"


def _mirror_done(_arg: Any) -> None:
    """A mirror rank's collective finished: nothing waits for it (it runs no graph)."""


class CollectiveRuntime:
    """Runs collectives for every rank; implements ``collective_api.CollectiveRuntime``.
    ``endpoint``: the endpoint model (``build.build_endpoint``'s for the platform when None)."""

    def __init__(
        self,
        platform: Platform,
        network: NetworkBackend,
        queue: EventQueue,
        *,
        compat_astra: bool = False,
        symmetry: bool | Literal["strict"] = True,
        group_symmetry: bool = False,
        mirrors: dict[int, tuple[int, ...]] | None = None,
        mirror_ports: bool = False,
        endpoint: EndpointModel | None = None,
        core_queues: bool = True,
        group_replay: bool = False,
    ) -> None:
        self.platform = platform
        self.network = network
        self.queue = queue
        self.compat_astra = compat_astra
        self.symmetry = symmetry
        sysspec = platform.system
        self.system = sysspec
        topo = network.topology
        if topo is None:  # a physical fabric: the logical layout follows the declared dims
            from trainsim.topology import MultiDimTopology

            topo = MultiDimTopology.of_network(platform.network, compat_astra=compat_astra)
        self.topology = topo
        self.npus = topo.npus
        self._all_ranks = tuple(range(self.npus))  # one shared tuple: O(1) "whole machine" tests
        if endpoint is None:
            endpoint = build_endpoint(platform, compat_astra)
        # an endpoint that shares the rank's resources over time (endpoint.protocol.
        # SharedResources) needs every rank on the run's own clock: no representative
        knobs_block = bool(knobs_blocking_symmetry(sysspec)) or not endpoint.time_invariant
        self._symmetric_backend = symmetric_backend(network, topo) and not knobs_block
        self._symmetric: SymmetricRunner | None = None
        self.engine_options = EngineOptions(
            endpoint=endpoint,
            compat_astra=compat_astra,
            active_chunks=sysspec.active_chunks_per_dimension,
            scf=sysspec.intra_dimension_scheduling == "SCF",
            rendezvous=sysspec.rendezvous,
            queues_per_dim=sysspec.queues_per_dim,
        )
        self.engine = Engine(
            queue,
            network,
            topo,
            self.engine_options,
            injection=self._new_injection(),
            on_rank_done=self._rank_done,
            core_queues=core_queues,
        )
        self.planner = CollectivePlanner(
            sysspec,
            topo,
            [d.bandwidth for d in platform.network.dims],
            compat_astra=compat_astra,
            predict=self._predict,
            max_chunk_bytes=None if endpoint.time_invariant else cast(SharedResources, endpoint).max_chunk_bytes(),
        )
        self.records: list[CollectiveRecord] = []
        self._issue_count: dict[tuple[int, str], int] = {}
        self._instances: dict[tuple[str, int], CollectiveInstance] = {}
        self._in_flight: dict[tuple[int, int], RankWork] = {}  # (rank, id(work)) -> work
        self._flying: dict[int, int] = {}  # rank -> its works in ``_in_flight`` (members_idle's test)
        self._policy = sysspec.scheduling_policy
        self._whats: dict[tuple[int, int], str] = {}  # (comm type, size) -> RankWork.what
        # (id(layout), id(chunks)) -> (layout, chunks, their _algorithms)
        self._algorithm_names: dict[tuple[int, int], tuple[Any, Any, list[str]]] = {}
        # (rank, group name, group) of a request -> ``_issuer``'s checked group, its name, the rank's mirrors in it
        self._issuers: dict[tuple[int, str, tuple[int, ...] | None], tuple[tuple[int, ...] | None, str, tuple[int, ...]]] = {}
        # (rank, group name) -> (the request's group, ``_issuers``' entry and the issue counter's key)
        self._issuers_named: dict[tuple[int, str], tuple[Any, tuple[Any, str, tuple[int, ...], tuple[int, str], bool]]] = {}
        self._sym_busy: dict[int, float] = {}
        self._next_tag = 0
        self.symmetric_runs = 0
        # communicator-group collectives by a representative member (``symmetry/group.py``)
        self._groups = GroupSymmetry(self) if group_symmetry and not knobs_block else None
        self.themis_choices: list[themis_guard.ThemisChoice] = []  # Themis' guarded decisions
        # rank -> ranks that behave exactly as it and run no graph (``system/symmetry/replica.py``
        # checks that): they issue each of its collectives on a group holding them, with it
        self._mirrors = mirrors or {}
        self._mirror_ranks = {m for ms in self._mirrors.values() for m in ms}
        # with ``mirror_ports``, a representative's injection ports still busy when it issues a
        # collective are copied to its mirrors in the group (``InjectionPorts.copy_busy``): the
        # replica slice's other replicas run nothing but its cross-replica collectives
        self._mirror_ports = mirror_ports
        # request groups already checked (members distinct and in range) -> the group to run on
        # (None: it lists every rank)
        self._checked_groups: dict[tuple[int, ...], tuple[int, ...] | None] = {}
        # a pricer (``system.collective_tuner``: NCCL's choice, a wafer's flow programs) prices
        # the collectives it knows as a whole (``collective_pricing.py``; default mode only)
        self._pricer = make_pricer(platform, compat_astra)
        # flush's common case: nothing prices collectives as a whole, no per-node custom algorithm
        self._plain_flush = self._pricer is None and not self.planner.custom.by_node
        self._custom = bool(self.planner.custom)
        # groups of a rank and its mirrors alone flush as one (``_flush_own``)
        self._own_groups = self._plain_flush and self._groups is not None and self._groups.enabled
        # communicator groups' collectives answered from a private run of the whole group
        # where it applies, before the group path (``symmetry/group_replay.py``;
        # ``group_replay``: the caller reruns the step without it on a GroupReplayConflict)
        self._replay: GroupReplay | None = None
        self._no_bytes: list[int] = []  # a held member's record's, until its end is known
        self._no_spans: list[list[float]] = []
        if group_replay and self._own_groups and GroupReplay.enabled(self):
            assert self._groups is not None
            self._replay = GroupReplay(self, self._groups.busy)
        # (phase type, size, id(members)) -> (members, the planner's plan of a group collective)
        self._group_plans: dict[tuple[int, int, int], tuple[tuple[int, ...], Any]] = {}
        # (group name, type, size) -> (group, its first instance, plan, the memos' key) of a
        # collective on a rank's own group that a memo answered (``_flush_own``; with group
        # replay, every such first instance, and no key)
        self._own_replays: dict[tuple[str, int, Any], tuple[tuple[int, ...], CollectiveInstance, Any, int]] = {}
        self._ready: list[CollectiveInstance] = []  # priced together at the end of the tick
        self._priced: list[tuple[PriceRequest, float, float]] = []  # in flight: (request, start, end)

    # -- the protocol ------------------------------------------------------------------------
    def issue(
        self, request: CollectiveRequest, on_done: Callable[[Any], None], arg: Any = None
    ) -> None:
        """Start (or hold until its peers arrive) one rank's collective."""
        rank = request.rank
        ctype = int(request.comm_type)
        if ctype not in _NAMES:
            raise TraceError(f"unknown collective type {ctype}", rank=rank, node_id=request.node_id)
        # the rank's checked group, found by (rank, name) and the group's identity (the
        # executor hands one tuple per group) before hashing the group
        nkey = (rank, request.group_name)
        named = self._issuers_named.get(nkey)
        if named is not None and named[0] is request.group:
            group, gname, mirrors, ckey, own = named[1]
        else:
            ukey = (rank, request.group_name, request.group)
            issuer = self._issuers.get(ukey)
            if issuer is None:  # checked once per rank and group: the checks are of these alone
                issuer = self._issuers[ukey] = self._issuer(request)
            group, gname, mirrors = issuer
            ckey = (rank, gname)
            # a group of the rank and its mirrors alone (:meth:`_flush_own`)
            own = self._own_groups and group is not None and len(mirrors) + 1 == len(group)
            self._issuers_named[nkey] = (request.group, (group, gname, mirrors, ckey, own))
        k = self._issue_count.get(ckey, 0)
        self._issue_count[ckey] = k + 1
        ikey = (gname, k)
        inst = self._instances.get(ikey)
        now = self.queue.now
        if inst is None and own:
            # complete as issued (no other member issues it): flushed at the same point, the
            # mirrors' ports set from the representative's now, as below
            if self._mirror_ports and self.engine.injection is not None:
                self.engine.injection.copy_busy(rank, mirrors, now)
            self.queue.schedule(0.0, self._flush_own, (ikey, ctype, request, on_done, arg, now, group, mirrors))
            return
        if inst is None:
            inst = self._instances[ikey] = self._new_instance(ikey, ctype, request, group, now)
        elif inst.comm_type != ctype or inst.size != self._effective_size(
            ctype, int(request.size), inst.members
        ):
            raise TraceError(
                f"collective #{k} on group {gname or 'all'!r} is {_NAMES[ctype]} of {request.size} B here "
                f"but {_NAMES[inst.comm_type]} of {inst.size} B on the ranks that issued it first",
                rank=rank,
                node_id=request.node_id,
            )
        inst.issued += 1
        if now != inst.first_issue_ns:
            inst.same_tick = False
        pending = inst.pending
        pending.append((rank, request, on_done, arg, now))
        if mirrors:
            inst.issued += len(mirrors)
            if self._mirror_ports and self.engine.injection is not None:
                self.engine.injection.copy_busy(rank, mirrors, now)
            # the representative's request: past this point a request's rank is the tuple's
            pending.extend([(mirror, request, _mirror_done, None, now) for mirror in mirrors])
        if not inst.flush_scheduled:
            inst.flush_scheduled = True
            self.queue.schedule(0.0, self.flush, inst)

    def _new_instance(
        self, ikey: tuple[str, int], ctype: int, request: CollectiveRequest, group: tuple[int, ...] | None, now: float
    ) -> CollectiveInstance:
        """The instance of a collective first issued now by ``request``'s rank."""
        members = self._all_ranks if group is None else tuple(group)
        phase_type = _MAPPED.get(ctype, ctype)
        size = int(request.size)
        if ctype in _PER_MEMBER:
            size = max(1, size // len(members))
        return CollectiveInstance(ikey, ctype, phase_type, size, members, first_issue_ns=now)

    def _issuer(self, request: CollectiveRequest) -> tuple[tuple[int, ...] | None, str, tuple[int, ...]]:
        """For a request's rank and group, checked: the group to run on (None: every rank),
        its name (the instances' key) and the rank's mirrors in it."""
        rank = request.rank
        group = request.group
        if group is not None:
            seen = self._checked_groups.get(group, _UNCHECKED)
            if seen is _UNCHECKED:
                seen = self._check_group(group, request)
            group = cast("tuple[int, ...] | None", seen)
        if group is not None:
            if rank not in group:
                raise TraceError(
                    f"issues a collective on group {request.group_name!r} {list(group)} it is not a member of",
                    rank=rank,
                    node_id=request.node_id,
                )
        elif not 0 <= rank < self.npus:
            raise TraceError(
                f"rank out of range: the network has {self.npus} NPUs",
                rank=rank,
                node_id=request.node_id,
            )
        gname = "" if group is None else (request.group_name or ",".join(map(str, group)))
        mirrors = tuple(m for m in self._mirrors.get(rank, ()) if group is None or m in group)
        return group, gname, mirrors

    def _check_group(self, group: tuple[int, ...], request: CollectiveRequest) -> tuple[int, ...] | None:
        """The group a request names, checked once per group: None when it lists every rank
        (the normal plan runs), else itself once its ranks are distinct and in range."""
        if len(group) == self.npus and sorted(group) == list(range(self.npus)):
            self._checked_groups[group] = None
            return None
        if request.rank not in group:
            return group  # ``issue`` names this rank's error; the group is checked on the next
        if len(set(group)) != len(group) or any(not 0 <= r < self.npus for r in group):
            raise TraceError(
                f"group {request.group_name!r} {list(group)} has repeated or out-of-range ranks "
                f"(the network has {self.npus})",
                rank=request.rank,
                node_id=request.node_id,
            )
        self._checked_groups[group] = group
        return group

    def pending(self) -> list[tuple[int, int, str]]:
        """(rank, node_id, what it waits for) for every collective not finished."""
        if self._replay is not None and self._replay.holding:
            # held members posted no receive: the rank-by-rank run says what each waits for
            raise GroupReplayConflict("the step stopped with members of a collective held")
        out = []
        waits: dict[int, str] = {}
        for dst, what in self.engine.waiting():
            waits.setdefault(dst, what)
        for work in self._in_flight.values():
            what = waits.get(work.rank, work.what)
            out.append((work.rank, work.record.node_id, what))
        for inst in self._instances.values():
            if inst.issued < len(inst.members):
                have = {p[0] for p in inst.pending}
                missing = [r for r in inst.members if r not in have][:8]
                for rank, req, *_ in inst.pending + inst.held:
                    out.append(
                        (
                            rank,
                            req.node_id,
                            f"{_NAMES[inst.comm_type]} peers that never issued it: {missing}",
                        )
                    )
        return out

    # -- planning ----------------------------------------------------------------------------
    @staticmethod
    def _effective_size(ctype: int, size: int, members: tuple[int, ...]) -> int:
        if ctype in _PER_MEMBER:
            return max(1, size // len(members))
        return size

    def _plan(self, inst: CollectiveInstance, request: CollectiveRequest) -> None:
        inst.planned = True
        if inst.comm_type == _BROADCAST and self._replayed(inst):  # (the test first: no call per collective)
            return
        members = inst.members
        group = (
            None
            if members is self._all_ranks or (len(members) == self.npus and members == self._all_ranks)
            else members
        )
        if group is not None and not self._custom:
            # a group's plan is a function of (type, size, members) (``planner.plan``'s key):
            # the planner's, found by the members' identity (a checked group is one tuple)
            pkey = (inst.phase_type, inst.size, id(members))
            known = self._group_plans.get(pkey)
            if known is None or known[0] is not members:
                plan = self.planner.plan(inst.phase_type, inst.size, members, group, request.involved_dims, request.node_id)
                known = self._group_plans[pkey] = (members, plan)
            plan = known[1]
        else:
            plan = self.planner.plan(inst.phase_type, inst.size, members, group, request.involved_dims, request.node_id)
        inst.layout = plan.layout
        inst.chunks = plan.chunks
        if plan.themis is not None:
            self.themis_choices.append(plan.themis)
        inst.tag_base = self._next_tag
        self._next_tag += max(1, len(plan.chunks))

    # -- starting ranks ----------------------------------------------------------------------
    def _priority(self, rank: int, request: CollectiveRequest) -> int:
        policy = self._policy
        engine = self.engine
        rs = engine.ranks.get(rank) or engine.rank_state(rank)
        if policy == "EXPLICIT":
            return int(request.priority)
        rs.priority += 1 if policy == "LIFO" else -1
        return rs.priority

    def _new_work(
        self,
        rank: int,
        inst: CollectiveInstance,
        request: CollectiveRequest,
        on_done: Callable[[Any], None],
        arg: Any,
        finished: SymmetricOutcome | None = None,
        shared: tuple[list[int], list[str], list[list[float]]] | None = None,
    ) -> RankWork:
        """A record and the work of one member. ``shared``: the bytes per dimension,
        algorithms and chunk spans of a ``finished`` symmetric run, one set of lists for every
        member (a 1,024-rank step keeps millions of records)."""
        if shared is None:
            dim_bytes, algorithms, spans = [0] * len(self.topology.sizes), self._algorithms_of(inst), [[-1.0, -1.0] for _ in inst.chunks]
        else:
            dim_bytes, algorithms, spans = shared
        record = CollectiveRecord(  # positional: the per-collective path
            rank,
            request.node_id,
            inst.comm_type,
            int(request.size),
            inst.key[0],
            self.queue.now,
            -1.0 if finished is None else finished.end_ns,  # end_ns
            dim_bytes,
            len(inst.chunks),
            algorithms,
            spans,
            len(inst.members),  # group_size
        )
        self.records.append(record)
        wkey = (inst.comm_type, request.size)
        what = self._whats.get(wkey)
        if what is None:
            what = self._whats[wkey] = f"its {_NAMES[inst.comm_type]} of {request.size} B (chunks still running)"
        return RankWork(rank, len(inst.chunks), on_done, arg, record, what)

    def take_pending(self, inst: CollectiveInstance) -> list[Any]:
        """The requests gathered for ``inst`` this tick (planning it on first use)."""
        inst.flush_scheduled = False
        pending, inst.pending = inst.pending, []
        if pending and not inst.planned:
            self._plan(inst, pending[0][1])
        if self.planner.custom.by_node and pending:
            self._same_custom(inst, pending)
        return pending

    def _same_custom(self, inst: CollectiveInstance, pending: list[Any]) -> None:
        """Per-node custom algorithms pick by each rank's own node id (ASTRA-sim): the members
        of one collective must pick the same one."""
        custom = self.planner.custom
        chunks = inst.chunks
        planned = getattr(chunks[0][0], "graphs", None) if chunks and chunks[0] else None
        for rank, request, *_ in pending:
            mine = None if self._replayed(inst) else custom.lookup(inst.phase_type, request.node_id)
            if mine is not planned:
                raise TraceError(
                    f"{_NAMES[inst.comm_type]} #{inst.key[1]} runs {_algorithm_of(mine)} here "
                    f"(per-node-custom-implementation) but {_algorithm_of(planned)} on the rank that issued it first",
                    rank=rank,
                    node_id=request.node_id,
                    hint="map the collective's node on every rank to the same graph",
                )

    def tuned(self, inst: CollectiveInstance) -> bool:
        """Whether the pricer prices ``inst`` (``system.collective_tuner``)."""
        return self._pricer is not None and self._pricer.prices(inst.phase_type) and not self._replayed(inst)

    def flush_tuned(self, inst: CollectiveInstance, pending: list[Any]) -> None:
        """Hold the members until the last one issues ``inst``, then finish every one of them
        the pricer's price later (``system/collective_pricing.py``); a ``concurrent`` pricer
        prices the collectives ready in this tick together, at its end."""
        inst.flush_scheduled = False
        inst.held.extend(pending)
        if inst.issued < len(inst.members):
            return
        pricer = self._pricer
        assert pricer is not None
        if not pricer.concurrent:
            self._finish_priced(inst, pricer.price_batch([PriceRequest(inst.phase_type, inst.size, inst.members)])[0])
            return
        if not self._ready:
            self.queue.schedule(0.0, self._price_ready, None)
        self._ready.append(inst)
        self._instances.pop(inst.key, None)

    def _price_ready(self, _arg: Any) -> None:
        ready, self._ready = self._ready, []
        assert self._pricer is not None
        now = self.queue.now
        self._priced = [p for p in self._priced if p[2] > now]
        in_flight = [(req, (end - now) / (end - start)) for req, start, end in self._priced]
        requests = [PriceRequest(i.phase_type, i.size, i.members) for i in ready]
        prices = self._pricer.price_batch(requests, in_flight)
        for inst, req, price in zip(ready, requests, prices, strict=True):
            if price.duration_ns > 0:
                self._priced.append((req, now, now + price.duration_ns))
            self._finish_priced(inst, price)

    def _finish_priced(self, inst: CollectiveInstance, price: Price) -> None:
        held, inst.held = inst.held, []
        now = self.queue.now
        end = now + price.duration_ns
        shared = (list(price.dim_bytes), [price.label], [[now, end]])
        works = []
        for rank, request, on_done, arg, issued_ns in held:
            if rank in self._mirror_ranks:  # it runs nothing and reports its representative's times
                continue
            work = self._new_work(rank, inst, request, on_done, arg, shared=shared)
            work.record.start_ns = issued_ns
            work.record.end_ns = end
            work.record.chunks = 1
            self._fly(work)
            works.append(work)
        self._instances.pop(inst.key, None)
        self.queue.schedule_at(end, self._symmetric_done, works)

    def _flush_own(self, token: tuple[Any, ...]) -> None:
        """:meth:`flush` of a collective on a group of its rank and that rank's mirrors alone
        (a folded run's tensor-parallel groups: ``simulate(mirrors=...)``), issued at ``now``:
        the same plan, checks and memo answer as :meth:`flush` and the group path take, without
        the instance's list of members' requests; anything else (refused, simulated, rank by
        rank) goes through :meth:`flush` with the instance as :meth:`issue` makes it."""
        ikey, ctype, request, on_done, arg, now, group, mirrors = token
        groups = self._groups
        assert groups is not None  # (``_own_groups``)
        # a collective of this group, type and size answered by a memo before: its plan is the
        # planner's same plan (cached by type, size and members), so only what changes with
        # ``now`` is asked again (the members idle, the memo's answer at this start)
        okey = (ikey[0], ctype, request.size)
        known = self._own_replays.get(okey)
        replay = self._replay
        if known is not None and known[0] is group:
            _, inst, plan, key = known
            if replay is not None:  # group replay's memo (key: unused)
                if replay.answer_at_once(inst, request.rank, request, on_done, arg, mirrors, now):
                    self._plan_taken(plan)
                    return
            else:
                replayed = groups.replay_idle(key, inst.members, now)
                if replayed is not None:
                    self._plan_taken(plan)
                    self._own_replayed(inst, request, on_done, arg, now, mirrors, replayed)
                    return
        inst = self._new_instance(ikey, ctype, request, group, now)
        inst.issued = len(group)
        self._plan(inst, request)
        layout = inst.layout
        if replay is not None:
            if not self._custom and layout is not None and layout.fast:  # (as below)
                self._own_replays[okey] = (group, inst, self._group_plans[(inst.phase_type, inst.size, id(inst.members))][1], -1)
        elif layout is not None and layout.fast:
            replayed = groups.replayed(inst)
            if replayed is not None:
                if not self._custom:  # (a custom plan is the planner's anew each time)
                    plan = self._group_plans[(inst.phase_type, inst.size, id(inst.members))][1]
                    memo_key = groups.replay_key(inst)
                    if memo_key is not None:
                        self._own_replays[okey] = (group, inst, plan, memo_key)
                self._own_replayed(inst, request, on_done, arg, now, mirrors, replayed)
                return
        # as issue leaves it: the representative's request, then its mirrors'
        pending = inst.pending
        pending.append((request.rank, request, on_done, arg, now))
        pending.extend([(mirror, request, _mirror_done, None, now) for mirror in mirrors])
        inst.flush_scheduled = True
        self._instances[ikey] = inst
        self.flush(inst)

    def _plan_taken(self, plan: Any) -> None:
        """What :meth:`_plan` does besides planning, for a collective answered with an
        earlier one's plan: the tags it takes, Themis' choice."""
        self._next_tag += max(1, len(plan.chunks))
        if plan.themis is not None:
            self.themis_choices.append(plan.themis)

    def _own_replayed(
        self,
        inst: CollectiveInstance,
        request: CollectiveRequest,
        on_done: Callable[[Any], None],
        arg: Any,
        now: float,
        mirrors: tuple[int, ...],
        replayed: tuple[float, tuple[int, ...], list[list[float]]],
    ) -> None:
        """:meth:`_flush_own`'s collective answered by a memo (``replayed``: end, bytes per
        dimension, chunk spans): the rank and its mirrors busy until the end, the rank's
        record and work as :meth:`finish_members` makes them. ``inst`` may be the first
        instance of the same group, type and size (what is read of it is the same)."""
        groups = self._groups
        assert groups is not None
        busy = groups.busy
        end = replayed[0]
        busy[request.rank] = end
        for mirror in mirrors:
            busy[mirror] = end
        groups.runs += 1
        self.finish_members(inst, [(request.rank, request, on_done, arg, now)], end, replayed[1], replayed[2], None)

    def flush(self, inst: CollectiveInstance) -> None:
        groups = self._groups
        if self._plain_flush:  # no pricer, no per-node custom algorithm: take_pending, inlined
            inst.flush_scheduled = False
            pending, inst.pending = inst.pending, []
            if not pending:
                return
            if not inst.planned:
                self._plan(inst, pending[0][1])
            layout = inst.layout
            if self._replay is not None and self._replay.take(inst, pending):
                return
            # a communicator group's layout (``fast``) is the group path's alone (symmetric_ok
            # refuses it), and a replayed broadcast has none
            if layout is not None and layout.fast and groups is not None and groups.try_run(inst, pending):
                return
        else:
            if self._pricer is not None and self.tuned(inst):
                pending, inst.pending = inst.pending, []
                self.flush_tuned(inst, pending)
                return
            pending = self.take_pending(inst)
            if not pending:
                return
        if inst.comm_type == _BROADCAST and self._replayed(inst):
            for rank, request, on_done, arg, _t in pending:
                work = self._new_work(rank, inst, request, on_done, arg)
                work.chunks_left = 1
                self._fly(work)
                self.queue.schedule(float(request.duration_ns), self._replay_done, work)
            return
        if self.symmetric_ok(inst, pending) and self.run_symmetric(inst, pending):
            return
        if groups is not None and not self._plain_flush and groups.try_run(inst, pending):
            return
        for rank, request, on_done, arg, _t in pending:
            if groups is not None:
                groups.check_idle(rank, self.queue.now, request.node_id)
            busy = self._sym_busy.get(rank)
            if busy is not None and busy > self.queue.now:
                raise TraceError(
                    "starts a collective while a symmetric collective it belongs to is still running; "
                    "construct the runtime with symmetry=False for this workload",
                    rank=rank,
                    node_id=request.node_id,
                )
            self._start(inst, rank, request, on_done, arg)
        if inst.issued == len(inst.members) and not inst.pending:
            self._instances.pop(inst.key, None)

    def _start(
        self,
        inst: CollectiveInstance,
        rank: int,
        request: CollectiveRequest,
        on_done: Callable[[Any], None],
        arg: Any,
    ) -> None:
        work = self._new_work(rank, inst, request, on_done, arg)
        pri = self._priority(rank, request)
        if not inst.chunks or all(not c for c in inst.chunks):
            work.chunks_left = 1
            self._fly(work)
            self.queue.schedule(0.0, self._replay_done, work)
            return
        self._fly(work)
        assert inst.layout is not None
        chunks = inst.chunks
        if inst.phase_type in ROOTED_TYPES:
            # a rank skips the phases its ring takes no part in (collectives.rooted)
            chunks = [
                [s for s in c if not isinstance(s, RootedPhaseSpec) or s.takes_part(rank)]
                for c in chunks
            ]
        self.engine.start_rank(work, inst.layout, chunks, inst.tag_base, pri)

    def held_lists(self, inst: CollectiveInstance) -> tuple[list[int], list[str], list[list[float]]]:
        """:meth:`held_work`'s ``shared``: the algorithms of ``inst``'s members' records, and
        bytes and spans that stand until group replay writes each member's own."""
        return self._no_bytes, self._algorithms_of(inst), self._no_spans

    def held_work(self, inst: CollectiveInstance, entry: tuple[Any, ...], shared: tuple[list[int], list[str], list[list[float]]]) -> RankWork:
        """:meth:`_start` of a member that group replay holds (``symmetry/group_replay.py``;
        ``entry``: its request as ``inst.pending`` keeps it): its priority taken, its record
        (lists ``shared``: :meth:`held_lists`) and work in flight, nothing running yet."""
        rank, request, on_done, arg, _t = entry
        self._priority(rank, request)
        work = self._new_work(rank, inst, request, on_done, arg, shared=shared)
        self._fly(work)
        return work

    def _algorithms_of(self, inst: CollectiveInstance) -> list[str]:
        """:meth:`_algorithms`, a new list each time, computed once per planned chunk list
        (plans are reused and never mutated; a replayed broadcast has no layout)."""
        if inst.layout is None:
            return self._algorithms(inst)
        layout, chunks = inst.layout, inst.chunks
        key = (id(layout), id(chunks))
        known = self._algorithm_names.get(key)
        if known is None or known[0] is not layout or known[1] is not chunks:
            known = self._algorithm_names[key] = (layout, chunks, self._algorithms(inst))
        return list(known[2])

    @staticmethod
    def _algorithms(inst: CollectiveInstance) -> list[str]:
        """Per logical dimension, the algorithm the collective's phases run there."""
        if inst.layout is None:
            return ["replay"] if inst.comm_type == _BROADCAST else []
        names = [""] * len(inst.layout.dims)
        for chunk in inst.chunks:
            for spec in chunk:
                names[spec.ldim] = spec.algo.name
        return names

    def _replayed(self, inst: CollectiveInstance) -> bool:
        """A broadcast replayed from its duration (ASTRA-sim's way; ``SystemSpec.broadcast``)."""
        return inst.comm_type == _BROADCAST and self.system.broadcast == "replay"

    def _replay_done(self, work: RankWork) -> None:
        work.chunks_left = 0
        work.record.end_ns = self.queue.now
        self._rank_done(work)

    def _fly(self, work: RankWork) -> None:
        """``work`` is in flight (``_in_flight``, and its rank's count in ``_flying``)."""
        rank = work.rank
        self._in_flight[(rank, id(work))] = work
        flying = self._flying
        flying[rank] = flying.get(rank, 0) + 1

    def _rank_done(self, work: RankWork) -> None:
        rank = work.rank
        if self._in_flight.pop((rank, id(work)), None) is not None:
            flying = self._flying
            left = flying[rank] - 1
            if left:
                flying[rank] = left
            else:
                del flying[rank]
        work.on_done(work.arg)

    # -- symmetry ----------------------------------------------------------------------------
    def symmetric_ok(self, inst: CollectiveInstance, pending: list[Any]) -> bool:
        if not (self.symmetry and self._symmetric_backend and inst.same_tick):
            return False
        if len(pending) != len(inst.members) or inst.issued != len(inst.members):
            return False
        layout = inst.layout
        if layout is None or layout.fast or not inst.chunks or inst.phase_type in ROOTED_TYPES:
            return False
        if self._in_flight or self.engine.active_ranks:
            return False
        if any(t > self.queue.now for t in self._sym_busy.values()):
            return False
        return all(spec.algo.kind not in ASYMMETRIC_KINDS for chunk in inst.chunks for spec in chunk)

    def members_idle(self, members: tuple[int, ...], now: float, busy: dict[int, float] | None = None) -> bool:
        """Whether no member has other collective work at ``now``: no stream in its dimension
        queues, no busy injection port, no unfinished record, no symmetric collective running,
        nor one of ``busy`` (member -> end ns) (what a group-symmetric representative needs,
        ``symmetry/group.py``)."""
        engine = self.engine
        if engine.active_ranks:
            ranks = engine.ranks
            for m in members:
                rs = ranks.get(m)
                if rs is not None and rs.active:
                    return False
        sym_busy = self._sym_busy
        if sym_busy:
            get = sym_busy.get
            for m in members:
                if get(m, -1.0) > now:
                    return False
        if busy:
            get = busy.get
            for m in members:
                if get(m, -1.0) > now:
                    return False
        inj = engine.injection
        if inj is not None and not inj.all_idle(members, now):
            return False
        flying = self._flying
        if flying:
            for m in members:
                if m in flying:
                    return False
        return True

    @property
    def symmetric_refusals(self) -> list[str]:
        """Why collectives the symmetric runner was offered ran rank by rank."""
        return [] if self._symmetric is None else self._symmetric.refusals

    def run_symmetric(self, inst: CollectiveInstance, pending: list[Any]) -> bool:
        """Simulate one representative (``symmetry.collective.SymmetricRunner``); every member finishes
        at its time. False when the collective turns out not to be symmetric on this backend
        (the caller then runs it rank by rank)."""
        assert inst.layout is not None
        outcome = self.symmetric_runner().run(inst.layout, inst.chunks, inst.tag_base, self.queue.now)
        if outcome is None:
            return False
        self.finish_symmetric(inst, pending, outcome, self._sym_busy)
        return True

    def finish_symmetric(
        self, inst: CollectiveInstance, pending: list[Any], outcome: SymmetricOutcome, busy: dict[int, float]
    ) -> None:
        """Every member finishes at the representative's time with its bytes and spans."""
        self.queue.events_processed += outcome.events
        self.finish_members(inst, pending, outcome.end_ns, outcome.dim_bytes, [[a, b] for a, b in outcome.chunk_spans], busy)

    def finish_members(
        self,
        inst: CollectiveInstance,
        pending: list[Any],
        end: float,
        dim_bytes_of_rep: tuple[int, ...],
        spans: list[list[float]],
        busy: dict[int, float] | None,
    ) -> None:
        """:meth:`finish_symmetric` of a representative that ended at ``end`` (ns) having sent
        ``dim_bytes_of_rep`` per dimension, its chunks' [start, end] ``spans`` (lists the
        records keep, shared by every member). Each member of ``pending`` is busy until
        ``end`` in ``busy`` (None: the caller has done that)."""
        if busy is not None:
            for entry in pending:
                busy[entry[0]] = end
        self.symmetric_runs += 1
        queue = self.queue
        works = []
        mirrors = self._mirror_ranks
        dim_bytes, algorithms = list(dim_bytes_of_rep), self._algorithms_of(inst)
        # _priority, _new_work and _fly inlined (the per-collective path): the same records,
        # works and counters
        policy, engine = self._policy, self.engine
        ranks, now = engine.ranks, queue.now
        comm_type, gname, nchunks, group_size = inst.comm_type, inst.key[0], len(inst.chunks), len(inst.members)
        in_flight, flying, records, whats = self._in_flight, self._flying, self.records, self._whats
        for rank, request, on_done, arg, _t in pending:
            if rank in mirrors:  # it runs nothing and reports its representative's times
                continue
            if policy != "EXPLICIT":
                rs = ranks.get(rank) or engine.rank_state(rank)
                rs.priority += 1 if policy == "LIFO" else -1
            size = request.size
            record = CollectiveRecord(
                rank, request.node_id, comm_type, int(size), gname, now, end, dim_bytes, nchunks, algorithms, spans, group_size
            )
            records.append(record)
            what = whats.get((comm_type, size))
            if what is None:
                what = whats[(comm_type, size)] = f"its {_NAMES[comm_type]} of {size} B (chunks still running)"
            work = RankWork(rank, nchunks, on_done, arg, record, what)
            in_flight[(rank, id(work))] = work
            flying[rank] = flying.get(rank, 0) + 1
            works.append(work)
        self._instances.pop(inst.key, None)
        if len(works) == 1:  # one event either way: the representative's own work (mirrors)
            queue.schedule_at(end, self._symmetric_done_one, works[0])
        else:
            queue.schedule_at(end, self._symmetric_done, works)

    def symmetric_runner(self) -> SymmetricRunner:
        if self._symmetric is None:
            self._symmetric = SymmetricRunner(
                self.network,
                self.topology,
                self.engine_options,
                injection=self._new_injection,
                strict=self.symmetry == "strict",
            )
        return self._symmetric

    def _symmetric_done(self, works: list[RankWork]) -> None:
        for work in works:
            self._symmetric_done_one(work)

    def _symmetric_done_one(self, work: RankWork) -> None:
        work.chunks_left = 0
        self._rank_done(work)

    def _predict(self, layout: LogicalLayout, plan: list[list[PhaseSpec]]) -> float:
        return themis_guard.predict_finish_ns(
            self.network, self.topology, layout, plan, self.engine_options, self._new_injection()
        )

    @property
    def group_replays(self) -> int:
        """Group collectives answered from a private run of their group
        (``symmetry/group_replay.py``)."""
        return 0 if self._replay is None else self._replay.replays

    @property
    def shift_replays(self) -> int:
        """Symmetric collectives answered by the default mode's shift-exact memo
        (``symmetry/shift.py``) instead of being simulated."""
        return 0 if self._symmetric is None else self._symmetric.shift_replays

    @property
    def symmetric_ties(self) -> int:
        """Symmetric runs that met an order-dependent same-tick tie (``symmetry/collective.py``); with
        ``symmetry="strict"`` those run rank by rank instead."""
        return 0 if self._symmetric is None else self._symmetric.tie_runs

    def _new_injection(self) -> InjectionPorts | None:
        return self.network.injection_ports()
