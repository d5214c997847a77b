"""Write errors on a command's outputs (issue 24): /dev/full (the write fails, Python's error
names no file) is one line naming the option and the file, exit 2, never a traceback."""

import os

import pytest

from tests.helpers.cli_errors import cli_error
from tests.optimize.conftest import libra_path
from trainsim.cli.writes import output_errors
from trainsim.errors import ConfigError

FULL = "/dev/full"
needs_full = pytest.mark.skipif(not os.path.exists(FULL), reason="no /dev/full here")


@pytest.fixture
def run_inputs(tmp_path):
    from trainsim.workload.chakra import write_workload
    from trainsim.workload.micro import collective_workload

    write_workload(tmp_path / "w", list(collective_workload(2, "all_reduce", 1024)))
    platform = tmp_path / "p.yaml"
    platform.write_text(
        "network:\n  dims:\n    - {topology: Ring, size: 2, bandwidth_gbps: 50, latency_ns: 500}\n"
    )
    return [str(platform), "--workload", str(tmp_path / "w"), "-q"]


@needs_full
@pytest.mark.parametrize("option", ["--json", "--trace"])
def test_run_outputs_on_a_full_disk(capsys, run_inputs, option):
    cli_error(
        capsys,
        ["run", *run_inputs, option, FULL],
        2,
        f"{option}: cannot write '/dev/full': No space left on device",
    )


@needs_full
def test_schema_on_a_full_disk(capsys):
    cli_error(capsys, ["schema", "--out", FULL], 2, "--out: cannot write '/dev/full'")


@needs_full
def test_optimize_json_on_a_full_disk(capsys):
    argv = [
        "optimize", "bandwidth", "--network", str(libra_path("network", "3d_network.yml")),
        "--workload", str(libra_path("workload", "ResNet_50.txt")),
        "--communicator", str(libra_path("communicator", "ResNet_50_3d.yml")),
        "--constraint", "sum == 500", "--json", FULL, "-q",
    ]  # fmt: skip
    cli_error(capsys, argv, 2, "--json: cannot write '/dev/full'")


def test_an_error_without_a_file_name_gets_the_output_name():
    with (
        pytest.raises(ConfigError, match="--json: cannot write 'r.json': No space left on device"),
        output_errors("r.json", "--json"),
    ):
        raise OSError(28, "No space left on device")


def test_an_unnamed_os_error_elsewhere_is_still_one_line(capsys, monkeypatch):
    import trainsim.cli.schema_cmd as schema_cmd

    def boom(*_a, **_k):
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(schema_cmd, "write_output", boom)
    cli_error(capsys, ["schema", "--out", "x.json"], 2, "trainsim: error: Input/output error")
