"""A wafer-scale fabric's parameters in SI units (config layer; the platform file's
``network.fabric: {kind: wafer, wafer: {...}}``, built by ``topology/wafer.py``; docs/fred.md).
No pydantic here: ``config/wafer_model.py`` validates the file's section into this."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

MESH: Literal["mesh"] = "mesh"
FRED: Literal["fred"] = "fred"

TB_S = 1e12  # B/s
GB_S = 1e9  # B/s


@dataclass(frozen=True)
class WaferParams:
    """A wafer's fabric in SI units (the platform file's ``fabric: {kind: wafer}``).

    ``kind``: ``mesh`` or ``fred``; ``npus``; ``cols`` (mesh width; rows = npus / cols);
    ``per_l1`` and ``planes`` (FRED); ``npu_link_bw`` (mesh: each NPU-NPU link; FRED: each
    NPU-L1 link), ``npu_l2_bw`` (FRED: an NPU's share of the L1-L2 channels), B/s;
    ``io_controllers`` and ``io_bw`` (each, B/s); ``in_network``: the switches reduce and
    multicast (FRED-B/D); ``latency_ns`` per link.
    """

    kind: Literal["mesh", "fred"]
    npus: int = 20
    cols: int = 5
    per_l1: int = 4
    planes: int = 4
    npu_link_bw: float = 750 * GB_S
    npu_l2_bw: float = 375 * GB_S
    io_controllers: int = 18
    io_bw: float = 128 * GB_S
    in_network: bool = False
    latency_ns: float = 20.0

    def problem(self) -> str | None:
        """What is wrong with the parameters, or None."""
        if self.kind not in (MESH, FRED):
            return f"kind {self.kind!r}: expected mesh or fred"
        if self.npus < 2 or self.npu_link_bw <= 0 or self.io_bw <= 0 or self.io_controllers < 0:
            return "needs npus >= 2, positive bandwidths and io_controllers >= 0"
        if self.kind == MESH:
            if self.cols < 2 or self.npus % self.cols or self.npus // self.cols < 2:
                return f"a {self.npus}-NPU mesh {self.cols} wide: npus must be a multiple of cols, with >= 2 rows and cols"
            if self.io_controllers > 2 * (self.cols + self.npus // self.cols):
                return f"{self.io_controllers} I/O controllers but only {2 * (self.cols + self.npus // self.cols)} edge positions"
            if self.in_network:
                return "a mesh has no switches to reduce in (in_network needs kind fred)"
        else:
            if self.per_l1 < 1 or self.npus % self.per_l1 or self.planes < 1 or self.npu_l2_bw <= 0:
                return f"FRED needs npus ({self.npus}) a multiple of per_l1 ({self.per_l1}), planes >= 1 and npu_l2_bw > 0"
        return None
