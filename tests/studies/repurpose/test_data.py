import numpy as np
import pytest

from trainsim.errors import ConfigError
from trainsim.studies.repurpose.data import patch_grid, patch_owners


def test_patches_are_equal_spatial_tiles():
    assert patch_grid(2) == (1, 2)
    assert patch_grid(4) == (2, 2)
    assert patch_grid(8) == (2, 4)
    owners = patch_owners(4).reshape(8, 8)
    np.testing.assert_array_equal(owners[:4, :4], 0)
    np.testing.assert_array_equal(owners[:4, 4:], 1)
    np.testing.assert_array_equal(owners[4:, :4], 2)
    np.testing.assert_array_equal(owners[4:, 4:], 3)
    for k in (2, 4, 8, 16):
        np.testing.assert_array_equal(np.bincount(patch_owners(k)), [64 // k] * k)


@pytest.mark.parametrize("bad", [1, 3, 6, 0, 128])
def test_worker_counts_that_do_not_tile_are_config_errors(bad):
    with pytest.raises(ConfigError, match=rf"workers: {bad}: expected"):
        patch_owners(bad)


def test_trained_mlp_has_the_shapes_and_learns(digits):
    split, mlp = digits
    assert [w.shape for w in mlp.weights] == [(32, 64), (32, 32), (10, 32)]
    assert mlp.accuracy(split.x_test, split.y_test) > 0.9
    inputs, pre = mlp.trace(split.x_test[:5])
    np.testing.assert_allclose(inputs[1], np.maximum(pre[0], 0))
