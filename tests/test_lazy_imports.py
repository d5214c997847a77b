"""Importing the simulator loads only what a run needs (start-up time is part of every CLI call
and of every process in a sweep): the Chakra reader's protobuf, YAML, the congestion-aware
fabrics and the optimizer come in only when used."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import trainsim.workload


def _modules_after(code: str) -> set[str]:
    probe = f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", probe], check=True, capture_output=True, text=True)
    return set(json.loads(out.stdout.strip().splitlines()[-1]))


def test_simulate_in_memory_does_not_load_readers_or_other_backends() -> None:
    loaded = _modules_after(
        "from trainsim.system.api import simulate\n"
        "from trainsim.config.types import DimSpec, NetworkSpec, Platform, SystemSpec\n"
        "from trainsim.workload.micro import collective_workload\n"
        "p = Platform(NetworkSpec((DimSpec('Ring', 8, 50e9, 500.0),)), SystemSpec())\n"
        "simulate(p, collective_workload(8, 'all_reduce', 2**20))"
    )
    for heavy in ("google.protobuf", "yaml", "pydantic", "scipy", "trainsim.workload.chakra", "trainsim.topology.fabrics", "trainsim.network.flow"):
        assert heavy not in loaded, f"{heavy} imported by an in-memory congestion-unaware run"


@pytest.mark.parametrize("name", trainsim.workload.__all__)
def test_workload_package_exports_resolve(name: str) -> None:
    assert getattr(trainsim.workload, name) is not None


def test_workload_package_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        trainsim.workload.nope  # noqa: B018


def test_workload_package_lists_what_it_exports() -> None:
    assert sorted(trainsim.workload.__all__) == dir(trainsim.workload)
