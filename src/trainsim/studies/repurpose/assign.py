"""Balanced assignment of a layer's output neurons to workers (the Munkres step).

Place: ``trainsim.studies.repurpose``; called by the RePurpose layer solver each round.

Abdi et al. (arXiv 2008.08289, the assignment step of the algorithm) pose the choice of the
worker computing each neuron as an assignment problem: with ``C[i, k]`` the cost of computing
neuron ``i`` on worker ``k`` and at most ``c_k`` neurons on worker ``k``, minimize
``sum_i C[i, owner(i)]``. Replicating worker ``k``'s column ``c_k`` times turns it into a
rectangular linear assignment problem, solved exactly by ``scipy.optimize.linear_sum_assignment``
(a Hungarian / Jonker-Volgenant solver). Costs are in the caller's unit (here: mean squared
residual of a pre-activation per sample).
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import linear_sum_assignment

from trainsim.errors import ConfigError


def balanced_capacities(n: int, workers: int) -> np.ndarray:
    """``c_k``: ``n`` neurons split as evenly as possible, the first ``n mod K`` workers one more."""
    if workers < 1:
        raise ConfigError(f"{workers!r}: expected at least one worker", field="workers")
    base, extra = divmod(n, workers)
    return np.array([base + (k < extra) for k in range(workers)], dtype=np.int64)


def contiguous_owners(n: int, workers: int) -> np.ndarray:
    """Neurons in contiguous blocks of sizes :func:`balanced_capacities` (no reassignment)."""
    return np.repeat(np.arange(workers), balanced_capacities(n, workers))


def balanced_assignment(cost: np.ndarray, capacities: np.ndarray) -> np.ndarray:
    """Worker of each row of ``cost`` (``(n, K)``) minimizing the total cost, at most ``c_k`` on ``k``.

    Returns an int array of shape ``(n,)``. Ties are broken the same way on every call.
    """
    cost = np.asarray(cost, dtype=np.float64)
    caps = np.asarray(capacities, dtype=np.int64)
    if cost.ndim != 2 or cost.shape[1] != caps.shape[0]:
        raise ConfigError(
            f"cost of shape {cost.shape} with {caps.shape[0]} capacities: expected (n, K) with K capacities",
            field="cost",
        )
    if np.any(caps < 0) or int(caps.sum()) < cost.shape[0]:
        raise ConfigError(
            f"capacities {caps.tolist()} hold {int(caps.sum())} neurons: expected non-negative and at least {cost.shape[0]}",
            field="capacities",
        )
    if not np.all(np.isfinite(cost)):
        raise ConfigError("cost holds NaN or infinite entries: expected finite costs", field="cost")
    columns = np.repeat(np.arange(caps.shape[0]), caps)
    rows, cols = linear_sum_assignment(cost[:, columns])
    owner = np.empty(cost.shape[0], dtype=np.int64)
    owner[rows] = columns[cols]
    return owner
