"""Optimizers over platform designs (DESIGN.md, optimize layer).

Bandwidth allocation (LIBRA, arXiv 2109.11762): :func:`optimize_bandwidth` over traffic from
:mod:`~trainsim.optimize.traffic`, priced by :mod:`~trainsim.optimize.cost`, constrained by
:mod:`~trainsim.optimize.constraints`, solved by :mod:`~trainsim.optimize.solver`, checked by
simulation in :mod:`~trainsim.optimize.verify`; :func:`optimize_files` reads LIBRA's files.
"""

from trainsim.optimize.api import budget_sweep, load_workload, optimize_files
from trainsim.optimize.bandwidth import BandwidthResult, optimize_bandwidth
from trainsim.optimize.constraints import ConstraintConflictError, parse_constraint
from trainsim.optimize.cost import cost_coefficients
from trainsim.optimize.libra_inputs import (
    Communicator,
    LibraNetwork,
    load_communicator,
    load_cost_model,
    load_network,
)
from trainsim.optimize.traffic import WorkloadTraffic, traffic_from_graph, traffic_from_text

__all__ = [
    "BandwidthResult",
    "Communicator",
    "ConstraintConflictError",
    "LibraNetwork",
    "WorkloadTraffic",
    "budget_sweep",
    "cost_coefficients",
    "load_communicator",
    "load_cost_model",
    "load_network",
    "load_workload",
    "optimize_bandwidth",
    "optimize_files",
    "parse_constraint",
    "traffic_from_graph",
    "traffic_from_text",
]
