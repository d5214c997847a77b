"""Communication of one distributed layer: plain L0 and activation transfers (group L0).

Place: ``trainsim.studies.repurpose``; used by the per-layer solvers, the methods and the plans.

A layer ``Z = X W^T + b`` is split by ``owner_out[i]`` (the worker computing output neuron
``i``) and ``owner_in[j]`` (the worker holding input ``j``). Following Abdi et al. (arXiv
2008.08289, problem formulation), a weight ``W[i, j]`` with ``owner_out[i] != owner_in[j]``
needs input ``j`` on another worker. Two counts:

- plain L0: the number of such cross-worker nonzero weights;
- activation transfers: the number of pairs ``(j, k)``, ``k != owner_in[j]``, such that some
  neuron on worker ``k`` has a nonzero weight on input ``j`` (input ``j`` is then sent once to
  ``k``). This is a group L0 over the groups ``{W[i, j] : owner_out[i] = k}`` and is what the
  package reports as "communication".

Units: counts are scalars (activations) moved per inference sample; bytes are that times
:data:`BYTES_PER_SCALAR` (float32 activations).
"""

from __future__ import annotations

import math

import numpy as np

from trainsim.errors import ConfigError

BYTES_PER_SCALAR = 4
"""Bytes of one transferred activation (float32)."""


def cross_mask(owner_out: np.ndarray, owner_in: np.ndarray) -> np.ndarray:
    """``(n_out, n_in)`` bool: True where the weight connects neurons of different workers."""
    return np.asarray(owner_out)[:, None] != np.asarray(owner_in)[None, :]


def plain_l0(weights: np.ndarray, owner_out: np.ndarray, owner_in: np.ndarray) -> int:
    """Number of nonzero cross-worker weights (plain L0)."""
    return int(np.count_nonzero((weights != 0) & cross_mask(owner_out, owner_in)))


def needed_inputs(weights: np.ndarray, owner_out: np.ndarray, workers: int) -> np.ndarray:
    """``(workers, n_in)`` bool: worker ``k`` uses input ``j`` (some of its rows is nonzero there)."""
    onehot = np.zeros((workers, weights.shape[0]))
    onehot[np.asarray(owner_out), np.arange(weights.shape[0])] = 1.0
    return (onehot @ (weights != 0)) > 0


def transfer_pairs(
    weights: np.ndarray, owner_out: np.ndarray, owner_in: np.ndarray, workers: int
) -> np.ndarray:
    """``(workers, workers)`` int: scalars sent from worker ``src`` (row) to ``dst`` (column)."""
    need = needed_inputs(weights, owner_out, workers)
    owner_in = np.asarray(owner_in)
    pairs = np.zeros((workers, workers), dtype=np.int64)
    for src in range(workers):
        pairs[src] = need[:, owner_in == src].sum(axis=1)
    np.fill_diagonal(pairs, 0)
    return pairs


def activation_transfers(
    weights: np.ndarray, owner_out: np.ndarray, owner_in: np.ndarray, workers: int
) -> int:
    """Scalars moved per sample for this layer (group L0 of the cross-worker groups)."""
    return int(transfer_pairs(weights, owner_out, owner_in, workers).sum())


def direct_tp_transfers(n_in: int, workers: int) -> int:
    """Direct tensor-parallel traffic: every input all-gathered, ``n_in (K - 1)`` scalars."""
    return n_in * (workers - 1)


def group_budget(fraction: float, n_in: int, workers: int) -> int:
    """Activation transfers allowed in a layer: ``floor(fraction * n_in (K - 1))``.

    ``fraction`` is the budget as a fraction of direct tensor-parallel traffic, in ``[0, 1]``.
    """
    if not (isinstance(fraction, int | float) and 0.0 <= fraction <= 1.0):
        raise ConfigError(
            f"{fraction!r}: expected a budget fraction of direct tensor-parallel traffic in [0, 1]",
            field="budget",
        )
    return math.floor(fraction * direct_tp_transfers(n_in, workers) + 1e-9)
