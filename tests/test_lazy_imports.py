"""Importing the simulator loads only what a run needs (start-up time is part of every CLI call
and of every process in a sweep): the Chakra reader's protobuf, YAML, the congestion-aware
fabrics and the optimizer come in only when used."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

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
    # nor Python's logging (nothing to log unless someone configured it), nor the endpoint
    # models other than the default one
    for unused in ("logging", "trainsim.endpoint.ace", "trainsim.endpoint.shared", "trainsim.endpoint.ideal", "trainsim.endpoint.resource"):
        assert unused not in loaded, f"{unused} imported by an in-memory run of the default endpoint"


def test_reading_chakra_files_loads_neither_protobuf_nor_scipy() -> None:
    """Canonical rank files (the example's; ASTRA-sim's DP workload, whose ids are not in order
    and whose dependencies point forward) are decoded without protobuf, and proved acyclic
    without scipy."""
    root = Path(__file__).resolve().parents[1]
    example = root / "examples" / "ring_allreduce" / "workload" / "ring"
    dp = root / "reference-data" / "reference-results" / "inputs" / "workload" / "dp" / "8npus_64layers_64MiB" / "et"
    loaded = _modules_after(
        "from trainsim.workload.chakra import read_workload\n"
        f"read_workload({str(example)!r}, 8)\n"
        f"read_workload({str(dp)!r}, 8)"
    )
    for heavy in ("google.protobuf", "scipy", "logging"):
        assert heavy not in loaded, f"{heavy} imported to read canonical Chakra files"


def test_endpoint_models_resolve_when_chosen() -> None:
    from trainsim.endpoint import endpoint_entry, endpoint_names

    for name in endpoint_names():
        assert callable(endpoint_entry(name).load_factory())


@pytest.mark.parametrize("name", trainsim.workload.__all__)
def test_workload_package_exports_resolve(name: str) -> None:
    assert getattr(trainsim.workload, name) is not None


def test_workload_package_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        trainsim.workload.nope  # noqa: B018


def test_workload_package_lists_what_it_exports() -> None:
    assert sorted(trainsim.workload.__all__) == dir(trainsim.workload)
