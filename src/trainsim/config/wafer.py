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
    multicast (FRED-B/D); ``latency_ns`` per link; ``placement``: where the wafer collective
    pricer (``system.collective_tuner: wafer``) puts rank ``r`` (:func:`npu_of_rank`).
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
    placement: str = "linear"

    def problem(self) -> str | None:
        """What is wrong with the parameters, or None."""
        if self.placement not in PLACEMENTS:
            return f"placement {self.placement!r}: expected one of {', '.join(PLACEMENTS)}"
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


PLACEMENTS = ("linear", "snake", "column")
"""Where rank ``r`` sits on a wafer (:func:`npu_of_rank`)."""


def npu_of_rank(params: WaferParams, placement: str | None = None) -> tuple[int, ...]:
    """NPU of each rank under ``placement`` (``params.placement`` when None): ``linear`` (NPU
    ``r``) or, on the mesh, ``snake`` (row 0 left to right, row 1 right to left, ...:
    consecutive ranks are always grid neighbours) or ``column`` (down column 0, then column 1,
    ...). On FRED consecutive NPUs share an L1 switch already: every placement is linear."""
    from trainsim.errors import ConfigError

    placement = params.placement if placement is None else placement
    if placement not in PLACEMENTS:
        raise ConfigError(f"unknown placement {placement!r}; expected one of {', '.join(PLACEMENTS)}", field="placement")
    if placement == "linear" or params.kind != MESH:
        return tuple(range(params.npus))
    cols, rows = params.cols, params.npus // params.cols
    if placement == "column":
        return tuple((r % rows) * cols + r // rows for r in range(params.npus))
    out = []
    for r in range(params.npus):
        y, i = divmod(r, cols)
        out.append(y * cols + (i if y % 2 == 0 else cols - 1 - i))
    return tuple(out)
