"""Least-squares pieces of the per-layer problem: sufficient statistics and ridge fits.

Place: ``trainsim.studies.repurpose``; used by :mod:`.iht`, :mod:`.layer` (cost matrix and refit).

The per-layer objective of Abdi et al. (arXiv 2008.08289, problem formulation) is the Frobenius
loss ``||X_hat W_hat^T + b_hat - Z||_F^2 / N`` between the restructured layer fed with the
restructured network's inputs ``X_hat`` and the original pre-activations ``Z``. With the bias
folded in as a constant input (``X_a = [X_hat, 1]``, coefficients ``A = [W_hat^T; b_hat^T]``)
the loss of output neuron ``i`` is ``z2[i] - 2 A[:, i] . P[:, i] + A[:, i]^T G A[:, i]`` with
``G = X_a^T X_a / N``, ``P = X_a^T Z / N``, ``z2 = mean(Z^2)``: every solve works on these
statistics, never on the samples again. The ridge refit adds ``lam ||W_hat||_F^2`` (bias not
penalized), ``lam = ridge * mean(diag G)`` so that ``ridge`` is scale-free.

Units: losses are mean squared pre-activation errors per sample (activations are unitless).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np


@dataclass(frozen=True)
class LayerStats:
    """Sufficient statistics of one layer's least-squares problem (bias = last input row)."""

    gram: np.ndarray  # (n_in + 1, n_in + 1): G = X_a^T X_a / N
    cross: np.ndarray  # (n_in + 1, n_out): P = X_a^T Z / N
    z_sq: np.ndarray  # (n_out,): mean of Z^2 per neuron

    @property
    def n_in(self) -> int:
        return self.gram.shape[0] - 1

    @property
    def n_out(self) -> int:
        return self.cross.shape[1]

    @property
    def bias_index(self) -> int:
        return self.n_in

    @cached_property
    def lipschitz(self) -> float:
        """Largest eigenvalue of ``G``: the gradient of the loss is ``2 lipschitz``-Lipschitz."""
        return float(np.linalg.eigvalsh(self.gram)[-1])


def layer_stats(x_hat: np.ndarray, z: np.ndarray) -> LayerStats:
    """Statistics of fitting targets ``z`` (``(N, n_out)``) from inputs ``x_hat`` (``(N, n_in)``)."""
    n = x_hat.shape[0]
    xa = np.hstack([x_hat, np.ones((n, 1))])
    return LayerStats(gram=xa.T @ xa / n, cross=xa.T @ z / n, z_sq=np.mean(z * z, axis=0))


def ridge_lambda(stats: LayerStats, ridge: float) -> float:
    """The absolute ridge weight ``ridge * mean(diag G)`` over the real inputs."""
    scale = float(np.mean(np.diag(stats.gram)[: stats.n_in])) if stats.n_in else 1.0
    return ridge * max(scale, 1e-12)


def ridge_coefficients(
    stats: LayerStats, inputs: np.ndarray, outputs: np.ndarray, lam: float
) -> np.ndarray:
    """Ridge solution restricted to the rows ``inputs`` (input indices, may include the bias
    index) for the neurons ``outputs``: shape ``(len(inputs), len(outputs))``."""
    g = stats.gram[np.ix_(inputs, inputs)].copy()
    penal = np.where(inputs == stats.bias_index, 0.0, lam)
    g[np.diag_indices_from(g)] += penal
    rhs = stats.cross[np.ix_(inputs, outputs)]
    try:
        return np.linalg.solve(g, rhs)
    except np.linalg.LinAlgError:  # singular only when lam == 0 and inputs are collinear
        return np.linalg.lstsq(g, rhs, rcond=None)[0]


def residuals(
    stats: LayerStats, inputs: np.ndarray, outputs: np.ndarray, coef: np.ndarray
) -> np.ndarray:
    """Unpenalized loss of each neuron in ``outputs`` with coefficients ``coef`` on ``inputs``."""
    p = stats.cross[np.ix_(inputs, outputs)]
    gc = stats.gram[np.ix_(inputs, inputs)] @ coef
    res = stats.z_sq[outputs] - 2.0 * np.sum(coef * p, axis=0) + np.sum(coef * gc, axis=0)
    return np.maximum(res, 0.0)


def full_loss(stats: LayerStats, coef: np.ndarray) -> float:
    """Frobenius loss per sample of the full coefficient matrix ``A`` (``(n_in + 1, n_out)``)."""
    every = np.arange(stats.n_in + 1)
    return float(residuals(stats, every, np.arange(stats.n_out), coef).sum())
