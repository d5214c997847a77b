import itertools

import numpy as np
import pytest

from trainsim.errors import ConfigError
from trainsim.studies.repurpose.comm import (
    activation_transfers,
    direct_tp_transfers,
    group_budget,
    plain_l0,
    transfer_pairs,
)


def brute_force(w, owner_out, owner_in, workers):
    """Count by the definitions, one weight and one (input, worker) pair at a time."""
    l0 = 0
    pairs = np.zeros((workers, workers), dtype=int)
    for i, j in itertools.product(range(w.shape[0]), range(w.shape[1])):
        if w[i, j] != 0 and owner_out[i] != owner_in[j]:
            l0 += 1
    for j in range(w.shape[1]):
        for k in range(workers):
            if k == owner_in[j]:
                continue
            if any(w[i, j] != 0 for i in range(w.shape[0]) if owner_out[i] == k):
                pairs[owner_in[j], k] += 1
    return l0, pairs


@pytest.mark.parametrize("seed", range(5))
def test_counts_equal_brute_force_on_a_tiny_layer(seed):
    rng = np.random.default_rng(seed)
    workers = 3
    w = rng.normal(size=(5, 6)) * (rng.random((5, 6)) < 0.4)
    owner_out = rng.integers(0, workers, 5)
    owner_in = rng.integers(0, workers, 6)
    l0, pairs = brute_force(w, owner_out, owner_in, workers)
    assert plain_l0(w, owner_out, owner_in) == l0
    np.testing.assert_array_equal(transfer_pairs(w, owner_out, owner_in, workers), pairs)
    assert activation_transfers(w, owner_out, owner_in, workers) == pairs.sum()


def test_one_input_used_by_many_neurons_of_a_worker_is_sent_once():
    w = np.ones((3, 1))
    owner_out, owner_in = np.array([1, 1, 1]), np.array([0])
    assert plain_l0(w, owner_out, owner_in) == 3
    assert activation_transfers(w, owner_out, owner_in, 2) == 1


def test_dense_layer_costs_direct_tensor_parallel_traffic():
    w = np.ones((8, 6))
    owner_out, owner_in = np.repeat(np.arange(4), 2), np.array([0, 0, 1, 2, 3, 3])
    assert activation_transfers(w, owner_out, owner_in, 4) == direct_tp_transfers(6, 4) == 18


def test_budget_is_a_floor_of_the_tp_fraction():
    assert group_budget(0.05, 64, 4) == 9
    assert group_budget(0.1, 64, 4) == 19
    assert group_budget(0.0, 64, 4) == 0
    assert group_budget(1.0, 64, 4) == 192


@pytest.mark.parametrize("bad", [-0.1, 1.5, "0.1", float("nan")])
def test_bad_budget_is_a_config_error(bad):
    with pytest.raises(ConfigError, match="budget.*expected a budget fraction"):
        group_budget(bad, 64, 4)
