"""Sweeps over parallelization strategies: a ``generate`` workload, generated per combination
for its platform and simulated as ``trainsim generate --platform`` does."""

from pathlib import Path

import pytest

from trainsim.compute import OperatorTimer
from trainsim.config.platform import parse_platform
from trainsim.sweep import load_sweep
from trainsim.sweep.results import load_results
from trainsim.sweep.runner import run_sweep
from trainsim.sweep.store import SweepStore
from trainsim.system.symmetry.replica import simulate_generated
from trainsim.workload.generate import Parallelism, generate
from trainsim.workload.graph import executed_flop
from trainsim.workload.models import get_model

PLATFORM = {
    "network": {
        "dims": [
            {"topology": "Switch", "size": 4, "bandwidth_gbps": 300, "latency_ns": 700},
            {"topology": "Switch", "size": 2, "bandwidth_gbps": 25, "latency_ns": 2000},
        ]
    }
}
SPEC = """
base:
  platform:
    network:
      dims:
        - {topology: Switch, size: 4, bandwidth_gbps: 300, latency_ns: 700}
        - {topology: Switch, size: 2, bandwidth_gbps: 25, latency_ns: 2000}
  workload:
    generate: {model: megatron-1.7b, seq: 512, recompute: full, global_batch: 8}
axes:
  - {field: workload.generate.tp, name: tp, values: [1, 2, 4]}
  - {field: workload.generate.pp, name: pp, values: [1, 2]}
  - {field: workload.generate.dp, name: dp, values: [1, 2, 4, 8]}
filter: "tp * pp * dp == 8"
metrics: [makespan_s, tflops_per_gpu]
"""


def test_parallelism_sweep_matches_generate_and_simulate(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text(SPEC)
    with SweepStore(tmp_path / "s.sqlite") as store:
        summary = run_sweep(load_sweep(path), store, jobs=1)
    assert summary.statuses == {"ok": 6}
    frame = load_results(tmp_path / "s.sqlite")
    row = frame[(frame["tp"] == 2) & (frame["pp"] == 2)].iloc[0]
    spec = get_model("megatron-1.7b", seq=512)
    w = generate(spec, Parallelism(tp=2, pp=2, dp=2, recompute="full", global_batch=8), OperatorTimer("A100"), network_sizes=(4, 2))
    run = simulate_generated(parse_platform(PLATFORM, "<test>"), w)
    assert row["makespan_s"] == run.makespan_s
    assert row["tflops_per_gpu"] == pytest.approx(executed_flop(w.graphs) / 8 / run.makespan_s / 1e12)
    assert (frame["tflops_per_gpu"] > 0).all()


def test_strategy_that_does_not_fit_is_infeasible(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text(SPEC.replace("megatron-1.7b, seq: 512", "megatron-18b, seq: 512").replace("values: [1, 2, 4]}", "values: [1]}"))
    with SweepStore(tmp_path / "s.sqlite") as store:
        summary = run_sweep(load_sweep(path), store, jobs=1)
    assert summary.statuses == {"infeasible": 2}
    errors = load_results(tmp_path / "s.sqlite")["error"].tolist()
    assert all("but A100 has 80.0 GB" in e for e in errors), errors


def test_unknown_generate_key_is_refused_on_load(tmp_path):
    from trainsim.errors import ConfigError

    path = tmp_path / "s.yaml"
    path.write_text(SPEC.replace("global_batch: 8}", "global_batch: 8, tensor_parallel: 2}"))
    with pytest.raises(ConfigError, match="unknown key 'tensor_parallel'"):
        load_sweep(path)


def test_shipped_parallelism_example_loads():
    spec = load_sweep(Path(__file__).resolve().parents[2] / "examples" / "sweep_parallelism" / "sweep.yaml")
    assert len(list(spec.combinations())) == 24
