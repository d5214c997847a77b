"""1 GiB all-reduce on a 1024-rank ring (Ring 1024, 50 GB/s, 500 ns; ring algorithm, 4 splits,
endpoint delay 10 ns, local-mem-bw 1600), compatibility mode. Prints our wall time, the ratio
to ASTRA-sim's 14.0 s on the same machine class, and the same collective rank by rank
(``--full``, about 100 s) to show the symmetric result equals it. Not a test.

    PYTHONPATH=src:. python bench/ring1024_allreduce.py [--full]
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.helpers.astra_cases import run_collective  # noqa: E402

from trainsim.config.types import DimSpec, NetworkSpec, Platform, SystemSpec  # noqa: E402
from trainsim.enums import CommType  # noqa: E402

ASTRA_WALL_S = 14.0


def main() -> int:
    platform = Platform(
        NetworkSpec((DimSpec("Ring", 1024, 50 * 2**30, 500.0),)),
        SystemSpec(
            endpoint_delay_ns=10,
            preferred_dataset_splits=4,
            collective_optimization="localBWAware",
            local_mem_bw=1600e9,
        ),
    )
    out = {}
    modes = [("symmetric", True)] + ([("rank-by-rank", False)] if "--full" in sys.argv else [])
    for label, sym in modes:
        t0 = time.perf_counter()
        finish, _ = run_collective(platform, CommType.ALL_REDUCE, 2**30, symmetry=sym)
        wall = time.perf_counter() - t0
        out[label] = {"wall_s": wall, "finish_ns": max(finish), "astra_ratio": ASTRA_WALL_S / wall}
        print(
            f"ring1024 1GiB all-reduce {label:13s}: {wall:8.3f} s  simulated {max(finish):,.0f} ns"
            f"  x{ASTRA_WALL_S / wall:,.0f} vs ASTRA-sim {ASTRA_WALL_S} s"
        )
    print(json.dumps({"bench": "ring1024_allreduce", **out}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
