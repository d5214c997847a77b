
import pytest

from trainsim.config.types import RemoteMemorySpec, SystemSpec
from trainsim.enums import NodeType as T
from trainsim.errors import DeadlockError, TraceError
from trainsim.system.api import simulate
from trainsim.workload import GraphBuilder

from .conftest import ring_platform


def graphs_for(npus, build):
    out = []
    for rank in range(npus):
        b = GraphBuilder(source=f"t.{rank}.et", rank=rank)
        build(b, rank)
        out.append(b.build())
    return out


def test_compute_chain_replays_durations_in_compat_mode():
    def build(b, rank):
        b.add(1, T.COMP_NODE, "a", duration_s=5e-6)
        b.add(2, T.COMP_NODE, "b", duration_s=0.0, data_deps=[1])
        b.add(3, T.COMP_NODE, "c", duration_s=2e-6, data_deps=[2])

    res = simulate(ring_platform(2), graphs_for(2, build), compat="astra")
    # 5 us + 1 ns (ASTRA-sim turns a zero duration into 1 ns) + 2 us
    assert res.ranks[0].finish_s == pytest.approx(7001e-9, abs=1e-15)
    assert res.ranks[0].compute_s == pytest.approx(7001e-9)
    assert res.ranks[0].exposed_comm_s == pytest.approx(0.0, abs=1e-15)


def test_one_gpu_compute_slot_serializes_independent_nodes_and_cpu_overlaps():
    def build(b, rank):
        b.add(1, T.COMP_NODE, "gpu1", duration_s=3e-6)
        b.add(2, T.COMP_NODE, "gpu2", duration_s=3e-6)
        b.add(3, T.COMP_NODE, "cpu", duration_s=4e-6, is_cpu_op=True)

    res = simulate(ring_platform(2), graphs_for(2, build), compat="astra")
    assert res.makespan_s == pytest.approx(6e-6)
    assert res.ranks[0].cpu_s == pytest.approx(4e-6)


def test_send_recv_pair_completes_at_arrival():
    size = 32768

    def build(b, rank):
        if rank == 0:
            b.add(1, T.COMM_SEND_NODE, "s", comm_dst=1, comm_tag=7, comm_size=size)
        else:
            b.add(1, T.COMP_NODE, "work", duration_s=10e-6)
            b.add(2, T.COMM_RECV_NODE, "r", comm_src=0, comm_tag=7, comm_size=size, data_deps=[1])

    res = simulate(ring_platform(2), graphs_for(2, build), compat="astra")
    # neighbour delay: trunc(500 + 32768 / (50 * 2**30 / 1e9)) = 1110 ns; the receive is
    # posted at 10 us, after the message arrived, so it completes at once
    assert res.ranks[0].finish_s == pytest.approx(1110e-9)
    assert res.ranks[1].finish_s == pytest.approx(10e-6)


def test_receive_without_send_is_a_deadlock_naming_the_node():
    def build(b, rank):
        if rank == 1:
            b.add(4, T.COMM_RECV_NODE, "r", comm_src=0, comm_tag=3, comm_size=8)

    with pytest.raises(DeadlockError) as err:
        simulate(ring_platform(2), graphs_for(2, build))
    msg = str(err.value)
    assert "rank 1 node 4" in msg and "from rank 0 tag 3" in msg


def test_cycle_is_reported_not_looped_on():
    def build(b, rank):
        b.add(1, T.COMP_NODE, "a", duration_s=1e-6, data_deps=[2])
        b.add(2, T.COMP_NODE, "b", duration_s=1e-6, data_deps=[1])
        b.add(3, T.COMP_NODE, "c", duration_s=1e-6)

    # the cycle is found before the run (the executor never starts: no events)
    with pytest.raises(TraceError, match=r"dependency cycle of 2 node\(s\): 1 -> 2 -> 1"):
        simulate(ring_platform(2), graphs_for(2, build))


def test_size_mismatch_names_both_nodes():
    def build(b, rank):
        if rank == 0:
            b.add(1, T.COMM_SEND_NODE, "s", comm_dst=1, comm_tag=0, comm_size=100)
        else:
            b.add(9, T.COMM_RECV_NODE, "r", comm_src=0, comm_tag=0, comm_size=200)

    with pytest.raises(TraceError, match="RECV node 9 expects 200 B.*SEND node 1"):
        simulate(ring_platform(2), graphs_for(2, build))


@pytest.mark.parametrize(
    ("mode", "expected_ns"),
    [
        # two ranks of one node, two 1000 B loads each; latency 100 ns, 25.6 -> 25 B/ns: 140 ns each
        ("PER_NPU_MEMORY_EXPANSION", 280),
        ("PER_NODE_MEMORY_EXPANSION", 560),
        ("MEMORY_POOL", 560),
    ],
)
def test_remote_memory_modes(mode, expected_ns):
    memory = RemoteMemorySpec(mode=mode, latency_ns=100, bandwidth=25.6e9, npus_per_node=2, nodes=1)

    def build(b, rank):
        b.add(1, T.MEM_LOAD_NODE, "l1", tensor_size=1000)
        b.add(2, T.MEM_LOAD_NODE, "l2", tensor_size=1000, data_deps=[1])

    res = simulate(ring_platform(2, memory=memory), graphs_for(2, build), compat="astra")
    assert res.makespan_s == pytest.approx(expected_ns * 1e-9)


def test_memory_node_without_remote_memory_is_a_clear_error():
    def build(b, rank):
        b.add(1, T.MEM_LOAD_NODE, "l", tensor_size=10)

    with pytest.raises(TraceError, match="NO_MEMORY_EXPANSION"):
        simulate(ring_platform(2), graphs_for(2, build))


def test_roofline_compute():
    system = SystemSpec(roofline_enabled=True, peak_perf=100e12, local_mem_bw=1000e9)

    def build(b, rank):
        # intensity 10 FLOP/B -> memory bound at 10 TFLOP/s: 1e9 FLOP take 100 us
        b.add(1, T.COMP_NODE, "gemm", num_ops=1e9, tensor_size=10**8)

    res = simulate(ring_platform(2, system=system), graphs_for(2, build), compat="astra")
    assert res.makespan_s == pytest.approx(100e-6)


def test_rank_count_mismatch_is_config_error():
    from trainsim.errors import ConfigError

    with pytest.raises(ConfigError, match="3 rank graphs but the network has 2 NPUs"):
        simulate(ring_platform(2), graphs_for(3, lambda b, r: b.add(1, T.COMP_NODE)))


def test_ranks_with_equal_graphs_share_their_dependency_index():
    """Rank files read one by one give equal, not identical, arrays; their ranks still share
    one dependency index (a 1,024-rank step would otherwise hold one per rank)."""
    from trainsim.system.executor import Executor
    from trainsim.workload.graph import GraphBuilder

    def chain(n: int, fork: bool = False):
        b = GraphBuilder()
        for i in range(n):
            b.add(i, 1, f"c{i}", duration_s=1e-6, data_deps=[0] if fork and i else ([i - 1] if i else []))
        return b.build()

    ranks = Executor._build_ranks([chain(5), chain(5), chain(5, fork=True)], use_ctrl_deps=True)
    assert ranks[0].children is ranks[1].children
    assert ranks[0].children is not ranks[2].children
    assert ranks[2].children[0] == [1, 2, 3, 4]
