"""The network counters of a result document on the report page (DESIGN.md, report layer):
queue depth over time of the hottest switch ports, pause time per link, a summary of the
counters and of the per-flow rates.

Reads the generic ``network_counters`` section (``RunResult.network_counters``, filled by the
backend's ``counters()``; the packet backend's keys, docs/roce.md): ``hot_port_queues``
(name -> ``t_ns`` / ``queue_bytes``), ``links`` (``src``, ``dst``, ``pause_ns``) and scalar
totals. A section without these keys draws nothing.
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from trainsim.units import human_time  # noqa: E402

SHOWN_LINKS = 24  # bars of the pause plot
SCALARS = (
    ("cc", "congestion control"),
    ("packets_sent", "data packets sent"),
    ("packets_resent", "data packets resent"),
    ("link_transmissions", "link transmissions"),
    ("drops", "drops"),
    ("pause_frames", "PFC pause frames"),
    ("ecn_marks", "ECN marks"),
    ("cnps", "CNPs"),
    ("total_pause_ns", "pause time summed over links"),
    ("flow_count", "messages (queue pairs)"),
)


def queue_depth_over_time(counters: dict[str, Any], out: Path) -> Path | None:
    """Queue depth (KB) over time (us) of each hot port, one line per port."""
    series = counters.get("hot_port_queues") or {}
    if not any(s.get("t_ns") for s in series.values()):
        return None
    fig, ax = plt.subplots(figsize=(7, 3.5))
    for name, s in series.items():
        ax.step([t * 1e-3 for t in s["t_ns"]], [q / 1e3 for q in s["queue_bytes"]], where="post", label=f"port {name}")
    ax.set_xlabel("time (us)")
    ax.set_ylabel("egress queue (KB)")
    ax.set_title("Queue depth over time of the hottest switch ports")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


def paused_links(counters: dict[str, Any], limit: int = SHOWN_LINKS) -> list[dict[str, Any]]:
    """The links whose upstream port was paused, longest pause first (at most ``limit``)."""
    links = [ln for ln in counters.get("links") or [] if ln.get("pause_ns", 0) > 0]
    return sorted(links, key=lambda ln: -ln["pause_ns"])[:limit]


def pause_per_link(counters: dict[str, Any], out: Path) -> Path | None:
    """Horizontal bars: time each link's sender was held by PFC (us), longest first."""
    links = paused_links(counters)
    if not links:
        return None
    fig, ax = plt.subplots(figsize=(7, max(2.5, 0.22 * len(links) + 1.2)))
    names = [f"{ln['src']}->{ln['dst']}" for ln in links][::-1]
    ax.barh(names, [ln["pause_ns"] * 1e-3 for ln in links][::-1])
    ax.set_xlabel("time paused (us)")
    ax.set_title("PFC pause time per link (upstream port held)")
    plt.setp(ax.get_yticklabels(), fontsize=7)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


def summary_html(counters: dict[str, Any]) -> str:
    """A two-column table of the scalar counters and the per-flow rate summary."""
    rows = []
    for key, name in SCALARS:
        if key not in counters:
            continue
        value = counters[key]
        text = human_time(value * 1e-9) if key.endswith("_ns") else f"{value:,}" if isinstance(value, int) else str(value)
        rows.append((name, text))
    rates = counters.get("flow_gbps") or {}
    if rates:
        rows.append(("per-flow rate min / median / mean / max", " / ".join(f"{rates[k]:.1f}" for k in ("min", "median", "mean", "max")) + " Gb/s"))
    body = "".join(f"<tr><td>{html.escape(a)}</td><td>{html.escape(b)}</td></tr>" for a, b in rows)
    return f"<table><tr><th>counter</th><th>value</th></tr>{body}</table>"
