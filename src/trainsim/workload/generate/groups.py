"""Rank layout and communicator groups of a parallel strategy (DESIGN.md, workload layer).

Ranks are numbered in Megatron-LM's order (``RankGenerator``, default ``tp-cp-ep-dp-pp``:
tensor parallel innermost, then context and expert, data parallel, pipeline outermost); the
order is configurable. Each rank has coordinates ``tp, cp, ep, edp, pp`` where ``ep`` and
``edp`` together form its data-parallel index ``dp = ep + EP x edp``.

Groups per role (member lists ordered by the varying coordinate):
``tp`` (same cp, ep, edp, pp), ``cp`` (same tp, ep, edp, pp), ``dp`` (same tp, pp: the ranks
holding the same weights, data- x context-parallel, Megatron's ``dp-cp`` group over which
gradients are reduced), ``ep`` (same tp, cp, edp, pp),
``edp`` (ranks holding the same experts: same ep, cp, pp; experts are not TP-sharded), ``emb``
(first and last pipeline stage, for the tied-embedding gradient all-reduce).

Groups get ASTRA-sim communicator-group ids (decimal strings from "1"); a group of every rank
is named ``""`` (ASTRA-sim: all ranks). :meth:`RankLayout.involved_dims` maps a group onto the
network dimensions it spans when its members are exactly the ranks that vary over whole
dimensions (ranks vary fastest in dimension 0, as in ASTRA-sim).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from trainsim.errors import ConfigError
from trainsim.workload.generate.parallel import Parallelism

ROLES = ("tp", "dp", "ep", "edp", "emb", "cp")
_COORDS = ("tp", "cp", "ep", "edp", "pp")
# coordinates that stay fixed within a group of each role
_FIXED = {
    "tp": ("cp", "ep", "edp", "pp"),
    "dp": ("tp", "pp"),  # with CP: the dp x cp ranks of the same weights
    "cp": ("tp", "ep", "edp", "pp"),
    "ep": ("tp", "cp", "edp", "pp"),
    "edp": ("cp", "ep", "pp"),
    "emb": ("tp", "cp", "ep", "edp"),
}


class RankLayout:
    """Coordinates of every rank and the communicator groups of every role."""

    def __init__(self, par: Parallelism, *, tied_embeddings: bool = True, expert_groups: bool = False) -> None:
        self.par = par
        sizes = {"tp": par.tp, "cp": par.cp, "ep": par.ep, "edp": par.dp // par.ep, "pp": par.pp}
        self.sizes = sizes
        world = par.world
        ranks = np.arange(world, dtype=np.int64)
        coords: dict[str, np.ndarray] = {}
        stride = 1
        for token in par.order_tokens:  # innermost first; the "dp" slot holds edp
            name = "edp" if token == "dp" else token
            coords[name] = (ranks // stride) % sizes[name]
            stride *= sizes[name]
        self.coords = coords
        self.world = world
        self.dp_index = coords["ep"] + par.ep * coords["edp"]
        # rank of (tp, cp, ep, edp, pp) -> rank id, for neighbours
        key = np.zeros(world, dtype=np.int64)
        mult = 1
        for name in _COORDS:
            key += coords[name] * mult
            mult *= sizes[name]
        self._rank_of_key = np.empty(world, dtype=np.int64)
        self._rank_of_key[key] = ranks
        self._key_mult = {}
        mult = 1
        for name in _COORDS:
            self._key_mult[name] = mult
            mult *= sizes[name]
        self._key = key
        self._spanned: dict[tuple[str, int, tuple[int, ...]], tuple[bool, ...] | None] = {}  # involved_dims, per group
        self.groups: dict[str, dict[int, tuple[int, ...]]] = {}  # role -> group index -> members
        self.group_of: dict[str, np.ndarray] = {}  # role -> per-rank group index (-1: none)
        wanted = ["tp", "dp"]
        if par.ep > 1 or expert_groups:
            wanted += ["ep", "edp"]
        if par.pp > 1 and tied_embeddings:
            wanted.append("emb")
        if par.cp > 1:
            wanted.append("cp")
        for role in wanted:
            self._make_groups(role)
        self._ids: dict[tuple[str, int], str] = {}
        next_id = 1
        for role in wanted:
            for gi, members in sorted(self.groups[role].items()):
                if len(members) == 1:
                    continue
                if len(members) == world:
                    self._ids[(role, gi)] = ""
                else:
                    self._ids[(role, gi)] = str(next_id)
                    next_id += 1

    def _make_groups(self, role: str) -> None:
        fixed = _FIXED[role]
        coords = self.coords
        gkey = np.zeros(self.world, dtype=np.int64)
        mult = 1
        for name in fixed:
            gkey += coords[name] * mult
            mult *= self.sizes[name]
        member_mask = np.ones(self.world, dtype=bool)
        if role == "emb":
            pp = coords["pp"]
            member_mask = (pp == 0) | (pp == self.sizes["pp"] - 1)
            gkey = gkey.copy()
        varying = [c for c in _COORDS if c not in fixed]
        sort_key = np.zeros(self.world, dtype=np.int64)
        mult = 1
        for name in varying if role != "dp" else ("cp", "ep", "edp"):
            sort_key += coords[name] * mult
            mult *= self.sizes[name]
        idx = np.flatnonzero(member_mask)
        order = np.lexsort((sort_key[idx], gkey[idx]))
        idx = idx[order]
        groups: dict[int, tuple[int, ...]] = {}
        keys = gkey[idx]
        splits = np.flatnonzero(np.diff(keys)) + 1
        for members in np.split(idx, splits):
            groups[int(gkey[members[0]])] = tuple(int(r) for r in members)
        group_of = np.full(self.world, -1, dtype=np.int64)
        group_of[member_mask] = gkey[member_mask]
        self.groups[role] = groups
        self.group_of[role] = group_of

    # -- queries ----------------------------------------------------------------------------

    def stage_of(self, rank: int) -> int:
        return int(self.coords["pp"][rank])

    def neighbour(self, rank: int, pp_step: int) -> int:
        """The rank at pipeline stage ``pp + pp_step`` (cyclic) with the same other coordinates."""
        pp = self.sizes["pp"]
        stage = int(self.coords["pp"][rank])
        key = int(self._key[rank]) + (((stage + pp_step) % pp) - stage) * self._key_mult["pp"]
        return int(self._rank_of_key[key])

    def group_size(self, role: str) -> int:
        groups = self.groups.get(role)
        if not groups:
            return 1
        return len(next(iter(groups.values())))

    def pg_name(self, role: str, rank: int) -> str | None:
        """Communicator-group id of ``rank``'s group of ``role`` (None: not a member)."""
        if role not in self.group_of:
            return None
        gi = int(self.group_of[role][rank])
        return None if gi < 0 else self._ids.get((role, gi))

    def comm_groups(self) -> dict[str, list[int]]:
        """ASTRA-sim communicator-group JSON: ``{"<id>": [ranks...]}`` (all-rank groups left out)."""
        out: dict[str, list[int]] = {}
        for (role, gi), gid in self._ids.items():
            if gid:
                out[gid] = list(self.groups[role][gi])
        return dict(sorted(out.items(), key=lambda kv: int(kv[0])))

    def group_roles(self) -> dict[str, str]:
        """Human names of the group ids: ``{"3": "tp[2]"}``."""
        out = {}
        for (role, gi), gid in self._ids.items():
            if gid:
                out[gid] = f"{role}[{gi}]"
        return out

    def involved_dims(self, role: str, rank: int, network_sizes: Sequence[int] | None) -> tuple[bool, ...] | None:
        """The network dimensions spanned by ``rank``'s group of ``role``, when the group is
        exactly the ranks varying over whole dimensions; ``None`` otherwise."""
        if not network_sizes or role not in self.group_of:
            return None
        gi = int(self.group_of[role][rank])
        if gi < 0:
            return None
        key = (role, gi, tuple(network_sizes))
        if key not in self._spanned:  # (every member of a group asks: the same answer)
            self._spanned[key] = dims_spanned(self.groups[role][gi], network_sizes)
        return self._spanned[key]


def dims_spanned(members: Sequence[int], network_sizes: Sequence[int]) -> tuple[bool, ...] | None:
    """Which dimensions a set of ranks spans, if it is a full sub-grid of whole dimensions."""
    sizes = [int(s) for s in network_sizes]
    total = int(np.prod(sizes))
    arr = np.asarray(members, dtype=np.int64)
    if arr.size == 0 or arr.max() >= total:
        raise ConfigError(f"group {list(members)[:8]} does not fit a network of {total} NPUs", field="network")
    spanned = []
    stride = 1
    expected = 1
    for size in sizes:
        coord = (arr // stride) % size
        unique = np.unique(coord).size
        if unique == 1:
            spanned.append(False)
        elif unique == size:
            spanned.append(True)
            expected *= size
        else:
            return None
        stride *= size
    if expected != arr.size:
        return None
    return tuple(spanned)
