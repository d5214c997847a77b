"""The time-and-cost plot of a budget sweep (PNG/SVG/PDF by the file's suffix).

Left axis: step time (ms) of the optimized allocation and of the equal split against the total
bandwidth per NPU (GB/s); right axis: network cost (million $) of both, when a cost model was
given. Matplotlib runs headless (the Agg backend); nothing is shown on screen.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from trainsim.optimize.api import SweepPoint


def plot_sweep(points: Sequence[SweepPoint], path: str | Path, *, title: str = "") -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    budgets = [p.budget_gbps for p in points]
    fig, ax = plt.subplots(figsize=(7, 4.2))
    ax.plot(budgets, [p.time_s * 1e3 for p in points], "o-", color="tab:blue", label="time, optimized")
    ax.plot(budgets, [p.equal_time_s * 1e3 for p in points], "o--", color="tab:blue", alpha=0.5, label="time, equal split")
    ax.set_xlabel("total bandwidth per NPU (GB/s)")
    ax.set_ylabel("step time (ms)", color="tab:blue")
    handles, labels = ax.get_legend_handles_labels()
    if all(p.cost is not None for p in points):
        ax2 = ax.twinx()
        ax2.plot(budgets, [(p.cost or 0.0) / 1e6 for p in points], "s-", color="tab:red", label="cost, optimized")
        ax2.plot(budgets, [(p.equal_cost or 0.0) / 1e6 for p in points], "s--", color="tab:red", alpha=0.5,
                 label="cost, equal split")
        ax2.set_ylabel("network cost (M$)", color="tab:red")
        h2, l2 = ax2.get_legend_handles_labels()
        handles, labels = handles + h2, labels + l2
    ax.legend(handles, labels, loc="upper center", fontsize=8, ncol=2)
    ax.grid(alpha=0.3)
    if title:
        ax.set_title(title)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
