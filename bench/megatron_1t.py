"""Benchmark: issue 17's 1T-parameter step on 512 GPUs, the whole ``trainsim generate`` process.

Runs, in a child process,

    trainsim generate megatron-1t --tp 8 --pp 64 --dp 1 --micro-batch 1 --global-batch 512
        --recompute full --device A100 --platform P.yaml

where P is examples/dgx_a100/platform.yaml with its InfiniBand Switch cut to 64 nodes (512
GPUs), written to a temporary directory. Prints the command's step line and one JSON line with
the child's CPU seconds (user + sys, ``resource.getrusage(RUSAGE_CHILDREN)``), its wall seconds
and the load average before and after (a shared machine's wall time is noise; CPU time is the
figure to compare). docs/speed.md, "The per-collective path", says what the time is spent on.

    PYTHONPATH=src python bench/megatron_1t.py [--global-batch 512]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
NODES = 64  # 512 GPUs of 8 per node


def platform_file(directory: Path) -> Path:
    """examples/dgx_a100/platform.yaml with the node dimension (InfiniBand) at ``NODES``."""
    doc = yaml.safe_load((REPO / "examples/dgx_a100/platform.yaml").read_text())
    doc["network"]["dims"][1]["size"] = NODES
    path = directory / "dgx_a100_512.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--global-batch", type=int, default=512)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="trainsim-1t-") as tmp:
        platform = platform_file(Path(tmp))
        cmd = [sys.executable, "-c", "from trainsim.cli.main import main; main()", "generate", "megatron-1t",
               "--tp", "8", "--pp", "64", "--dp", "1", "--micro-batch", "1",
               "--global-batch", str(args.global_batch), "--recompute", "full", "--device", "A100",
               "--platform", str(platform)]  # fmt: skip
        load_before = os.getloadavg()[0]
        wall = time.perf_counter()
        done = subprocess.run(cmd, capture_output=True, text=True, check=False)
        wall = time.perf_counter() - wall
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"trainsim generate failed ({done.returncode}):\n{done.stderr}")
    for line in done.stdout.splitlines():
        if "step" in line.lower() or "simulat" in line.lower():
            print(line.strip())
    print(json.dumps({"case": "megatron_1t_512", "global_batch": args.global_batch,
                      "cpu_s": round(usage.ru_utime + usage.ru_stime, 2), "wall_s": round(wall, 2),
                      "load_before": load_before, "load_after": os.getloadavg()[0]}))  # fmt: skip


if __name__ == "__main__":
    main()
