"""The compared methods: RePurpose and its baselines, each turning a trained MLP into a
:class:`Deployment` on ``K`` workers.

Place: ``trainsim.studies.repurpose``; the study (:mod:`.study`) calls :func:`deploy` per method.

Methods (issue 10; RePurpose is Abdi et al., arXiv 2008.08289):

- ``repurpose``: front to back, each hidden layer solved by :func:`.layer.solve_repurpose` on
  the restructured network's inputs ``X_hat`` against the original pre-activations (so each
  layer absorbs the errors of earlier ones); the output layer refit densely;
- ``refit_fixed``: the same without reassignment (neurons in contiguous blocks);
- ``naive``: contiguous blocks, the original weights, the largest cross groups kept, no refit;
- ``direct_tp``: direct tensor parallelism, the original weights on contiguous blocks, every
  layer's input all-gathered (the traffic the budget fraction is relative to);
- ``whole_model``: every worker runs the whole original model on the all-gathered input;
- ``whole_model_gather``: one worker runs it on the input gathered to it.

In every split method the first layer's inputs live where the data does (each worker a
spatial patch of the image) and the output layer is partial sums reduced to one worker.
Units: budgets are fractions of direct tensor-parallel traffic; accuracy is a fraction in [0, 1].
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from trainsim.errors import ConfigError
from trainsim.studies.repurpose.assign import contiguous_owners
from trainsim.studies.repurpose.comm import group_budget, plain_l0
from trainsim.studies.repurpose.data import MLP, patch_owners
from trainsim.studies.repurpose.fit import layer_stats
from trainsim.studies.repurpose.layer import (
    LayerSolution,
    SolverSettings,
    dense_refit,
    naive_sparsify,
    solve_fixed,
    solve_repurpose,
)
from trainsim.studies.repurpose.plan import Stage, plan_scalars, replicated_plan, split_plan

BUDGETED_METHODS = ("repurpose", "refit_fixed", "naive")
FIXED_METHODS = ("direct_tp", "whole_model", "whole_model_gather")
METHODS = BUDGETED_METHODS + FIXED_METHODS


@dataclass(frozen=True)
class Deployment:
    """A model placed on workers: the (possibly restructured) network and its plan."""

    method: str
    workers: int
    budget: float | None  # fraction of direct-TP traffic; None for methods without a budget
    model: MLP
    stages: tuple[Stage, ...]
    plain_l0: int  # cross-worker nonzero weights over the hidden layers (0 when unsplit)

    @property
    def communication(self) -> int:
        """Activation transfers per sample over the whole plan (scalars)."""
        return plan_scalars(self.stages)


def _split(
    method: str,
    mlp: MLP,
    weights: list[np.ndarray],
    biases: list[np.ndarray],
    owners: list[np.ndarray],
    workers: int,
    budget: float | None,
) -> Deployment:
    hidden_l0 = sum(plain_l0(weights[i], owners[i + 1], owners[i]) for i in range(mlp.n_layers - 1))
    model = MLP(tuple(weights), tuple(biases))
    return Deployment(
        method, workers, budget, model, split_plan(model.weights, tuple(owners), workers), hidden_l0
    )


def _restructure(
    mlp: MLP,
    x_cal: np.ndarray,
    workers: int,
    budget: float,
    settings: SolverSettings,
    reassign: bool,
) -> Deployment:
    """RePurpose (``reassign``) or refit without reassignment, layer by layer."""
    _, pre = mlp.trace(x_cal)
    x_hat = x_cal
    owners = [patch_owners(workers)]
    weights: list[np.ndarray] = []
    biases: list[np.ndarray] = []
    for idx in range(mlp.n_layers - 1):
        stats = layer_stats(x_hat, pre[idx])
        groups = group_budget(budget, stats.n_in, workers)
        sol: LayerSolution
        if reassign:
            sol = solve_repurpose(stats, owners[-1], workers, groups, settings)
        else:
            sol = solve_fixed(
                stats,
                owners[-1],
                contiguous_owners(stats.n_out, workers),
                workers,
                groups,
                settings,
            )
        weights.append(sol.weights)
        biases.append(sol.bias)
        owners.append(sol.owner_out)
        x_hat = np.maximum(x_hat @ sol.weights.T + sol.bias, 0.0)
    w_out, b_out = dense_refit(layer_stats(x_hat, pre[-1]), settings.ridge)
    weights.append(w_out)
    biases.append(b_out)
    return _split(
        "repurpose" if reassign else "refit_fixed", mlp, weights, biases, owners, workers, budget
    )


def _naive(mlp: MLP, workers: int, budget: float) -> Deployment:
    owners = [patch_owners(workers)]
    weights, biases = [], []
    for idx in range(mlp.n_layers - 1):
        w, b = mlp.weights[idx], mlp.biases[idx]
        owner_out = contiguous_owners(w.shape[0], workers)
        sol = naive_sparsify(
            w, b, owners[-1], owner_out, workers, group_budget(budget, w.shape[1], workers)
        )
        weights.append(sol.weights)
        biases.append(sol.bias)
        owners.append(owner_out)
    weights.append(mlp.weights[-1])
    biases.append(mlp.biases[-1])
    return _split("naive", mlp, weights, biases, owners, workers, budget)


def deploy(
    method: str,
    mlp: MLP,
    x_cal: np.ndarray,
    workers: int,
    budget: float | None = None,
    settings: SolverSettings | None = None,
) -> Deployment:
    """Place ``mlp`` on ``workers`` workers with ``method`` (one of :data:`METHODS`).

    ``x_cal`` are the calibration samples (rows, pixels in [0, 1]); ``budget`` is required by the
    methods in :data:`BUDGETED_METHODS` and ignored by the others.
    """
    settings = settings or SolverSettings()
    pixels = patch_owners(workers)
    if method in BUDGETED_METHODS:
        if budget is None:
            raise ConfigError(
                f"method {method!r} without a budget: expected a fraction in [0, 1]", field="budget"
            )
        group_budget(budget, 1, workers)  # validates the fraction
        if method == "naive":
            return _naive(mlp, workers, budget)
        return _restructure(mlp, x_cal, workers, budget, settings, reassign=method == "repurpose")
    if method == "direct_tp":
        owners = [pixels] + [contiguous_owners(w.shape[0], workers) for w in mlp.weights[:-1]]
        return _split(method, mlp, list(mlp.weights), list(mlp.biases), owners, workers, None)
    if method in ("whole_model", "whole_model_gather"):
        stages = replicated_plan(
            mlp.weights, pixels, workers, gather_to_root=method == "whole_model_gather"
        )
        return Deployment(method, workers, None, mlp, stages, 0)
    raise ConfigError(
        f"unknown method {method!r}: expected one of {', '.join(METHODS)}", field="method"
    )
