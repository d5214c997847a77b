"""The network seam (issue 15): a backend defined here, in the tests, registered through the
public registry, runs whole steps and gets exactly the symmetry fast paths its declared
capabilities allow, with no edit to ``src/trainsim/system/``; its platform-file section is
validated by its own model."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict, Field

from tests.system.test_symmetry import SMALL, both, platform, small_case
from trainsim.config.platform import parse_platform
from trainsim.errors import ConfigError
from trainsim.network import (
    NO_SYMMETRY,
    ONE_LINK,
    PAIRWISE,
    BackendBase,
    Capabilities,
    backend_capabilities,
    backend_names,
    make_backend,
    register_backend,
    unregister_backend,
)
from trainsim.network.congestion_aware import CongestionAwareNetwork
from trainsim.system.api import simulate
from trainsim.workload.micro import collective_workload

MiB = 2**20


class ConstantOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    latency_ns: float = Field(default=700.0, ge=0)
    bandwidth_gbps: float = Field(default=25.0, gt=0)


class ConstantLatency(BackendBase):
    """Every message: one fixed latency plus its bytes at one fixed rate, whatever the pair."""

    name = "test_constant"
    capabilities = Capabilities(symmetry=PAIRWISE, whole_ns_compat=True)

    def __init__(self, spec: Any, queue: Any, *, compat_astra: bool = False, options: ConstantOptions) -> None:
        super().__init__(queue, compat_astra=compat_astra)
        self.options = options
        self.topology = _topology(spec)
        self._bytes_per_ns = options.bandwidth_gbps

    def delay_ns(self, src: int, dst: int, nbytes: int) -> float:
        delay = self.options.latency_ns + nbytes / self._bytes_per_ns
        return float(int(delay)) if self.compat_astra else delay

    def send(self, src: int, dst: int, nbytes: int, on_arrival: Callable[[Any], None], arg: Any = None) -> None:
        self.bytes_sent += nbytes
        self.messages_sent += 1
        self.queue.schedule(self.delay_ns(src, dst, nbytes), on_arrival, arg)


class Unshared(ConstantLatency):
    """The same network declaring no symmetry class: every rank is simulated."""

    name = "test_unshared"
    capabilities = Capabilities(symmetry=NO_SYMMETRY)


class LinksWithAnotherName(CongestionAwareNetwork):
    """A link-level backend of the user's: the one-link class, through its fork."""

    name = "test_links"


def _topology(spec: Any) -> Any:
    from trainsim.topology import MultiDimTopology

    return MultiDimTopology([d.kind for d in spec.dims], [d.size for d in spec.dims])


@pytest.fixture(autouse=True)
def registered() -> Iterator[None]:
    register_backend("test_constant", ConstantLatency, ConstantLatency.capabilities, options_model=ConstantOptions)
    register_backend("test_unshared", Unshared, Unshared.capabilities, options_model=ConstantOptions)
    register_backend(
        "test_links",
        lambda spec, queue, *, compat_astra, options: LinksWithAnotherName(spec, queue, compat_astra=compat_astra),
        LinksWithAnotherName.capabilities,
    )
    yield
    for name in ("test_constant", "test_unshared", "test_links"):
        unregister_backend(name)


def test_registered_backends_are_listed_and_declared():
    assert {"test_constant", "test_unshared", "test_links"} <= set(backend_names())
    assert backend_capabilities("test_links").symmetry == ONE_LINK
    with pytest.raises(ValueError, match="already registered"):
        register_backend("test_constant", ConstantLatency, ConstantLatency.capabilities)
    with pytest.raises(ValueError, match="built-in"):
        unregister_backend("congestion_unaware")


@pytest.mark.parametrize("name", list(SMALL))
@pytest.mark.parametrize("compat", ["astra", "default"])
def test_pairwise_backend_gets_the_representative(name, compat):
    plat, graphs = small_case(name, compat)
    fast, slow = both(plat, graphs, backend="test_constant")
    assert fast.info["symmetry"] == "representative"
    assert fast.info["backend"] == "test_constant"
    # the backend's own pricing, not the analytical one's
    analytical = simulate(plat, graphs)
    assert fast.makespan_s != analytical.makespan_s


def test_backend_without_symmetry_runs_every_rank_with_the_same_result():
    plat = platform([("Ring", 8)])
    graphs = collective_workload(8, "all_reduce", 16 * MiB)
    unshared = simulate(plat, graphs, backend="test_unshared")
    assert "declares no symmetry class" in unshared.info["symmetry"]
    fast = simulate(plat, graphs, backend="test_constant")
    assert fast.info["symmetry"] == "representative"
    assert list(unshared.ranks) == list(fast.ranks)


def test_one_link_backend_of_the_users_uses_its_fork():
    plat = platform([("Ring", 16)])
    fast, _ = both(plat, collective_workload(16, "all_reduce", 16 * MiB), backend="test_links")
    assert fast.info["symmetry"] == "representative"
    builtin = simulate(plat, collective_workload(16, "all_reduce", 16 * MiB), backend="congestion_aware")
    assert list(fast.ranks) == list(builtin.ranks)


def test_one_link_backend_steps_aside_on_shared_links():
    plat = platform([("Ring", 2), ("Switch", 4)], "direct")  # every member's downlink shared by the others
    fast, _ = both(plat, collective_workload(8, "all_reduce", MiB), backend="test_links")
    assert fast.info["symmetry"].startswith("per collective")


def _platform_file(backends: dict[str, Any]) -> dict[str, Any]:
    return {
        "network": {"dims": [{"topology": "Ring", "size": 4, "bandwidth_gbps": 50, "latency_ns": 500}]},
        "backends": backends,
    }


def test_platform_file_section_reaches_the_backend():
    plat = parse_platform(_platform_file({"test_constant": {"latency_ns": 2000}}), "p.yaml")
    assert plat.backend_options["test_constant"] == ConstantOptions(latency_ns=2000)
    slow = simulate(plat, collective_workload(4, "all_reduce", MiB), backend="test_constant")
    plat_default = parse_platform(_platform_file({}), "p.yaml")
    quick = simulate(plat_default, collective_workload(4, "all_reduce", MiB), backend="test_constant")
    assert slow.makespan_s > quick.makespan_s


@pytest.mark.parametrize(
    ("backends", "field", "what"),
    [
        ({"test_constant": {"latency": 3}}, "backends.test_constant.latency", "Extra inputs"),
        ({"test_constant": {"bandwidth_gbps": -1}}, "backends.test_constant.bandwidth_gbps", "greater than 0"),
        ({"nosuch": {}}, "backends.nosuch", "unknown network backend 'nosuch'; expected one of congestion_unaware"),
        ({"congestion_aware": {"mtu": 1000}}, "backends.congestion_aware", "has no parameters"),
    ],
)
def test_bad_backend_sections_name_the_field(backends, field, what):
    with pytest.raises(ConfigError, match=what) as err:
        parse_platform(_platform_file(backends), "p.yaml")
    assert err.value.field == field
    assert err.value.file == "p.yaml"


def test_unknown_backend_name_is_a_config_error():
    plat = platform([("Ring", 4)])
    with pytest.raises(ConfigError, match="unknown network backend 'nosuch'"):
        simulate(plat, collective_workload(4, "all_reduce", MiB), backend="nosuch")


def test_capabilities_declared_twice_must_agree():
    register_backend("test_liar", ConstantLatency, Capabilities(symmetry=ONE_LINK), options_model=ConstantOptions)
    try:
        with pytest.raises(ValueError, match="registered with"):
            make_backend("test_liar", platform([("Ring", 4)]).network, None, compat_astra=False)  # type: ignore[arg-type]
    finally:
        unregister_backend("test_liar")


def _reference_cases() -> list[dict[str, Any]]:
    """ASTRA-sim's reference inputs (reference-data/), one case per distinct input set."""
    import json

    from tests.helpers.reference_data import RESULTS

    seen, cases = set(), []
    for case in json.loads((RESULTS / "cases.json").read_text()):
        key = (case["workload"], case["system"], case["network"], case["memory"])
        if key not in seen:
            seen.add(key)
            cases.append(case)
    return cases


@pytest.mark.parametrize("case", _reference_cases(), ids=lambda c: c["name"])
def test_reference_cases_on_a_backend_of_the_tests(case):
    """Every ASTRA-sim reference input set runs on the test's constant-latency backend, with
    the fast paths its ``pairwise`` class allows, and gives the rank-by-rank result."""
    from tests.helpers.reference_data import RESULTS
    from trainsim.system.api import load_inputs

    plat, graphs = load_inputs(
        None,
        RESULTS / case["workload"],
        network=RESULTS / case["network"],
        system=RESULTS / case["system"],
        memory=RESULTS / case["memory"],
    )
    fast = simulate(plat, graphs, backend="test_constant", symmetry="strict")
    slow = simulate(plat, graphs, backend="test_constant", symmetry=False)
    assert list(fast.ranks) == list(slow.ranks)
    assert fast.info["backend"] == "test_constant"
    if any(a.startswith(("doubleBinaryTree", "inSwitch")) for a in plat.system.implementations.all_reduce):
        return  # asymmetric algorithms run rank by rank on any backend
    assert fast.info["symmetry"] == "representative", fast.info["symmetry"]
