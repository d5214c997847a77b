"""Fixtures for the workload tests: the reference files (reference-data/) and graph comparison."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np

from tests.helpers.reference_data import REFERENCE_DATA, RESULTS, WORKLOADS
from trainsim.workload import WorkloadGraph


def reference_et_files() -> list[Path]:
    """Every .et file of reference-workloads/ and reference-results/inputs/workload/."""
    files = sorted(p for root in (WORKLOADS, RESULTS / "inputs" / "workload") for p in root.rglob("*.et"))
    assert files, f"no .et files under {REFERENCE_DATA}"
    return files


def reference_id(path: Path) -> str:
    return str(path.relative_to(REFERENCE_DATA))



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
