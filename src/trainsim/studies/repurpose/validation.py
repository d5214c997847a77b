"""Choosing the solvers' ridge weight by validation on the training split, never the test split.

Place: ``trainsim.studies.repurpose``; ``bench/repurpose_ridge.py`` runs :func:`select_ridge` and
docs/repurpose.md records its output and the value it chose (:class:`.layer.SolverSettings`).

For each seed the digits training split (the study's calibration data) is split again,
stratified, into a fitting part and a held-out ``holdout`` fraction (:func:`.data.
validation_split`). A fresh MLP is trained on the fitting part, every refit method
(``repurpose`` and ``refit_fixed``, which share the ridge) is deployed from it for every worker
count and budget, and each candidate ridge weight is scored on the held-out part by

- ``accuracy``: the mean fraction of held-out samples classified correctly (the criterion), and
- ``log_loss``: the mean cross-entropy of the softmax of the logits against the labels (nats per
  sample; the tie-break: it moves with every sample, accuracy only when a prediction flips).

The test split of :func:`.data.load_split` is dropped before anything is fitted.
Units: accuracy a fraction in [0, 1], log-loss nats per sample; ridge as in :mod:`.fit`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np
from threadpoolctl import threadpool_limits

from trainsim.errors import ConfigError
from trainsim.studies.repurpose.data import load_split, train_mlp, validation_split
from trainsim.studies.repurpose.layer import SolverSettings
from trainsim.studies.repurpose.methods import deploy
from trainsim.studies.repurpose.study import DEFAULT_BUDGETS

DEFAULT_GRID = (1e-5, 1e-4, 1e-3, 1e-2, 1e-1)


@dataclass(frozen=True)
class RidgeScore:
    """Held-out scores of one ridge weight, averaged over seeds, workers, budgets and methods."""

    ridge: float
    accuracy: float
    log_loss: float
    deployments: int

    def to_dict(self) -> dict:
        return dict(self.__dict__)


def log_loss(logits: np.ndarray, labels: np.ndarray) -> float:
    """Mean cross-entropy (nats) of ``softmax(logits)`` against integer ``labels``."""
    shifted = logits - logits.max(axis=1, keepdims=True)
    log_norm = np.log(np.exp(shifted).sum(axis=1))
    return float(np.mean(log_norm - shifted[np.arange(len(labels)), labels]))


def ridge_scores(
    grid: Sequence[float] = DEFAULT_GRID,
    seeds: Sequence[int] = (0, 1, 2, 3, 4),
    workers: Sequence[int] = (2, 4, 8),
    budgets: Sequence[float] = DEFAULT_BUDGETS,
    holdout: float = 0.2,
    settings: SolverSettings | None = None,
    progress: Callable[[str], None] | None = None,
) -> list[RidgeScore]:
    """Held-out accuracy and log-loss of every ridge weight in ``grid`` (module docstring)."""
    if not grid:
        raise ConfigError("empty: expected at least one ridge weight", field="grid")
    base = settings or SolverSettings()
    candidates = [replace(base, ridge=float(r)) for r in grid]  # validates each value
    acc: dict[float, list[float]] = {s.ridge: [] for s in candidates}
    loss: dict[float, list[float]] = {s.ridge: [] for s in candidates}
    with threadpool_limits(limits=1, user_api="blas"):
        for seed in seeds:
            split = validation_split(load_split(seed), seed, holdout)
            mlp = train_mlp(split, seed)
            for k in workers:
                for f in budgets:
                    for method in ("repurpose", "refit_fixed"):
                        for s in candidates:
                            d = deploy(method, mlp, split.x_train, k, f, s)
                            logits = d.model.logits(split.x_test)
                            acc[s.ridge].append(
                                float(np.mean(np.argmax(logits, axis=1) == split.y_test))
                            )
                            loss[s.ridge].append(log_loss(logits, split.y_test))
            if progress:
                progress(f"seed {seed}: {len(candidates)} ridge weights scored")
    return [
        RidgeScore(r, float(np.mean(acc[r])), float(np.mean(loss[r])), len(acc[r])) for r in acc
    ]


def select_ridge(scores: Sequence[RidgeScore]) -> float:
    """The ridge weight of highest held-out accuracy; ties broken by lower log-loss."""
    if not scores:
        raise ConfigError("empty: expected at least one score", field="scores")
    return min(scores, key=lambda s: (-round(s.accuracy, 12), s.log_loss)).ridge
