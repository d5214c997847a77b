"""Shared helpers for the config tests: the reference inputs next to the repository."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared"


@pytest.fixture
def shared() -> Path:
    """``../shared`` relative to the repository root; the test is skipped when it is absent."""
    if not (SHARED / "reference-workloads").is_dir():
        pytest.skip(f"reference inputs not found at {SHARED}")
    return SHARED
