"""ASTRA-sim's run knobs and system keys, each against a hand-computed case
(docs/astra-compat.md): --comm-scale, --compute-scale, --injection-scale,
--rendezvous-protocol, --num-queues-per-dim, replay-only and trace-enabled.

The base case: a 4-rank ring, 50 ASTRA-GB/s (50 x 2**30 B/s), 500 ns per hop, endpoint delay
E = 10 ns, 4 chunks, local-mem-bw 1600 GB/s, a 1 MiB all-reduce. Per chunk (262,144 B) the ring
sends 6 messages of 65,536 B, one hop each: net = trunc(500 + 65536 / 53.6870912) = 1,720 ns;
3 of the 6 receives reduce: red = 3 x trunc(65536 / 1600) = 120 ns. A chunk takes
E + 6 (net + E) + 3 red = 10 + 6 x 1,730 + 360 = 10,750 ns; the 4 chunks run one after the
other in the dimension's one queue (one active chunk): 43,000 ns.
"""

from __future__ import annotations

import logging
from dataclasses import replace

import pytest

from trainsim.collectives.plan import FIRST, LAST, NEXT
from trainsim.config.types import CollectiveImpl, DimSpec, NetworkSpec, Platform, SystemSpec
from trainsim.enums import NodeType as T
from trainsim.errors import ConfigError
from trainsim.system.api import simulate
from trainsim.system.queues import QueuePicker
from trainsim.workload import GraphBuilder
from trainsim.workload.micro import collective_workload

BASE_NS = 43_000
RING = CollectiveImpl(("ring",), ("ring",), ("ring",), ("ring",))


def platform(npus: int = 4, **system: object) -> Platform:
    fields: dict[str, object] = dict(
        endpoint_delay_ns=10.0,
        preferred_dataset_splits=4,
        collective_optimization="localBWAware",
        local_mem_bw=1600e9,
        implementations=RING,
    )
    fields.update(system)
    net = NetworkSpec((DimSpec("Ring", npus, 50 * 2**30, 500.0),))
    return Platform(network=net, system=SystemSpec(**fields), compat="astra")  # type: ignore[arg-type]


def finish_ns(result) -> set[int]:
    return {round(r.finish_s * 1e9) for r in result.ranks}


def all_reduce(size: int = 1 << 20, npus: int = 4):
    return collective_workload(npus, "all_reduce", size)


def test_the_base_case_by_hand():
    assert finish_ns(simulate(platform(), all_reduce())) == {BASE_NS}


# -- --comm-scale -----------------------------------------------------------------------------


def test_comm_scale_2_doubles_every_collective_size():
    # 2 MiB: chunks of 524,288 B, messages of 131,072 B: net = trunc(500 + 131072 / 53.687...)
    # = 2,941, red = 3 x trunc(81.92) = 243; per chunk 10 + 6 x 2,951 + 3 x 243 = 18,445
    scaled = simulate(platform(comm_scale=2.0), all_reduce())
    assert finish_ns(scaled) == {4 * 18_445}
    assert finish_ns(simulate(platform(), all_reduce(2 << 20))) == {4 * 18_445}
    assert {r.size for r in scaled.collectives} == {2 << 20}


def test_comm_scale_truncates_to_whole_bytes():
    result = simulate(platform(comm_scale=0.5), all_reduce(1_000_003), symmetry=False)
    assert {r.size for r in result.collectives} == {500_001}  # trunc(500,001.5)


def _send_recv(size: int, *, send_after_ns: float = 0.0, recv_after_ns: float = 0.0):
    """Rank 0 sends ``size`` bytes to rank 1 (tag 0), each side after a compute node."""
    graphs = []
    for rank in range(2):
        b = GraphBuilder(rank=rank)
        wait = send_after_ns if rank == 0 else recv_after_ns
        b.add(1, T.COMP_NODE, "wait", duration_s=wait * 1e-9)
        if rank == 0:
            b.add(2, T.COMM_SEND_NODE, "send", comm_dst=1, comm_tag=0, comm_size=size, data_deps=[1])
        else:
            b.add(2, T.COMM_RECV_NODE, "recv", comm_src=0, comm_tag=0, comm_size=size, data_deps=[1])
        graphs.append(b.build())
    return graphs


def test_comm_scale_2_doubles_send_and_receive_sizes():
    # 2 MiB over one hop: trunc(500 + 2,097,152 / 53.687...) = 39,562 ns after the 1 ns waits
    result = simulate(platform(2, comm_scale=2.0), _send_recv(1 << 20))
    assert finish_ns(result) == {1 + 39_562}


# -- --compute-scale --------------------------------------------------------------------------


def _compute(duration_ns: float):
    b = GraphBuilder()
    b.add(1, T.COMP_NODE, "gemm", duration_s=duration_ns * 1e-9)
    return [b.build()] * 4


def test_compute_scale_2_doubles_compute_times():
    assert finish_ns(simulate(platform(), _compute(100_000))) == {100_000}
    result = simulate(platform(compute_scale=2.0), _compute(100_000))
    assert finish_ns(result) == {200_000}
    assert result.ranks[0].compute_s == pytest.approx(200e-6)


def test_compute_scale_truncates_to_whole_ns_in_compat_mode():
    # ASTRA-sim 1.0 stored cycles x scale in a uint64: trunc(333 x 1.5 = 499.5) = 499
    assert finish_ns(simulate(platform(compute_scale=1.5), _compute(333))) == {499}
    exact = simulate(platform(compute_scale=1.5), _compute(333), compat="default")
    assert exact.ranks[0].finish_s == pytest.approx(499.5e-9)


def test_compute_scale_applies_to_roofline_times():
    b = GraphBuilder()
    b.add(1, T.COMP_NODE, "gemm", num_ops=1e9, tensor_size=10**6)  # 1e9 FLOP at 100 TFLOP/s: 10 us
    graphs = [b.build()] * 4
    plat = platform(roofline_enabled=True, peak_perf=100e12, compute_scale=3.0)
    assert finish_ns(simulate(plat, graphs)) == {30_000}


# -- --injection-scale ------------------------------------------------------------------------


def test_injection_scale_2_doubles_the_endpoint_delay():
    # E = 20: per chunk 20 + 6 x (1,720 + 20) + 360 = 10,820
    assert finish_ns(simulate(platform(injection_scale=2.0), all_reduce())) == {4 * 10_820}


def test_injection_scale_is_stored_as_a_whole_ns():
    # int(int(10.5) x 1.25) = int(12.5) = 12: per chunk 12 + 6 x 1,732 + 360 = 10,764
    plat = platform(endpoint_delay_ns=10.5, injection_scale=1.25)
    assert finish_ns(simulate(plat, all_reduce())) == {4 * 10_764}


# -- --rendezvous-protocol --------------------------------------------------------------------

CONTROL_NS = 652  # the 8,192 B control message, one hop: trunc(500 + 8192 / 53.687...)


def test_rendezvous_adds_the_control_message_to_every_message_step():
    # every message waits for its receiver's control message: each of the 6 steps of a chunk
    # takes 652 ns more
    result = simulate(platform(rendezvous=True), all_reduce())
    assert finish_ns(result) == {BASE_NS + 4 * 6 * CONTROL_NS}
    assert "rendezvous" in result.info["symmetry"]
    by_rank = simulate(platform(rendezvous=True), all_reduce(), symmetry=False)
    assert finish_ns(by_rank) == finish_ns(result)


def test_rendezvous_send_waits_for_a_late_receive():
    # the RECV is issued at 5,000 ns: its control message reaches rank 0 at 5,652, the data
    # (1 MiB, trunc(500 + 1048576 / 53.687...) = 20,031 ns) arrives at 25,683; both nodes end then
    plain = simulate(platform(2), _send_recv(1 << 20, send_after_ns=1, recv_after_ns=5_000))
    assert finish_ns(plain) == {1 + 20_031}
    late = simulate(platform(2, rendezvous=True), _send_recv(1 << 20, send_after_ns=1, recv_after_ns=5_000))
    assert finish_ns(late) == {5_000 + CONTROL_NS + 20_031}


def test_rendezvous_control_message_before_the_send_costs_nothing_more():
    # the RECV at 1 ns sends its control message, there at 653; the SEND issued at 5,000 finds it
    # and sends at once: the data arrives at 25,031, as without the protocol
    early = simulate(platform(2, rendezvous=True), _send_recv(1 << 20, send_after_ns=5_000, recv_after_ns=1))
    assert finish_ns(early) == {5_000 + 20_031}
    plain = simulate(platform(2), _send_recv(1 << 20, send_after_ns=5_000, recv_after_ns=1))
    assert finish_ns(plain) == finish_ns(early)


# -- --num-queues-per-dim ---------------------------------------------------------------------


def test_queue_picker_follows_astra_sims_queue_levels():
    four = QueuePicker(4)
    assert [four.pick(0, NEXT) for _ in range(5)] == [(0, True), (1, True), (2, False), (3, False), (0, True)]
    assert [four.pick(0, FIRST) for _ in range(3)] == [(0, True), (1, True), (0, True)]
    assert [four.pick(0, LAST) for _ in range(3)] == [(2, False), (3, False), (2, False)]
    assert four.pick(1, NEXT) == (0, True)  # each dimension has its own positions
    three = QueuePicker(3)
    assert [three.pick(0, NEXT) for _ in range(3)] == [(0, True), (1, False), (2, False)]
    assert [three.pick(0, FIRST) for _ in range(2)] == [(0, True), (0, True)]
    assert [three.pick(0, LAST) for _ in range(3)] == [(1, False), (2, False), (1, False)]


@pytest.mark.parametrize(
    ("queues", "active", "waves"),
    [
        (1, 1, 4),  # one queue, one chunk at a time
        (2, 1, 2),  # chunks alternate between 2 queues of 1 chunk each
        (3, 1, 2),  # queues 0, 1, 2, 0: queue 0 runs two chunks in turn
        (4, 1, 1),  # one chunk per queue, all at once
        (2, 2, 2),  # ceil(2 active / 2 queues) = 1 chunk per queue
        (2, 4, 1),  # 2 per queue, 2 queues
        (1, 2, 2),
    ],
)
def test_queues_per_dim_baseline_chunks_take_the_queues_in_turn(queues, active, waves):
    # baseline: each chunk's one all-reduce phase takes the next queue; chunks do not slow one
    # another on the congestion-unaware network, so the run is (waves x 10,750) ns
    plat = platform(collective_optimization="baseline", queues_per_dim=queues, active_chunks_per_dimension=active)
    assert finish_ns(simulate(plat, all_reduce())) == {waves * 10_750}


@pytest.mark.parametrize(("queues", "waves"), [(1, 4), (2, 4), (3, 4), (4, 2)])
def test_queues_per_dim_local_bw_aware_all_reduce_takes_the_first_half(queues, waves):
    # localBWAware: the last dimension's all-reduce takes the first q // 2 queues only (queue 0
    # for q <= 3): more queues help only from q = 4
    plat = platform(queues_per_dim=queues)
    assert finish_ns(simulate(plat, all_reduce())) == {waves * 10_750}


def test_queues_per_dim_rank_by_rank_agrees_with_the_fast_paths_off():
    plat = platform(queues_per_dim=2, collective_optimization="baseline")
    result = simulate(plat, all_reduce())
    assert "queues per dimension" in result.info["symmetry"]
    assert finish_ns(result) == finish_ns(simulate(plat, all_reduce(), symmetry=False))


# -- replay-only ------------------------------------------------------------------------------


def _step(collective_micros: float = 0.0):
    """A compute node, a 1 MiB all-reduce, a memory load and a second all-reduce."""
    b = GraphBuilder()
    b.add(1, T.COMP_NODE, "fwd", duration_s=100e-6)
    b.add(2, T.COMM_COLL_NODE, "ar", comm_type=0, comm_size=1 << 20, data_deps=[1])
    b.add(3, T.MEM_LOAD_NODE, "load", tensor_size=1 << 20, data_deps=[2])
    b.add(4, T.COMM_COLL_NODE, "ar2", comm_type=0, comm_size=1 << 20, duration_s=collective_micros * 1e-6, data_deps=[3])
    b.add(5, T.COMP_NODE, "host", duration_s=2e-6, is_cpu_op=True, data_deps=[4])
    return [b.build()] * 4


def test_replay_only_replays_every_node():
    # ASTRA-sim's replay-only: every node waits duration_micros x 1000 ns, 1 ns when 0: the
    # compute 100,000, the first all-reduce 1, the load 1 (no remote memory needed), the second
    # all-reduce its recorded 5 us, the host node 2 us
    result = simulate(platform(replay_only=True), _step(collective_micros=5))
    assert finish_ns(result) == {100_000 + 1 + 1 + 5_000 + 2_000}
    rank = result.ranks[0]
    # the replayed GPU nodes count as GPU work, as ASTRA-sim's tics_gpu_ops: nothing exposed
    assert round(rank.compute_s * 1e9) == 105_002 and round(rank.cpu_s * 1e9) == 2_000
    assert round(rank.exposed_comm_s * 1e9) == 2_000
    assert not result.collectives


def test_replay_only_ignores_the_roofline():
    b = GraphBuilder()
    b.add(1, T.COMP_NODE, "gemm", duration_s=7e-6, num_ops=1e9, tensor_size=10**6)
    plat = platform(replay_only=True, roofline_enabled=True, peak_perf=100e12)
    assert finish_ns(simulate(plat, [b.build()] * 4)) == {7_000}


def test_replay_only_off_runs_the_collectives():
    plat = platform()
    b = GraphBuilder()
    b.add(1, T.COMP_NODE, "fwd", duration_s=100e-6)
    b.add(2, T.COMM_COLL_NODE, "ar", comm_type=0, comm_size=1 << 20, data_deps=[1])
    graphs = [b.build()] * 4
    assert finish_ns(simulate(plat, graphs)) == {100_000 + BASE_NS}
    assert finish_ns(simulate(replace(plat, system=replace(plat.system, replay_only=True)), graphs)) == {100_001}


# -- trace-enabled and the finish lines -------------------------------------------------------


def test_trace_enabled_logs_every_node_as_astra_sim(caplog):
    with caplog.at_level(logging.DEBUG, logger="trainsim.workload"):
        simulate(platform(trace_enabled=True), all_reduce())
    lines = [r.getMessage() for r in caplog.records if r.name == "trainsim.workload"]
    assert "issue,sys->id=2, tick=0, node->id=0, node->name=all_reduce, node->type=7" in lines
    assert f"callback,sys->id=2, tick={BASE_NS}, node->id=0, node->name=all_reduce, node->type=7" in lines
    assert f"sys[3] finished, {BASE_NS} cycles, exposed communication {BASE_NS} cycles." in lines
    assert sum(line.startswith("issue,") for line in lines) == 4  # every rank, not a representative


def test_no_node_lines_without_trace_enabled(caplog):
    with caplog.at_level(logging.DEBUG, logger="trainsim.workload"):
        simulate(platform(), all_reduce())
    lines = [r.getMessage() for r in caplog.records if r.name == "trainsim.workload"]
    assert lines and all(line.startswith("sys[") for line in lines)


# -- refused features and bad knobs from Python -----------------------------------------------


@pytest.mark.parametrize(
    ("system", "field", "why"),
    [
        (dict(track_local_mem=True), "track_local_mem", "local-memory tracker"),
        (dict(comm_scale=0.0), "comm_scale", "> 0"),
        (dict(queues_per_dim=0), "queues_per_dim", ">= 1"),
    ],
)
def test_simulate_refuses_what_it_does_not_model(system, field, why):
    with pytest.raises(ConfigError, match=why) as err:
        simulate(platform(**system), all_reduce())
    assert err.value.field == field


def test_rendezvous_with_themis_plans_and_runs():
    # Themis' guard predicts both plans without control messages; the run itself has them
    net = NetworkSpec((DimSpec("Ring", 4, 50 * 2**30, 500.0), DimSpec("Ring", 2, 25 * 2**30, 500.0)))
    system = replace(platform().system, implementations=CollectiveImpl(("ring", "ring"), ("ring", "ring"), ("ring", "ring"), ("ring", "ring")), inter_dimension_scheduling="themis")
    plain = Platform(network=net, system=system, compat="astra")
    with_control = replace(plain, system=replace(system, rendezvous=True))
    base = simulate(plain, all_reduce(npus=8))
    slower = simulate(with_control, all_reduce(npus=8))
    assert max(finish_ns(slower)) > max(finish_ns(base)) > 0
