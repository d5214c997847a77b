"""The RePurpose study's platforms: the shipped files, resized to the worker count.

Place: ``trainsim.studies.repurpose``; :mod:`.latency` simulates on these. The files are trainsim's
native platform YAML, read by :func:`trainsim.config.platform.load_platform` (the keys and
their units are in :mod:`trainsim.config.platform_models`): one ``Switch`` dimension, the
roofline on, for example::

    network:
      dims:
        - {topology: Switch, size: 4, bandwidth_gbps: 150, latency_ns: 500}
    system: {roofline_enabled: true, peak_perf_tflops: 125, local_mem_bw_gbps: 1600}

A file says one NPU count; :func:`sized_platform` gives the same platform with one NPU per
worker, and :func:`free_network` the same platform whose network costs nothing (zero latency,
a bandwidth of :data:`FREE_BANDWIDTH`), to measure how much of a simulated latency is compute.
Units: as :class:`trainsim.config.types.Platform` (B/s, ns, FLOP/s).
"""

from __future__ import annotations

import importlib.resources
from dataclasses import replace
from pathlib import Path

from trainsim.config.platform import dump_platform, load_platform
from trainsim.config.types import Platform
from trainsim.errors import ConfigError

FREE_BANDWIDTH = 1e30
"""B/s of every link in :func:`free_network`: a message of any size here takes < 1e-15 s."""


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


def load_study_platform(path: str | Path) -> Platform:
    """A native platform file with one network dimension and a compute peak > 0."""
    platform = load_platform(path)
    if len(platform.network.dims) != 1:
        raise ConfigError(
            f"{len(platform.network.dims)} network dimensions: expected exactly one, resized to the worker count",
            file=str(path),
            field="network.dims",
        )
    if not platform.system.peak_perf > 0:
        raise ConfigError(
            "0: expected a compute peak > 0 TFLOP/s (the graphs' compute is timed from it)",
            file=str(path),
            field="system.peak_perf_tflops",
        )
    return platform


def platform_name(platform: Platform) -> str:
    """The file's stem (``edge`` for ``examples/repurpose/edge.yaml``)."""
    return Path(platform.network.source).stem or "platform"


def sized_platform(platform: Platform, npus: int) -> Platform:
    """``platform`` with its one network dimension resized to ``npus`` endpoints."""
    (dim,) = platform.network.dims
    if dim.size == npus:
        return platform
    if npus < 2:
        raise ConfigError(f"{npus!r}: expected at least 2 NPUs", field="network.dims[0].size")
    network = replace(platform.network, dims=(replace(dim, size=int(npus)),))
    return replace(platform, network=network)


def free_network(platform: Platform) -> Platform:
    """``platform`` with a network that costs nothing: compute and dependencies only."""
    dims = tuple(
        replace(d, bandwidth=FREE_BANDWIDTH, latency_ns=0.0) for d in platform.network.dims
    )
    return replace(platform, network=replace(platform.network, dims=dims))


def write_platform(platform: Platform, path: str | Path) -> Path:
    """Write ``platform`` as a native platform file (every field written out); returns the path."""
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(dump_platform(platform), encoding="utf-8")
    return out
