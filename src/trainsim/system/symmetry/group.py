"""Symmetric communicator-group collectives: one representative member simulated for the whole
group (DESIGN.md, "Speed": symmetry first). Used by ``collective_runtime`` beside its
whole-machine symmetric path (``symmetry/collective.py``), on backends of the ``pairwise`` symmetry class
only (``network/protocol.py``: the analytical one).

A communicator group smaller than the machine runs one flat "Local" ring over its members in
the order the group lists them (``collectives.logical``). Its members are equivalent when, for
every offset o in that order, the message from member i to member i + o looks the same for
every i: the same ``MultiDimTopology.shape`` (``topology/multidim.py``, the one path rule: the
dimensions it crosses - the first differing one in ASTRA-sim's mode, every differing one in the
default mode - and the offset class in each), so the same hops in each crossed dimension (the
backend's delay is the same: two messages with the same bottleneck dimension but different
latency sums have different shapes), the same bottleneck dimension and the same
injection-port class there (Switch: the uplink; Ring: the direction; FullyConnected / Mesh: the
peer's relative coordinate, so two offsets share a port on one member exactly when they share it
on every member). With halving-doubling (a member talks to i + o or
i - o depending on its index) the offsets o and -o must look the same too. That table of
offsets (:func:`_signature`) decides; an aligned group (the ranks of one network dimension, in
coordinate order) always passes, and a Switch / FullyConnected group in any order does.

Then, when every member issues the collective at the same tick and none of them has other
collective work (streams in its dimension queues, an unfinished record, a busy injection port,
a running group-symmetric collective), the members cannot meet any other traffic on such a
backend (a message's delay depends on its two ends only; point-to-point sends bypass the
collective engine), and each behaves as the representative: ``SymmetricRunner`` simulates
member 0 of the first group seen with the same offset table (an isomorphic group gives the
same times and bytes, so the compatibility mode's memos serve every such group), and every
member finishes at its time with the same bytes per dimension and chunk spans.

If a member issues another collective while its group-symmetric one still runs (the two would
share its dimension queues rank by rank), :class:`GroupSymmetryConflict` ends the run; the
caller (``api.simulate``) runs the step again without group symmetry. Times in ns.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from trainsim.collectives import ASYMMETRIC_KINDS, HALVING_DOUBLING, ROOTED_TYPES, LogicalLayout
from trainsim.network.protocol import PAIRWISE

if TYPE_CHECKING:
    from trainsim.system.collective_runtime import CollectiveInstance, CollectiveRuntime


class GroupSymmetryConflict(Exception):
    """A member issued a collective while its group-symmetric one was running (internal:
    ``api.simulate`` reruns without group symmetry)."""


Shape = tuple[tuple[int, int], ...]  # MultiDimTopology.shape of one message
Signature = tuple[Shape, ...]


class GroupSymmetry:
    """The group-symmetric path of one collective runtime."""

    def __init__(self, runtime: CollectiveRuntime) -> None:
        self.rt = runtime
        net = runtime.network
        self.enabled = bool(runtime.symmetry) and net.capabilities.symmetry == PAIRWISE and net.topology is not None
        self.busy: dict[int, float] = {}  # member -> end ns of its group-symmetric collective
        self.runs = 0
        self._signatures: dict[tuple[tuple[int, ...], bool], Signature | None] = {}
        # (phase type, offset table) -> the layout of the first group with that table
        self._canonical: dict[tuple[int, Signature], LogicalLayout] = {}
        # id(chunks) -> (chunks, whether an algorithm kind is asymmetric, whether one is halving-doubling)
        self._kinds: dict[int, tuple[Any, bool, bool]] = {}
        # (id(layout), phase type, halving-doubling) -> (layout, its canonical layout; None when
        # the group is not symmetric)
        self._canon_of: dict[tuple[int, int, bool], tuple[LogicalLayout, LogicalLayout | None]] = {}
        # (id(layout), id(chunks), phase type) -> (layout, chunks, the canonical layout or None,
        # its representative, the runner's key of its plan or -1): once per plan
        self._entries: dict[tuple[int, int, int], tuple[Any, Any, LogicalLayout | None, int, int]] = {}

    def check_idle(self, rank: int, now: float, node_id: int) -> None:
        end = self.busy.get(rank)
        if end is not None and end > now:
            raise GroupSymmetryConflict(
                f"rank {rank} starts a collective (node {node_id}) while its group-symmetric one runs until {end} ns"
            )

    # -- the offset table --------------------------------------------------------------------
    def _signature(self, members: tuple[int, ...], halving: bool) -> Signature | None:
        key = (members, halving)
        if key in self._signatures:
            return self._signatures[key]
        topo = self.rt.topology
        n = len(members)
        table: list[Shape] = []
        ok = True
        ranks = np.asarray(members, dtype=np.int64)
        for o in range(1, n):
            # every member's message to the member o places on: one shape (compared as
            # shape classes, a row per member, instead of n shape tuples)
            classes = topo.shape_classes(ranks, np.roll(ranks, -o))
            if not (classes == classes[0]).all():
                ok = False
                break
            table.append(topo.shape(members[0], members[o]))
        if ok and halving:
            ok = all(table[o - 1] == table[n - o - 1] for o in range(1, n))
        out = tuple(table) if ok else None
        self._signatures[key] = out
        return out

    # -- the path ----------------------------------------------------------------------------
    def try_run(self, inst: CollectiveInstance, pending: list[Any]) -> bool:
        """Run ``inst`` by a representative member if it qualifies (module docstring); False
        leaves it to the caller (rank by rank)."""
        if len(pending) != len(inst.members):
            return False
        entry = self._qualified(inst)
        if entry is None:
            return False
        rt = self.rt
        now = rt.queue.now
        runner = rt._symmetric or rt.symmetric_runner()
        replayed = runner.replay(entry[4], now)
        if replayed is not None:  # a memo's answer: run's outcome, in the records' form
            self.runs += 1
            rt.finish_members(inst, pending, replayed[0], replayed[1], replayed[2], self.busy)
            return True
        outcome = runner.run(entry[2], inst.chunks, inst.tag_base, now, rank=entry[3])
        if outcome is None:
            return False
        self.runs += 1
        rt.finish_symmetric(inst, pending, outcome, self.busy)
        return True

    def replayed(self, inst: CollectiveInstance) -> tuple[float, tuple[int, ...], list[list[float]]] | None:
        """A memo's answer for ``inst`` (every member issued it now) when it qualifies for a
        representative and the runner has one (``SymmetricRunner.replay``); None otherwise,
        having changed nothing but caches (the caller then runs :meth:`try_run`'s way)."""
        entry = self._qualified(inst)
        if entry is None:
            return None
        rt = self.rt
        return (rt._symmetric or rt.symmetric_runner()).replay(entry[4], rt.queue.now)

    def replay_key(self, inst: CollectiveInstance) -> int | None:
        """The runner's key of ``inst``'s plan once :meth:`replayed` has answered for it (the
        plan qualifies whenever its members are idle): :meth:`replay_idle` takes it."""
        entry = self._entries.get((id(inst.layout), id(inst.chunks), inst.phase_type))
        return None if entry is None or entry[2] is None or entry[4] < 0 else entry[4]

    def replay_idle(self, key: int, members: tuple[int, ...], now: float) -> tuple[float, tuple[int, ...], list[list[float]]] | None:
        """:meth:`replayed` for a plan of :meth:`replay_key` ``key`` issued now by every one of
        ``members``: what :meth:`_qualified` asks anew each time (the members idle), then the
        memo's answer."""
        rt = self.rt
        if not rt.members_idle(members, now, self.busy):
            return None
        return (rt._symmetric or rt.symmetric_runner()).replay(key, now)

    def _qualified(self, inst: CollectiveInstance) -> tuple[Any, Any, Any, int, int] | None:
        """(layout, chunks, the canonical layout, its representative, the runner's key of its
        plan) when ``inst``, issued by every member, may run by a representative now (module
        docstring); else None."""
        layout = inst.layout
        chunks = inst.chunks
        if not (self.enabled and inst.same_tick and layout is not None and layout.fast and chunks):
            return None
        members = inst.members
        if inst.issued != len(members):
            return None
        rt = self.rt
        now = rt.queue.now
        # what the plan decides (the canonical layout and its representative, or None), once
        # per (layout, chunk list, type): plans are reused
        ekey = (id(layout), id(chunks), inst.phase_type)
        entry = self._entries.get(ekey)
        if entry is None or entry[0] is not layout or entry[1] is not chunks:
            if not self._may_run(inst):
                self._entries[ekey] = (layout, chunks, None, -1, -1)
                return None
            # the first group seen with an offset table becomes its canonical layout once it
            # passes members_idle (as before this cache): test that first
            if not rt.members_idle(members, now, self.busy):
                return None
            entry = self._entries[ekey] = (layout, chunks, *self._canonical_of(inst), -1)
        elif entry[2] is None or not rt.members_idle(members, now, self.busy):
            return None
        canon = entry[2]
        if canon is None:
            return None
        if entry[4] < 0:  # the memos' number of the representative's plan, once per plan
            runner = rt._symmetric or rt.symmetric_runner()
            entry = self._entries[ekey] = (*entry[:4], runner.key(canon, chunks))
        return entry

    def _may_run(self, inst: CollectiveInstance) -> bool:
        """Whether ``inst``'s plan may run by a representative: no rooted type, no asymmetric
        algorithm (a function of the plan)."""
        if inst.phase_type in ROOTED_TYPES:
            return False
        return not self._kinds_of(inst.chunks)[1]

    def _kinds_of(self, chunks: Any) -> tuple[Any, bool, bool]:
        """(chunks, whether an algorithm kind is asymmetric, whether one is halving-doubling)."""
        known = self._kinds.get(id(chunks))
        if known is None or known[0] is not chunks:  # planned chunk lists are reused
            kinds = {spec.algo.kind for chunk in chunks for spec in chunk}
            known = self._kinds[id(chunks)] = (chunks, bool(kinds & ASYMMETRIC_KINDS), HALVING_DOUBLING in kinds)
        return known

    def _canonical_of(self, inst: CollectiveInstance) -> tuple[LogicalLayout | None, int]:
        """The layout the representative of a plan that :meth:`_may_run` runs (the first
        group seen with the same offset table) and its representative, or (None, -1) when the
        members do not see every offset alike."""
        layout = inst.layout
        assert layout is not None
        halving = self._kinds_of(inst.chunks)[2]
        ckey = (id(layout), inst.phase_type, halving)
        seen = self._canon_of.get(ckey)
        if seen is None or seen[0] is not layout:  # a layout is its group's, for the run
            sig = self._signature(inst.members, halving)
            found = None if sig is None else self._canonical.setdefault((inst.phase_type, sig), layout)
            seen = self._canon_of[ckey] = (layout, found)
        canon = seen[1]
        return (None, -1) if canon is None else (canon, canon.dims[0].members[0])
