"""Accuracy against communication for every method: the study's figure.

Place: ``trainsim.studies.repurpose``; draws a :class:`.study.StudyResult` on a matplotlib
:class:`~matplotlib.figure.Figure` (no pyplot state; the caller saves it). One panel per
worker count; budgeted methods are lines over their budgets, the others single markers.
Units: x in activation transfers (scalars) per sample, symlog scale (0 is a valid budget);
y in percent test accuracy, seed-averaged.
"""

from __future__ import annotations

from matplotlib.figure import Figure

from trainsim.studies.repurpose.methods import BUDGETED_METHODS, METHODS
from trainsim.studies.repurpose.study import StudyResult

_STYLE = {
    "repurpose": ("tab:red", "o"),
    "refit_fixed": ("tab:blue", "s"),
    "naive": ("tab:gray", "v"),
    "direct_tp": ("black", "*"),
    "whole_model": ("tab:green", "D"),
    "whole_model_gather": ("tab:olive", "P"),
}


def accuracy_vs_communication(result: StudyResult) -> Figure:
    """The figure: one panel per K, accuracy (%) against scalars moved per sample."""
    workers = sorted({r.workers for r in result.records})
    fig = Figure(figsize=(4.2 * len(workers), 3.8), layout="constrained")
    axes = fig.subplots(1, len(workers), squeeze=False)[0]
    rows = result.summary()
    for ax, k in zip(axes, workers, strict=True):
        for method in METHODS:
            mine = [r for r in rows if r.workers == k and r.method == method]
            if not mine:
                continue
            color, marker = _STYLE[method]
            xs = [r.communication for r in mine]
            ys = [100 * r.accuracy for r in mine]
            style = "-" if method in BUDGETED_METHODS else ""
            ax.plot(xs, ys, linestyle=style, marker=marker, color=color, label=method)
        ax.set_xscale("symlog", linthresh=10)
        ax.set_title(f"K = {k} workers")
        ax.set_xlabel("communication (activations per sample)")
        ax.set_ylabel("test accuracy (%)")
        ax.grid(True, alpha=0.3)
    axes[0].legend(loc="lower right", fontsize="small")
    return fig
