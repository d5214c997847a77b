"""The shipped examples run as tests, and their claims hold."""

import importlib.util
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _load(name: str):
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / name / "run.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_mesh_groups_contend(capsys):
    times = _load("mesh_contention").main()
    assert times["tp alone"] == pytest.approx(times["dp alone"])
    assert 1.5 < times["slowdown"] <= 2.0 + 1e-9  # two flows per shared link: at most twice as slow
    assert "slowdown" in capsys.readouterr().out


def test_oversubscribed_fat_tree_slows_all_to_all():
    times = _load("fat_tree_alltoall").main()
    assert times["flow, 1:1 fat-tree"] == pytest.approx(times["unaware (no contention)"], rel=0.02)
    assert 1.5 < times["oversubscription_slowdown"] < 2.0


def test_dgx_a100_platform_is_the_benchmarks_platform():
    """examples/dgx_a100 is the platform docs/generator.md simulates GPT-3 on, and
    bench/generate_gpt3.py's."""
    import sys

    from trainsim.config.platform import load_platform

    sys.path.insert(0, str(EXAMPLES.parent / "bench"))
    try:
        from generate_gpt3 import dgx_a100
    finally:
        sys.path.pop(0)
    assert load_platform(EXAMPLES / "dgx_a100" / "platform.yaml") == dgx_a100(1024)
