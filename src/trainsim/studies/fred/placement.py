"""Where the generator's ranks sit on the wafer (studies layer; docs/fred.md).

The generator numbers ranks tensor-, then pipeline-, then data-parallel innermost first
(``workloads.PLACEMENT``, the ``order`` of :class:`~trainsim.workload.generate.parallel.
Parallelism`), so each group's members are consecutive ranks. This module maps rank ``r`` to
an NPU: ``linear`` (NPU ``r``) or, on the mesh, ``snake`` (row 0 left to right, row 1 right to
left, ...: consecutive ranks are always grid neighbours) or ``column`` (down column 0, then
column 1, ...: with 4 rows a tensor-parallel pair and a pipeline pair share a column and the
data-parallel groups of MP 2 x PP 2 x DP 5 are the mesh's rows, the mapping that gives every
group a line of its own). On FRED consecutive NPUs share an L1 switch already.
"""

from __future__ import annotations

from trainsim.config.wafer import MESH, WaferParams
from trainsim.errors import ConfigError

PLACEMENTS = ("linear", "snake", "column")


def npu_of_rank(params: WaferParams, placement: str) -> tuple[int, ...]:
    """NPU of each rank."""
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
