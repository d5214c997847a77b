"""Custom collective algorithms (``collectives/custom.py``, ``system/custom_collectives.py``):
a per-rank Chakra graph of SEND / RECV / COMP nodes runs as the collective. ASTRA-sim's own
example, a custom ring equal to the built-in ring to the ns, a custom tree timed by hand, and
bad graphs as one-line errors naming the file."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest

from trainsim.config.astra import load_astra_platform
from trainsim.config.types import CollectiveImpl, DimSpec, NetworkSpec, Platform, SystemSpec
from trainsim.enums import CommType, NodeType
from trainsim.errors import ConfigError, TraceError
from trainsim.system.api import load_inputs, simulate
from trainsim.system.build import build_endpoint
from trainsim.workload import GraphBuilder, write_workload
from trainsim.workload.diagnostics import TraceWarning

DATA = Path(__file__).parent / "data" / "astra_custom_collectives"
EXAMPLE = DATA / "custom_ring_allreduce_8npus_1MB" / "custom_allreduce"
AR = int(CommType.ALL_REDUCE)
BW = 50 * 2**30 / 1e9  # B/ns of ASTRA-sim's "50 GB/s"


def hop_ns(nbytes: int, hops: int = 1, latency: float = 500.0) -> int:
    """ASTRA-sim's unaware delay, trunc(hops x latency + bytes / bw) (semantics A1)."""
    return math.trunc(hops * latency + nbytes / BW)


def ring(npus: int) -> NetworkSpec:
    return NetworkSpec((DimSpec("Ring", npus, 50 * 2**30, 500.0),))


def platform(npus: int, *, custom: dict[str, str] | None = None, per_node: str | None = None, **system) -> Platform:
    impl = CollectiveImpl(custom=custom or {}, per_node_custom=per_node)
    return Platform(network=ring(npus), system=SystemSpec(implementations=impl, **system), compat="astra")


def write_custom(prefix: Path, programs: list[list[tuple]]) -> Path:
    """One rank file per program; a node is ("send", peer, bytes[, deps][, tag]),
    ("recv", peer, bytes[, deps][, tag]) or ("comp", micros[, deps]); ids are list positions."""
    graphs = []
    for rank, program in enumerate(programs):
        b = GraphBuilder(rank=rank)
        for i, (op, *args) in enumerate(program):
            if op == "comp":
                micros, deps = args[0], args[1] if len(args) > 1 else ()
                b.add(i, int(NodeType.COMP_NODE), f"c{i}", data_deps=deps, duration_s=micros * 1e-6)
                continue
            peer, nbytes = args[0], args[1]
            deps = args[2] if len(args) > 2 else ()
            tag = args[3] if len(args) > 3 else 0
            if op == "send":
                b.add(i, int(NodeType.COMM_SEND_NODE), f"s{i}", data_deps=deps, comm_dst=peer, comm_size=nbytes, comm_tag=tag)
            else:
                b.add(i, int(NodeType.COMM_RECV_NODE), f"r{i}", data_deps=deps, comm_src=peer, comm_size=nbytes, comm_tag=tag)
        graphs.append(b.build())
    write_workload(prefix, graphs)
    return prefix


def one_collective(npus: int, size: int, *, ctype: int = AR, node_id: int = 1) -> list:
    out = []
    for rank in range(npus):
        b = GraphBuilder(rank=rank)
        b.add(node_id, int(NodeType.COMM_COLL_NODE), "coll", comm_type=ctype, comm_size=size)
        out.append(b.build())
    return out


def finishes(result) -> list[int]:
    return [round(r.finish_s * 1e9) for r in result.ranks]


# -- ASTRA-sim's example ------------------------------------------------------------------


def test_astra_example_runs_its_graph_not_the_builtin_algorithm(tmp_path, monkeypatch):
    """ASTRA-sim's files unchanged, run from a folder laid out as ASTRA-sim's root (the system
    file's path is relative to it). Each rank: 14 SEND -> RECV steps of 131,072 B to its ring
    neighbour (2,941 ns each) and 7 COMP nodes of 7 us, in one chain; the workload's 1 MiB is
    not used (the graph's sizes are). ASTRA-sim prints 90,174 on every rank with both binaries."""
    root = tmp_path / "astra-sim"
    graphs = root / "examples/system/custom_collectives/custom_ring_allreduce_8npus_1MB"
    shutil.copytree(EXAMPLE.parent, graphs)
    monkeypatch.chdir(root)
    plat, wl = load_inputs(
        None,
        DATA / "all_reduce_8npus_1MB" / "all_reduce",
        network=DATA / "Ring_8npus.yml",
        system=DATA / "custom_collective.json",
        memory=DATA / "no_memory_expansion.json",
    )
    expected = 14 * hop_ns(131072) + 7 * 7000
    assert expected == 90_174
    for backend in ("congestion_unaware", "congestion_aware"):
        result = simulate(plat, wl, backend=backend)
        assert finishes(result) == [expected] * 8
        for rec in result.collectives:
            assert rec.algorithms == ["custom"] and rec.size == 1 << 20 and rec.chunks == 1
            assert rec.dim_bytes == [14 * 131072]
            assert (rec.start_ns, rec.end_ns) == (0.0, expected)


def test_relative_graph_path_is_found_beside_the_system_file(tmp_path):
    shutil.copytree(EXAMPLE.parent, tmp_path / "graphs")
    sysfile = tmp_path / "sys.json"
    sysfile.write_text(json.dumps({"all-reduce-implementation-custom": ["graphs/custom_allreduce"]}))
    plat = load_astra_platform(DATA / "Ring_8npus.yml", sysfile)
    result = simulate(plat, one_collective(8, 1 << 20))
    assert finishes(result) == [90_174] * 8


# -- equal to the built-in ring ------------------------------------------------------------


def custom_ring(prefix: Path, n: int, msg: int, e_us: int, red_us: int) -> Path:
    """ASTRA-sim's ring all-reduce as a graph: an insertion (E) before the first send, and one
    after every receive, the first n-1 of them with a reduction (semantics B1, B4, D1)."""
    programs = []
    for rank in range(n):
        nodes: list[tuple] = [("comp", e_us)]
        for step in range(2 * (n - 1)):
            last = len(nodes) - 1
            nodes.append(("send", (rank + 1) % n, msg, (last,)))
            nodes.append(("recv", (rank - 1) % n, msg, (last + 1,)))
            nodes.append(("comp", e_us + (red_us if step < n - 1 else 0), (last + 2,)))
        programs.append(nodes)
    return write_custom(prefix, programs)


@pytest.mark.parametrize("compat", ["astra", "default"])
@pytest.mark.parametrize("backend", ["congestion_unaware", "congestion_aware"])
def test_custom_ring_equals_the_builtin_ring_to_the_ns(tmp_path, compat, backend):
    n, size = 8, 8000
    msg = size // n
    # 1 us endpoint delay and 3 us of reduction per 1,000 B message: whole microseconds, as a
    # graph's COMP nodes count them
    system = dict(endpoint_delay_ns=1000.0, local_mem_bw=1e9, preferred_dataset_splits=1)
    builtin = Platform(network=ring(n), system=SystemSpec(**system), compat=compat)
    red = build_endpoint(builtin, compat == "astra").reduction_ns(0, 0.0, msg)
    assert red == 3000
    prefix = custom_ring(tmp_path / "ring", n, msg, 1, 3)
    custom = platform(n, custom={"all_reduce": str(prefix)}, **system)
    a = simulate(builtin, one_collective(n, size), backend=backend, compat=compat)
    b = simulate(custom, one_collective(n, size), backend=backend, compat=compat)
    assert [r.finish_s for r in b.ranks] == [r.finish_s for r in a.ranks]
    assert b.collectives[0].algorithms == ["custom"] and a.collectives[0].algorithms == ["ring"]
    assert b.collectives[0].dim_bytes == a.collectives[0].dim_bytes == [14 * msg]
    if compat == "astra":
        # closed form D1: E + S (net + E) + R red, with S = 14 sends and R = 7 reductions;
        # ASTRA-sim prints 43,252 for both, with both binaries
        assert finishes(a) == [1000 + 14 * (hop_ns(msg) + 1000) + 7 * 3000] * n


# -- a custom tree: it differs as it should -----------------------------------------------

D = 1 << 20
TREE = [
    # root 0: both children's data, one 2 us reduction, then the result down to both
    [("recv", 1, D), ("recv", 2, D), ("comp", 2, (0, 1)), ("send", 2, D, (2,)), ("send", 1, D, (2,))],
    [("send", 0, D), ("recv", 0, D, (0,))],  # leaf
    # inner node 2: its child's data, 1 us reduction, up to 0; the result down to 3
    [("recv", 3, D), ("comp", 1, (0,)), ("send", 0, D, (1,)), ("recv", 0, D, (2,)), ("send", 3, D, (3,))],
    [("send", 2, D), ("recv", 2, D, (0,))],  # leaf
]


def test_custom_tree_times_by_hand_on_the_unaware_backend(tmp_path):
    """Ring 4: 1 and 3 are one hop from 0 and 2, 0 and 2 are two hops apart (A2). ASTRA-sim
    prints the same (ASTRA_RUNS below)."""
    prefix = write_custom(tmp_path / "tree", TREE)
    plat = platform(4, custom={"all_reduce": str(prefix)})
    result = simulate(plat, one_collective(4, D))
    one, two = hop_ns(D), hop_ns(D, hops=2)
    up = one + 1000 + two  # 3 -> 2, reduce, 2 -> 0
    root_done = up + 2000  # 1's data arrived long before
    expected = [root_done + two, root_done + one, root_done + two + one, root_done + two + one]
    assert expected == [64_093, 63_593, 84_124, 84_124]
    assert finishes(result) == expected
    assert [r.dim_bytes for r in result.collectives] == [[2 * D], [D], [2 * D], [D]]
    builtin = simulate(Platform(network=ring(4), system=SystemSpec(), compat="astra"), one_collective(4, D))
    assert finishes(builtin) != expected


def test_custom_tree_on_the_congestion_aware_backend_shares_links(tmp_path):
    """Store and forward per link (G5); a distance-2 tie goes clockwise (G6); the root's two
    sends leave in node-id order and share its link 0 -> 1 (G9): the second waits for the
    first's serialization. ASTRA-sim prints the same."""
    prefix = write_custom(tmp_path / "tree", TREE)
    plat = platform(4, custom={"all_reduce": str(prefix)})
    result = simulate(plat, one_collective(4, D), backend="congestion_aware")
    link, ser = hop_ns(D), math.trunc(D / BW)
    root_sends = link + 1000 + 2 * link + 2000  # 3 -> 2, reduce, 2 -> 3 -> 0, reduce
    to_2 = root_sends + 2 * link  # 0 -> 1 -> 2
    to_1 = root_sends + ser + link  # behind it on 0 -> 1
    assert finishes(result) == [to_2, to_1, to_2 + link, to_2 + link]


# -- ASTRA-sim's own numbers ----------------------------------------------------------------
# Printed by ASTRA-sim 518bd51 built from source (both analytical binaries, the submodules and
# the two local fixes of reference-results/README.md), on the inputs these tests build: Ring 4
# at 50 GB/s and 500 ns, endpoint-delay 10, local-mem-bw 50, preferred-dataset-splits 1 (with
# more, ASTRA-sim never finishes a custom collective: test_more_than_one_chunk_warns), per rank
# (unaware, aware). The tree itself (TREE) prints the hand-computed times of the two tests above.


def _tree_with(edit) -> list:
    tree = [list(p) for p in TREE]
    edit(tree)
    return tree


def _two_collectives(rank: int, b: GraphBuilder) -> None:
    """Ranks start 7 us apart in reverse order, then run two all-reduces with work between."""
    b.add(1, int(NodeType.COMP_NODE), "skew", duration_s=(3 - rank) * 7e-6)
    b.add(2, int(NodeType.COMM_COLL_NODE), "ar1", comm_type=AR, comm_size=D, data_deps=(1,))
    b.add(3, int(NodeType.COMP_NODE), "mid", duration_s=(rank + 1) * 5e-6, data_deps=(2,))
    b.add(4, int(NodeType.COMM_COLL_NODE), "ar2", comm_type=AR, comm_size=D, data_deps=(3,))


def _builtin_then_custom(rank: int, b: GraphBuilder) -> None:
    b.add(1, int(NodeType.COMM_COLL_NODE), "builtin", comm_type=AR, comm_size=D)
    b.add(2, int(NodeType.COMM_COLL_NODE), "custom", comm_type=AR, comm_size=D, data_deps=(1,))


ASTRA_RUNS = {
    # a COMP of 0 us takes 1 ns (CustomAlgorithm: runtime 0 -> 1)
    "inner node's reduction of 0 us": (
        _tree_with(lambda t: t[2].__setitem__(1, ("comp", 0, (0,)))), None, False,
        [63_094, 62_594, 83_125, 83_125], [102_156, 101_656, 122_187, 122_187],
    ),
    "root's reduction of 0 us": (
        _tree_with(lambda t: t[0].__setitem__(2, ("comp", 0, (0, 1)))), None, False,
        [62_094, 61_594, 82_125, 82_125], [101_156, 100_656, 121_187, 121_187],
    ),
    # early messages wait for their receive; each collective its own messages
    "skewed ranks, two collectives": (
        TREE, _two_collectives, False,
        [168_218, 167_718, 188_249, 188_249], [246_342, 245_842, 266_373, 266_373],
    ),
    # per-node-custom-implementation {2: TREE}: node 1 runs the built-in ring
    "built-in ring, then node 2's graph": (
        TREE, _builtin_then_custom, True,
        [143_633, 143_133, 163_664, 163_664], [182_695, 182_195, 202_726, 202_726],
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(ASTRA_RUNS))
def test_matches_astra_sim_runs(tmp_path, case):
    program, workload, per_node, unaware, aware = ASTRA_RUNS[case]
    prefix = str(write_custom(tmp_path / "g", program))
    options = dict(endpoint_delay_ns=10.0, local_mem_bw=50e9, preferred_dataset_splits=1)
    if per_node:
        table = tmp_path / "per_node.yml"
        table.write_text(f"2: {prefix}\n")
        plat = platform(4, per_node=str(table), **options)
    else:
        plat = platform(4, custom={"all_reduce": prefix}, **options)
    graphs = one_collective(4, D)
    if workload is not None:
        graphs = []
        for rank in range(4):
            b = GraphBuilder(rank=rank)
            workload(rank, b)
            graphs.append(b.build())
    assert finishes(simulate(plat, graphs)) == unaware
    assert finishes(simulate(plat, graphs, backend="congestion_aware")) == aware


def test_more_than_one_chunk_warns_that_astra_sim_never_finishes(tmp_path):
    prefix = write_custom(tmp_path / "tree", TREE)
    plat = platform(4, custom={"all_reduce": str(prefix)}, preferred_dataset_splits=4)
    with pytest.warns(TraceWarning, match="with preferred-dataset-splits 4, ASTRA-sim waits for 4 chunks"):
        result = simulate(plat, one_collective(4, D))
    assert finishes(result) == [64_093, 63_593, 84_124, 84_124]  # the graph runs once


# -- groups and per-node graphs ------------------------------------------------------------


def test_custom_collective_on_a_group_maps_graph_ranks_to_members(tmp_path):
    from dataclasses import replace

    prefix = write_custom(tmp_path / "tree", TREE)
    plat = replace(platform(8, custom={"all_reduce": str(prefix)}), comm_groups={"g": (4, 5, 6, 7)})
    result = simulate(plat, group_of_8((4, 5, 6, 7)))
    # graph rank g is member 4 + g: the same distances as on Ring 4 minus the wrap-around
    # (4 and 6 are two hops apart, 5 and 7 one hop from them)
    assert finishes(result)[4:] == [64_093, 63_593, 84_124, 84_124]


def test_compat_mode_runs_the_rank_file_of_the_sorted_position():
    """ASTRA-sim opens ``<prefix>.<pos>.et`` with pos the position among the sorted members,
    and sends to the listed members (CommunicatorGroup); trainsim's own mode uses the listed
    position for both."""
    from trainsim.collectives.custom import CustomGraphs, CustomRankGraph
    from trainsim.system.planner import CollectivePlanner
    from trainsim.topology import MultiDimTopology

    topo = MultiDimTopology(["Ring"], [8])
    rank = CustomRankGraph((2,), (-1,), (0,), (-1,), (1000.0,), (0,), ((),), ((),))
    graphs = CustomGraphs("g", (rank,) * 4)
    members = (6, 4, 5, 7)
    for compat, file_of in ((True, (2, 0, 1, 3)), (False, (0, 1, 2, 3))):
        planner = CollectivePlanner(SystemSpec(), topo, [1.0], compat_astra=compat)
        planner.custom.by_type[AR] = graphs
        plan = planner.plan(AR, 1024, members, members)
        (spec,) = plan.chunks[0]
        assert spec.file_of == file_of and spec.graphs is graphs
        assert plan.layout.members(6, 0) == ([6, 4, 5, 7], 0)


def group_of_8(members: tuple[int, ...]) -> list:
    graphs = []
    for rank in range(8):
        b = GraphBuilder(rank=rank)
        if rank in members:
            b.add(1, int(NodeType.COMM_COLL_NODE), "ar", comm_type=AR, comm_size=D, pg_name="g")
        graphs.append(b.build())
    return graphs


def test_group_listed_out_of_order(tmp_path):
    """Default mode: graph rank g is the g-th listed member (6 is the tree's root, 5 its inner
    node). Compatibility mode pairs as ASTRA-sim does (rank file by sorted position, peers by
    listed position); for this tree that makes member 6 (rank file 2) send to itself: an
    error with the reason, where ASTRA-sim hangs (ranks 4-7 never finish, exit code 0)."""
    from dataclasses import replace

    prefix = write_custom(tmp_path / "tree", TREE)
    plat = replace(platform(8, custom={"all_reduce": str(prefix)}), comm_groups={"g": (6, 4, 5, 7)})
    result = simulate(plat, group_of_8((6, 4, 5, 7)), compat="default")
    assert {r.rank: r.dim_bytes for r in result.collectives} == {6: [2 * D], 4: [D], 5: [2 * D], 7: [D]}
    with pytest.raises(TraceError, match=r"member 0 \(rank file 2\) node 2 \(SEND .*\) has itself as its peer") as err:
        simulate(plat, group_of_8((6, 4, 5, 7)))
    assert "lists its members out of order" in (err.value.hint or "")


def test_per_node_graph_applies_to_that_node_only(tmp_path):
    prefix = write_custom(tmp_path / "tree", TREE)
    table = tmp_path / "per_node.yml"
    table.write_text(f"2: {prefix}\n")
    plat = platform(4, per_node=str(table))
    graphs = []
    for rank in range(4):
        b = GraphBuilder(rank=rank)
        b.add(1, int(NodeType.COMM_COLL_NODE), "builtin", comm_type=AR, comm_size=D)
        b.add(2, int(NodeType.COMM_COLL_NODE), "custom", comm_type=AR, comm_size=D, data_deps=(1,))
        graphs.append(b.build())
    result = simulate(plat, graphs)
    by_node = {rec.node_id: rec.algorithms for rec in result.collectives}
    assert by_node == {1: ["ring"], 2: ["custom"]}


def test_per_node_graph_must_be_the_same_on_every_member(tmp_path):
    prefix = write_custom(tmp_path / "tree", TREE)
    table = tmp_path / "per_node.yml"
    table.write_text(f"5: {prefix}\n")
    plat = platform(4, per_node=str(table))
    graphs = one_collective(4, D, node_id=5)
    graphs[3] = one_collective(4, D, node_id=6)[3]
    with pytest.raises(TraceError, match=r"rank 3, node 6: all_reduce #0 runs a built-in algorithm"):
        simulate(plat, graphs)


# -- bad graphs: one error naming the file ------------------------------------------------


def test_missing_graph_is_a_config_error_naming_the_key_and_path(tmp_path):
    sysfile = tmp_path / "sys.json"
    sysfile.write_text(json.dumps({"all-reduce-implementation-custom": ["nowhere/ring"]}))
    plat = load_astra_platform(DATA / "Ring_8npus.yml", sysfile)
    with pytest.raises(ConfigError) as err:
        simulate(plat, one_collective(8, D))
    text = str(err.value)
    assert text.startswith(f"{sysfile}: all-reduce-implementation-custom: custom collective graph 'nowhere/ring' not found")
    assert "nowhere/ring.0.et relative to the working directory or to" in text and "\n" not in text


def test_graph_path_given_with_its_rank_suffix_gets_a_hint(tmp_path):
    plat = platform(8, custom={"all_reduce": f"{EXAMPLE}.0.et"})
    with pytest.raises(ConfigError) as err:
        simulate(plat, one_collective(8, D))
    assert "leave out the '.<rank>.et' suffix" in (err.value.hint or "")


def test_malformed_graph_file_is_a_trace_error_naming_it(tmp_path):
    prefix = write_custom(tmp_path / "tree", TREE)
    Path(f"{prefix}.2.et").write_bytes(b"\x05\x0a\x03abc\xff\xff\xff")
    with pytest.raises(TraceError, match=r"tree\.2\.et"):
        simulate(platform(4, custom={"all_reduce": str(prefix)}), one_collective(4, D))


def test_graph_for_the_wrong_rank_count_is_a_config_error(tmp_path):
    prefix = write_custom(tmp_path / "tree", TREE)
    with pytest.raises(ConfigError, match=r"tree\.<rank>\.et: the custom all_reduce is a graph for 4 ranks .* the whole machine"):
        simulate(platform(8, custom={"all_reduce": str(prefix)}), one_collective(8, D))


def test_graph_that_deadlocks_is_a_trace_error_naming_the_waits(tmp_path):
    # rank 1 waits for rank 0, which never sends
    prefix = write_custom(tmp_path / "dead", [[("comp", 1)], [("recv", 0, 64)]])
    with pytest.raises(TraceError) as err:
        simulate(platform(2, custom={"all_reduce": str(prefix)}), one_collective(2, 64))
    text = str(err.value)
    assert text.startswith(f"{prefix}.<rank>.et: the custom collective's graphs cannot finish (1 nodes never run)")
    assert "graph rank 1 node 0 (RECV of 64 B from graph rank 0, tag 0) waits for a message graph rank 0 never sends" in text


def test_receive_of_another_size_never_matches(tmp_path):
    prefix = write_custom(tmp_path / "size", [[("send", 1, 64)], [("recv", 0, 32)]])
    with pytest.raises(TraceError, match="it sends 64 B with that tag: a receive matches only the same size"):
        simulate(platform(2, custom={"all_reduce": str(prefix)}), one_collective(2, 64))


def test_cycle_of_receives_deadlocks(tmp_path):
    prefix = write_custom(
        tmp_path / "cycle",
        [[("recv", 1, 8), ("send", 1, 8, (0,))], [("recv", 0, 8), ("send", 0, 8, (0,))]],
    )
    with pytest.raises(TraceError, match=r"cannot finish \(4 nodes never run\)"):
        simulate(platform(2, custom={"all_reduce": str(prefix)}), one_collective(2, 64))


def test_unreceived_message_is_a_warning(tmp_path):
    prefix = write_custom(tmp_path / "extra", [[("send", 1, 8), ("send", 1, 8, (), 3)], [("recv", 0, 8)]])
    with pytest.warns(TraceWarning, match="graph rank 0 sends 1 message\\(s\\) of 8 B to graph rank 1 with tag 3"):
        simulate(platform(2, custom={"all_reduce": str(prefix)}), one_collective(2, 64))


@pytest.mark.parametrize(
    ("program", "match"),
    [
        ([[("send", 5, 8)], [("recv", 0, 8)]], r"rank 0: node 0 \(COMM_SEND_NODE, 's0'\): comm_dst is 5; expected another of the graph's ranks 0\.\.1"),
        ([[("send", 0, 8)], [("recv", 0, 8)]], "comm_dst is 0"),
    ],
)
def test_peer_outside_the_graph_is_a_trace_error(tmp_path, program, match):
    prefix = write_custom(tmp_path / "peer", program)
    with pytest.raises(TraceError, match=match):
        simulate(platform(2, custom={"all_reduce": str(prefix)}), one_collective(2, 64))


def test_node_that_is_not_send_recv_or_comp_is_a_trace_error(tmp_path):
    graphs = one_collective(2, 64)
    write_workload(tmp_path / "coll", graphs)
    with pytest.raises(TraceError, match="holds only COMM_SEND, COMM_RECV and COMP nodes"):
        simulate(platform(2, custom={"all_reduce": str(tmp_path / "coll")}), one_collective(2, 64))


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("first: somewhere\n", r"per_node\.yml: first: expected a mapping of workload node id"),
        ("3: [a, b]\n", r"per_node\.yml: 3: expected a mapping .* got 3: \['a', 'b'\]"),
        (None, r"per-node-custom-implementation: file '.*per_node\.yml' not found"),
    ],
)
def test_bad_per_node_table_is_a_config_error(tmp_path, text, match):
    table = tmp_path / "per_node.yml"
    if text is not None:
        table.write_text(text)
    with pytest.raises(ConfigError, match=match):
        simulate(platform(2, per_node=str(table)), one_collective(2, 64))
