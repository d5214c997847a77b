import numpy as np
import pytest

from trainsim.studies.repurpose.assign import contiguous_owners
from trainsim.studies.repurpose.comm import activation_transfers
from trainsim.studies.repurpose.data import patch_owners
from trainsim.studies.repurpose.fit import full_loss, layer_stats
from trainsim.studies.repurpose.layer import (
    SolverSettings,
    cost_matrix,
    solve_fixed,
    solve_repurpose,
)


def _first_layer(digits):
    split, mlp = digits
    _, pre = mlp.trace(split.x_train)
    return layer_stats(split.x_train, pre[0]), patch_owners(4)


def test_cost_is_the_residual_of_a_fit_on_what_the_worker_sees(digits):
    split, mlp = digits
    stats, owner_in = _first_layer(digits)
    groups = np.zeros((64, 4), dtype=bool)
    groups[5, 2] = True
    cost = cost_matrix(stats, owner_in, groups, 4, 0.0)
    _, pre = mlp.trace(split.x_train)
    seen = np.flatnonzero((owner_in == 2) | groups[:, 2])
    xa = np.hstack([split.x_train[:, seen], np.ones((len(split.x_train), 1))])
    coef = np.linalg.lstsq(xa, pre[0], rcond=None)[0]
    np.testing.assert_allclose(
        cost[:, 2], np.mean((xa @ coef - pre[0]) ** 2, axis=0), rtol=1e-6, atol=1e-9
    )


def test_repurpose_layer_is_balanced_within_budget_and_beats_a_fixed_assignment(digits):
    stats, owner_in = _first_layer(digits)
    settings = SolverSettings()
    for budget in (0, 9):
        rp = solve_repurpose(stats, owner_in, 4, budget, settings)
        fixed = solve_fixed(stats, owner_in, contiguous_owners(32, 4), 4, budget, settings)
        np.testing.assert_array_equal(np.bincount(rp.owner_out, minlength=4), [8, 8, 8, 8])
        assert activation_transfers(rp.weights, rp.owner_out, owner_in, 4) <= budget
        assert activation_transfers(fixed.weights, fixed.owner_out, owner_in, 4) <= budget

        def loss(sol):
            return full_loss(stats, np.vstack([sol.weights.T, sol.bias]))

        assert loss(rp) < loss(fixed)


def test_round_one_cost_gives_each_neuron_its_share_of_other_inputs(digits):
    split, mlp = digits
    stats, owner_in = _first_layer(digits)
    none = np.zeros((64, 4), dtype=bool)
    start = np.random.default_rng(3).normal(size=(65, stats.n_out))
    cost = cost_matrix(stats, owner_in, none, 4, 0.0, share=3, start=start)
    _, pre = mlp.trace(split.x_train)
    x = split.x_train
    std = x.std(axis=0)
    i, k = 5, 1
    others = np.flatnonzero(owner_in != k)
    extra = others[np.argsort(-np.abs(start[others, i]) * std[others], kind="stable")[:3]]
    seen = np.concatenate([np.flatnonzero(owner_in == k), extra])
    xa = np.hstack([x[:, seen], np.ones((len(x), 1))])
    coef = np.linalg.lstsq(xa, pre[0][:, i], rcond=None)[0]
    assert cost[i, k] == pytest.approx(np.mean((xa @ coef - pre[0][:, i]) ** 2), rel=1e-6)
    assert np.all(cost <= cost_matrix(stats, owner_in, none, 4, 0.0) + 1e-12)


def test_alternation_keeps_the_round_of_lowest_loss(digits):
    stats, owner_in = _first_layer(digits)

    def loss(sol):
        return full_loss(stats, np.vstack([sol.weights.T, sol.bias]))

    one = solve_repurpose(stats, owner_in, 4, 9, SolverSettings(rounds=1))
    three = solve_repurpose(stats, owner_in, 4, 9, SolverSettings(rounds=3))
    assert loss(three) <= loss(one) + 1e-12
