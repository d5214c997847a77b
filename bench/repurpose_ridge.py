"""Choose the RePurpose solvers' ridge weight by validation on the digits training split.

Runs :func:`trainsim.studies.repurpose.validation.ridge_scores` (five seeds, K = 2, 4, 8,
every budget of the study, ``repurpose`` and ``refit_fixed``; a fresh MLP per seed trained on
80 % of the training split, scored on the other 20 %; the test split is never read) and prints
one line per ridge weight, the chosen one, then a JSON line. docs/repurpose.md records the
output and SolverSettings.ridge holds the chosen value. Takes a few minutes on 2 cores.

    PYTHONPATH=src python bench/repurpose_ridge.py [--grid 1e-5,1e-4,1e-3,1e-2,1e-1] [--seeds 0,1,2,3,4]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from trainsim.studies.repurpose.validation import (  # noqa: E402
    DEFAULT_GRID,
    ridge_scores,
    select_ridge,
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--grid", default=",".join(f"{r:g}" for r in DEFAULT_GRID))
    parser.add_argument("--seeds", default="0,1,2,3,4")
    args = parser.parse_args()
    grid = [float(r) for r in args.grid.split(",")]
    seeds = [int(s) for s in args.seeds.split(",")]
    scores = ridge_scores(grid, seeds, progress=print)
    for s in scores:
        print(
            f"ridge {s.ridge:g}: held-out accuracy {100 * s.accuracy:.3f} %, "
            f"log-loss {s.log_loss:.4f} nats ({s.deployments} deployments)"
        )
    best = select_ridge(scores)
    print(f"chosen: {best:g}")
    print(json.dumps({"chosen": best, "scores": [s.to_dict() for s in scores]}))


if __name__ == "__main__":
    main()
