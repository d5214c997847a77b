"""The group path's per-collective shortcuts (``symmetry/group.py``, ``collective_runtime.py``:
a memo's answer taken by ``SymmetricRunner.replay`` in the records' form, plans and
representatives found once per plan, the checked group found by its identity, a group of a
rank and its mirrors alone flushed without its members' requests) give every
rank the result of the path without them and of rank by rank, bit for bit: a generated
training step with many micro-batches (so that almost every tensor-parallel all-reduce is a
memo's answer) written to Chakra files and read back, folded, in both modes."""

from __future__ import annotations

from dataclasses import astuple, replace

import pytest

from tests.system.test_equivalence import _platform
from trainsim.compute import OperatorTimer
from trainsim.system.api import simulate
from trainsim.system.symmetry.collective import SymmetricRunner
from trainsim.workload.chakra import read_workload, write_workload
from trainsim.workload.generate import Parallelism, generate
from trainsim.workload.models import get_model

SIZES = (4, 4)


@pytest.fixture(scope="module")
def step(tmp_path_factory):
    """TP 4 x PP 2 x DP 2 on [Switch 4, Switch 4], 8 micro-batches per replica, from files."""
    spec = replace(get_model("megatron-1.7b"), layers=4, seq=512)
    par = Parallelism(tp=4, pp=2, dp=2, micro_batch=1, global_batch=16, recompute="full")
    w = generate(spec, par, OperatorTimer("A100"), network_sizes=SIZES)
    folder = tmp_path_factory.mktemp("per_collective")
    write_workload(folder / "w", list(w.graphs))
    return w.platform(_platform(SIZES)), read_workload(folder / "w", par.world)


def _records(result):
    return sorted(astuple(r) for r in result.collectives)


def _assert_equal(a, b):
    assert a.makespan_s == b.makespan_s
    assert list(a.ranks) == list(b.ranks)
    for x, y in zip(a.timelines, b.timelines, strict=True):
        assert x.start_ns == y.start_ns and x.end_ns == y.end_ns
    assert _records(a) == _records(b)  # every field: times, bytes per dimension, algorithms, chunk spans


@pytest.mark.parametrize("compat", ["astra", "default"])
def test_shortcuts_equal_the_path_without_them_and_rank_by_rank(step, compat, monkeypatch):
    platform, graphs = step
    fast = simulate(platform, graphs, compat=compat)
    # folded in ASTRA-sim's mode; the default mode's injection ports keep every rank here
    # (``symmetry/partial.py``), each tensor-parallel group still run by one member
    assert ("equivalent ranks folded" in fast.info["symmetry"]) == (compat == "astra")
    if compat == "default":
        assert fast.info["shift_replays"] > 0
    with monkeypatch.context() as m:
        # every memo answer through SymmetricRunner.run, as before the shortcut
        m.setattr(SymmetricRunner, "replay", lambda self, key, start_ns: None)
        plain = simulate(platform, graphs, compat=compat)
    _assert_equal(fast, plain)
    _assert_equal(fast, simulate(platform, graphs, compat=compat, symmetry=False))


def test_mirrors_in_the_default_mode(step, monkeypatch):
    """The replica slice's shape (``symmetry/replica.py``): ranks that run no graph issue their
    representative's collectives (``simulate(mirrors=...)``), with the shift-exact memo."""
    from trainsim.system.symmetry.equivalence import find_mirrors
    from trainsim.workload.graph import GraphBuilder

    platform, graphs = step
    mirrors = find_mirrors(platform, graphs, compat_astra=True)
    assert mirrors
    empty = GraphBuilder(source="mirror").build()
    ran = [empty if any(r in ms for ms in mirrors.values()) else g for r, g in enumerate(graphs)]
    from trainsim.system.collective_runtime import CollectiveRuntime

    own = []
    real_flush_own = CollectiveRuntime._flush_own
    with monkeypatch.context() as m:  # count the groups of a rank and its mirrors alone
        m.setattr(CollectiveRuntime, "_flush_own", lambda self, token: own.append(1) or real_flush_own(self, token))
        fast = simulate(platform, ran, compat="default", mirrors=mirrors)
    assert fast.info["shift_replays"] > 0 and own
    monkeypatch.setattr(SymmetricRunner, "replay", lambda self, key, start_ns: None)
    _assert_equal(fast, simulate(platform, ran, compat="default", mirrors=mirrors))


def test_replay_is_runs_outcome(step):
    """``replay`` answers exactly when ``run`` would take its memo, with run's numbers (in
    ASTRA-sim's mode with group replay off: where it applies, it answers first)."""
    from trainsim.system.symmetry.group_replay import GroupReplay

    platform, graphs = step
    answers: list[tuple[float, tuple[int, ...], list[list[float]]]] = []
    outcomes = []
    real_replay, real_run = SymmetricRunner.replay, SymmetricRunner.run

    def replay(self, key, start_ns):
        got = real_replay(self, key, start_ns)
        if got is not None:
            answers.append(got)
        return got

    def run(self, layout, chunks, tag_base, start_ns, *, rank=0):
        out = real_run(self, layout, chunks, tag_base, start_ns, rank=rank)
        outcomes.append(out)
        return out

    with pytest.MonkeyPatch.context() as m:
        m.setattr(GroupReplay, "enabled", staticmethod(lambda _rt: False))
        m.setattr(SymmetricRunner, "replay", replay)
        simulate(platform, graphs, compat="astra")
        m.setattr(SymmetricRunner, "replay", lambda self, key, start_ns: None)
        m.setattr(SymmetricRunner, "run", run)
        simulate(platform, graphs, compat="astra")
    # the run without replay sees the replayed collectives (and the simulated ones) in order
    as_lists = [(o.end_ns, o.dim_bytes, [list(s) for s in o.chunk_spans]) for o in outcomes if o is not None]
    assert answers and len(as_lists) > len(answers)
    it = iter(as_lists)
    assert all(any(a == b for b in it) for a in answers)  # a subsequence, number for number


def test_a_group_named_again_with_another_tuple(step):
    """The checked group is found by its identity: an equal tuple under the same name (another
    caller's) takes the checked path and gives the same run."""
    from trainsim.engine import EventQueue
    from trainsim.network.analytical import AnalyticalNetwork
    from trainsim.system.collective_api import CollectiveRequest
    from trainsim.system.collective_runtime import CollectiveRuntime

    platform, _graphs = step
    ends = []
    for copies in (False, True):
        q = EventQueue()
        rt = CollectiveRuntime(platform, AnalyticalNetwork(platform.network, q), q, group_symmetry=True)
        group = (0, 1, 2, 3)
        for k in range(3):
            for r in group:
                g = tuple(list(group)) if copies else group
                rt.issue(CollectiveRequest(r, k, 0, 1 << 20, g, "tp", None), lambda _a: None)
            q.run()
        ends.append([astuple(rec) for rec in rt.records])
    assert ends[0] == ends[1] and len(ends[0]) == 12
