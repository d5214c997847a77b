"""pandas and scikit-learn are extras (pyproject.toml): without them, the commands that need
them fail with one line naming the extra, and nothing else needs them."""

import sys

import pytest

from trainsim.cli.main import main
from trainsim.errors import MissingExtraError
from trainsim.extras import require


def _uninstall(monkeypatch, package):
    """Make ``import package`` (and its submodules) fail as if it were not installed."""
    for name in [m for m in sys.modules if m == package or m.startswith(package + ".")] + [package]:
        monkeypatch.setitem(sys.modules, name, None)


def test_require_names_the_extra(monkeypatch):
    _uninstall(monkeypatch, "pandas")
    with pytest.raises(MissingExtraError, match=r"^reading it needs pandas, which is not installed: pip install 'trainsim\[sweep\]'$"):
        require("pandas", "reading it")


def test_sweep_show_without_pandas_is_one_line(monkeypatch, tmp_path, capsys):
    from trainsim.sweep.store import SweepStore

    with SweepStore(tmp_path / "s.sqlite"):
        pass
    _uninstall(monkeypatch, "pandas")
    assert main(["sweep", "show", str(tmp_path / "s.sqlite")]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0] == "trainsim: error: reading sweep results needs pandas, which is not installed: pip install 'trainsim[sweep]'"
    assert err[1].startswith("hint: ") and len(err) == 2


def test_repurpose_without_scikit_learn_is_one_line(monkeypatch, tmp_path, capsys):
    _uninstall(monkeypatch, "sklearn")
    assert main(["repurpose", "--workers", "2", "--budget", "0.5", "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0] == "trainsim: error: the RePurpose study needs scikit-learn, which is not installed: pip install 'trainsim[repurpose]'"


def test_only_the_declared_extras_are_optional():
    import tomllib
    from pathlib import Path

    project = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())["project"]
    required = " ".join(project["dependencies"])
    assert "pandas" not in required and "scikit-learn" not in required
    assert project["optional-dependencies"]["sweep"] == ["pandas>=2.1"]
    assert project["optional-dependencies"]["repurpose"] == ["scikit-learn>=1.3"]


def test_run_and_report_need_neither(tmp_path):
    """In a fresh interpreter where pandas and scikit-learn cannot be imported."""
    import subprocess

    root = __import__("pathlib").Path(__file__).resolve().parents[1]
    example = root / "examples" / "ring_allreduce"
    code = (
        "import sys\n"
        "sys.modules.update(pandas=None, sklearn=None)\n"
        "from trainsim.cli.main import main\n"
        f"assert main(['run', {str(example / 'platform.yaml')!r}, '--workload', {str(example / 'workload' / 'ring')!r}, '--json', {str(tmp_path / 'r.json')!r}, '-q']) == 0\n"
        f"assert main(['report', {str(tmp_path / 'r.json')!r}, '--out', {str(tmp_path / 'report')!r}]) == 0\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
