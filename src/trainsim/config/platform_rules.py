"""The checks of the native platform file that are code, not types (config layer).

The pydantic models (``platform_models.py``) attach these functions as their validators, and
the fast path (``platform_fast.py``) calls the same functions, so each rule is written once.
No pydantic here: a valid file is read without importing it (docs/speed.md, "Start-up").
A section ``m`` is a validated section: the pydantic model, or ``platform_fast.Section``
(the same attributes and ``model_fields_set``). A rule raises ValueError with what is wrong;
pydantic turns that into the user's message.
"""

from __future__ import annotations

import math
from typing import Any

from trainsim.collectives.algorithms import name_problem
from trainsim.config.types import MAX_NPUS

MEMORY_MODES = {
    "none": "NO_MEMORY_EXPANSION",
    "per_npu": "PER_NPU_MEMORY_EXPANSION",
    "per_node": "PER_NODE_MEMORY_EXPANSION",
    "pool": "MEMORY_POOL",
}
"""The file's ``memory.mode`` -> ``RemoteMemorySpec.mode`` (ASTRA-sim's names)."""

# A bandwidth with its unit, in bytes (B) or bits (b) per second, decimal prefixes
_RATE_UNITS = {
    f"{prefix}{kind}/s": scale * (1.0 if kind == "B" else 0.125) / 1e9
    for prefix, scale in (("", 1.0), ("k", 1e3), ("K", 1e3), ("M", 1e6), ("G", 1e9), ("T", 1e12))
    for kind in ("B", "b")
}
_RATE_UNITS.update({"Gbps": 0.125, "Mbps": 0.125e-3, "Tbps": 125.0})


def in_gbytes(value: Any) -> Any:
    """``"200 Gb/s"`` -> 25.0, ``"1.6 TB/s"`` -> 1600.0 (GB/s, 1e9 B/s); numbers as they are
    (already GB/s); anything else is left for the field's own check to refuse."""
    if not isinstance(value, str):
        return value
    number, _, unit = value.strip().partition(" ")
    factor = _RATE_UNITS.get(unit.strip())
    try:
        amount = float(number.replace("_", "").replace(",", ""))
    except ValueError:
        amount = None
    if factor is None or amount is None:
        raise ValueError(
            f"got {value!r}; expected a number of GB/s or a bandwidth with its unit, e.g. "
            "'200 Gb/s', '25 GB/s', '1.6 TB/s' (B: bytes, b: bits; decimal prefixes)"
        )
    return amount * factor


def _checked(name: str, *, all_to_all: bool) -> str:
    problem = name_problem(name, all_to_all=all_to_all)
    if problem:
        raise ValueError(f"expected {problem}")
    return name


def impl_name(name: str) -> str:
    """A collective algorithm's name (ASTRA-sim's, ``collectives/algorithms.py``)."""
    return _checked(name, all_to_all=False)


def all_to_all_name(name: str) -> str:
    """An all-to-all algorithm's name."""
    return _checked(name, all_to_all=True)


def int_keys_as_text(value: Any) -> Any:
    """``comm_groups``' integer keys (YAML's ``1:``) as the text ``"1"``."""
    if isinstance(value, dict):
        return {
            str(k) if isinstance(k, int) and not isinstance(k, bool) else k: v
            for k, v in value.items()
        }
    return value


def astra_links_as_numbers(data: Any) -> Any:
    """In ``compat: astra`` a link's GB/s is ASTRA-sim's 2**30 B/s: a value with a decimal
    unit would silently mean something else, so it is refused (the raw file, before fields)."""
    if isinstance(data, dict) and data.get("compat") == "astra":
        network = data.get("network")
        dims = network.get("dims") if isinstance(network, dict) else None
        for dim in dims if isinstance(dims, list) else []:
            if isinstance(dim, dict) and isinstance(dim.get("bandwidth_gbps"), str):
                raise ValueError(
                    f"network bandwidth_gbps {dim['bandwidth_gbps']!r}: with compat: astra a link's "
                    "bandwidth is a number of ASTRA-sim GB/s (2**30 B/s), not a value with a unit"
                )
    return data


def wafer_sane(m: Any) -> Any:
    """``network.fabric.wafer``: in-network reduction needs FRED's switches."""
    if m.kind == "mesh" and m.in_network:
        raise ValueError("a mesh has no switches to reduce in (in_network needs kind fred)")
    return m


def fabric_clos_tiers(m: Any) -> Any:
    """``network.fabric``: tiers with kind clos and only then, and nothing else beside them."""
    if (m.kind == "clos") != (m.tiers is not None):
        raise ValueError("kind clos needs tiers, and only kind clos takes them")
    stray = sorted(m.model_fields_set - {"kind", "tiers"}) if m.kind == "clos" else []
    if stray:
        raise ValueError(f"kind clos takes its sizes, bandwidths and latencies per tier; got {', '.join(stray)} "
                         "(expected only kind and tiers)")
    problem = clos_problem(m.tiers) if m.tiers is not None else None
    if problem:
        raise ValueError(problem)
    return m


def fabric_complete(m: Any) -> Any:
    """``network.fabric``: what each kind needs."""
    if m.kind == "leaf_spine" and (m.hosts_per_leaf < 1 or m.spines < 1 or m.bandwidth_gbps <= 0):
        raise ValueError("leaf_spine needs hosts_per_leaf >= 1, spines >= 1 and bandwidth_gbps > 0")
    if m.kind == "graph" and not m.file:
        raise ValueError("graph needs file (an edge list or GraphML path)")
    if (m.kind == "wafer") != (m.wafer is not None):
        raise ValueError("kind wafer needs a wafer section, and only kind wafer takes one")
    return m


def clos_problem(tiers: list[Any]) -> str | None:
    """What is wrong with a clos fabric's tiers, or None."""
    if len(tiers) < 2:
        return f"tiers: {len(tiers)} given; expected at least 2 (the node, then the tiers joining nodes)"
    for i, tier in enumerate(tiers):
        where = f"tiers[{i}]" + (f" ({tier.name})" if tier.name else "")
        if i < 2 and tier.bandwidth_gbps is None:
            return f"{where}.bandwidth_gbps: missing; expected on tiers 0 and 1 (NVLink, NIC)"
        if i == 0 and tier.oversubscription != 1.0:
            return f"{where}.oversubscription: got {tier.oversubscription}; tier 0 has no tier below to taper from (expected 1)"
        if tier.rail and i != 1:
            return f"{where}.rail: only tier 1 (the leaves) can be rail-optimized"
        if tier.switches != 1 and i < 2:
            return f"{where}.switches: got {tier.switches}; only tiers 2 and up have parallel switches (expected 1)"
    npus = math.prod(t.size for t in tiers)
    if npus > MAX_NPUS:
        return f"tiers: {' x '.join(str(t.size) for t in tiers)} = {npus:,} NPUs; at most {MAX_NPUS:,}"
    return None


def network_dims_or_clos(m: Any) -> Any:
    """``network``: dims, or a clos fabric that derives them (with the same NPU count if both)."""
    clos = m.fabric is not None and m.fabric.kind == "clos"
    if not m.dims and not clos:
        raise ValueError("dims: missing; expected a list of dimensions (or a fabric of kind clos, which derives them)")
    if clos and m.dims and m.fabric is not None and m.fabric.tiers is not None:
        want = math.prod(d.size for d in m.dims)
        got = math.prod(t.size for t in m.fabric.tiers)
        if got != want:
            sizes = " x ".join(str(t.size) for t in m.fabric.tiers)
            raise ValueError(f"fabric.tiers: sizes {sizes} = {got:,} NPUs but the dims have {want:,}; expected the same count")
    return m


def network_npus_in_range(m: Any) -> Any:
    """``network``: ranks are 32-bit."""
    npus = 1
    for dim in m.dims:
        npus *= dim.size
    if npus > MAX_NPUS:
        sizes = " x ".join(str(d.size) for d in m.dims)
        raise ValueError(f"{sizes} = {npus:,} NPUs; at most {MAX_NPUS:,} (ranks are 32-bit)")
    return m


def system_roofline_needs_peak(m: Any) -> Any:
    """``system``: the roofline divides by the peak."""
    if m.roofline_enabled and m.peak_perf_tflops <= 0:
        raise ValueError(
            "roofline_enabled needs peak_perf_tflops > 0: the roofline divides by it"
        )
    return m


def memory_bandwidth_when_used(m: Any) -> Any:
    """``memory``: a PCM tier takes its latency and bandwidth from the PCM model; a DRAM tier in
    use needs a bandwidth."""
    if m.technology == "pcm":
        if m.mode == "none":
            raise ValueError("technology 'pcm' needs a mode (per_npu, per_node or pool)")
        given = sorted({"latency_ns", "bandwidth_gbps"} & m.model_fields_set)
        if given:
            raise ValueError(f"technology 'pcm' takes latency and bandwidth from the PCM model; remove {', '.join(given)}")
        return m
    if m.pcm is not None:
        raise ValueError("a pcm section needs technology: pcm")
    if m.mode != "none" and m.bandwidth_gbps <= 0:
        raise ValueError(f"mode {m.mode!r} needs bandwidth_gbps > 0")
    return m


def device_complete(m: Any) -> Any:
    """``devices.NAME``: a device without a base says its peaks, bandwidth and capacity."""
    if m.base is None:
        missing = [k for k in ("peak_tflops", "hbm_bandwidth_gbps", "hbm_capacity_gb") if getattr(m, k) is None]
        if missing:
            raise ValueError(f"a device without base needs {', '.join(missing)}")
    return m
