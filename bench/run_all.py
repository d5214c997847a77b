"""Runs the quick benchmark scripts one after another (`make bench`); each prints its own
lines with ratios against a baseline measured in the same run, then a JSON line.

The long ones (bench/congestion.py at 1,024 ranks, bench/congestion_core.py on 256 ranks, the GPT-3 step,
GPT-3 file I/O) are left out unless
``--all`` is given.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
QUICK = ["astra_reference.py", "ring1024_allreduce.py", "sweep_overhead.py", "chakra_read.py", "scale.py", "startup.py"]
LONG = ["congestion.py", "congestion_core.py", "generate_gpt3.py", "chakra_io.py"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--all", action="store_true", help="also run the long benchmarks")
    args = parser.parse_args()
    failed = []
    for name in QUICK + (LONG if args.all else []):
        script = HERE / name
        if not script.exists():
            continue
        print(f"== {name}", flush=True)
        if subprocess.run([sys.executable, str(script)], check=False).returncode != 0:
            failed.append(name)
    if failed:
        print(f"failed: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
