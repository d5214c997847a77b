"""Device compute models: device specs, the roofline, the per-operator timer, and the seam the
executor is handed (``model.ComputeModel``: replay or roofline) (DESIGN.md, compute layer)."""

from trainsim.compute.devices import (
    DeviceSpec,
    Efficiency,
    OperatorTimer,
    device_table,
    get_device,
    load_kernel_times,
)
from trainsim.compute.model import (
    ComputeModel,
    ComputeNodes,
    ReplayCompute,
    RooflineCompute,
    ScaledCompute,
)
from trainsim.compute.roofline import roofline_time_ns

__all__ = [
    "ComputeModel",
    "ComputeNodes",
    "ReplayCompute",
    "RooflineCompute",
    "ScaledCompute",
    "DeviceSpec",
    "Efficiency",
    "OperatorTimer",
    "device_table",
    "get_device",
    "load_kernel_times",
    "roofline_time_ns",
]
