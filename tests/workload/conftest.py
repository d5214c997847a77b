"""Fixtures for the workload tests: the shared reference files and graph comparison."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from trainsim.workload import WorkloadGraph

REPO_ROOT = Path(__file__).resolve().parents[2]


def _find_shared() -> Path | None:
    """shared/ lies beside the repository (worktrees, CI) or inside it (device copies)."""
    for candidate in (REPO_ROOT.parent / "shared", REPO_ROOT / "shared"):
        if (candidate / "reference-workloads").is_dir():
            return candidate
    return None


SHARED = _find_shared()
needs_shared = pytest.mark.skipif(
    SHARED is None, reason="shared/reference-workloads not found beside or inside the repository"
)


def reference_et_files() -> list[Path]:
    """Every .et file of reference-workloads/ and reference-results/inputs/workload/."""
    if SHARED is None:
        return []
    roots = [SHARED / "reference-workloads", SHARED / "reference-results" / "inputs" / "workload"]
    return sorted(p for root in roots if root.is_dir() for p in root.rglob("*.et"))


def reference_id(path: Path) -> str:
    assert SHARED is not None
    return str(path.relative_to(SHARED))


@pytest.fixture(scope="session")
def shared() -> Path:
    if SHARED is None:
        pytest.skip("shared/reference-workloads not found beside or inside the repository")
    return SHARED


_NOT_CONTENT = {"source", "warnings"}


def graph_differences(a: WorkloadGraph, b: WorkloadGraph) -> list[str]:
    """Names of the content fields (all but source and warnings) in which two graphs differ."""
    differing = []
    for field in dataclasses.fields(WorkloadGraph):
        if field.name in _NOT_CONTENT:
            continue
        x, y = getattr(a, field.name), getattr(b, field.name)
        same = np.array_equal(x, y) and x.dtype == y.dtype if isinstance(x, np.ndarray) else x == y
        if not same:
            differing.append(field.name)
    return differing
