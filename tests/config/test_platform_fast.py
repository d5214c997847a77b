"""The fast path of a platform file (config/platform_fast.py) agrees with the pydantic models:
its table is the one the models give now, it covers every field of every model, and on every
file here and thousands of mutations of them (every key: removed, retyped, out of range, an
unknown key beside it) it either declines or gives what pydantic gives, the same values, types
and given keys, and the same Platform; a file it declines gets pydantic's message, word for word.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import BaseModel, ConfigDict, Field, model_validator

from trainsim.config import platform as platform_mod
from trainsim.config import platform_fast, platform_models, platform_schema, platform_schema_gen
from trainsim.config.files import load_yaml_mapping
from trainsim.config.platform import load_platform, parse_platform, platform_to_dict
from trainsim.config.platform_models import PlatformModel
from trainsim.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted(p for p in (ROOT / "examples").rglob("*.yaml") if "network" in load_yaml_mapping(p))

# every section the examples leave out: devices, a PCM tier, endpoint, backends, NCCL, a
# leaf-spine and a graph fabric, custom collectives, the shared bus, the roofline
EVERYTHING = """
network:
  dims: [{topology: Switch, size: 8, bandwidth_gbps: 100, latency_ns: 500}]
  fabric: {kind: leaf_spine, hosts_per_leaf: 4, spines: 2, oversubscription: 2, bandwidth_gbps: 50 GB/s,
           latency_ns: 100, uplink_latency_ns: 200}
system:
  collective_tuner: nccl
  nccl: {arch: hopper, channels: 8, nvlink_fraction: 0.9, efficiency: 0.8, nvls: true, nvls_reduce_gbps: 400,
         collnet: false, net_overhead_us: 2, algorithms: [ring, tree], protocols: [Simple, LL]}
  collective_span: all
  custom_collectives: {all_to_all: custom.et}
  per_node_custom_implementation: per_node.et
  roofline_enabled: true
  peak_perf_tflops: 100
  shared_bus: {enabled: true, latency_ns: 1, overhead_ns: 2, gap_ns: 3, gap_per_byte_ns: 0.5, local_reduction_delay_ns: 2}
memory: {mode: per_npu, technology: pcm, pcm: {scheme: tri, load: 0.4, channels: 2, banks: 4, devices: 2, requests: 1000},
         nodes: 1, npus_per_node: 8, capacity_gb: 64}
comm_groups: {1: [0, 1, 2, 3], "2": [4, 5]}
endpoint: {model: astra}
backends: {flow: {}}
devices:
  mine: {vendor: acme, peak_tflops: {bf16: 100}, hbm_bandwidth_gbps: 2 TB/s, hbm_capacity_gb: 80,
         efficiency: {gemm: 0.7, attention: 0.6, flash_attention: 0.5, memory: 0.8, sustained: 0.9,
                      gemm_half_size: 256, kernel_overhead_s: 0.00001}}
  tuned: {base: H100, efficiency: {gemm: 0.5}}
"""
GRAPH = """
network:
  dims: [{topology: Ring, size: 4, bandwidth_gbps: 25, latency_ns: 10}]
  fabric: {kind: graph, file: edges.txt}
memory: {mode: pool, latency_ns: 100, bandwidth_gbps: 800 Gb/s}
"""


def _documents() -> list[dict[str, Any]]:
    """Every example platform as written and as dumped in full (every system key), and the two
    above."""
    docs: list[dict[str, Any]] = []
    for path in EXAMPLES:
        docs.append(load_yaml_mapping(path))
        docs.append(platform_to_dict(load_platform(path)))
    docs += [yaml.safe_load(EVERYTHING), yaml.safe_load(GRAPH)]
    return docs


def _tree(x: Any) -> Any:
    """Values with their types, and each model's name and given keys (fast or pydantic)."""
    if isinstance(x, platform_fast.Section):
        return (x.model_name, x.model_fields_set, {k: _tree(v) for k, v in x.values.items()})
    if isinstance(x, BaseModel):
        fields = type(x).model_fields
        return (type(x).__name__, frozenset(x.model_fields_set), {k: _tree(getattr(x, k)) for k in fields})
    if type(x) is list:
        return [_tree(v) for v in x]
    if type(x) is dict:
        return {k: _tree(v) for k, v in x.items()}
    return (type(x).__name__, x)


def _outcome(model: Any, file: str) -> Any:
    try:
        return platform_mod._to_platform(model, file, None)
    except ConfigError as exc:
        return str(exc)


def _fast(data: Any) -> platform_fast.Section | None:
    try:
        return platform_fast.validate(data)
    except platform_fast.Declined:
        return None


def _pydantic(data: Any) -> PlatformModel | None:
    try:
        return PlatformModel.model_validate(data)
    except ValueError:  # pydantic's ValidationError
        return None


def _non_finite(x: Any) -> bool:
    if isinstance(x, float):
        return not math.isfinite(x)
    if isinstance(x, dict):
        return any(_non_finite(v) for v in x.values())
    if isinstance(x, list):
        return any(_non_finite(v) for v in x)
    return False


def test_the_table_is_the_one_the_models_give() -> None:
    """Regenerate with ``python -m trainsim.config.platform_schema_gen`` after changing a model."""
    assert Path(platform_schema.__file__).read_text() == platform_schema_gen.render()


def test_the_generator_refuses_what_the_fast_path_does_not_implement() -> None:
    class Aliased(BaseModel):
        model_config = ConfigDict(extra="forbid", strict=True)
        x: int = Field(validation_alias="y")

    class Lax(BaseModel):
        x: int

    class OwnRule(BaseModel):
        model_config = ConfigDict(extra="forbid", strict=True)
        x: int

        @model_validator(mode="after")
        def _rule(self) -> OwnRule:  # not a platform_rules function: the fast path cannot call it
            return self

    for model in (Aliased, Lax, OwnRule):
        with pytest.raises(platform_schema_gen.Unsupported):
            platform_schema_gen._Reader().node(dict(model.__pydantic_core_schema__), model.__name__)


def test_every_field_default_and_model_is_covered() -> None:
    """Each model's defaults are pydantic's, and the documents give every field of every model."""
    for name in platform_schema.MODELS:
        cls = getattr(platform_models, name)
        required = [f for f, info in cls.model_fields.items() if info.is_required()]
        if not required:
            assert _tree(platform_fast.defaults(name)) == _tree(cls.model_construct())
    given: set[tuple[str, str]] = set()

    def walk(x: Any) -> None:
        if isinstance(x, platform_fast.Section):
            given.update((x.model_name, f) for f in x.model_fields_set)
            for v in x.values.values():
                walk(v)
        elif isinstance(x, list | dict):
            for v in x.values() if isinstance(x, dict) else x:
                walk(v)

    for doc in _documents():
        section = _fast(doc)
        assert section is not None, doc
        walk(section)
    every = {(name, f[0]) for name, (_, fields) in platform_schema.MODELS.items() for f in fields}
    assert every - given == set()


_VALUES: tuple[Any, ...] = (
    None, True, False, 0, 1, -1, 7, 2**40, 2**60 + 1, 2**1100, 0.5, 2.5, -0.5, math.inf, math.nan, "8", "ring",
    "200 Gb/s", "2 furlongs", [], [1], {}, {"x": 1},
)


def _mutations(doc: Any) -> list[Any]:
    """``doc`` with one change: each value replaced by each of _VALUES, each key removed, an
    unknown key added to each mapping, each list emptied or its first item doubled."""
    out: list[Any] = []

    def at(path: tuple[Any, ...], node: Any) -> None:
        if isinstance(node, dict):
            out.append(_replaced(doc, path, {**node, "bogus_key": 1}))
            for k, v in node.items():
                out.append(_replaced(doc, path, {kk: vv for kk, vv in node.items() if kk != k}))
                at((*path, k), v)
        elif isinstance(node, list):
            out.append(_replaced(doc, path, []))
            if node:
                out.append(_replaced(doc, path, [node[0], *node]))
            for i, v in enumerate(node):
                at((*path, i), v)
        if path:
            out.extend(_replaced(doc, path, v) for v in _VALUES)

    at((), doc)
    return out


def _replaced(doc: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    head, rest = path[0], path[1:]
    if isinstance(doc, dict):
        return {k: (_replaced(v, rest, value) if k == head else v) for k, v in doc.items()}
    return [(_replaced(v, rest, value) if i == head else v) for i, v in enumerate(doc)]


def _agree(docs: list[dict[str, Any]]) -> tuple[int, int]:
    """Accepted by the fast path => accepted by pydantic with the same values, types, given keys
    and Platform; accepted by pydantic => accepted by the fast path (but for inf and nan, which
    it leaves to pydantic). Returns (mutations checked, refused by both)."""
    checked = refused = 0
    for doc in docs:
        for data in _mutations(doc):
            fast, slow = _fast(data), _pydantic(data)
            if fast is not None:
                assert slow is not None, data
                assert _tree(fast) == _tree(slow), data
                assert _outcome(fast, "p.yaml") == _outcome(slow, "p.yaml"), data
            elif slow is not None:
                assert _non_finite(data), data
            else:
                refused += 1
            checked += 1
    return checked, refused


def test_fast_path_and_pydantic_agree_on_mutations_of_the_fullest_file() -> None:
    checked, refused = _agree([yaml.safe_load(EVERYTHING)])
    assert checked > 1_000 and refused > 500


@pytest.mark.slow
def test_fast_path_and_pydantic_agree_on_every_mutation_of_every_file() -> None:
    checked, refused = _agree(_documents())
    assert checked > 10_000 and refused > 1_000


def test_a_refused_file_gets_pydantics_message(monkeypatch: pytest.MonkeyPatch) -> None:
    """parse_platform words a file the fast path declines exactly as pydantic alone does."""
    doc = yaml.safe_load(EVERYTHING)
    bad = [d for d in _mutations(doc) if _pydantic(d) is None][::7]
    assert len(bad) > 100
    messages = []
    for data in bad:
        with pytest.raises(ConfigError) as got:
            parse_platform(data, "p.yaml")
        messages.append(str(got.value))

    def declined(data: Any) -> Any:
        raise platform_fast.Declined("off")

    monkeypatch.setattr(platform_fast, "validate", declined)
    for data, message in zip(bad, messages, strict=True):
        with pytest.raises(ConfigError) as got:
            parse_platform(data, "p.yaml")
        assert str(got.value) == message
