"""Per-layer solvers: RePurpose, refit without reassignment, naive sparsification, dense refit.

Place: ``trainsim.studies.repurpose``; :mod:`.methods` calls one of these per layer, front to back.

RePurpose for one layer (Abdi et al., arXiv 2008.08289; the steps as issue 10 states them)
alternates for up to ``rounds`` rounds:

1. the cost matrix ``C[i, k]``: the ridge residual of neuron ``i`` if worker ``k`` computed it
   under its share of the budget. In round one no transfers are chosen yet, so the share is the
   even one, ``floor(B / K)`` inputs: ``k``'s own inputs plus the ``floor(B / K)`` others that
   matter most to neuron ``i`` (largest ``|A_ij| std(x_j)`` in the dense ridge solution ``A``,
   IHT's starting point). From round two the share is what the previous round's IHT gave
   ``k``: its own inputs plus the ones transferred to it;
2. a balanced assignment on ``C`` (:mod:`.assign`);
3. IHT under the group budget for that assignment (:mod:`.iht`), which picks the transfers;
4. a ridge least-squares refit on that support (every neuron on worker ``k`` uses all inputs
   ``k`` holds or receives: the transfer is paid for anyway). Once the support is fixed the
   loss separates by neuron, so this per-worker refit is the joint least-squares solution.

The rounds stop early at a fixed point of the assignment; the layer keeps the round whose refit
has the lowest calibration loss (alternating steps need not decrease it monotonically: the
assignment minimizes the cost matrix's estimate, not the loss after IHT).

Units: budgets in activation transfers per sample; losses as in :mod:`.fit`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from trainsim.errors import ConfigError
from trainsim.studies.repurpose.assign import balanced_assignment, balanced_capacities
from trainsim.studies.repurpose.fit import (
    LayerStats,
    full_loss,
    residuals,
    ridge_coefficients,
    ridge_lambda,
)
from trainsim.studies.repurpose.iht import iht, project


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
    stats: LayerStats,
    owner_in: np.ndarray,
    groups: np.ndarray,
    workers: int,
    ridge: float,
    share: int = 0,
    start: np.ndarray | None = None,
) -> np.ndarray:
    """``C[i, k]``: residual of neuron ``i`` fitted by ridge on what worker ``k`` sees, plus, with
    ``share`` > 0, the ``share`` other inputs of largest ``|start[j, i]| std(x_j)`` for that
    neuron alone (``start``: coefficients ``(n_in + 1, n_out)``, by default the dense ridge
    solution)."""
    lam = ridge_lambda(stats, ridge)
    every = np.arange(stats.n_out)
    cost = np.empty((stats.n_out, workers))
    if share > 0:
        if start is None:
            start = dense_start(stats, ridge)
        mean = stats.gram[: stats.n_in, stats.bias_index]
        std = np.sqrt(np.maximum(np.diag(stats.gram)[: stats.n_in] - mean**2, 0.0))
        score = np.abs(start[: stats.n_in]) * std[:, None]  # (n_in, n_out)
    for k in range(workers):
        inputs = _available(stats, owner_in, groups, k)
        others = np.setdiff1d(np.arange(stats.n_in), inputs)
        take = min(share, others.size)
        if take == 0:
            coef = ridge_coefficients(stats, inputs, every, lam)
            cost[:, k] = residuals(stats, inputs, every, coef)
            continue
        order = np.argsort(-score[others], axis=0, kind="stable")[:take]  # (take, n_out)
        extra = others[order].T  # (n_out, take)
        idx = np.hstack([np.broadcast_to(inputs, (stats.n_out, inputs.size)), extra])
        cost[:, k] = _batched_residuals(stats, idx, lam)
    return cost


def _batched_residuals(stats: LayerStats, idx: np.ndarray, lam: float) -> np.ndarray:
    """Residual of each neuron ``i`` fitted by ridge on its own inputs ``idx[i]`` (``(n_out, m)``)."""
    g = stats.gram[idx[:, :, None], idx[:, None, :]]  # (n_out, m, m)
    penal = np.where(idx == stats.bias_index, 0.0, lam)
    g = g + penal[:, :, None] * np.eye(idx.shape[1])[None]
    p = stats.cross[idx, np.arange(stats.n_out)[:, None]]  # (n_out, m)
    try:
        coef = np.linalg.solve(g, p[:, :, None])[:, :, 0]
    except np.linalg.LinAlgError:  # singular only when lam == 0 and inputs are collinear
        coef = np.stack(
            [np.linalg.lstsq(gi, pi, rcond=None)[0] for gi, pi in zip(g, p, strict=True)]
        )
    gc = np.einsum("nij,nj->ni", stats.gram[idx[:, :, None], idx[:, None, :]], coef)
    res = stats.z_sq - 2.0 * np.sum(coef * p, axis=1) + np.sum(coef * gc, axis=1)
    return np.maximum(res, 0.0)


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
    """RePurpose on one layer: reassign and sparsify alternately, refit, keep the best round."""
    caps = balanced_capacities(stats.n_out, workers)
    groups = np.zeros((stats.n_in, workers), dtype=bool)
    start = dense_start(stats, settings.ridge) if budget > 0 else None
    share = budget // workers
    owner_out = None
    best: tuple[float, LayerSolution] | None = None
    for round_ in range(settings.rounds):
        cost = cost_matrix(
            stats, owner_in, groups, workers, settings.ridge, share if round_ == 0 else 0, start
        )
        new_owner = balanced_assignment(cost, caps)
        if owner_out is not None and np.array_equal(new_owner, owner_out):
            break  # a fixed point: IHT would return the same support again
        owner_out = new_owner
        if start is not None:
            groups = _sparse_support(stats, owner_in, owner_out, workers, budget, settings, start)
        sol = refit(stats, owner_in, owner_out, groups, workers, settings.ridge)
        loss = full_loss(stats, np.vstack([sol.weights.T, sol.bias]))
        if best is None or loss < best[0]:
            best = (loss, sol)
        if start is None:
            break  # no budget: the cost matrix does not change between rounds
    assert best is not None
    return best[1]


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
