"""Per-layer solvers: RePurpose, refit without reassignment, naive sparsification, dense refit.

Place: ``trainsim.inference``; :mod:`.methods` calls one of these per layer, front to back.

RePurpose for one layer (Abdi et al., arXiv 2008.08289, the algorithm section) alternates for
``rounds`` rounds:

1. the cost matrix ``C[i, k]``: the ridge residual of neuron ``i`` if worker ``k`` computed it
   from what ``k`` can see: the inputs it holds plus the inputs currently transferred to it
   (its share of the budget, as chosen by the previous round's IHT; none in round one);
2. a balanced assignment on ``C`` (:mod:`.assign`);
3. IHT under the group budget for that assignment (:mod:`.iht`), which picks the transfers;

then refits the weights by ridge least squares on the final support (every neuron on worker
``k`` uses all inputs ``k`` holds or receives: the transfer is paid for anyway).

Units: budgets in activation transfers per sample; losses as in :mod:`.fit`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from trainsim.errors import ConfigError
from trainsim.inference.assign import balanced_assignment, balanced_capacities
from trainsim.inference.fit import LayerStats, residuals, ridge_coefficients, ridge_lambda
from trainsim.inference.iht import iht, project


@dataclass(frozen=True)
class SolverSettings:
    """Knobs of the per-layer solvers (all dimensionless)."""

    rounds: int = 3  # assignment / IHT alternations
    iht_iters: int = 60  # IHT steps per round
    ridge: float = 1e-3  # ridge weight relative to mean(diag G)

    def __post_init__(self) -> None:
        if not (isinstance(self.rounds, int) and self.rounds >= 1):
            raise ConfigError(f"{self.rounds!r}: expected an integer >= 1", field="rounds")
        if not (isinstance(self.iht_iters, int) and self.iht_iters >= 0):
            raise ConfigError(f"{self.iht_iters!r}: expected an integer >= 0", field="iht_iters")
        if not (isinstance(self.ridge, int | float) and self.ridge >= 0):
            raise ConfigError(f"{self.ridge!r}: expected a non-negative number", field="ridge")


@dataclass(frozen=True)
class LayerSolution:
    """A restructured layer: weights ``(n_out, n_in)``, bias, owners and kept transfers."""

    weights: np.ndarray
    bias: np.ndarray
    owner_out: np.ndarray  # (n_out,) worker computing each neuron
    groups: np.ndarray  # (n_in, K) bool: input j is sent to worker k


def _available(
    stats: LayerStats, owner_in: np.ndarray, groups: np.ndarray, worker: int
) -> np.ndarray:
    """Input indices worker ``worker`` sees (its own, the received ones) plus the bias index."""
    seen = (np.asarray(owner_in) == worker) | groups[:, worker]
    return np.append(np.flatnonzero(seen), stats.bias_index)


def cost_matrix(
    stats: LayerStats, owner_in: np.ndarray, groups: np.ndarray, workers: int, ridge: float
) -> np.ndarray:
    """``C[i, k]``: residual of neuron ``i`` fitted by ridge on what worker ``k`` sees."""
    lam = ridge_lambda(stats, ridge)
    every = np.arange(stats.n_out)
    cost = np.empty((stats.n_out, workers))
    for k in range(workers):
        inputs = _available(stats, owner_in, groups, k)
        coef = ridge_coefficients(stats, inputs, every, lam)
        cost[:, k] = residuals(stats, inputs, every, coef)
    return cost


def refit(
    stats: LayerStats,
    owner_in: np.ndarray,
    owner_out: np.ndarray,
    groups: np.ndarray,
    workers: int,
    ridge: float,
) -> LayerSolution:
    """Ridge least squares of each worker's neurons on the inputs it sees."""
    lam = ridge_lambda(stats, ridge)
    coef = np.zeros((stats.n_in + 1, stats.n_out))
    for k in range(workers):
        rows = np.flatnonzero(owner_out == k)
        if rows.size == 0:
            continue
        inputs = _available(stats, owner_in, groups, k)
        coef[np.ix_(inputs, rows)] = ridge_coefficients(stats, inputs, rows, lam)
    return LayerSolution(np.ascontiguousarray(coef[:-1].T), coef[-1].copy(), owner_out, groups)


def _sparse_support(
    stats: LayerStats,
    owner_in: np.ndarray,
    owner_out: np.ndarray,
    workers: int,
    budget: int,
    settings: SolverSettings,
    start: np.ndarray | None = None,
) -> np.ndarray:
    """The transfers IHT keeps for this assignment, ``(n_in, K)`` bool (IHT from ``start``, by
    default the dense ridge solution)."""
    if budget <= 0:
        return np.zeros((stats.n_in, workers), dtype=bool)
    if start is None:
        start = dense_start(stats, settings.ridge)
    return iht(stats, start, owner_out, owner_in, workers, budget, settings.iht_iters)[1]


def dense_start(stats: LayerStats, ridge: float) -> np.ndarray:
    """Ridge solution on every input: IHT's starting point, ``(n_in + 1, n_out)``."""
    every_in = np.arange(stats.n_in + 1)
    return ridge_coefficients(stats, every_in, np.arange(stats.n_out), ridge_lambda(stats, ridge))


def solve_repurpose(
    stats: LayerStats, owner_in: np.ndarray, workers: int, budget: int, settings: SolverSettings
) -> LayerSolution:
    """RePurpose on one layer: reassign and sparsify alternately, then refit."""
    caps = balanced_capacities(stats.n_out, workers)
    groups = np.zeros((stats.n_in, workers), dtype=bool)
    start = dense_start(stats, settings.ridge) if budget > 0 else None
    owner_out = None
    for _ in range(settings.rounds):
        new_owner = balanced_assignment(
            cost_matrix(stats, owner_in, groups, workers, settings.ridge), caps
        )
        if owner_out is not None and np.array_equal(new_owner, owner_out):
            break  # a fixed point: IHT would return the same support again
        owner_out = new_owner
        if start is None:
            break  # no budget: the cost matrix does not change between rounds
        groups = _sparse_support(stats, owner_in, owner_out, workers, budget, settings, start)
    assert owner_out is not None
    return refit(stats, owner_in, owner_out, groups, workers, settings.ridge)


def solve_fixed(
    stats: LayerStats,
    owner_in: np.ndarray,
    owner_out: np.ndarray,
    workers: int,
    budget: int,
    settings: SolverSettings,
) -> LayerSolution:
    """Refit without reassignment: the given owners, IHT for the transfers, ridge refit."""
    groups = _sparse_support(stats, owner_in, owner_out, workers, budget, settings)
    return refit(stats, owner_in, owner_out, groups, workers, settings.ridge)


def dense_refit(stats: LayerStats, ridge: float) -> tuple[np.ndarray, np.ndarray]:
    """Unconstrained ridge refit, ``(weights (n_out, n_in), bias)``: the output layer, whose
    partial sums every worker computes from what it holds (no budget applies)."""
    coef = dense_start(stats, ridge)
    return np.ascontiguousarray(coef[:-1].T), coef[-1].copy()


def naive_sparsify(
    weights: np.ndarray,
    bias: np.ndarray,
    owner_in: np.ndarray,
    owner_out: np.ndarray,
    workers: int,
    budget: int,
) -> LayerSolution:
    """Naive sparsification: the original weights, the ``budget`` largest cross groups, no refit."""
    coef = np.vstack([weights.T, bias[None, :]])
    coef, groups = project(coef, owner_out, owner_in, workers, budget)
    return LayerSolution(np.ascontiguousarray(coef[:-1].T), coef[-1].copy(), owner_out, groups)
