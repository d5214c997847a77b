"""Edge lists with values no link can have (issue 24): NaN or infinite bandwidth or latency,
negative node ids, bytes that are not UTF-8. Each is a ConfigError naming the file and line,
and through `trainsim run` one line with exit 2."""

import pytest

from tests.helpers.cli_errors import cli_error
from trainsim.errors import ConfigError
from trainsim.topology.fabrics import graph_from_edges, load_edge_list


@pytest.mark.parametrize(
    ("line", "match"),
    [
        ("0 1 nan 5", "line 2: bandwidth nan GB/s, latency 5 ns; expected a finite bandwidth > 0"),
        ("0 1 inf 5", "line 2: bandwidth inf GB/s"),
        ("0 1 1e400 5", "line 2: bandwidth 1e400 GB/s"),
        ("0 1 50 nan", "line 2: bandwidth 50 GB/s, latency nan ns"),
        ("0 1 50 -inf", "line 2: bandwidth 50 GB/s, latency -inf ns"),
    ],
)
def test_non_finite_values_name_the_line(tmp_path, line, match):
    path = tmp_path / "g.txt"
    path.write_text(f"# a b bandwidth_gbps latency_ns\n{line}\n")
    with pytest.raises(ConfigError, match=f"g.txt: {match}"):
        load_edge_list(path, 2)


def test_graph_from_edges_refuses_nan_and_negative_ids():
    with pytest.raises(ConfigError, match="bad edge 0 - 1: bandwidth nan B/s"):
        graph_from_edges(2, [(0, 1, float("nan"), 1.0)])
    with pytest.raises(ConfigError, match="bad edge -1 - 1"):
        graph_from_edges(2, [(-1, 1, 1e9, 1.0), (0, 1, 1e9, 1.0)])


def test_not_utf8(tmp_path):
    path = tmp_path / "g.txt"
    path.write_bytes(b"0 1 50 5\n\xff\xfe 2 50 5\n")
    with pytest.raises(ConfigError, match=r"g.txt: not UTF-8 text \(byte 9: b'\\xff'\)"):
        load_edge_list(path, 2)


@pytest.mark.parametrize("content", [b"0 1 nan 5\n", b"\xff\xfe\x00\x01"])
def test_cli_run_is_one_line(tmp_path, capsys, content):
    from trainsim.workload.chakra import write_workload
    from trainsim.workload.micro import collective_workload

    write_workload(tmp_path / "w", list(collective_workload(2, "all_reduce", 1024)))
    (tmp_path / "g.txt").write_bytes(content)
    platform = tmp_path / "p.yaml"
    platform.write_text(
        "network:\n  dims:\n    - {topology: Ring, size: 2, bandwidth_gbps: 50, latency_ns: 500}\n"
        f"  fabric: {{kind: graph, file: {tmp_path / 'g.txt'}}}\n"
    )
    cli_error(
        capsys,
        ["run", str(platform), "--workload", str(tmp_path / "w"), "--backend", "flow"],
        2,
        "g.txt: ",
    )
