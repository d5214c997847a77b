"""Endpoint models behind their seam: ASTRA-sim's rule (astra-sim-semantics.md B1-B2), the
registry, the platform file's ``endpoint:`` section, and a model registered from here (with no
edit to ``system/``) changing collective times as its rule says."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal, Self

import pytest
import yaml
from pydantic import Field

from trainsim.config.platform import dump_platform, load_platform, parse_platform
from trainsim.endpoint import (
    AstraEndpoint,
    AstraEndpointSpec,
    endpoint_entry,
    endpoint_names,
    register_endpoint,
    unregister_endpoint,
)
from trainsim.endpoint.config import EndpointConfig
from trainsim.errors import ConfigError
from trainsim.system.api import simulate
from trainsim.system.build import build_endpoint
from trainsim.workload.micro import collective_workload

MiB = 2**20
RING8 = """\
compat: astra
network:
  dims: [{topology: Ring, size: 8, bandwidth_gbps: 50, latency_ns: 500}]
system: {endpoint_delay_ns: 10, local_mem_bw_gbps: 1600}
"""


def test_astra_rule_in_both_modes():
    """E per insertion (whole ns in compatibility mode), the 10 ns Fast path, and three memory
    passes per reduction, each truncated in compatibility mode (B2: 32,768 B at 1600 -> 60)."""
    compat = AstraEndpoint(10.7, 1600e9, compat_astra=True)
    exact = AstraEndpoint(10.7, 1600e9, compat_astra=False)
    assert compat.insertion_ns(0, 0.0, False) == 10.0 and exact.insertion_ns(3, 5.0, False) == 10.7
    assert compat.insertion_ns(0, 0.0, True) == exact.insertion_ns(0, 0.0, True) == 10.0
    assert compat.reduction_ns(0, 0.0, 32768) == 60.0
    assert exact.reduction_ns(0, 0.0, 32768) == 3 * 32768 / 1600e9 * 1e9
    assert compat.time_invariant


def test_no_section_is_astra_with_the_system_knobs(tmp_path):
    path = tmp_path / "p.yaml"
    path.write_text(RING8)
    platform = load_platform(path)
    assert platform.endpoint is None
    model = build_endpoint(platform, True)
    assert isinstance(model, AstraEndpoint)
    assert (model.delay_ns, model.fast_ns, model.local_mem_bw) == (10.0, 10.0, 1600e9)


def test_astra_section_loads_dumps_and_sets_the_fast_path(tmp_path):
    path = tmp_path / "p.yaml"
    path.write_text(RING8 + "endpoint: {model: astra, fast_path_ns: 4}\n")
    platform = load_platform(path)
    assert platform.endpoint == AstraEndpointSpec(fast_path_ns=4.0)
    assert build_endpoint(platform, False).insertion_ns(0, 0.0, True) == 4.0
    assert yaml.safe_load(dump_platform(platform))["endpoint"] == {
        "model": "astra",
        "fast_path_ns": 4.0,
    }
    again = tmp_path / "again.yaml"
    again.write_text(dump_platform(platform))
    assert load_platform(again) == platform


@pytest.mark.parametrize(
    ("section", "field", "match"),
    [
        (
            "{model: nonesuch}",
            "endpoint.model",
            r"got 'nonesuch'; expected an endpoint model, one of astra, shared, ace, ideal",
        ),
        (
            "{fast_path_ns: 4}",
            "endpoint.model",
            r"missing; expected an endpoint model, one of astra",
        ),
        (
            "{model: astra, fast_ns: 4}",
            "endpoint.fast_ns",
            r"unknown key 'fast_ns'; expected one of model, fast_path_ns",
        ),
        (
            "{model: astra, fast_path_ns: -1}",
            "endpoint.fast_path_ns",
            r"got -1; input should be greater than or equal to 0",
        ),
        ("{model: astra, fast_path_ns: '4'}", "endpoint.fast_path_ns", r"got '4'"),
        ("astra", "endpoint", r"valid dictionary"),
    ],
)
def test_bad_section_names_file_and_field(tmp_path, section, field, match):
    path = tmp_path / "p.yaml"
    path.write_text(RING8 + f"endpoint: {section}\n")
    with pytest.raises(ConfigError, match=match) as info:
        load_platform(path)
    assert info.value.file == str(path) and info.value.field == field
    assert "(line 5)" in str(info.value)


def test_registry_refuses_unknown_and_duplicate_names():
    assert endpoint_names()[0] == "astra"
    with pytest.raises(ConfigError, match="unknown endpoint model 'nope'; expected one of astra"):
        endpoint_entry("nope")
    with pytest.raises(ConfigError, match="already registered"):
        register_endpoint("astra", endpoint_entry("astra").factory, endpoint_entry("astra").config)
    unregister_endpoint("astra")  # the default stays
    assert "astra" in endpoint_names()


# -- a model of the test's own: reductions cost nothing -------------------------------------


@dataclass(frozen=True)
class FreeReductionSpec:
    model: ClassVar[str] = "free_reduction"
    delay_ns: float = 10.0


class FreeReduction:
    """E per insertion, like ASTRA-sim's; reductions take no time."""

    time_invariant = True

    def __init__(self, delay_ns: float) -> None:
        self.delay_ns = delay_ns

    def insertion_ns(self, rank: int, now_ns: float, fast: bool) -> float:
        return self.delay_ns

    def reduction_ns(self, rank: int, now_ns: float, nbytes: int) -> float:
        return 0.0


class FreeReductionConfig(EndpointConfig):
    model: Literal["free_reduction"]
    delay_ns: float = Field(10.0, ge=0)

    def to_spec(self) -> FreeReductionSpec:
        return FreeReductionSpec(self.delay_ns)

    @classmethod
    def from_spec(cls, spec: FreeReductionSpec) -> Self:
        return cls(model="free_reduction", delay_ns=spec.delay_ns)


@pytest.fixture
def free_reduction():
    register_endpoint(
        "free_reduction",
        lambda spec, _platform, _compat: FreeReduction(spec.delay_ns),
        FreeReductionConfig,
    )
    yield
    unregister_endpoint("free_reduction")


@pytest.mark.parametrize("symmetry", [True, False])
def test_registered_model_is_chosen_from_the_file(free_reduction, tmp_path, symmetry):
    """Ring reduce-scatter and all-reduce on 8 NPUs reduce 7 times on every rank's critical
    path (B4), each ``red(1 MiB / 8)`` = 3 x trunc(131,072 / 1600) = 243 ns: without them each
    is 7 x 243 ns shorter, on the symmetric and the rank-by-rank paths alike; all-gather
    reduces nothing and does not change."""
    astra_path, free_path = tmp_path / "astra.yaml", tmp_path / "free.yaml"
    astra_path.write_text(RING8)
    free_path.write_text(RING8 + "endpoint: {model: free_reduction, delay_ns: 10}\n")
    astra, free = load_platform(astra_path), load_platform(free_path)
    assert free.endpoint == FreeReductionSpec(10.0)
    assert yaml.safe_load(dump_platform(free))["endpoint"] == {
        "model": "free_reduction",
        "delay_ns": 10.0,
    }
    saved = {"reduce_scatter": 7 * 243, "all_reduce": 7 * 243, "all_gather": 0}
    for collective, ns in saved.items():
        times = [
            simulate(p, collective_workload(8, collective, MiB), symmetry=symmetry).makespan_s * 1e9
            for p in (astra, free)
        ]
        assert times[0] - times[1] == pytest.approx(ns, abs=1e-6), collective


def test_registered_model_section_is_strict_and_in_the_schema(free_reduction):
    from trainsim.config.platform import platform_json_schema

    base = yaml.safe_load(RING8)
    with pytest.raises(ConfigError, match=r"endpoint\.delay_ns: got -1\.0") as info:
        parse_platform(
            {**base, "endpoint": {"model": "free_reduction", "delay_ns": -1.0}}, "<test>"
        )
    assert info.value.file == "<test>"
    with pytest.raises(ConfigError, match=r"one of astra, shared, ace, ideal, free_reduction"):
        parse_platform({**base, "endpoint": {"model": "nonesuch"}}, "<test>")
    schema = platform_json_schema()
    assert {"$ref": "#/$defs/FreeReductionConfig"} in schema["properties"]["endpoint"]["anyOf"][0][
        "oneOf"
    ]
