import json

import numpy as np
import pytest

from trainsim.errors import ConfigError
from trainsim.studies.repurpose.comm import group_budget
from trainsim.studies.repurpose.methods import METHODS, deploy
from trainsim.studies.repurpose.study import StudyConfig, markdown_table, run_study


@pytest.mark.parametrize("workers", [2, 4, 8])
def test_every_method_respects_its_traffic(digits, workers):
    split, mlp = digits
    n_cls, hidden = 10, 32
    tp = deploy("direct_tp", mlp, split.x_train, workers)
    assert tp.communication == (64 + hidden + n_cls) * (workers - 1)
    assert deploy("whole_model", mlp, split.x_train, workers).communication == 64 * (workers - 1)
    assert (
        deploy("whole_model_gather", mlp, split.x_train, workers).communication
        == 64 - 64 // workers
    )
    for method in ("repurpose", "refit_fixed", "naive"):
        for f in (0.0, 0.05):
            d = deploy(method, mlp, split.x_train, workers, f)
            per_layer = [s.scalars for s in d.stages]
            assert per_layer[0] <= group_budget(f, 64, workers)
            assert per_layer[1] <= group_budget(f, hidden, workers)
            assert per_layer[2] == 0 and per_layer[3] == n_cls * (
                workers - 1
            )  # output partial sums


def test_whole_model_and_tp_keep_the_original_predictions(digits):
    split, mlp = digits
    for method in ("direct_tp", "whole_model", "whole_model_gather"):
        d = deploy(method, mlp, split.x_train, 4)
        np.testing.assert_allclose(d.model.logits(split.x_test), mlp.logits(split.x_test))


def test_zero_budget_restructuring_is_far_above_naive(digits):
    split, mlp = digits
    rp = deploy("repurpose", mlp, split.x_train, 8, 0.0).model.accuracy(split.x_test, split.y_test)
    naive = deploy("naive", mlp, split.x_train, 8, 0.0).model.accuracy(split.x_test, split.y_test)
    assert rp > naive + 0.3


def test_bad_method_and_missing_budget_are_config_errors(digits):
    split, mlp = digits
    with pytest.raises(
        ConfigError, match="method: unknown method 'magic': expected one of repurpose"
    ):
        deploy("magic", mlp, split.x_train, 4)
    with pytest.raises(ConfigError, match="budget: method 'repurpose' without a budget"):
        deploy("repurpose", mlp, split.x_train, 4)


def test_same_seed_same_result():
    config = StudyConfig(workers=(4,), budgets=(0.0, 0.05), seeds=(3,))
    a, b = run_study(config), run_study(config)
    assert json.dumps(a.to_dict(), sort_keys=True) == json.dumps(b.to_dict(), sort_keys=True)
    rows = a.summary()
    assert {r.method for r in rows} == set(METHODS)
    assert "| 4 | repurpose | 0.05 |" in markdown_table(a)
    assert all(isinstance(c["holds"], bool) for c in a.checks())


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"workers": (3,)}, "workers"),
        ({"budgets": (2.0,)}, "budget"),
        ({"seeds": (-1,)}, "seeds"),
        ({"methods": ("x",)}, "methods"),
        ({"seeds": ()}, "seeds"),
    ],
)
def test_bad_study_config_is_a_config_error(kwargs, field):
    with pytest.raises(ConfigError, match=field):
        StudyConfig(**kwargs)
