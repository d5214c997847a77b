"""Numbers range-checked where they are parsed (issue 24): preferred_dataset_splits (1..4096),
a dimension's NPUs and their product (at most 2**31-1), in the native platform file and in
ASTRA-sim's system JSON and network YAML; one line, exit 2, before any work."""

import json

import pytest
from tests.helpers.cli_errors import cli_error

PLATFORM = """network:
  dims:
    - {{topology: Ring, size: {size}, bandwidth_gbps: 50, latency_ns: 500}}
{more}system:
  preferred_dataset_splits: {splits}
"""


@pytest.mark.parametrize(
    ("size", "more", "splits", "match"),
    [
        (4, "", 10**6, "system.preferred_dataset_splits: got 1000000; input should be less than or equal to 4096"),
        (4, "", 10**30, "less than or equal to 4096"),
        (4, "", 2**64 + 1, "got 18446744073709551617"),
        (2**63, "", 4, "network.dims[0].size: got 9223372036854775808; input should be less than or equal to 2147483647"),
        (65536, "    - {topology: Switch, size: 65536, bandwidth_gbps: 50, latency_ns: 500}\n", 4, "65536 x 65536 = 4,294,967,296 NPUs"),
    ],
    ids=["1e6", "1e30", "2**64+1", "dim 2**63", "product"],
)
def test_platform_numbers_out_of_range(tmp_path, capsys, size, more, splits, match):
    p = tmp_path / "p.yaml"
    p.write_text(PLATFORM.format(size=size, more=more, splits=splits))
    cli_error(capsys, ["run", str(p), "--workload", str(tmp_path / "w")], 2, match)


@pytest.mark.parametrize("splits", [4097, 10**6, 2**64 + 1])
def test_astra_system_json_splits_out_of_range(tmp_path, capsys, splits):
    from tests.helpers.reference_data import RESULTS

    system = json.loads((RESULTS / "inputs" / "system" / "1d_ring.json").read_text())
    system["preferred-dataset-splits"] = splits
    path = tmp_path / "s.json"
    path.write_text(json.dumps(system))
    net = RESULTS / "inputs" / "network" / "ring8.yml"
    cli_error(
        capsys,
        ["run", "--workload", str(tmp_path / "w"), "--network-configuration", str(net), "--system-configuration", str(path)],
        2,
        "preferred-dataset-splits",
    )


def test_astra_network_npus_out_of_range(tmp_path, capsys):
    from tests.helpers.reference_data import RESULTS

    net = tmp_path / "n.yml"
    net.write_text("topology: [ Ring ]\nnpus_count: [ 9223372036854775808 ]\nbandwidth: [ 50 ]\nlatency: [ 500 ]\n")
    system = RESULTS / "inputs" / "system" / "1d_ring.json"
    cli_error(
        capsys,
        ["run", "--workload", str(tmp_path / "w"), "--network-configuration", str(net), "--system-configuration", str(system)],
        2,
        "npus_count[0]",
    )
