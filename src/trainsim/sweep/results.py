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


def where(frame: Any, expression: str | None) -> Any:
    """Rows for which ``expression`` (the sweep file's filter language, over column names) is true."""
    if not expression or frame.empty:
        return frame
    from trainsim.sweep.spec import compile_filter

    names = [str(c) for c in frame.columns if str(c).isidentifier()]
    keep = compile_filter(expression, names, "--where")
    return frame[[keep(row) for row in frame[names].to_dict("records")]]


def plot(frame: Any, x: str, y: str, out: str | Path, *, hue: str | None = None, logx: bool = False, logy: bool = False) -> Path:
    """A line plot of ``y`` against ``x`` (one line per ``hue`` value; ``hue`` may name several
    columns, comma-separated) written as PNG. Where other axes vary, each point is the best
    (smallest) ``y``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if hue and "," in hue:
        parts = [h.strip() for h in hue.split(",")]
        missing = [h for h in parts if h not in frame.columns]
        if missing:
            raise ConfigError(f"no column {missing[0]!r} in the sweep results; columns: {', '.join(map(str, frame.columns))}", field="plot")
        frame = frame.assign(**{hue: frame[parts].astype(str).agg(" / ".join, axis=1)})
    for col in (x, y, hue):
        if col is not None and col not in frame.columns:
            raise ConfigError(f"no column {col!r} in the sweep results; columns: {', '.join(map(str, frame.columns))}", field="plot")
    ok = frame[frame["status"] == "ok"]
    many = bool(hue) and ok[hue].nunique() > 6
    fig, ax = plt.subplots(figsize=(11 if many else 7, 4.5))
    groups = ok.groupby(hue) if hue else [(None, ok)]
    for value, part in groups:
        part = part.groupby(x, as_index=False)[y].min().sort_values(x)
        ax.plot(part[x], part[y], marker="o", ms=3, label=str(value) if hue else None)
    ax.set_xlabel(x)
    ax.set_ylabel(y)
    if logx:
        ax.set_xscale("log")
    if logy:
        ax.set_yscale("log")
    if hue:
        if many:
            ax.legend(fontsize=7, title=hue, title_fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), ncol=1 + ok[hue].nunique() // 15)
        else:
            ax.legend(fontsize=8, title=hue, title_fontsize=8)
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    out = Path(out)
    fig.savefig(out, dpi=120)
    plt.close(fig)
    return out
