"""RePurpose: restructure and prune a trained network for distributed inference (issue 10).

Place: a study in ``studies/repurpose`` (the studies layer, above ``system``), not the simulator
(Abdi, Rashidi, Fekri, Krishna, arXiv 2008.08289). It reads nothing from the simulator's core but
its entry point: it hands
:func:`trainsim.system.api.simulate` per-worker workload graphs (:mod:`.graphs`, built with
:mod:`trainsim.workload.graph`) on native platform files (:mod:`.platform`).

Modules, bottom up: :mod:`.data` (digits, patches, the MLP), :mod:`.comm` (plain and group L0),
:mod:`.assign` (balanced Munkres assignment), :mod:`.fit` (least-squares statistics, ridge),
:mod:`.iht` (iterative hard thresholding), :mod:`.layer` (per-layer solvers), :mod:`.plan`
(stages of transfers and compute), :mod:`.methods` (RePurpose and baselines), :mod:`.study`,
:mod:`.graphs`, :mod:`.platform`, :mod:`.latency` (simulated), :mod:`.plot`.

Units: activations moved are counted in scalars per sample (4 bytes each), compute in FLOP,
time in seconds, accuracy as a fraction in [0, 1].
"""

from trainsim.studies.repurpose.assign import balanced_assignment, balanced_capacities
from trainsim.studies.repurpose.comm import (
    activation_transfers,
    direct_tp_transfers,
    plain_l0,
    transfer_pairs,
)
from trainsim.studies.repurpose.graphs import build_graphs
from trainsim.studies.repurpose.latency import latency_markdown, latency_table, simulator
from trainsim.studies.repurpose.layer import SolverSettings
from trainsim.studies.repurpose.methods import METHODS, Deployment, deploy
from trainsim.studies.repurpose.platform import example_platforms, sized_platform
from trainsim.studies.repurpose.plot import accuracy_vs_communication
from trainsim.studies.repurpose.study import StudyConfig, StudyResult, markdown_table, run_study

__all__ = [
    "METHODS",
    "Deployment",
    "SolverSettings",
    "StudyConfig",
    "StudyResult",
    "accuracy_vs_communication",
    "activation_transfers",
    "balanced_assignment",
    "balanced_capacities",
    "build_graphs",
    "deploy",
    "direct_tp_transfers",
    "example_platforms",
    "latency_markdown",
    "latency_table",
    "markdown_table",
    "plain_l0",
    "run_study",
    "simulator",
    "sized_platform",
    "transfer_pairs",
]
