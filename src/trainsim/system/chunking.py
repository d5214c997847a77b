"""How a collective is cut into chunks (astra-sim-semantics.md C1, C2). Sizes in bytes.

Compatibility mode (ASTRA-sim 518bd51, ``Sys::determine_chunk_size`` and the ``while (size >
0)`` loop of ``Sys::generate_collective``):

- ``chunk = size // splits``; for all-gather only, a chunk smaller than the total NPU count
  is raised to it and ``size = splits * chunk``;
- ``ceil(size / chunk)`` chunks, *every one a full chunk* (the remainder is not trimmed:
  1,000,003 B with 4 splits gives 5 chunks of 250,000 B).

Default mode: ``min(splits, size)`` chunks whose sizes differ by at most one byte and add up to
``size`` exactly (a chunk is a slice of the buffer; nothing is invented or dropped).
"""

from __future__ import annotations

from trainsim import budget
from trainsim.enums import CommType


def chunk_sizes(
    comm_type: int, size: int, splits: int, total_npus: int, *, compat_astra: bool
) -> list[int]:
    """The chunk sizes of one collective of ``size`` bytes."""
    splits = max(1, int(splits))
    if size <= 0:
        return []
    if compat_astra:
        chunk = size // splits
        if comm_type == CommType.ALL_GATHER and chunk < total_npus:
            chunk = total_npus
            size = splits * chunk
        chunk = max(chunk, 1)  # ASTRA-sim divides by zero here; one byte per chunk instead
        count = -(-size // chunk)
        _check_chunks(count, size, splits)
        return [chunk] * count
    count = min(splits, size)
    _check_chunks(count, size, splits)
    base, extra = divmod(size, count)
    return [base + 1] * extra + [base] * (count - extra)


def _check_chunks(count: int, size: int, splits: int) -> None:
    """Refuse a collective cut into more chunks than the ``chunks`` limit (docs/limits.md)
    before the list of them is made: each chunk is simulated phase by phase."""
    if count > _CHUNK_LIMIT:
        budget.check(
            "chunks",
            count,
            f"a collective of {size:,} B in {splits:,} splits",
            way_under="use fewer preferred-dataset-splits",
            field="preferred_dataset_splits",
        )


_CHUNK_LIMIT = budget.LIMITS["chunks"].value
