import pytest

from trainsim.studies.repurpose.data import load_split, train_mlp


@pytest.fixture(scope="session")
def digits():
    """Seed-0 split and a small MLP (2 x 32 hidden) trained on it: quick to build, same shapes of code."""
    split = load_split(0)
    return split, train_mlp(split, 0, hidden=(32, 32), max_iter=120)
