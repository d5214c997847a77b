"""Device compute models: device specs, the roofline and the per-operator timer (DESIGN.md,
compute layer)."""

from trainsim.compute.devices import (
    DeviceSpec,
    Efficiency,
    OperatorTimer,
    device_table,
    get_device,
    load_kernel_times,
)
from trainsim.compute.roofline import roofline_time_ns

__all__ = [
    "DeviceSpec",
    "Efficiency",
    "OperatorTimer",
    "device_table",
    "get_device",
    "load_kernel_times",
    "roofline_time_ns",
]
