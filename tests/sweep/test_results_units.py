"""Sweep results people read: units on the plot's axes and in `sweep show`, and lines that
stay apart when there are more of them than colours."""

import re

import pandas as pd
import pytest

from trainsim.cli.main import main
from trainsim.sweep import load_sweep
from trainsim.sweep.results import load_results, plot_figure
from trainsim.sweep.runner import run_sweep
from trainsim.sweep.store import SweepStore

from .conftest import write_spec

SCALE = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}


def _store(tmp_path):
    spec = load_sweep(write_spec(tmp_path / "s.yaml", bws=(50, 100), sizes=(1024, 1048576)))
    with SweepStore(tmp_path / "s.sqlite") as store:
        run_sweep(spec, store, jobs=1)
    return tmp_path / "s.sqlite"


def test_sweep_show_prints_times_in_human_units_to_the_ns(tmp_path, capsys):
    store = _store(tmp_path)
    assert main(["sweep", "show", str(store), "--top", "4"]) == 0
    rows = [line.split("│")[1:-1] for line in capsys.readouterr().out.splitlines() if line.startswith("│")]
    assert len(rows) == 4
    shown = []
    for bw, size, makespan in ([c.strip() for c in row] for row in rows):
        assert re.fullmatch(r"(50|100) GB/s", bw) and re.fullmatch(r"\d+ B", size)
        number, unit = makespan.split()
        assert unit in SCALE, makespan
        shown.append(float(number) * SCALE[unit])
    best = sorted(load_results(store)["makespan_s"])
    assert shown == pytest.approx(best, rel=1e-9)  # not 4 digits: enough to compare runs


def test_plot_axes_carry_units(tmp_path):
    fig = plot_figure(load_results(_store(tmp_path)), "size", "makespan_s", hue="bw")
    ax = fig.axes[0]
    assert ax.get_xlabel() == "size (B)"  # the axis `size` sets workload.shift.size_bytes
    assert re.fullmatch(r"makespan \((us|ms)\)", ax.get_ylabel())
    assert ax.get_legend().get_title().get_text() == "bw"


def test_27_lines_all_look_different():
    frame = pd.DataFrame(
        [{"status": "ok", "algorithm": f"a{i}", "chunks": c, "makespan_s": (i + 1) * c * 1e-3} for i in range(27) for c in (1, 4)]
    )
    ax = plot_figure(frame, "chunks", "makespan_s", hue="algorithm").axes[0]
    styles = {(line.get_color(), line.get_marker(), line.get_linestyle()) for line in ax.get_lines()}
    assert len(ax.get_lines()) == 27 and len(styles) == 27
    assert ax.get_ylabel() == "makespan (ms)"
