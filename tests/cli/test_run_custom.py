"""`trainsim run` with a custom collective (system/custom_collectives.py): ASTRA-sim's flags and
files as they are, and a bad custom graph as exit code 2 and one line, never a traceback."""

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.cli.test_run import _run as run_astra
from trainsim.workload import GraphBuilder, write_workload

DATA = Path(__file__).resolve().parents[1] / "system" / "data" / "astra_custom_collectives"


def _run(d: Path, custom: str, *extra: str, splits: int = 1) -> subprocess.CompletedProcess:
    """ASTRA-sim's example inputs under test_run's names, the system naming ``custom``."""
    shutil.copyfile(DATA / "Ring_8npus.yml", d / "net.yml")
    shutil.copyfile(DATA / "no_memory_expansion.json", d / "mem.json")
    for rank in range(8):
        shutil.copyfile(DATA / "all_reduce_8npus_1MB" / f"all_reduce.{rank}.et", d / f"wl.{rank}.et")
    (d / "sys.json").write_text(json.dumps({"preferred-dataset-splits": splits, "all-reduce-implementation-custom": [custom]}))
    return run_astra(d, *(extra or ("--json", str(d / "r.json"), "-q")))


def test_astra_example_through_the_cli(tmp_path):
    proc = _run(tmp_path, str(DATA / "custom_ring_allreduce_8npus_1MB" / "custom_allreduce"))
    assert proc.returncode == 0, proc.stderr
    ranks = json.loads((tmp_path / "r.json").read_text())["ranks"]
    assert {round(r["finish_s"] * 1e9) for r in ranks} == {90_174}


def test_warnings_of_the_run_are_one_line_each(tmp_path):
    proc = _run(tmp_path, str(DATA / "custom_ring_allreduce_8npus_1MB" / "custom_allreduce"), "--json", "-", splits=4)
    assert proc.returncode == 0, proc.stderr
    assert "warning: " in proc.stderr and "ASTRA-sim waits for 4 chunks" in proc.stderr.replace("\n", " ")
    assert "TraceWarning" not in proc.stderr and "warnings.warn" not in proc.stderr


def _deadlocked(prefix: Path) -> str:
    graphs = []
    for rank in range(8):
        b = GraphBuilder(rank=rank)
        b.add(0, 6, "recv", comm_src=(rank + 1) % 8, comm_size=64, comm_tag=0)  # all wait
        graphs.append(b.build())
    write_workload(prefix, graphs)
    return str(prefix)


@pytest.mark.parametrize(
    ("custom", "match"),
    [
        (lambda d: str(d / "missing" / "ring"), "custom collective graph"),
        (lambda d: _deadlocked(d / "dead"), "dead.<rank>.et: the custom collective's graphs cannot finish"),
    ],
)
def test_bad_custom_graph_is_exit_2_and_one_line(tmp_path, custom, match):
    proc = _run(tmp_path, custom(tmp_path))
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line and not line.startswith("hint:")]
    assert len(lines) == 1, proc.stderr
    assert match in lines[0], lines[0]
