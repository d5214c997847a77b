"""examples/nccl: every platform loads and runs, and docs/nccl.md's comparison holds where it
says it does (calibration rows within 1%, the single-node H100 checks within 5%)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from trainsim.config.platform import load_platform
from trainsim.system.collective_bench import collective_sweep

ROOT = Path(__file__).resolve().parents[2]


def _table():
    spec = importlib.util.spec_from_file_location("nccl_table", ROOT / "docs" / "nccl_table.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(spec.name, module)  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name", sorted(p.name for p in (ROOT / "examples" / "nccl").glob("*.yaml")))
def test_every_nccl_example_runs(name):
    plat = load_platform(ROOT / "examples" / "nccl" / name)
    (point,) = collective_sweep(plat, "all_reduce", [1 << 20], backend="congestion_unaware")
    assert point.algorithm.startswith("nccl:") and point.time_s > 0


def test_the_documented_comparison_holds():
    rows = _table().compare({"h100", "a100", "a3mega"})
    calibration = [r for r in rows if r["calibration"]]
    assert len(calibration) == 2 and all(abs(r["error"]) < 0.01 for r in calibration)
    h100 = [r for r in rows if str(r["hardware"]).startswith("h100") and not r["calibration"]]
    assert len(h100) == 10 and all(abs(r["error"]) < 0.05 for r in h100)
    big = [r for r in rows if r["hardware"] == "a3mega" and r["size"] >= 512 << 20]
    assert len(big) == 5 and all(abs(r["error"]) < 0.10 for r in big)
