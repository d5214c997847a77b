"""`trainsim generate` options for context parallelism, uneven pipelines and ZeRO-3 prefetch
reach the generator (and bad values are one-line errors)."""

import json

import pytest

from trainsim.cli.main import main
from trainsim.workload.models import get_model


def test_cp_and_uneven_stages_from_the_command_line(tmp_path):
    out = tmp_path / "s.json"
    code = main(["generate", "megatron-1.7b", "--cp", "2", "--pp", "5", "--first-stage-layers", "4", "--last-stage-layers", "5",
                 "--micro-batch", "1", "--global-batch", "5", "--seq", "512", "--platform", _platform(tmp_path, 2, 5),
                 "--no-memory-check", "--json", str(out), "-q"])  # fmt: skip
    assert code == 0
    summary = json.loads(out.read_text())
    assert summary["world"] == 10 and len(summary["memory"]) == 5
    # 24 layers as 4 + 3 x 5 + 5: the first stage holds 4 layers and the embedding, the middle 5
    spec = get_model("megatron-1.7b", seq=512)
    params = [m["params"] for m in summary["memory"]]
    assert params[1] == params[2] == params[3] == pytest.approx(5 * spec.dense_params_per_layer())
    assert params[0] == pytest.approx(4 * spec.dense_params_per_layer() + spec.embedding_params())
    assert summary["simulation"]["mode"] == "replica slice"


def test_bad_stage_layers_option(tmp_path, capsys):
    code = main(["generate", "megatron-1.7b", "--pp", "2", "--layers-per-stage", "12,x", "--out", str(tmp_path / "x"), "-q"])
    assert code != 0
    assert "--layers-per-stage" in capsys.readouterr().err


def _platform(tmp_path, *sizes):
    """Switch dimensions of ``sizes`` (a CP pair in the first of (2, 5), the stages in the second:
    on one dimension the stages' tied-embedding all-reduce may still hold the injection port when
    the gradient reduction starts, and the replica slice refuses; tests/system/test_replica.py)."""
    path = tmp_path / "p.yaml"
    dims = "".join(f"    - {{topology: Switch, size: {n}, bandwidth_gbps: 300, latency_ns: 700}}\n" for n in sizes)
    path.write_text(f"network:\n  dims:\n{dims}")
    return str(path)
