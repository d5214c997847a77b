"""Benchmark: how long a process takes before it simulates anything (DESIGN.md, "Speed").

Each command runs ``--repeat`` times in a fresh interpreter; prints the best and median wall
time and the ratio of the best to two baselines measured in the same run: an interpreter that
does nothing (``python -c pass``) and one that imports numpy (the floor of any process that
simulates). Then one JSON line. Not a test; nothing here asserts a time.

    python bench/startup.py [--repeat N]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "ring_allreduce"
CLI = [sys.executable, "-m", "trainsim.cli.main"]

COMMANDS = {
    "python -c pass (baseline)": [sys.executable, "-c", "pass"],
    "python -c 'import numpy' (baseline)": [sys.executable, "-c", "import numpy"],
    "trainsim --help": [*CLI, "--help"],
    "trainsim run examples/ring_allreduce": [*CLI, "run", str(EXAMPLE / "platform.yaml"), "--workload", str(EXAMPLE / "workload" / "ring")],
    "3-D 4,096-rank all-reduce in memory": [sys.executable, str(ROOT / "bench" / "scale.py"), "--child", "3d_ring16_fc16_switch16", "default"],
}


def timed(command: list[str], repeat: int, env: dict[str, str]) -> list[float]:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        times.append(time.perf_counter() - start)
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=11)
    args = parser.parse_args()
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT / "src") + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    rows = {}
    for name, command in COMMANDS.items():
        times = timed(command, args.repeat, env)
        rows[name] = {"best_s": min(times), "median_s": statistics.median(times)}
    bare = rows["python -c pass (baseline)"]["best_s"]
    numpy = rows["python -c 'import numpy' (baseline)"]["best_s"]
    print(f"{'command':40s} {'best s':>8s} {'median s':>9s} {'x bare':>7s} {'x numpy':>8s}")
    for name, row in rows.items():
        row.update(x_bare=row["best_s"] / bare, x_numpy=row["best_s"] / numpy)
        print(f"{name:40s} {row['best_s']:8.3f} {row['median_s']:9.3f} {row['x_bare']:7.1f} {row['x_numpy']:8.2f}")
    print(json.dumps({"bench": "startup", "repeat": args.repeat, "commands": rows}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
