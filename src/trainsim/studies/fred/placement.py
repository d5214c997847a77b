"""Where the generator's ranks sit on the wafer (studies layer; docs/fred.md).

The generator numbers ranks tensor-, then pipeline-, then data-parallel innermost first
(``workloads.PLACEMENT``, the ``order`` of :class:`~trainsim.workload.generate.parallel.
Parallelism`), so each group's members are consecutive ranks. This module maps rank ``r`` to
an NPU (``config/wafer.py``, where the wafer collective pricer reads it too): ``linear`` (NPU ``r``) or, on the mesh, ``snake`` (row 0 left to right, row 1 right to
left, ...: consecutive ranks are always grid neighbours) or ``column`` (down column 0, then
column 1, ...: with 4 rows a tensor-parallel pair and a pipeline pair share a column and the
data-parallel groups of MP 2 x PP 2 x DP 5 are the mesh's rows, the mapping that gives every
group a line of its own). On FRED consecutive NPUs share an L1 switch already.
"""

from __future__ import annotations

from trainsim.config.wafer import PLACEMENTS, npu_of_rank

__all__ = ["PLACEMENTS", "npu_of_rank"]
