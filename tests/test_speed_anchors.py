"""bench/equivalence_files.py measures issue 18's speed anchors: its cases must be the inputs
reference-data/reference-results/real-workloads.md records for them (generate command,
network, ASTRA-sim's wall time and makespan), or its ratios compare different work (its GPT-3
case once ran batch 1,536 against the batch-64 anchor's recorded time)."""

import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from equivalence_files import CASES  # noqa: E402

ANCHORS = {"gpt3": "gpt3-1024", "megatron18b": "megatron18b-256", "resnet50": "resnet-dp256"}


def _recorded() -> dict[str, list[str]]:
    """The table's rows by name, each a list of its cells."""
    rows = {}
    for line in (ROOT / "reference-data" / "reference-results" / "real-workloads.md").read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("| ") and len(cells) == 7:
            rows[cells[0]] = cells
    return rows


def _numbers(cell: str) -> list[float]:
    return [float(x) for x in re.findall(r"\d+(?:\.\d+)?", cell)]


@pytest.mark.parametrize("case", list(ANCHORS))
def test_bench_case_is_the_recorded_anchor(case):
    args, topology, sizes, gbps, latency_ns, wall_s, makespan_ns = CASES[case]
    _, command, network, backend, makespan, astra, _ = _recorded()[ANCHORS[case]]
    assert backend == "congestion_unaware"
    assert command.strip("`") == args
    assert network == f"[{', '.join(topology)}] [{', '.join(map(str, sizes))}] [{', '.join(f'{g:g}' for g in gbps)}] [{', '.join(f'{x:g}' for x in latency_ns)}]"
    assert int(makespan.replace(",", "")) == makespan_ns
    assert _numbers(astra)[0] == wall_s  # "wall / CPU / RSS": the wall seconds
