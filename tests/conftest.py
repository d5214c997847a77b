"""Suite-wide settings: property tests draw the same examples on every run (derandomized), so
CI cannot turn red or green by chance; `HYPOTHESIS_PROFILE=explore` draws fresh random examples
when hunting for counterexamples locally. Reference data kept in the repository:
reference-data/ (tests/helpers/reference_data.py)."""

import os
import tarfile
from pathlib import Path

import pytest
from hypothesis import settings

from tests.helpers.reference_data import WORKLOADS

settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
settings.register_profile("explore", deadline=None, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture(scope="session")
def pytorch_trace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """chakra's feeder test trace (3,664 PyTorch-derived nodes), unpacked once per session."""
    target = tmp_path_factory.mktemp("feeder_trace")
    with tarfile.open(WORKLOADS / "chakra-tests" / "feeder_tests_trace.tar.gz") as tar:
        tar.extractall(target, filter="data")
    return target / "tests" / "data" / "chakra.0.et"
