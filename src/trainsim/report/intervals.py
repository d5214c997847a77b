"""Interval arithmetic on arrays of [start, end) pairs (any time unit): union length and
intersection length, vectorized with numpy."""

from __future__ import annotations

import numpy as np


def merge(starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Disjoint sorted intervals covering the union of the inputs."""
    keep = ends > starts
    starts, ends = starts[keep], ends[keep]
    if starts.size == 0:
        return starts, ends
    order = np.argsort(starts, kind="stable")
    starts, ends = starts[order], ends[order]
    running_end = np.maximum.accumulate(ends)
    new_block = np.empty(starts.size, dtype=bool)
    new_block[0] = True
    new_block[1:] = starts[1:] > running_end[:-1]
    block_id = np.cumsum(new_block) - 1
    merged_starts = starts[new_block]
    merged_ends = np.zeros(merged_starts.size)
    np.maximum.at(merged_ends, block_id, ends)
    return merged_starts, merged_ends


def union_length(starts: np.ndarray, ends: np.ndarray) -> float:
    s, e = merge(np.asarray(starts, float), np.asarray(ends, float))
    return float(np.sum(e - s))


def intersection_length(a: tuple[np.ndarray, np.ndarray], b: tuple[np.ndarray, np.ndarray]) -> float:
    """Length of (union of a) intersected with (union of b)."""
    a_s, a_e = merge(np.asarray(a[0], float), np.asarray(a[1], float))
    b_s, b_e = merge(np.asarray(b[0], float), np.asarray(b[1], float))
    if a_s.size == 0 or b_s.size == 0:
        return 0.0
    # |A ∩ B| = |A| + |B| - |A ∪ B|
    union = union_length(np.concatenate([a_s, b_s]), np.concatenate([a_e, b_e]))
    return float(np.sum(a_e - a_s) + np.sum(b_e - b_s) - union)
