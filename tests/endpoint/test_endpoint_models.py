"""Endpoint models behind their seam: ASTRA-sim's rule (astra-sim-semantics.md B1-B2) and the
registry."""

from __future__ import annotations

import pytest

from trainsim.config.platform import load_platform
from trainsim.endpoint import (
    AstraEndpoint,
    endpoint_entry,
    endpoint_names,
    register_endpoint,
    unregister_endpoint,
)
from trainsim.errors import ConfigError
from trainsim.system.build import build_endpoint

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


def test_registry_refuses_unknown_and_duplicate_names():
    assert endpoint_names()[0] == "astra"
    with pytest.raises(ConfigError, match="unknown endpoint model 'nope'; expected one of astra"):
        endpoint_entry("nope")
    with pytest.raises(ConfigError, match="already registered"):
        register_endpoint("astra", endpoint_entry("astra").factory, endpoint_entry("astra").config)
    unregister_endpoint("astra")  # the default stays
    assert "astra" in endpoint_names()
