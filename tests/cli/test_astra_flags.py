"""`trainsim run` takes ASTRA-sim's flags (``--flag=value`` and ``--flag value``), with
ASTRA-sim's meaning; the expected times are those of tests/system/test_astra_knobs.py (a
4-rank ring, 1 MiB all-reduce: 43,000 ns)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers.astra_system import NETWORK, SYSTEM
from trainsim.cli.astra_args import astra_argv
from trainsim.cli.main import main
from trainsim.workload import GraphBuilder, write_workload


@pytest.fixture
def inputs(tmp_path: Path) -> Path:
    (tmp_path / "net.yml").write_text(NETWORK)
    (tmp_path / "sys.json").write_text(json.dumps(SYSTEM))
    graphs = []
    for rank in range(4):
        b = GraphBuilder(rank=rank)
        b.add(1, 7, "ar", comm_type=0, comm_size=1 << 20)
        graphs.append(b.build())
    write_workload(str(tmp_path / "wl"), graphs)
    return tmp_path


def _run(d: Path, *flags: str, system: Path | None = None) -> tuple[int, set[int]]:
    out = d / "r.json"
    code = main([
        "run",
        f"--workload-configuration={d / 'wl'}",
        f"--system-configuration={system or d / 'sys.json'}",
        "--network-configuration", str(d / "net.yml"),
        *flags,
        "--json", str(out), "-q",
    ])  # fmt: skip
    times = {round(r["finish_s"] * 1e9) for r in json.loads(out.read_text())["ranks"]} if code == 0 else set()
    return code, times


@pytest.mark.parametrize(
    ("flags", "expected_ns"),
    [
        ((), 43_000),
        (("--comm-scale=2",), 73_780),
        (("--comm-scale", "2"), 73_780),
        (("--compute-scale=2",), 43_000),  # no compute node here
        (("--injection-scale=2",), 43_280),
        (("--injection-scale", "2"), 43_280),
        (("--rendezvous-protocol",), 58_648),
        (("--rendezvous-protocol=true",), 58_648),
        (("--rendezvous-protocol", "1"), 58_648),
        (("--rendezvous-protocol=false",), 43_000),
        (("--rendezvous-protocol", "false"), 43_000),
        (("--num-queues-per-dim=4",), 21_500),
        (("--num-queues-per-dim", "2"), 43_000),
    ],
)
def test_astra_flags_in_both_forms(inputs, flags, expected_ns):
    assert _run(inputs, *flags) == (0, {expected_ns})


def test_compute_scale_from_the_command_line(inputs):
    graphs = []
    for rank in range(4):
        b = GraphBuilder(rank=rank)
        b.add(1, 4, "fwd", duration_s=100e-6)
        graphs.append(b.build())
    write_workload(str(inputs / "wl"), graphs)
    assert _run(inputs, "--compute-scale", "2") == (0, {200_000})


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (("--comm-scale=0",), "--comm-scale: got 0.0"),
        (("--injection-scale", "-2"), "--injection-scale: got -2.0"),
        (("--num-queues-per-dim=0",), "--num-queues-per-dim: got 0"),
        (("--rendezvous-protocol=maybe",), "--rendezvous-protocol: got 'maybe'"),
    ],
)
def test_bad_flag_values_are_one_line(inputs, capsys, flags, message):
    assert _run(inputs, *flags)[0] == 2
    err = capsys.readouterr().err
    assert err.startswith("trainsim: error: ") and message in err and "Traceback" not in err


def test_logging_folder_holds_the_runs_log(inputs):
    folder = inputs / "logs"
    assert _run(inputs, f"--logging-folder={folder}")[0] == 0
    lines = (folder / "log.log").read_text().splitlines()
    assert len(lines) == 4 and lines[0].endswith("[I] <workload>: sys[0] finished, 43000 cycles, exposed communication 43000 cycles.")
    assert (folder / "err.log").read_text() == ""


def test_trace_enabled_and_a_logging_configuration(inputs):
    (inputs / "trace.json").write_text(json.dumps({**SYSTEM, "trace-enabled": 1}))
    config = inputs / "logging.toml"
    config.write_text(
        f'[[sink]]\nname = "f"\ntype = "basic_file_sink_st"\nfilename = "{inputs}/nodes.log"\n'
        '[[logger]]\nname = "workload"\nsinks = ["f"]\nlevel = "debug"\n'
    )
    assert _run(inputs, "--logging-configuration", str(config), system=inputs / "trace.json")[0] == 0
    lines = (inputs / "nodes.log").read_text().splitlines()
    assert sum("issue,sys->id=" in line for line in lines) == 4
    assert any(line.endswith("callback,sys->id=1, tick=43000, node->id=1, node->name=ar, node->type=7") for line in lines)


def test_a_logging_configuration_that_cannot_be_mapped_is_one_line(inputs, capsys):
    config = inputs / "logging.toml"
    config.write_text('[[sink]]\nname = "d"\ntype = "daily_file_sink_mt"\n[[logger]]\nname = "w"\nsinks = ["d"]\n')
    assert _run(inputs, f"--logging-configuration={config}")[0] == 2
    err = capsys.readouterr().err
    assert err.startswith(f"trainsim: error: {config}: sink[0].type: ") and err[-1] == "\n" and err.count("\n") <= 2


def test_refused_system_key_from_the_command_line(inputs, capsys):
    (inputs / "bus.json").write_text(json.dumps({**SYSTEM, "model-shared-bus": 1}))
    assert _run(inputs, system=inputs / "bus.json")[0] == 2
    err = capsys.readouterr().err
    assert "bus.json: model-shared-bus: got 1; ASTRA-sim's LogGP shared-bus model" in err


def test_bare_boolean_flags_get_their_value():
    assert astra_argv(["run", "--rendezvous-protocol", "--json", "x"]) == ["run", "--rendezvous-protocol=true", "--json", "x"]
    assert astra_argv(["--rendezvous-protocol", "False"]) == ["--rendezvous-protocol=False"]
    assert astra_argv(["--rendezvous-protocol"]) == ["--rendezvous-protocol=true"]
    assert astra_argv(["--rendezvous-protocol=0", "p.yaml"]) == ["--rendezvous-protocol=0", "p.yaml"]
    assert astra_argv(["--rendezvous-protocol", "p.yaml"]) == ["--rendezvous-protocol=true", "p.yaml"]
