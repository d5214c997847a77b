"""The audit of docs/astra-compat.md, in the config layer: the system features trainsim refuses
(file, key, value and why), the run knobs (set from the command line, a native file or Python)
and the logging flags (ASTRA-sim's spdlog_setup file and log folder on Python's logging)."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from tests.helpers.astra_system import SYSTEM

from trainsim.config.astra import load_astra_system
from trainsim.config.knobs import with_knobs
from trainsim.config.log_config import configure_logging
from trainsim.config.platform import dump_platform, load_platform
from trainsim.config.types import DimSpec, NetworkSpec, Platform
from trainsim.errors import ConfigError

NATIVE = """\
network:
  dims:
    - {topology: Ring, size: 4, bandwidth_gbps: 50, latency_ns: 500}
system:
  endpoint_delay_ns: 10
"""


def _system(tmp_path: Path, **keys: object) -> Path:
    path = tmp_path / "sys.json"
    path.write_text(json.dumps({**SYSTEM, **keys}))
    return path


@pytest.mark.parametrize(
    ("key", "why"),
    [
        ("model-shared-bus", "LogGP shared-bus model"),
        ("track-local-mem", "local-memory tracker"),
    ],
)
def test_a_refused_system_key_names_file_key_value_and_why(tmp_path, key, why):
    path = _system(tmp_path, **{key: 1})
    with pytest.raises(ConfigError) as err:
        load_astra_system(path)
    message = str(err.value)
    assert message.startswith(f"{path}: {key}: got 1; ") and why in message and "expected 0" in message
    assert err.value.hint


@pytest.mark.parametrize("key", ["model-shared-bus", "track-local-mem"])
def test_a_refused_key_switched_off_is_fine(tmp_path, key):
    load_astra_system(_system(tmp_path, **{key: 0}))


def test_keys_with_no_effect_in_astra_sim_are_accepted(tmp_path):
    # boost-mode is not read by ASTRA-sim 518bd51; L, o, g, G and local-reduction-delay act only
    # through the shared bus; local-mem-trace-filename only through the memory tracker
    s = load_astra_system(
        _system(tmp_path, **{"boost-mode": 1, "L": 5, "o": 1, "g": 2, "G": 0.1, "local-reduction-delay": 3, "local-mem-trace-filename": "t"})
    )
    assert s.boost_mode and not s.shared_bus.enabled and not s.track_local_mem


@pytest.mark.parametrize(
    ("line", "field", "why"),
    [
        ("  shared_bus: {enabled: true}", "system.shared_bus.enabled", "LogGP"),
        ("  track_local_mem: true", "system.track_local_mem", "local-memory tracker"),
    ],
)
def test_the_native_file_refuses_the_same(tmp_path, line, field, why):
    path = tmp_path / "p.yaml"
    path.write_text(NATIVE + line + "\n")
    with pytest.raises(ConfigError, match=why) as err:
        load_platform(path)
    assert err.value.field == field and err.value.file == str(path)


def test_the_native_file_sets_the_run_knobs_and_dumps_them(tmp_path):
    path = tmp_path / "p.yaml"
    path.write_text(NATIVE + "  comm_scale: 2\n  compute_scale: 0.5\n  injection_scale: 3\n  rendezvous: true\n  queues_per_dim: 4\n")
    s = load_platform(path).system
    assert (s.comm_scale, s.compute_scale, s.injection_scale, s.rendezvous, s.queues_per_dim) == (2, 0.5, 3, True, 4)
    again = tmp_path / "again.yaml"
    again.write_text(dump_platform(load_platform(path)))
    assert load_platform(again).system == s


def test_the_native_file_checks_the_run_knobs(tmp_path):
    path = tmp_path / "p.yaml"
    path.write_text(NATIVE + "  queues_per_dim: 0\n")
    with pytest.raises(ConfigError, match="queues_per_dim"):
        load_platform(path)


def _platform() -> Platform:
    return Platform(NetworkSpec((DimSpec("Ring", 4, 50e9, 500.0),)))


def test_with_knobs_sets_the_system_fields():
    plat = with_knobs(_platform(), comm_scale=2.0, compute_scale=3, injection_scale=0.5, rendezvous=True, queues_per_dim=2)
    s = plat.system
    assert (s.comm_scale, s.compute_scale, s.injection_scale, s.rendezvous, s.queues_per_dim) == (2.0, 3, 0.5, True, 2)
    assert with_knobs(plat, comm_scale=None) is plat


@pytest.mark.parametrize(
    ("knob", "value", "flag"),
    [
        ("comm_scale", 0.0, "--comm-scale"),
        ("compute_scale", float("inf"), "--compute-scale"),
        ("injection_scale", -1.0, "--injection-scale"),
        ("queues_per_dim", 0, "--num-queues-per-dim"),
        ("queues_per_dim", 1.5, "--num-queues-per-dim"),
    ],
)
def test_with_knobs_names_the_flag_of_a_bad_value(knob, value, flag):
    with pytest.raises(ConfigError) as err:
        with_knobs(_platform(), **{knob: value})
    assert err.value.field == flag and repr(value) in str(err.value)


# -- --logging-folder and --logging-configuration --------------------------------------------

LOG = logging.getLogger("trainsim.workload")


def test_the_log_folder_gets_astra_sims_two_files(tmp_path):
    folder = tmp_path / "log"
    with configure_logging(folder=folder) as setup:
        LOG.info("sys[0] finished, 5 cycles, exposed communication 0 cycles.")
        LOG.debug("issue,sys->id=0")
        logging.getLogger("trainsim.system").error("bad")
    log = (folder / "log.log").read_text().splitlines()
    err = (folder / "err.log").read_text().splitlines()
    assert [line.split("] ", 2)[1:] for line in log] == [
        ["[I", "<workload>: sys[0] finished, 5 cycles, exposed communication 0 cycles."],
        ["[D", "<workload>: issue,sys->id=0"],
        ["[E", "<system>: bad"],
    ]
    assert len(err) == 1 and err[0].endswith("[E] <system>: bad")
    assert not setup.handlers and logging.getLogger("trainsim").level == logging.NOTSET  # undone


def test_a_logging_configuration_maps_sinks_loggers_and_levels(tmp_path):
    config = tmp_path / "logging.toml"
    config.write_text(
        f"""
global_pattern = "%v"
[[pattern]]
name = "short"
value = "%l %v"
[[sink]]
name = "file"
type = "basic_file_sink_mt"
filename = "{tmp_path}/out/workload.log"
create_parent_dir = true
level = "info"
[[sink]]
name = "rot"
type = "rotating_file_sink_st"
base_filename = "{tmp_path}/rot.log"
max_size = "1M"
max_files = 2
[[sink]]
name = "quiet"
type = "null_sink_mt"
[[logger]]
name = "workload"
sinks = ["file", "rot"]
level = "debug"
pattern = "short"
type = "async"
[[logger]]
name = "system"
sinks = ["quiet"]
level = "off"
"""
    )
    with configure_logging(config):
        LOG.debug("a debug line")
        LOG.info("an info line")
        LOG.log(5, "a trace line")  # below the logger's level
        logging.getLogger("trainsim.system").critical("never")
    workload = (tmp_path / "out" / "workload.log").read_text()
    rotating = (tmp_path / "rot.log").read_text()
    assert "a debug line" not in workload and "[I] <workload>: an info line" in workload
    assert "[D] <workload>: a debug line" in rotating and "trace" not in rotating
    assert "never" not in workload + rotating


@pytest.mark.parametrize(
    ("body", "field", "expected"),
    [
        ('[[sink]]\nname = "d"\ntype = "daily_file_sink_mt"\nbase_filename = "x"\nrotation_hour = 0\nrotation_minute = 0\n[[logger]]\nname = "w"\nsinks = ["d"]\n', "sink[0].type", "date-stamped"),
        ('[[sink]]\nname = "s"\ntype = "syslog_sink_st"\n[[logger]]\nname = "w"\nsinks = ["s"]\n', "sink[0].type", "system log"),
        ('[[sink]]\nname = "s"\ntype = "telegram_sink"\n[[logger]]\nname = "w"\nsinks = ["s"]\n', "sink[0].type", "unknown sink type"),
        ('[[sink]]\nname = "s"\ntype = "stdout_sink_mt"\n[[logger]]\nname = "w"\nsinks = ["t"]\n', "logger[0].sinks[0]", "the name of a [[sink]]"),
        ('[[sink]]\nname = "s"\ntype = "stdout_sink_mt"\n[[logger]]\nname = "w"\nsinks = ["s"]\nlevel = "verbose"\n', "logger[0].level", "'trace'"),
        ('[[sink]]\nname = "s"\ntype = "stdout_sink_mt"\n[[logger]]\nname = "w"\nsinks = ["s"]\npattern = "p"\n', "logger[0].pattern", "[[pattern]]"),
        ('[[sink]]\nname = "s"\ntype = "rotating_file_sink_mt"\nbase_filename = "x"\nmax_size = "lots"\nmax_files = 1\n[[logger]]\nname = "w"\nsinks = ["s"]\n', "sink[0].max_size", '"10M"'),
        ('[[sink]]\nname = "s"\ntype = "stdout_sink_mt"\n', "logger", "no [[logger]]"),
        ('[[sink]]\nname = "s"\ntype = "stdout_sink_mt"\ncolour = 1\n[[logger]]\nname = "w"\nsinks = ["s"]\n', "sink[0].colour", "unknown key"),
    ],
)
def test_a_logging_configuration_refuses_what_cannot_be_mapped(tmp_path, body, field, expected):
    config = tmp_path / "logging.toml"
    config.write_text(body)
    with pytest.raises(ConfigError) as err:
        configure_logging(config)
    assert err.value.file == str(config) and err.value.field == field and expected in str(err.value)


def test_a_logging_configuration_that_is_not_toml(tmp_path):
    config = tmp_path / "logging.toml"
    config.write_text("[[sink]\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        configure_logging(config)


def test_astra_sims_empty_configuration_means_none():
    with configure_logging("empty") as setup:
        assert not setup.handlers
