"""Inputs: ASTRA-sim's files as they are and trainsim's native platform file, validated strictly
and converted once into the SI objects of :mod:`trainsim.config.types` (DESIGN.md, "Inputs")."""

from trainsim.config.types import (
    CollectiveImpl,
    DimSpec,
    NetworkSpec,
    Platform,
    RemoteMemorySpec,
    SharedBusSpec,
    SystemSpec,
)

__all__ = [
    "CollectiveImpl",
    "DimSpec",
    "NetworkSpec",
    "Platform",
    "RemoteMemorySpec",
    "SharedBusSpec",
    "SystemSpec",
]
