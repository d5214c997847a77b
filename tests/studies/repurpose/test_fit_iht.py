import numpy as np
import pytest

from trainsim.studies.repurpose.comm import activation_transfers
from trainsim.studies.repurpose.fit import full_loss, layer_stats, residuals, ridge_coefficients
from trainsim.studies.repurpose.iht import iht, project


@pytest.fixture
def problem():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(200, 6))
    z = x @ rng.normal(size=(6, 4)) + 0.3 + 0.05 * rng.normal(size=(200, 4))
    return x, z, layer_stats(x, z)


def test_stats_reproduce_the_sample_loss(problem):
    x, z, stats = problem
    coef = np.random.default_rng(2).normal(size=(7, 4))
    pred = x @ coef[:-1] + coef[-1]
    assert full_loss(stats, coef) == pytest.approx(
        np.sum(np.mean((pred - z) ** 2, axis=0)), rel=1e-9
    )


def test_ridge_without_penalty_is_least_squares(problem):
    x, z, stats = problem
    every = np.arange(7)
    coef = ridge_coefficients(stats, every, np.arange(4), 0.0)
    ref = np.linalg.lstsq(np.hstack([x, np.ones((200, 1))]), z, rcond=None)[0]
    np.testing.assert_allclose(coef, ref, atol=1e-8)
    sub = np.array([0, 2, 6])
    part = ridge_coefficients(stats, sub, np.arange(4), 0.0)
    ref_part = np.linalg.lstsq(np.hstack([x[:, [0, 2]], np.ones((200, 1))]), z, rcond=None)[0]
    np.testing.assert_allclose(part, ref_part, atol=1e-8)
    res = residuals(stats, sub, np.arange(4), part)
    pred = x[:, [0, 2]] @ part[:2] + part[2]
    np.testing.assert_allclose(res, np.mean((pred - z) ** 2, axis=0), rtol=1e-8)


def test_projection_keeps_local_weights_bias_and_the_largest_groups():
    coef = np.arange(1.0, 13.0).reshape(4, 3)  # 3 inputs + bias row, 3 outputs
    owner_in = np.array([0, 1, 0])
    owner_out = np.array([0, 1, 1])
    out, groups = project(coef, owner_out, owner_in, 2, 1)
    # groups: (j0 -> w1) = 2^2 + 3^2 = 13, (j1 -> w0) = 4^2 = 16, (j2 -> w1) = 8^2 + 9^2 = 145
    np.testing.assert_array_equal(groups, [[False, False], [False, False], [False, True]])
    expected = np.array([[1, 0, 0], [0, 5, 6], [7, 8, 9], [10, 11, 12]], dtype=float)
    np.testing.assert_array_equal(out, expected)
    w = out[:-1].T
    assert activation_transfers(w, owner_out, owner_in, 2) == 1


def test_iht_does_not_increase_the_loss_and_respects_the_budget(problem):
    _, _, stats = problem
    owner_in = np.array([0, 0, 0, 1, 1, 1])
    owner_out = np.array([0, 0, 1, 1])
    start = ridge_coefficients(stats, np.arange(7), np.arange(4), 0.0)
    first, _ = project(start, owner_out, owner_in, 2, 2)
    coef, groups = iht(stats, start, owner_out, owner_in, 2, 2, 50)
    assert full_loss(stats, coef) <= full_loss(stats, first) + 1e-12
    assert groups.sum() <= 2
    assert activation_transfers(coef[:-1].T, owner_out, owner_in, 2) <= 2
