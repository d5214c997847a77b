"""The two platforms the RePurpose study runs on, read from native platform YAML files.

Place: ``trainsim.inference``; :mod:`.latency` uses :func:`load_platform` for the analytical
estimate and :func:`resized_platform` to hand the simulator a file with one NPU per worker.

The native platform format is being finalized elsewhere; this reader accepts exactly the keys
the shipped files use and rejects anything else (DESIGN.md, "Inputs")::

    network:
      dims:
        - {topology: Switch, size: 4, bandwidth_gbps: 150, latency_ns: 500}
    system: {endpoint_delay_ns: 10, roofline_enabled: true, peak_perf_tflops: 125, local_mem_bw_gbps: 1600}

Units in the file: ``bandwidth_gbps`` and ``local_mem_bw_gbps`` in GB/s (1e9 B/s), latencies in
ns, ``peak_perf_tflops`` in TFLOP/s; converted here, once, to SI (B/s, s, FLOP/s).
"""

from __future__ import annotations

import importlib.resources
from dataclasses import dataclass
from pathlib import Path

import yaml

from trainsim.errors import ConfigError
from trainsim.units import GBPS, NS, TFLOPS

_DIM_KEYS = {
    "topology": str,
    "size": int,
    "bandwidth_gbps": (int, float),
    "latency_ns": (int, float),
}
_SYSTEM_KEYS = {
    "endpoint_delay_ns": (int, float),
    "roofline_enabled": bool,
    "peak_perf_tflops": (int, float),
    "local_mem_bw_gbps": (int, float),
}


@dataclass(frozen=True)
class Platform:
    """One Switch dimension of ``npus`` endpoints and their compute, in SI units."""

    name: str
    path: str
    npus: int
    bandwidth: float  # B/s per link
    latency: float  # s per hop
    endpoint_delay: float  # s per message
    peak_flops: float  # FLOP/s
    local_mem_bw: float  # B/s
    roofline_enabled: bool


def _section(data: object, field: str, keys: dict, path: str) -> dict:
    if not isinstance(data, dict):
        raise ConfigError(
            f"{data!r}: expected a mapping with keys {sorted(keys)}", file=path, field=field
        )
    for key, value in data.items():
        if key not in keys:
            raise ConfigError(
                f"unknown key {key!r}: expected one of {sorted(keys)}",
                file=path,
                field=f"{field}.{key}",
            )
        kind = keys[key]
        if isinstance(value, bool) and kind is not bool or not isinstance(value, kind):
            raise ConfigError(
                f"{value!r}: expected {getattr(kind, '__name__', 'a number')}",
                file=path,
                field=f"{field}.{key}",
            )
    missing = sorted(set(keys) - set(data))
    if missing:
        raise ConfigError(f"missing keys {missing}", file=path, field=field)
    return data


def load_platform(path: str | Path) -> Platform:
    """Read and validate a platform file (one Switch dimension); raises :class:`ConfigError`."""
    path = str(path)
    try:
        with open(path, encoding="utf-8") as fh:
            data = yaml.safe_load(fh)
    except OSError as exc:
        raise ConfigError(f"cannot read: {exc.strerror}", file=path) from exc
    except yaml.YAMLError as exc:
        raise ConfigError(f"not valid YAML: {exc}", file=path) from exc
    top = _section(data, "<root>", {"network": dict, "system": dict}, path)
    net = _section(top["network"], "network", {"dims": list}, path)
    if len(net["dims"]) != 1:
        raise ConfigError(
            f"{len(net['dims'])} dims: expected exactly one", file=path, field="network.dims"
        )
    dim = _section(net["dims"][0], "network.dims[0]", _DIM_KEYS, path)
    sys_ = _section(top["system"], "system", _SYSTEM_KEYS, path)
    if dim["topology"] != "Switch":
        raise ConfigError(
            f"{dim['topology']!r}: expected 'Switch'", file=path, field="network.dims[0].topology"
        )
    for field, value in (
        ("network.dims[0].size", dim["size"]),
        ("network.dims[0].bandwidth_gbps", dim["bandwidth_gbps"]),
        ("system.peak_perf_tflops", sys_["peak_perf_tflops"]),
        ("system.local_mem_bw_gbps", sys_["local_mem_bw_gbps"]),
    ):
        if not value > 0:
            raise ConfigError(f"{value!r}: expected a value > 0", file=path, field=field)
    for field, value in (
        ("network.dims[0].latency_ns", dim["latency_ns"]),
        ("system.endpoint_delay_ns", sys_["endpoint_delay_ns"]),
    ):
        if value < 0:
            raise ConfigError(f"{value!r}: expected a value >= 0", file=path, field=field)
    return Platform(
        name=Path(path).stem,
        path=path,
        npus=dim["size"],
        bandwidth=dim["bandwidth_gbps"] * GBPS,
        latency=dim["latency_ns"] * NS,
        endpoint_delay=sys_["endpoint_delay_ns"] * NS,
        peak_flops=sys_["peak_perf_tflops"] * TFLOPS,
        local_mem_bw=sys_["local_mem_bw_gbps"] * GBPS,
        roofline_enabled=sys_["roofline_enabled"],
    )


def resized_platform(path: str | Path, npus: int, out_dir: str | Path) -> Path:
    """Write a copy of the platform file with ``npus`` endpoints into ``out_dir``; returns its path."""
    load_platform(path)  # validates
    with open(path, encoding="utf-8") as fh:
        data = yaml.safe_load(fh)
    data["network"]["dims"][0]["size"] = int(npus)
    out = Path(out_dir) / f"{Path(path).stem}_{npus}.yaml"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return out


def example_platforms() -> list[Path]:
    """The shipped platform files (``examples/repurpose/{datacenter,edge}.yaml``)."""
    here = Path(str(importlib.resources.files("trainsim")))
    root = here.parent.parent / "examples" / "repurpose"
    paths = [root / "datacenter.yaml", root / "edge.yaml"]
    for p in paths:
        if not p.is_file():
            raise ConfigError(
                "platform file not found: expected the repository's examples/repurpose/ next to src/",
                file=str(p),
            )
    return paths
