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

import math

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
        return [chunk] * math.ceil(size / chunk)
    count = min(splits, size)
    base, extra = divmod(size, count)
    return [base + 1] * extra + [base] * (count - extra)
