"""Sweep overhead: 1,000 tiny simulations through `run_sweep` (local processes, batched, with
the SQLite store) against the same 1,000 run in one process in a plain loop.

Prints one line per case with the ratio to the in-process baseline, then a JSON line.
Target (issue 8): ratio <= 2.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from trainsim.sweep import load_sweep  # noqa: E402
from trainsim.sweep.evaluate import run_batch  # noqa: E402
from trainsim.sweep.runner import pending_items, run_sweep  # noqa: E402
from trainsim.sweep.store import SweepStore  # noqa: E402

SPEC = """
base:
  platform:
    network:
      dims:
        - {topology: Ring, size: 4, bandwidth_gbps: 50, latency_ns: 500}
  workload:
    shift: {size_bytes: 1024, steps: 2}
axes:
  - field: workload.shift.size_bytes
    name: size
    range: {start: 1, stop: 1000}
"""


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        spec_path = Path(tmp) / "tiny.yaml"
        spec_path.write_text(SPEC)
        spec = load_sweep(spec_path)
        with SweepStore(Path(tmp) / "base.sqlite") as store:
            items, _ = pending_items(spec, store)
        start = time.perf_counter()
        run_batch(items)
        baseline = time.perf_counter() - start
        results = {"combinations": len(items), "in_process_s": baseline}
        for jobs in (1, os.cpu_count() or 1):
            with SweepStore(Path(tmp) / f"sweep{jobs}.sqlite") as store:
                start = time.perf_counter()
                summary = run_sweep(spec, store, jobs=jobs)
                elapsed = time.perf_counter() - start
            assert summary.ran == len(items)
            ratio = elapsed / baseline
            results[f"jobs{jobs}_s"] = elapsed
            results[f"jobs{jobs}_ratio"] = ratio
            print(f"sweep of {len(items)} tiny simulations, {jobs} process(es): {elapsed:.2f} s, ratio to one process in a loop {ratio:.2f} (target <= 2)")
        print(json.dumps(results))


if __name__ == "__main__":
    main()
