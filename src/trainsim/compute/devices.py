"""Accelerator specifications and the per-operator roofline timer (DESIGN.md, compute layer).

A :class:`DeviceSpec` holds dense peak FLOP/s per precision, HBM bandwidth (B/s) and capacity
(bytes), read once from the shipped ``devices.yaml`` (vendor datasheets cited there).

:class:`OperatorTimer` prices one operator of a workload generator:

    time = max(flops / (peak[precision] x eff_c x sustained), bytes / (hbm_bw x eff_mem)) + overhead

(the roofline of Williams et al., CACM 2009, with achievable rather than nominal ceilings).
``eff_c`` depends on the operator kind: ``gemm`` (times the size term
``d / (d + gemm_half_size)`` with ``d`` the smallest GEMM dimension), ``attention`` (batched
score/context GEMMs), ``flash_attention`` (fused attention kernels); ``sustained`` is the fraction of
that benchmarked throughput the math units keep up over a training step (clock under the power
limit, shapes and layouts other than the benchmark's), applied to compute-bound kinds only (HBM
runs on its own clock); memory-bound kinds
(``norm``, ``elementwise``, ``softmax``, ``embedding``, ``optimizer``) use only the bandwidth
term. A table of measured kernel times (YAML, ``kernels: [{kind, shape, time_us}]``) overrides
the formula for the shapes it lists.

Units: FLOP, bytes, seconds, FLOP/s, B/s.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

from trainsim.errors import ConfigError

MEMORY_KINDS = frozenset({"norm", "elementwise", "softmax", "embedding", "optimizer", "memory"})
COMPUTE_KINDS = frozenset({"gemm", "attention", "flash_attention"})


@dataclass(frozen=True)
class Efficiency:
    """Achievable fractions of the nominal ceilings (dimensionless) and a per-kernel overhead."""

    gemm: float = 0.80
    attention: float = 0.60
    flash_attention: float = 0.55
    memory: float = 0.85
    gemm_half_size: float = 64.0  # elements; GEMM efficiency halves at min dim = this
    kernel_overhead_s: float = 4e-6  # seconds per kernel
    sustained: float = 1.0  # fraction of the benchmarked math throughput kept up in training

    def __post_init__(self) -> None:
        for name in ("gemm", "attention", "flash_attention", "memory", "sustained"):
            value = getattr(self, name)
            if not 0 < value <= 1:
                raise ConfigError(f"{value!r} is not a fraction in (0, 1]", field=f"efficiency.{name}")
        if self.gemm_half_size < 0 or self.kernel_overhead_s < 0:
            raise ConfigError("gemm_half_size and kernel_overhead_s must be >= 0", field="efficiency")


@dataclass(frozen=True)
class DeviceSpec:
    """One accelerator: dense peaks (FLOP/s) per precision, HBM bandwidth (B/s), capacity (B)."""

    name: str
    peak_flops: dict[str, float]
    hbm_bandwidth: float
    hbm_capacity: float
    vendor: str = ""
    efficiency: Efficiency = field(default_factory=Efficiency)

    def peak(self, precision: str) -> float:
        """Dense peak FLOP/s at ``precision`` (``bf16``, ``fp16``, ``fp8``, ``tf32``, ``fp32``...)."""
        try:
            return self.peak_flops[precision]
        except KeyError:
            raise ConfigError(
                f"device {self.name} has no {precision!r} peak; it lists {', '.join(sorted(self.peak_flops))}",
                field="precision",
            ) from None


def _parse_efficiency(raw: dict[str, Any] | None, base: Efficiency, where: str) -> Efficiency:
    if not raw:
        return base
    known = set(Efficiency.__dataclass_fields__)
    unknown = set(raw) - known
    if unknown:
        raise ConfigError(f"unknown keys {sorted(unknown)}; expected {sorted(known)}", file=where, field="efficiency")
    return replace(base, **{k: float(v) for k, v in raw.items()})


def _parse_table(text: str, where: str) -> dict[str, DeviceSpec]:
    from trainsim.config.files import (
        load_yaml_text,  # here: a run that times no operator never reads the table
    )

    data = load_yaml_text(text, where)
    base = _parse_efficiency(data.get("default_efficiency"), Efficiency(), where)
    devices: dict[str, DeviceSpec] = {}
    for name, raw in data["devices"].items():
        try:
            devices[name.upper()] = DeviceSpec(
                name=name,
                vendor=raw.get("vendor", ""),
                peak_flops={k: float(v) * 1e12 for k, v in raw["peak_tflops"].items()},
                hbm_bandwidth=float(raw["hbm_bandwidth_gbps"]) * 1e9,
                hbm_capacity=float(raw["hbm_capacity_gb"]) * 1e9,
                efficiency=_parse_efficiency(raw.get("efficiency"), base, where),
            )
        except KeyError as exc:
            raise ConfigError(f"device {name} lacks {exc.args[0]!r}", file=where, field=f"devices.{name}") from None
    return devices


@lru_cache(maxsize=1)
def device_table() -> dict[str, DeviceSpec]:
    """The shipped device table, keyed by upper-case name."""
    from importlib import resources

    text = resources.files("trainsim.compute").joinpath("devices.yaml").read_text()
    return _parse_table(text, "devices.yaml")


_ALIASES = {
    "A100-80GB": "A100",
    "A100-SXM": "A100",
    "H100-SXM": "H100",
    "H200-SXM": "H200",
    "TPU-V4": "TPUV4",
    "TPU_V4": "TPUV4",
    "V4": "TPUV4",
    "MI300": "MI300X",
}


def get_device(name: str, extra: Mapping[str, DeviceSpec] | None = None) -> DeviceSpec:
    """Look up a device by name (case-insensitive; ``A100``, ``H100``, ``TPUv4``...): first in
    ``extra`` (a platform file's ``devices:``), then in the shipped table."""
    for own, spec in (extra or {}).items():
        if own.strip().upper() == name.strip().upper():
            return spec
    key = name.strip().upper().replace(" ", "")
    key = _ALIASES.get(key, key)
    table = device_table()
    if key not in table:
        raise ConfigError(
            f"unknown device {name!r}; known devices: {', '.join([*(extra or {}), *(d.name for d in table.values())])}",
            field="device",
        )
    return table[key]


class OperatorTimer:
    """Times operators on one device (roofline with efficiency factors, measured overrides).

    Satisfies the generator's timer protocol (``trainsim.workload.generate.timer``):
    ``op_time(kind, flops, nbytes, shape, precision)`` in seconds and ``memory_capacity`` in
    bytes.
    """

    def __init__(
        self,
        device: DeviceSpec | str,
        *,
        efficiency: Efficiency | None = None,
        overrides: dict[tuple[str, tuple[int, ...]], float] | None = None,
        memory_capacity: float | None = None,
    ) -> None:
        self.device = get_device(device) if isinstance(device, str) else device
        self.eff = efficiency or self.device.efficiency
        self.overrides = dict(overrides or {})
        self.name = self.device.name
        self.memory_capacity = float(memory_capacity if memory_capacity is not None else self.device.hbm_capacity)
        self.peak_bf16 = self.device.peak_flops.get("bf16", max(self.device.peak_flops.values()))

    def op_time(
        self,
        kind: str,
        flops: float,
        nbytes: float,
        shape: tuple[int, ...] = (),
        precision: str = "bf16",
    ) -> float:
        """Seconds to run one operator of ``flops`` FLOP moving ``nbytes`` bytes."""
        if self.overrides:
            measured = self.overrides.get((kind, tuple(shape)))
            if measured is not None:
                return measured
        eff = self.eff
        mem_t = nbytes / (self.device.hbm_bandwidth * eff.memory)
        if kind in MEMORY_KINDS:
            comp_t = 0.0
        elif kind in COMPUTE_KINDS:
            ceiling = self.device.peak(precision) * getattr(eff, kind) * eff.sustained
            if kind == "gemm" and shape:
                d = float(min(shape))
                ceiling *= d / (d + eff.gemm_half_size)
            comp_t = flops / ceiling
        else:
            raise ConfigError(
                f"unknown operator kind {kind!r}; expected one of {sorted(MEMORY_KINDS | COMPUTE_KINDS)}",
                field="kind",
            )
        if flops <= 0 and nbytes <= 0:
            return 0.0
        return max(comp_t, mem_t) + eff.kernel_overhead_s


def load_kernel_times(path: str | Path) -> dict[tuple[str, tuple[int, ...]], float]:
    """Read a measured-kernel table: YAML ``kernels: [{kind, shape: [..], time_us}]``."""
    from trainsim.config.checks import (
        check_keys,
        fail,
        want_choice,
        want_int,
        want_list,
        want_number,
    )
    from trainsim.config.files import load_yaml_mapping

    where = str(path)
    data = load_yaml_mapping(path)
    check_keys(data, ("kernels",), where)
    if "kernels" not in data:
        raise ConfigError("missing; expected a list of {kind, shape, time_us}", file=where, field="kernels")
    kinds = sorted(MEMORY_KINDS | COMPUTE_KINDS)
    table: dict[tuple[str, tuple[int, ...]], float] = {}
    first: dict[tuple[str, tuple[int, ...]], int] = {}
    for i, row in enumerate(want_list(data["kernels"], where, "kernels")):
        at = f"kernels[{i}]"
        if not isinstance(row, dict):
            raise fail(where, at, row, "a mapping {kind, shape, time_us}")
        check_keys(row, ("kind", "shape", "time_us"), where, prefix=f"{at}.")
        missing = [k for k in ("kind", "shape", "time_us") if k not in row]
        if missing:
            raise ConfigError(f"missing {', '.join(missing)}; a row needs kind, shape and time_us", file=where, field=at)
        kind = want_choice(row["kind"], where, f"{at}.kind", kinds)
        if not isinstance(row["shape"], list):
            raise fail(where, f"{at}.shape", row["shape"], "a list of integers")
        key = (kind, tuple(want_int(x, where, f"{at}.shape[{j}]", minimum=0) for j, x in enumerate(row["shape"])))
        time_us = want_number(row["time_us"], where, f"{at}.time_us", minimum=0)
        if key in first:
            raise ConfigError(f"{kind} of shape {list(key[1])} again; expected each kernel once (first at kernels[{first[key]}])", file=where, field=at)
        first[key] = i
        table[key] = time_us * 1e-6
    return table
