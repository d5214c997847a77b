"""Devices defined in the platform file (``devices:``): validated (unknown keys refused, a
device without a base complete), built from a base device with changes, found by
``get_device`` before the built-in table, round-tripped by dump/load, and used by
``trainsim generate --device``."""

from __future__ import annotations

import pytest

from trainsim.cli.main import main
from trainsim.compute import OperatorTimer, get_device
from trainsim.config.platform import dump_platform, load_platform, parse_platform
from trainsim.errors import ConfigError

BASE = {"network": {"dims": [{"topology": "Switch", "size": 8, "bandwidth_gbps": 450, "latency_ns": 700}]}}


def _platform(devices, tmp_path=None):
    return parse_platform({**BASE, "devices": devices}, "p.yaml")


def test_a_device_from_a_base_with_changes():
    p = _platform({"H100-700W": {"base": "H100", "hbm_capacity_gb": 94, "efficiency": {"sustained": 0.7}}})
    dev = get_device("h100-700w", p.devices)
    h100 = get_device("H100")
    assert dev.peak("bf16") == h100.peak("bf16") and dev.hbm_bandwidth == h100.hbm_bandwidth
    assert dev.hbm_capacity == 94e9
    assert dev.efficiency.sustained == 0.7 and dev.efficiency.gemm == h100.efficiency.gemm
    assert OperatorTimer(dev).memory_capacity == 94e9


def test_a_new_device():
    p = _platform({"X1": {"vendor": "Acme", "peak_tflops": {"bf16": 500}, "hbm_bandwidth_gbps": "4 TB/s", "hbm_capacity_gb": 96}})
    dev = p.devices["X1"]
    assert dev.peak("bf16") == 500e12 and dev.hbm_bandwidth == 4000e9 and dev.vendor == "Acme"
    # the built-in table is still there
    assert get_device("A100", p.devices).name == "A100"
    again = load_platform_text(dump_platform(p))
    assert again.devices["X1"] == dev


def load_platform_text(text):
    import yaml

    return parse_platform(yaml.safe_load(text), "dumped.yaml")


@pytest.mark.parametrize(
    "devices, field, message",
    [
        ({"X": {"peak_tflops": {"bf16": 500}}}, "devices.X", "needs hbm_bandwidth_gbps, hbm_capacity_gb"),
        ({"X": {"base": "H100", "hbm_size_gb": 94}}, "devices.X.hbm_size_gb", ""),
        ({"X": {"base": "H100", "efficiency": {"gemm": 1.5}}}, "devices.X.efficiency.gemm", ""),
        ({"X": {"base": "H900"}}, "devices.X.base", "unknown device 'H900'"),
    ],
)
def test_bad_devices(devices, field, message):
    with pytest.raises(ConfigError) as err:
        _platform(devices)
    text = str(err.value)
    assert field in text and message in text and "p.yaml" in text


def test_generate_uses_the_platform_device(tmp_path, capsys):
    import yaml

    path = tmp_path / "p.yaml"
    path.write_text(yaml.safe_dump({**BASE, "devices": {"slow": {"base": "A100", "peak_tflops": {"bf16": 31.2}}}}))
    args = ["generate", "megatron-1.7b", "--dp", "8", "--micro-batch", "1", "--platform", str(path), "--no-memory-check", "--json"]
    assert main([*args, str(tmp_path / "own.json")]) == 0
    assert main([*args, str(tmp_path / "a100.json"), "--device", "A100"]) == 0
    import json

    own = json.loads((tmp_path / "own.json").read_text())
    a100 = json.loads((tmp_path / "a100.json").read_text())
    assert own["device"] == "slow" and a100["device"] == "A100"
    assert own["makespan_s"] > 5 * a100["makespan_s"]
    assert load_platform(path).devices["slow"].peak("bf16") == 31.2e12
