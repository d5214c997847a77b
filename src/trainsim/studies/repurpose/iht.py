"""Iterative hard thresholding on the layer's Frobenius loss under a group-L0 budget.

Place: ``trainsim.studies.repurpose``; called by :mod:`.layer` once the neurons have owners.

Constraint set (Abdi et al., arXiv 2008.08289, the L0-constrained step of the algorithm): for a
fixed assignment, the weights of a neuron on the inputs its own worker holds (the diagonal
blocks) and the biases are free; of the off-diagonal groups ``{W[i, j] : owner_out[i] = k}``,
``k != owner_in[j]`` (one activation transfer each, :mod:`.comm`), at most ``budget`` may be
nonzero. The Euclidean projection onto that set keeps the ``budget`` groups of largest norm
(ties: lower input index, then lower worker, first) and zeroes the rest. IHT repeats a gradient
step of size ``1 / lambda_max(G)`` on the loss of :mod:`.fit` and that projection
(Blumensath & Davies' IHT; the group form is the paper's group-L0 communication constraint).

Units: as :mod:`.fit` (mean squared pre-activation error per sample); ``budget`` counts
activation transfers per sample.
"""

from __future__ import annotations

import numpy as np

from trainsim.studies.repurpose.fit import LayerStats


def local_mask(owner_out: np.ndarray, owner_in: np.ndarray) -> np.ndarray:
    """``(n_in + 1, n_out)`` bool: coefficients free of communication (same worker, or bias)."""
    same = np.asarray(owner_in)[:, None] == np.asarray(owner_out)[None, :]
    return np.vstack([same, np.ones((1, same.shape[1]), dtype=bool)])


def group_scores(
    coef: np.ndarray, owner_out: np.ndarray, owner_in: np.ndarray, workers: int
) -> np.ndarray:
    """``(n_in, K)`` squared norms of the cross-worker groups; ``-inf`` where ``k`` owns ``j``."""
    n_in = coef.shape[0] - 1
    onehot = np.zeros((coef.shape[1], workers))
    onehot[np.arange(coef.shape[1]), np.asarray(owner_out)] = 1.0
    scores = (coef[:n_in] ** 2) @ onehot
    scores[np.arange(n_in), np.asarray(owner_in)] = -np.inf
    return scores


def top_groups(scores: np.ndarray, budget: int) -> np.ndarray:
    """``(n_in, K)`` bool: the ``budget`` groups of largest positive score."""
    keep = np.zeros(scores.shape, dtype=bool)
    if budget <= 0:
        return keep
    flat = scores.ravel()
    order = np.argsort(-flat, kind="stable")[:budget]
    order = order[flat[order] > 0]
    keep.ravel()[order] = True
    return keep


def project(
    coef: np.ndarray, owner_out: np.ndarray, owner_in: np.ndarray, workers: int, budget: int
) -> tuple[np.ndarray, np.ndarray]:
    """Projection of ``coef`` onto the budget set; returns (projected coef, kept groups)."""
    groups = top_groups(group_scores(coef, owner_out, owner_in, workers), budget)
    mask = local_mask(owner_out, owner_in)
    mask[:-1] |= groups[:, np.asarray(owner_out)]
    return coef * mask, groups


def iht(
    stats: LayerStats,
    start: np.ndarray,
    owner_out: np.ndarray,
    owner_in: np.ndarray,
    workers: int,
    budget: int,
    iters: int,
) -> tuple[np.ndarray, np.ndarray]:
    """Run ``iters`` IHT steps from ``start``; returns (coefficients, kept groups ``(n_in, K)``)."""
    step = 1.0 / max(stats.lipschitz, 1e-12)
    coef, groups = project(start, owner_out, owner_in, workers, budget)
    for _ in range(iters):
        grad = stats.gram @ coef - stats.cross
        coef, groups = project(coef - step * grad, owner_out, owner_in, workers, budget)
    return coef, groups
