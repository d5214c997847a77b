import numpy as np
import pytest

from trainsim.errors import ConfigError
from trainsim.studies.repurpose.data import load_split, validation_split
from trainsim.studies.repurpose.study import StudyConfig, run_study
from trainsim.studies.repurpose.validation import RidgeScore, log_loss, ridge_scores, select_ridge


def _rows(x):
    return {row.tobytes() for row in x}


def test_validation_split_holds_out_part_of_the_training_split_only():
    split = load_split(0)
    val = validation_split(split, 0, 0.2)
    assert len(val.x_train) + len(val.x_test) == len(split.x_train)
    assert _rows(val.x_test) <= _rows(split.x_train)
    assert len(val.x_test) == pytest.approx(0.2 * len(split.x_train), abs=1)
    with pytest.raises(ConfigError, match="holdout"):
        validation_split(split, 0, 1.0)


def test_study_with_holdout_never_reads_the_test_split():
    cfg = dict(workers=(2,), budgets=(0.0,), seeds=(0,), methods=("direct_tp",))
    held = run_study(StudyConfig(**cfg, holdout=0.2))
    plain = run_study(StudyConfig(**cfg))
    n_val = len(validation_split(load_split(0), 0, 0.2).x_test)
    correct = held.records[0].accuracy * n_val  # a count of held-out samples, not of test ones
    assert correct == pytest.approx(round(correct), abs=1e-9)
    assert held.to_dict()["config"]["holdout"] == 0.2
    assert held.original_accuracy != plain.original_accuracy


def test_log_loss_and_selection():
    logits = np.array([[2.0, 0.0], [0.0, 0.0]])
    expected = np.mean([np.log1p(np.exp(-2.0)), np.log(2.0)])
    assert log_loss(logits, np.array([0, 1])) == pytest.approx(expected)
    scores = [
        RidgeScore(1e-4, 0.97, 0.2, 1),
        RidgeScore(1e-3, 0.97, 0.1, 1),
        RidgeScore(1e-2, 0.96, 0.05, 1),
    ]
    assert select_ridge(scores) == 1e-3


def test_ridge_scores_cover_the_grid():
    scores = ridge_scores(grid=(1e-3, 1e-1), seeds=(0,), workers=(2,), budgets=(0.0,))
    assert [s.ridge for s in scores] == [1e-3, 1e-1]
    assert all(s.deployments == 2 and 0.5 < s.accuracy <= 1 and s.log_loss > 0 for s in scores)
