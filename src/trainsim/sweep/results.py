"""Reading a sweep store back: a pandas DataFrame, the best rows, CSV/Parquet export, plots."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from trainsim.errors import ConfigError
from trainsim.sweep.store import open_existing


def load_results(store_path: str | Path) -> Any:
    """All rows of a sweep store as a pandas DataFrame (one column per axis and metric)."""
    import pandas as pd

    with open_existing(store_path) as store:
        return pd.DataFrame(store.rows())


def best_rows(frame: Any, metric: str, top: int = 10, *, ascending: bool = True) -> Any:
    if frame.empty:
        return frame
    if metric not in frame.columns:
        raise ConfigError(f"no column {metric!r} in the sweep results; columns: {', '.join(map(str, frame.columns))}", field="sort")
    ok = frame[frame["status"] == "ok"]
    return ok.sort_values(metric, ascending=ascending).head(top)


def export(frame: Any, out: str | Path) -> None:
    out = Path(out)
    if out.suffix == ".csv":
        frame.to_csv(out, index=False)
    elif out.suffix == ".parquet":
        try:
            frame.to_parquet(out, index=False)
        except ImportError as exc:
            raise ConfigError(f"writing Parquet needs pyarrow: {exc}", file=str(out), hint="pip install pyarrow, or export to .csv") from None
    else:
        raise ConfigError(f"unknown export format {out.suffix!r}; expected .csv or .parquet", file=str(out))


def plot(frame: Any, x: str, y: str, out: str | Path, *, hue: str | None = None, logx: bool = False, logy: bool = False) -> Path:
    """A line plot of ``y`` against ``x`` (one line per ``hue`` value) written as PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    for col in (x, y, hue):
        if col is not None and col not in frame.columns:
            raise ConfigError(f"no column {col!r} in the sweep results; columns: {', '.join(map(str, frame.columns))}", field="plot")
    ok = frame[frame["status"] == "ok"]
    fig, ax = plt.subplots(figsize=(7, 4.5))
    groups = ok.groupby(hue) if hue else [(None, ok)]
    for value, part in groups:
        part = part.groupby(x, as_index=False)[y].min().sort_values(x)
        ax.plot(part[x], part[y], marker="o", label=f"{hue}={value}" if hue else None)
    ax.set_xlabel(x)
    ax.set_ylabel(y)
    if logx:
        ax.set_xscale("log")
    if logy:
        ax.set_yscale("log")
    if hue:
        ax.legend(fontsize=8)
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    out = Path(out)
    fig.savefig(out, dpi=120)
    plt.close(fig)
    return out
