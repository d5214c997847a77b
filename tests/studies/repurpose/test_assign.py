import itertools

import numpy as np
import pytest

from trainsim.errors import ConfigError
from trainsim.studies.repurpose.assign import (
    balanced_assignment,
    balanced_capacities,
    contiguous_owners,
)


def brute_force(cost, caps):
    best = np.inf
    for owners in itertools.product(range(cost.shape[1]), repeat=cost.shape[0]):
        if np.all(np.bincount(owners, minlength=cost.shape[1]) <= caps):
            best = min(best, cost[np.arange(cost.shape[0]), owners].sum())
    return best


@pytest.mark.parametrize("caps", [(3, 3), (4, 2), (5, 5)])
@pytest.mark.parametrize("seed", range(6))
def test_assignment_is_balanced_and_optimal_on_6x2(seed, caps):
    cost = np.random.default_rng(seed).random((6, 2))
    caps = np.array(caps)
    owner = balanced_assignment(cost, caps)
    assert owner.shape == (6,)
    assert np.all(np.bincount(owner, minlength=2) <= caps)
    assert cost[np.arange(6), owner].sum() == pytest.approx(brute_force(cost, caps), abs=1e-12)


def test_exact_capacities_fill_every_worker():
    cost = np.random.default_rng(0).random((12, 4))
    owner = balanced_assignment(cost, balanced_capacities(12, 4))
    np.testing.assert_array_equal(np.bincount(owner, minlength=4), [3, 3, 3, 3])


def test_capacities_and_contiguous_owners():
    np.testing.assert_array_equal(balanced_capacities(10, 4), [3, 3, 2, 2])
    np.testing.assert_array_equal(contiguous_owners(5, 2), [0, 0, 0, 1, 1])


def test_too_little_capacity_is_a_config_error():
    with pytest.raises(
        ConfigError,
        match=r"capacities: capacities \[2, 2\] hold 4 neurons: expected non-negative and at least 6",
    ):
        balanced_assignment(np.zeros((6, 2)), np.array([2, 2]))


def test_shape_mismatch_is_a_config_error():
    with pytest.raises(ConfigError, match="expected \\(n, K\\) with K capacities"):
        balanced_assignment(np.zeros((6, 3)), np.array([3, 3]))
