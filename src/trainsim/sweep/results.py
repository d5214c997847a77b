"""Reading a sweep store back: a pandas DataFrame, the best rows, CSV/Parquet export, plots.

A column's unit comes from the suffix of its name (``makespan_s``: seconds, ``bandwidth_gbps``:
GB/s, ``size_bytes``: bytes; DESIGN.md "Units") or, for an axis with a short name, of the field
it sets (``size`` sets ``workload.collective.size_bytes``: bytes), which the store keeps.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from trainsim.errors import ConfigError
from trainsim.extras import require
from trainsim.sweep.store import open_existing
from trainsim.units import MS, NS, US, precise_time

SUFFIX_UNITS = {"s": "s", "ms": "ms", "us": "us", "ns": "ns", "bytes": "B", "gbps": "GB/s", "gib": "GiB", "gb": "GB"}
NAMED_UNITS = {"tflops_per_gpu": "TFLOP/s"}


def load_results(store_path: str | Path) -> Any:
    """All rows of a sweep store as a pandas DataFrame (one column per axis and metric);
    ``frame.attrs["axis_fields"]`` maps each axis name to the field it sets."""
    pd = require("pandas", "reading sweep results")
    with open_existing(store_path) as store:
        frame = pd.DataFrame(store.rows())
        frame.attrs["axis_fields"] = store.get_meta("axis_fields") or {}
    return frame


def column_unit(frame: Any, column: str) -> str | None:
    """The unit of ``column``'s values (``s``, ``GB/s``, ``B``, ...), or None (a count, a name)."""
    field = (getattr(frame, "attrs", {}).get("axis_fields") or {}).get(column, "")
    for name in (column, re.sub(r"\[\d+\]", "", str(field)).rsplit(".", 1)[-1]):
        if name in NAMED_UNITS:
            return NAMED_UNITS[name]
        if "_" in name and name.rsplit("_", 1)[1].lower() in SUFFIX_UNITS:
            return SUFFIX_UNITS[name.rsplit("_", 1)[1].lower()]
    return None


def format_cell(frame: Any, column: str, value: Any) -> str:
    """A value as ``sweep show`` prints it: times in a readable unit to the ns, other units
    named, floats to 6 significant digits."""
    unit = column_unit(frame, column)
    if isinstance(value, bool) or not isinstance(value, int | float) or value != value:  # NaN: as is
        return str(value)
    if unit == "s":
        return precise_time(float(value))
    number = f"{value:.6g}" if isinstance(value, float) else str(value)
    return f"{number} {unit}" if unit else number


def axis_label(frame: Any, column: str, values: Any = ()) -> tuple[str, float]:
    """``(label, scale)`` of a plot axis: ``makespan (ms)`` and 1e-3 for seconds whose largest
    value is in the ms; a unit named from the column or its field; the name as is otherwise."""
    unit = column_unit(frame, column)
    if unit is None:
        return column, 1.0
    name = column.rsplit("_", 1)[0] if column.rsplit("_", 1)[-1].lower() in SUFFIX_UNITS else column
    scale = 1.0
    if unit == "s":
        top = max((abs(float(v)) for v in values), default=0.0)
        scale, unit = next(((sc, u) for sc, u in ((1.0, "s"), (MS, "ms"), (US, "us")) if top >= sc), (NS, "ns"))
    return f"{name} ({unit})", scale


LINE_COLOURS = 10  # matplotlib's tab10 cycle
LINE_MARKERS = ("o", "s", "^", "D", "v", "P", "X")
LINE_STYLES = ("-", "--", ":", "-.")


def line_style(index: int) -> dict[str, Any]:
    """The style of the ``index``-th line: colour, marker and line style vary at coprime periods
    (10, 7, and every 10 lines), so no two of the first 280 lines look alike."""
    return {
        "color": f"C{index % LINE_COLOURS}",
        "marker": LINE_MARKERS[index % len(LINE_MARKERS)],
        "linestyle": LINE_STYLES[(index // LINE_COLOURS) % len(LINE_STYLES)],
    }


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
    (smallest) ``y``. Axes carry their units; lines differ in colour, marker and line style."""
    import matplotlib.pyplot as plt

    fig = plot_figure(frame, x, y, hue=hue, logx=logx, logy=logy)
    out = Path(out)
    fig.savefig(out, dpi=120)
    plt.close(fig)
    return out


def plot_figure(frame: Any, x: str, y: str, *, hue: str | None = None, logx: bool = False, logy: bool = False) -> Any:
    """The matplotlib figure of :func:`plot`."""
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
    xlabel, xscale = axis_label(frame, x, ok[x] if ok[x].dtype.kind in "iuf" else ())
    ylabel, yscale = axis_label(frame, y, ok[y] if ok[y].dtype.kind in "iuf" else ())
    for index, (value, part) in enumerate(groups):
        part = part.groupby(x, as_index=False)[y].min().sort_values(x)
        xs = part[x] / xscale if xscale != 1.0 else part[x]
        ax.plot(xs, part[y] / yscale, ms=3, label=str(value) if hue else None, **line_style(index))
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
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
    return fig
