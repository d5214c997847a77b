"""Runaways refused before any work (issue 24, docs/limits.md): each is one line on stderr and
exit code 2, with nothing written; each of these took minutes, gigabytes or a million files."""

import gzip
import json
import sqlite3
from pathlib import Path

import pytest

from tests.helpers.reference_data import WORKLOADS
from tests.optimize.conftest import libra_path
from trainsim.cli.main import EXIT_USER_ERROR, main

TEXT = WORKLOADS / "astra-sim-1.0-text"
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
RING = 'network:\n  dims:\n    - {topology: Ring, size: 4, bandwidth_gbps: 200, latency_ns: 500}\n'


def refused(argv: list[str], capsys, *expected: str) -> str:
    assert main(argv) == EXIT_USER_ERROR
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("trainsim: error: "), err
    for part in expected:
        assert part in lines[0], (part, lines[0])
    return lines[0]


def test_generate_a_million_rank_files(tmp_path, capsys):
    refused(["generate", "resnet50", "--dp", "1000000", "--out", str(tmp_path / "p")], capsys,
            "1,000,001 files", "limit of 100,000 files", "--force")  # fmt: skip
    assert list(tmp_path.iterdir()) == []


def test_generate_a_huge_global_batch(tmp_path, capsys):
    refused(["generate", "resnet50", "--dp", "8", "--global-batch", str(10**12), "--out", str(tmp_path / "p")], capsys,
            "125,000,000,000 micro-batches", "limit of 2,000,000 nodes")  # fmt: skip
    assert list(tmp_path.iterdir()) == []


def test_generate_a_million_micro_batches_counts_one_micro_batch_s_nodes(tmp_path, capsys):
    """Found by the fuzz suite: a million ResNet-50 micro-batches are 36 million nodes (an hour
    of generation); one micro-batch is generated to count them."""
    refused(["generate", "resnet50", "--global-batch", "1000000", "--out", str(tmp_path / "p")], capsys,
            "1,000,000 micro-batches", "estimated 18,000,000 nodes")  # fmt: skip


def test_convert_a_million_ranks(tmp_path, capsys):
    argv = ["workload", "convert", str(TEXT / "microAllReduce.txt"), "--ranks", "1000000", "--out", str(tmp_path / "p")]
    refused(argv, capsys, "1,000,000 files", "use fewer --ranks")
    assert list(tmp_path.iterdir()) == []


def test_convert_a_million_passes(tmp_path, capsys):
    argv = ["workload", "convert", str(TEXT / "Resnet50_DataParallel.txt"), "--ranks", "4",
            "--passes", "1000000", "--out", str(tmp_path / "p")]  # fmt: skip
    refused(argv, capsys, "1,000,000 passes of 54 layers", "use fewer passes")
    assert list(tmp_path.iterdir()) == []


def test_force_lets_a_refused_estimate_through(tmp_path, capsys, monkeypatch):
    from trainsim import budget

    monkeypatch.setitem(budget.LIMITS, "graph_nodes", budget.Limit("graph_nodes", 10, "nodes", "test"))
    argv = ["workload", "convert", str(TEXT / "microAllReduce.txt"), "--ranks", "4", "--passes", "10", "--out", str(tmp_path / "p")]
    refused(argv, capsys, "10 passes of 1 layers: estimated 20 nodes, over the limit of 10 nodes")
    assert main([*argv, "--force"]) == 0
    assert len(list(tmp_path.glob("p.*.et"))) == 4 and not budget.is_forced()


def _sweep(tmp_path: Path, axes: str, *, filter_: str = "") -> Path:
    path = tmp_path / "s.yaml"
    path.write_text(
        "base:\n  platform:\n    network:\n      dims:\n        - {topology: Ring, size: 4, bandwidth_gbps: 200, latency_ns: 500}\n"
        "  workload:\n    collective: {type: all_reduce, size_bytes: 1048576}\n"
        f"axes:\n{axes}" + (f"filter: {filter_}\n" if filter_ else "")
    )
    return path


def test_a_sweep_of_eight_axes_of_a_thousand_values_with_a_filter_that_keeps_nothing(tmp_path, capsys):
    values = ", ".join(str(i) for i in range(1000))
    axes = "".join(f"  - {{field: platform.system.k{i}, name: a{i}, values: [{values}]}}\n" for i in range(8))
    spec = _sweep(tmp_path, axes, filter_="a0 < 0")
    refused(["sweep", str(spec), "--store", str(tmp_path / "s.sqlite")], capsys, "1e+24 combinations", "limit of 1,000,000")
    assert not (tmp_path / "s.sqlite").exists()


def test_a_sweep_of_two_ranges_of_a_million(tmp_path, capsys):
    axes = ('  - {field: "platform.network.dims[0].latency_ns", name: a, range: {start: 1, stop: 1000000}}\n'
            '  - {field: "platform.network.dims[0].bandwidth_gbps", name: b, range: {start: 1, stop: 1000000}}\n')  # fmt: skip
    refused(["sweep", str(_sweep(tmp_path, axes)), "--store", str(tmp_path / "s.sqlite")], capsys,
            "1,000,000 x 1,000,000 axis values", "1,000,000,000,000 combinations")  # fmt: skip


def test_a_range_of_a_billion_values_is_counted_not_listed(tmp_path, capsys):
    axes = '  - {field: "platform.network.dims[0].latency_ns", name: a, range: {start: 0, stop: 1e9}}\n'
    refused(["sweep", str(_sweep(tmp_path, axes)), "--store", str(tmp_path / "s.sqlite")], capsys, "1,000,000,001")


def test_a_filter_that_keeps_nothing_builds_nothing(tmp_path, monkeypatch):
    from trainsim.sweep import load_sweep, spec

    axes = "".join(f"  - {{field: platform.system.k{i}, name: a{i}, values: [{', '.join(map(str, range(50)))}]}}\n" for i in range(3))
    sweep = load_sweep(_sweep(tmp_path, axes, filter_="a0 < 0"))
    assert sweep.count() == 125_000
    copies = []
    real = spec.copy.deepcopy
    monkeypatch.setattr(spec.copy, "deepcopy", lambda x: copies.append(1) or real(x))
    assert list(sweep.combinations()) == []
    assert len(copies) == 1  # the base document, once; no dropped combination was built


def test_a_sweep_dimension_of_a_billion_npus(tmp_path, capsys):
    axes = '  - {field: "platform.network.dims[0].size", name: n, values: [1000000000]}\n'
    line = refused(["sweep", str(_sweep(tmp_path, axes)), "--store", str(tmp_path / "s.sqlite"), "--jobs", "1"], capsys)
    assert "1,000,000,000 NPUs" in line and "limit of 1,048,576 ranks" in line
    rows = sqlite3.connect(tmp_path / "s.sqlite").execute("select count(*) from results").fetchone()
    assert rows == (1,)


def test_a_platform_of_a_billion_npus(tmp_path, capsys):
    platform = tmp_path / "p.yaml"
    platform.write_text(RING.replace("size: 4", "size: 1000000000"))
    refused(["run", str(platform), "--workload", str(tmp_path / "w")], capsys, "p.yaml", "1,000,000,000 NPUs")


def _metadata_frame() -> bytes:
    from trainsim.workload.chakra import schema
    from trainsim.workload.chakra.wire import encode_varint

    data = schema.GlobalMetadata(version="0.0.4").SerializeToString()
    return encode_varint(len(data)) + data


def test_a_gzip_et_of_empty_frames_is_refused_where_it_is_read(tmp_path, capsys):
    """1 MB of gzip that expands to 1 GiB of zero-length messages (each a node of id 0)."""
    platform = tmp_path / "p.yaml"
    platform.write_text(RING)
    for rank in range(4):
        with gzip.open(tmp_path / f"w.{rank}.et", "wb", compresslevel=1) as out:
            out.write(_metadata_frame())
            zeros = bytes(1 << 20)
            for _ in range(1024 if rank == 0 else 1):
                out.write(zeros)
    refused(["run", str(platform), "--workload", str(tmp_path / "w")], capsys, "w.0.et", "node id 0 appears more than once")


def test_a_gzip_et_that_expands_past_the_limit(tmp_path, capsys, monkeypatch):
    from trainsim import budget
    from trainsim.workload.chakra.wire import encode_varint

    monkeypatch.setitem(budget.LIMITS, "decompressed", budget.Limit("decompressed", 4 << 20, "bytes", "test"))
    platform = tmp_path / "p.yaml"
    platform.write_text(RING)
    for rank in range(4):
        with gzip.open(tmp_path / f"w.{rank}.et", "wb") as out:
            out.write(_metadata_frame() + encode_varint(8 << 20) + bytes(8 << 20))
    refused(["run", str(platform), "--workload", str(tmp_path / "w")], capsys, "w.0.et", "expands past 4 MiB")


def test_an_edge_to_node_a_billion_is_refused_before_allocating(tmp_path):
    from trainsim.budget import BudgetError
    from trainsim.topology.fabrics import load_edge_list

    edges = tmp_path / "g.txt"
    edges.write_text("0 1 100 10\n1 1000000000 100 10\n")
    with pytest.raises(BudgetError, match=r"g\.txt: a graph whose highest device id is 1,000,000,000 .* GiB, over the limit of 8\.0 GiB"):
        load_edge_list(edges, 2)


def test_optimize_a_hundred_million_budgets(tmp_path, capsys):
    argv = ["optimize", "bandwidth", "--network", str(libra_path("network", "3d_network.yml")),
            "--workload", str(libra_path("workload", "ResNet_50.txt")),
            "--communicator", str(libra_path("communicator", "ResNet_50_3d.yml")),
            "--constraint", "sum == 500", "--plot", str(tmp_path / "p.png"), "--budgets", "1:1000:100000000"]  # fmt: skip
    refused(argv, capsys, "100,000,000 optimizer runs", "limit of 200 points")
    assert not (tmp_path / "p.png").exists()


def test_sixty_four_jobs_on_fewer_cores_are_capped(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr("os.cpu_count", lambda: 2)
    axes = '  - {field: "platform.network.dims[0].latency_ns", name: a, values: [500, 600]}\n'
    assert main(["sweep", str(_sweep(tmp_path, axes)), "--store", str(tmp_path / "s.sqlite"), "--jobs", "64", "-q"]) == 0
    assert "--jobs 64 is more than the 2 cores here: starting 2" in capsys.readouterr().err


def test_a_full_device_as_output_is_refused_before_the_run(capsys):
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full here")
    example = EXAMPLES / "ring_allreduce"
    refused(["run", str(example / "platform.yaml"), "--workload", str(example / "workload" / "ring"), "--json", "/dev/full"],
            capsys, "--json", "/dev/full", "No space left")  # fmt: skip


@pytest.mark.parametrize("splits", [10**6, 10**30])
def test_a_million_splits_of_a_collective(tmp_path, capsys, splits):
    """Found by the fuzz suite (and issue 24): preferred-dataset-splits of 10^6..10^30 ran for
    minutes; the value is now range-checked where the system JSON is read (before the chunk
    budget, which still guards a SystemSpec built in Python)."""
    inputs = WORKLOADS.parent / "reference-results" / "inputs"
    system = json.loads((inputs / "system" / "1d_ring.json").read_text())
    system["preferred-dataset-splits"] = splits
    (tmp_path / "system.json").write_text(json.dumps(system))
    argv = ["run", f"--network-configuration={inputs / 'network' / 'ring8.yml'}", f"--system-configuration={tmp_path / 'system.json'}",
            f"--workload-configuration={inputs / 'workload' / 'all_reduce' / '8npus_1MiB' / 'et'}",
            f"--remote-memory-configuration={inputs / 'remote_memory.json'}"]  # fmt: skip
    refused(argv, capsys, "preferred-dataset-splits: got", "expected an integer in 1 .. 4096")


def test_a_collective_type_that_is_not_a_name(tmp_path, capsys):
    """Found by the fuzz suite: a sweep whose collective type is a number was an AttributeError."""
    path = _sweep(tmp_path, '  - {field: "platform.network.dims[0].latency_ns", name: a, values: [500]}\n')
    path.write_text(path.read_text().replace("type: all_reduce", "type: 1.0e-300"))
    refused(["sweep", str(path), "--store", str(tmp_path / "s.sqlite"), "--jobs", "1"], capsys, "got 1e-300; expected a collective name")
