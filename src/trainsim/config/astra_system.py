"""ASTRA-sim's system JSON (``--system-configuration``) -> :class:`SystemSpec` (config layer).

The keys are those ASTRA-sim 518bd51 parses in ``Sys::initialize_sys`` (``system/Sys.cc``) and
``CollectiveImplLookup::setup_collective_impl_from_config`` (``astraccl/CollectiveImplLookup.cc``),
plus three that its example files still carry but that version ignores: ``boost-mode``,
``intra-dimension-scheduling`` and ``inter-dimension-scheduling`` (the Themis scheduling of
ASTRA-sim 2.0; reachable in trainsim, not in ASTRA-sim 518bd51). ASTRA-sim ignores any other key;
here it is an error.

Units: ``endpoint-delay``, ``local-reduction-delay``, ``L``, ``o``, ``g`` in ns (ASTRA-sim keeps
the endpoint delay as whole ns: the compat mode truncates), ``G`` in ns per byte,
``local-mem-bw`` in decimal GB/s (x 1e9 -> B/s, as ASTRA-sim does), ``peak-perf`` in TFLOP/s
(x 1e12 -> FLOP/s). A key left out takes the :class:`SystemSpec` default, except the four
``<type>-implementation`` lists: absent means "not configured" (an empty tuple), so a collective
of that type fails at run time as it does in ASTRA-sim. Their entries are checked against the
algorithm table (``collectives/algorithms.py``), which accepts ASTRA-sim's names and trainsim's.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from trainsim.collectives.algorithms import name_problem
from trainsim.config.checks import (
    check_keys,
    fail,
    want_choice,
    want_flag,
    want_int,
    want_list,
    want_number,
    want_str,
)
from trainsim.config.files import load_json_mapping
from trainsim.config.knobs import check_system
from trainsim.config.types import MAX_DATASET_SPLITS, CollectiveImpl, SharedBusSpec, SystemSpec
from trainsim.units import GBPS, TFLOPS

COLLECTIVES = ("all-reduce", "all-gather", "reduce-scatter", "all-to-all")
"""The collective types with an ``<type>-implementation`` list, in ASTRA-sim's spelling."""

INTRA_SCHEDULING = {"FIFO": "FIFO", "SCF": "SCF", "smallestFirst": "SCF"}
INTER_SCHEDULING = {
    "baseline": "baseline",
    "ascending": "baseline",
    "themis": "themis",
    "offlineGreedy": "themis",
    "roundRobin": "roundRobin",
}


def _impl_list(value: Any, file: str, field: str) -> tuple[str, ...]:
    items = want_list(value, file, field)
    all_to_all = field.startswith("all-to-all")
    for i, name in enumerate(items):
        problem = name_problem(name, all_to_all=all_to_all)
        if problem:
            raise fail(file, f"{field}[{i}]", name, problem)
    return tuple(items)


def _custom_et(value: Any, file: str, field: str) -> str:
    items = want_list(value, file, field)
    if len(items) != 1:
        raise fail(
            file, field, value, "a list of exactly one Chakra ET path (it covers every dimension)"
        )
    return want_str(items[0], file, f"{field}[0]")


def _number(minimum: float = 0.0) -> Callable[[Any, str, str], float]:
    return lambda v, f, k: want_number(v, f, k, minimum=minimum)


def _positive(v: Any, f: str, k: str) -> float:
    return want_number(v, f, k, positive=True)


def _count(v: Any, f: str, k: str) -> int:
    return want_int(v, f, k, minimum=1)


def _splits(v: Any, f: str, k: str) -> int:
    return want_int(v, f, k, minimum=1, maximum=MAX_DATASET_SPLITS)


def _choice(*choices: str) -> Callable[[Any, str, str], str]:
    return lambda v, f, k: want_choice(v, f, k, choices)


def _alias(table: dict[str, str]) -> Callable[[Any, str, str], str]:
    return lambda v, f, k: table[want_choice(v, f, k, tuple(table))]


# key -> (SystemSpec / SharedBusSpec attribute, check-and-convert, scale to SI)
_SCALARS: dict[str, tuple[str, Callable[[Any, str, str], Any], float | None]] = {
    "scheduling-policy": ("scheduling_policy", _choice("LIFO", "FIFO", "EXPLICIT"), None),
    "collective-optimization": (
        "collective_optimization",
        _choice("baseline", "localBWAware"),
        None,
    ),
    "endpoint-delay": ("endpoint_delay_ns", _number(), None),
    "active-chunks-per-dimension": ("active_chunks_per_dimension", _count, None),
    "preferred-dataset-splits": ("preferred_dataset_splits", _splits, None),
    "local-mem-bw": ("local_mem_bw", _positive, GBPS),
    "peak-perf": ("peak_perf", _number(), TFLOPS),
    "roofline-enabled": ("roofline_enabled", want_flag, None),
    "trace-enabled": ("trace_enabled", want_flag, None),
    "replay-only": ("replay_only", want_flag, None),
    "track-local-mem": ("track_local_mem", want_flag, None),
    "local-mem-trace-filename": ("local_mem_trace_filename", want_str, None),
    "boost-mode": ("boost_mode", want_flag, None),
    "intra-dimension-scheduling": ("intra_dimension_scheduling", _alias(INTRA_SCHEDULING), None),
    "inter-dimension-scheduling": ("inter_dimension_scheduling", _alias(INTER_SCHEDULING), None),
}
_SHARED_BUS: dict[str, tuple[str, Callable[[Any, str, str], Any], float | None]] = {
    "model-shared-bus": ("enabled", want_flag, None),
    "L": ("latency_ns", _number(), None),
    "o": ("overhead_ns", _number(), None),
    "g": ("gap_ns", _number(), None),
    "G": ("gap_per_byte_ns", _number(), None),
    "local-reduction-delay": ("local_reduction_delay_ns", _number(), None),
}
_IMPL_KEYS = {f"{c}-implementation": c.replace("-", "_") for c in COLLECTIVES}
_CUSTOM_KEYS = {f"{c}-implementation-custom": c.replace("-", "_") for c in COLLECTIVES}
_PER_NODE_KEY = "per-node-custom-implementation"

SYSTEM_KEYS = frozenset([*_SCALARS, *_SHARED_BUS, *_IMPL_KEYS, *_CUSTOM_KEYS, _PER_NODE_KEY])
"""Every key accepted in an ASTRA-sim system JSON."""


def _convert(
    data: dict[str, Any],
    table: dict[str, tuple[str, Callable[[Any, str, str], Any], float | None]],
    file: str,
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, (attr, check, scale) in table.items():
        if key in data:
            value = check(data[key], file, key)
            out[attr] = value * scale if scale is not None else value
    return out


def parse_astra_system(data: dict[str, Any], file: str) -> SystemSpec:
    """Validate an already-parsed system JSON object; ``file`` names it in errors."""
    check_keys(data, SYSTEM_KEYS, file, hint="keys are ASTRA-sim's, e.g. 'endpoint-delay'")
    impl = CollectiveImpl(
        **{
            attr: _impl_list(data[k], file, k) if k in data else ()
            for k, attr in _IMPL_KEYS.items()
        },
        custom={
            attr: _custom_et(data[k], file, k) for k, attr in _CUSTOM_KEYS.items() if k in data
        },
        per_node_custom=want_str(data[_PER_NODE_KEY], file, _PER_NODE_KEY)
        if _PER_NODE_KEY in data
        else None,
    )
    fields = _convert(data, _SCALARS, file)
    if fields.get("roofline_enabled") and not fields.get("peak_perf"):
        raise fail(
            file,
            "peak-perf",
            data.get("peak-perf", "(missing)"),
            "a number > 0 (TFLOP/s) when roofline-enabled is 1: the roofline divides by it",
        )
    system = SystemSpec(
        **fields,
        implementations=impl,
        shared_bus=SharedBusSpec(**_convert(data, _SHARED_BUS, file)),
        source=file,
    )
    check_system(system, file=file, names="astra")
    return system


def load_astra_system(path: str | Path) -> SystemSpec:
    """Read and validate an ASTRA-sim system JSON (keys and units: see the module docstring)."""
    return parse_astra_system(load_json_mapping(path), str(path))
