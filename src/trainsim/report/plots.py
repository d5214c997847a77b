"""Matplotlib figures of a result document (the JSON of ``trainsim run --json``), as PNG."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from trainsim.report.collectives import rows_of  # noqa: E402
from trainsim.units import human_time  # noqa: E402


def breakdown_bars(document: dict[str, Any], out: Path) -> Path:
    """Stacked bars of each rank class: the step breakdown's categories
    (``report/step_breakdown.py``) when the document has them, else compute only, overlap,
    exposed communication and idle."""
    from trainsim.report.step_breakdown import label

    rows = document.get("breakdown", [])
    labels = [_ranks_label(r["ranks"]) for r in rows]
    stepped = bool(rows) and all(r.get("step") for r in rows)
    top = max((sum(r["step"].values()) if stepped else r["finish_s"] for r in rows), default=0.0)
    scale, unit = _time_scale(top)
    fig, ax = plt.subplots(figsize=(max(6.5, 0.6 * len(rows) + 4.5), 4))
    bottom = [0.0] * len(rows)
    if stepped:
        keys = [k for k in rows[0]["step"] if any(r["step"].get(k, 0.0) > 0 for r in rows)]
        series = {label(k): [r["step"].get(k, 0.0) for r in rows] for k in keys}
    else:
        series = {
            "compute only": [r["compute_s"] - r["overlap_s"] for r in rows],
            "compute + comm overlap": [r["overlap_s"] for r in rows],
            "exposed communication": [max(0.0, r["exposed_comm_s"] - r["idle_s"]) for r in rows],
            "idle": [r["idle_s"] for r in rows],
        }
    for name, values in series.items():
        scaled = [v / scale for v in values]
        ax.bar(labels, scaled, bottom=bottom, label=name)
        bottom = [b + v for b, v in zip(bottom, scaled, strict=True)]
    ax.set_ylabel(f"time ({unit})")
    ax.set_title(("Where the step goes" if stepped else "Where the time goes") + ", per class of identical ranks")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    plt.setp(ax.get_xticklabels(), rotation=20, ha="right", fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


def utilization_over_time(document: dict[str, Any], out: Path) -> Path | None:
    """Per-dimension network utilization over time (needs the ``dims`` section)."""
    dims = document.get("dims")
    if not dims or not any(dim["utilization"] for dim in dims):
        return None  # no dimension, or a run of zero length
    fig, ax = plt.subplots(figsize=(7, 3.5))
    for dim in dims:
        t = [p[0] * 1e6 for p in dim["utilization"]]
        u = [p[1] * 100 for p in dim["utilization"]]
        ax.step(t, u, where="post", label=f"dim {dim['dim']} ({dim['kind']})")
    ax.set_xlabel("time (us)")
    ax.set_ylabel("utilization (%)")
    ax.set_ylim(0, 105)
    ax.legend(fontsize=8)
    ax.set_title("Network utilization per dimension")
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


def hbm_over_time(document: dict[str, Any], out: Path) -> Path | None:
    """HBM bandwidth used by compute and by collectives on one rank over time (needs the
    ``hbm`` section: a run whose endpoint model shares HBM, ``report/hbm.py``)."""
    series = document.get("hbm")
    if not series:
        return None
    first = series[0]
    fig, ax = plt.subplots(figsize=(7, 3.5))
    t = [x * 1e6 for x in first["t_s"]]
    ax.step(t, first["compute_gbps"], where="post", label="compute kernels")
    ax.step(t, first["comm_gbps"], where="post", label="collectives")
    ax.set_xlabel("time (us)")
    ax.set_ylabel("HBM bandwidth (GB/s)")
    ax.legend(fontsize=8)
    ax.set_title(f"HBM bandwidth on rank {first['rank']}: compute x{first['compute_slowdown']:.3f} slower")
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


def collective_bandwidth(document: dict[str, Any], out: Path) -> Path | None:
    """Achieved bus bandwidth of each collective against its size (needs ``collectives``)."""
    colls = [c for c in rows_of(document.get("collectives")) if c.get("busbw_gbps") is not None]
    if not colls:
        return None
    fig, ax = plt.subplots(figsize=(6, 4))
    for kind in sorted({c["type"] for c in colls}):
        part = [c for c in colls if c["type"] == kind]
        ax.scatter([c["size_bytes"] for c in part], [c["busbw_gbps"] for c in part], label=kind, s=18)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("size (bytes)")
    ax.set_ylabel("bus bandwidth (GB/s)")
    ax.legend(fontsize=8)
    ax.set_title("Collective bus bandwidth vs size")
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


def _ranks_label(ranks: list[int]) -> str:
    return f"rank {ranks[0]}" if len(ranks) == 1 else f"{len(ranks)} ranks ({ranks[0]}..)"


def _time_scale(max_s: float) -> tuple[float, str]:
    unit = human_time(max_s).split()[-1] if max_s > 0 else "s"
    return {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}[unit], unit
