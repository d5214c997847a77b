"""`trainsim generate` input errors (no Chakra writer needed: they fail before writing)."""

import pytest

from trainsim.cli.main import main


@pytest.fixture(autouse=True)
def _writer_stub(monkeypatch):
    import sys
    import types

    if "trainsim.workload.chakra.writer" not in sys.modules:
        try:
            import trainsim.workload.chakra.writer  # noqa: F401
        except ImportError:
            stub = types.ModuleType("trainsim.workload.chakra.writer")
            stub.write_workload = lambda prefix, graphs: None
            monkeypatch.setitem(sys.modules, "trainsim.workload.chakra.writer", stub)


def test_unknown_model(tmp_path, capsys):
    assert main(["generate", "gpt-9", "--out", str(tmp_path / "x")]) == 2
    assert "unknown model 'gpt-9'" in capsys.readouterr().err


def test_tp_not_dividing_heads(tmp_path, capsys):
    assert main(["generate", "llama3-8b", "--tp", "3", "--out", str(tmp_path / "x")]) == 3
    assert "TP=3 does not divide 32 heads" in capsys.readouterr().err


def test_bad_network_dims(tmp_path, capsys):
    assert main(["generate", "megatron-1.7b", "--dp", "4", "--network-dims", "2,3", "--no-memory-check", "--out", str(tmp_path / "x")]) == 2
    assert "network has 6 NPUs" in capsys.readouterr().err
