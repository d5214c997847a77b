"""The ACE table (issue 19, docs/ace.md): the baseline endpoint against ACE on the 3-D torus of
rings [4, 4, 4], [400, 200, 200] GB/s per rank, 80 compute units, 900 GB/s HBM.

Rows, each with the paper's number (Rashidi et al., ISCA 2021) and the issue's band:

- HBM bandwidth needed to drive the same network bandwidth, baseline over ACE: HBM bytes moved
  per network byte sent, on one 64 MiB all-reduce alone (``studies.ace.hbm_per_network_byte``);
- per workload (ResNet-50, GNMT, DLRM from the zoo, data parallel over the 64 ranks,
  ``--micro-batch``): the best baseline (``comm_units`` x ``comm_hbm_gbps`` grid minimizing the
  step, ``studies.ace.best_baseline``), ACE and the ideal endpoint; the effective network
  bandwidth (rank 0's bytes sent per second of collectives in flight), ACE over the best
  baseline, and the iteration speedup, best baseline over ACE;
- the same rows for ASTRA-sim 1.0's ResNet-50 and DLRM text workloads (``--text``; astra-sim/astra-sim
  branch ``ASTRA-sim-1.0``, ``inputs/workload/``, in ``reference-data/reference-workloads/
  astra-sim-1.0-text/``): the ACE authors' own inputs of that time, compute as recorded cycles
  (roofline off).

Gradients are all-reduced in fp32 (``--grad-bytes 4``) as in those inputs: ASTRA-sim 1.0's
``Resnet50_DataParallel.txt`` all-reduces 102,011,648 B = 4 x 25,502,912 weights, its
``DLRM_HybridParallel.txt`` 13,312 B = 4 x 13 x 256 for the first bottom-MLP layer (docs/ace.md).

Prints one line per row and a JSON line.

    PYTHONPATH=src python bench/ace.py [--models resnet50:4,gnmt:4,dlrm:64] [--micro-batch 4]
        [--grad-bytes 4] [--latency-ns 500] [--text Resnet50_DataParallel,DLRM_HybridParallel]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from trainsim.studies.ace import (  # noqa: E402
    LATENCY_NS,
    Comparison,
    compare,
    hbm_per_network_byte,
)
from trainsim.workload.astra_text.loop import text_to_graphs  # noqa: E402
from trainsim.workload.astra_text.parse import parse_text_workload  # noqa: E402
from trainsim.workload.generate.api import generate  # noqa: E402
from trainsim.workload.generate.parallel import Parallelism  # noqa: E402
from trainsim.workload.micro import collective_workload  # noqa: E402
from trainsim.workload.models.zoo import get_model  # noqa: E402

PAPER = {"resnet50": 1.41, "gnmt": 1.12, "dlrm": 1.13}
BANDS = {"resnet50": (1.2, 1.6), "gnmt": (1.05, 1.2), "dlrm": (1.05, 1.2)}
TEXT_DIR = ROOT / "reference-data" / "reference-workloads" / "astra-sim-1.0-text"
TEXT_MODEL = {"Resnet50_DataParallel": "resnet50", "DLRM_HybridParallel": "dlrm"}


def _row(what: str, value: float, paper: str, band: tuple[float, float]) -> dict[str, object]:
    met = band[0] <= value <= band[1]
    print(
        f"{what:<58} {value:6.2f}x  paper {paper:<18} band {band[0]}-{band[1]}  {'met' if met else 'NOT met'}"
    )
    return {"row": what, "value": value, "band": band, "met": met}


def _report(label: str, model: str, c: Comparison) -> list[dict[str, object]]:
    """Print a comparison's runs and its two rows (bandwidth gain, speedup)."""
    b = c.baseline
    print(
        f"{label}: best baseline {b.endpoint['comm_units']} units, {b.endpoint['comm_hbm_gbps']:g} GB/s: "
        f"step {b.step_s * 1e3:.3f} ms ({b.effective_gbps:.1f} GB/s effective, compute x{b.compute_slowdown:.3f}); "
        f"ACE {c.ace.step_s * 1e3:.3f} ms ({c.ace.effective_gbps:.1f} GB/s, compute x{c.ace.compute_slowdown:.3f}); "
        f"ideal {c.ideal.step_s * 1e3:.3f} ms ({c.ideal.effective_gbps:.1f} GB/s)"
    )
    rows = [
        _row(
            f"{label}: effective network bandwidth, ACE/best baseline",
            c.bandwidth_gain,
            "1.44x avg, 2.67x max",
            (1.3, 2.7),
        ),
        _row(f"{label}: iteration time, best baseline/ACE", c.speedup, f"{PAPER[model]}x", BANDS[model]),
    ]
    if c.ideal.step_s > c.ace.step_s * (1 + 1e-9) or c.ace.step_s > c.baseline.step_s * (1 + 1e-9):
        print(f"  ORDER VIOLATED: ideal {c.ideal.step_s} ACE {c.ace.step_s} baseline {c.baseline.step_s}")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--models",
        default="resnet50,gnmt,dlrm",
        help="zoo models, each NAME or NAME:MICRO_BATCH (samples per rank per step)",
    )
    parser.add_argument(
        "--micro-batch", type=int, default=4, help="samples per rank per step (default)"
    )
    parser.add_argument(
        "--unit-gbps", type=float, default=50.0, help="baseline: HBM bandwidth one unit moves, GB/s"
    )
    parser.add_argument(
        "--grad-bytes",
        type=int,
        default=4,
        help="bytes per gradient element all-reduced (default 4: fp32, as ASTRA-sim 1.0's inputs)",
    )
    parser.add_argument(
        "--latency-ns",
        type=float,
        default=LATENCY_NS,
        help="per-hop latency of the torus, ns (default 500: an assumption, docs/ace.md)",
    )
    parser.add_argument(
        "--text",
        default="Resnet50_DataParallel,DLRM_HybridParallel",
        help="ASTRA-sim 1.0 text workloads to add (comma-separated; empty: none)",
    )
    args = parser.parse_args()
    rows = []
    started = time.perf_counter()
    allreduce = collective_workload(64, "all_reduce", 64 * 2**20)
    base = hbm_per_network_byte(allreduce, {"model": "shared"})
    ace = hbm_per_network_byte(allreduce, {"model": "ace"})
    print(f"HBM bytes per network byte: baseline {base:.3f}, ACE {ace:.3f}")
    rows.append(
        _row(
            "HBM bandwidth to drive the same network bandwidth, base/ACE",
            base / ace,
            "3.5x",
            (2.5, 4.5),
        )
    )
    gains = []
    for item in args.models.split(","):
        if not item:
            continue
        name, _, batch = item.partition(":")
        micro_batch = int(batch) if batch else args.micro_batch
        print(f"{name}: {micro_batch} samples per rank, {args.grad_bytes} B per gradient element")
        wl = generate(
            get_model(name),
            Parallelism(dp=64, micro_batch=micro_batch, grad_bytes=args.grad_bytes),
            network_sizes=[4, 4, 4],
            check_memory=False,
        )
        c = compare(name, wl.graphs, unit_gbps=args.unit_gbps, latency_ns=args.latency_ns)
        gains.append(c.bandwidth_gain)
        rows += _report(name, name, c)
    for text in args.text.split(","):
        if not text:
            continue
        graphs = text_to_graphs(parse_text_workload(TEXT_DIR / f"{text}.txt"), 64, dim_sizes=[4, 4, 4])
        c = compare(
            text, graphs, unit_gbps=args.unit_gbps, roofline=False, latency_ns=args.latency_ns
        )
        rows += _report(f"{text} (ASTRA-sim 1.0)", TEXT_MODEL[text], c)
    if gains:
        rows.append(
            _row(
                "effective network bandwidth, ACE/best baseline, mean",
                sum(gains) / len(gains),
                "1.44x",
                (1.3, 2.7),
            )
        )
    print(
        json.dumps(
            {
                "bench": "ace",
                "micro_batch": args.micro_batch,
                "grad_bytes": args.grad_bytes,
                "latency_ns": args.latency_ns,
                "rows": rows,
                "wall_s": time.perf_counter() - started,
            }
        )
    )


if __name__ == "__main__":
    main()
