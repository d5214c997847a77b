"""A self-contained HTML report: summary tables, the inputs used, and the plots embedded as
base64 PNG (no external resources, so it works offline and can be mailed as one file)."""

from __future__ import annotations

import base64
import html
import json
from pathlib import Path
from typing import Any

from trainsim.report import plots
from trainsim.report.collectives import rows_of
from trainsim.report.step_breakdown import (
    DEFINITIONS,
    GRAPH_P2P_DEFINITION,
    GROUP_DEFINITION,
    label,
    step_mean,
)
from trainsim.units import human_time

STYLE = """
body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;margin:2em auto;max-width:1000px;color:#222}
h1{font-size:1.5em}h2{font-size:1.15em;margin-top:1.6em;border-bottom:1px solid #ddd}
table{border-collapse:collapse;font-size:.9em}td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}
th{background:#f3f3f3}td:first-child,th:first-child{text-align:left}img{max-width:100%}
.muted{color:#777;font-size:.85em}pre{background:#f7f7f7;padding:.6em;overflow:auto;font-size:.8em}
"""


HBM_NOTE = (
    "HBM bandwidth a rank's compute kernels and its collectives used, each transfer spread evenly over its duration "
    "(the endpoint model's rule, docs/ace.md): collectives take their share from compute, which is re-rated while "
    "they run; compute slowdown = kernels' time as run over their time on the whole device."
)
SHOWN_COLLECTIVES = 200  # rows of the collectives table on the page
UTILIZATION_NOTE = (
    "Utilization: the bytes every rank injected into the dimension in a time bucket (a collective's bytes spread over "
    "its duration, a send's over its own), divided by every NPU's injection bandwidth into the dimension times the "
    "bucket: a machine-wide figure over time, 100% when every NPU sends into the dimension at full rate."
)
BOUND_NOTE = (
    "Of bound: one collective's bus bandwidth (nccl-tests' busbw, over its whole duration on the rank: from the rank's "
    "issue, so including waiting for the group's other members, per-step latencies and endpoint delays) divided by "
    "the rank's injection bandwidth into the dimensions it used. It is not the utilization above: a collective whose "
    "links run full while it transfers still reports below 100% for the time it spends not transferring, and "
    "utilization averages over every NPU and over time, busy or not."
)


def write_report(document: dict[str, Any], out_dir: str | Path) -> Path:
    """Write PNG plots and ``index.html`` into ``out_dir``; returns the HTML path."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    figures = [
        ("Breakdown per rank class", plots.breakdown_bars(document, out / "breakdown.png")),
        ("Network utilization per dimension", plots.utilization_over_time(document, out / "utilization.png")),
        ("Collective bandwidth vs size", plots.collective_bandwidth(document, out / "collectives.png")),
        ("HBM bandwidth: compute and collectives", plots.hbm_over_time(document, out / "hbm.png")),
    ]
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'><title>trainsim report</title>",
        f"<style>{STYLE}</style></head><body>",
        "<h1>trainsim report</h1>",
        f"<p>makespan <b>{human_time(document['makespan_s'])}</b> over {len(document['ranks'])} ranks; "
        f"{document.get('events', 0):,} events.</p>",
        *_step_section(document.get("breakdown", []), document["makespan_s"]),
        "<h2>Busy time per lane</h2>",
        _breakdown_table(document.get("breakdown", [])),
        "<p class='muted'>Unions of what is in flight on each lane, overlapping one another: communication counts every "
        "collective, send and receive in flight, including receives posted long before their data comes (a pipeline "
        "stage's), so it is not the time lost to communication (the table above is); exposed comm = finish minus "
        "summed GPU compute (ASTRA-sim's definition); idle = time with nothing in flight.</p>",
    ]
    notes = {"Network utilization per dimension": UTILIZATION_NOTE, "HBM bandwidth: compute and collectives": HBM_NOTE}
    for title, path in figures:
        if path is None:
            continue
        parts.append(f"<h2>{html.escape(title)}</h2>" + _image(title, path))
        if title in notes:
            parts.append(f"<p class='muted'>{html.escape(notes[title])}</p>")
    if isinstance(document.get("network_counters"), dict):
        parts.extend(_network_section(document["network_counters"], out))
    if document.get("resources"):
        parts.append("<h2>Endpoint: what compute and collectives cost each other</h2>" + _resources_table(document["resources"]))
    collectives = rows_of(document.get("collectives"))
    if collectives:
        parts.append("<h2>Collectives</h2>" + _collectives_table(collectives))
        parts.append(f"<p class='muted'>{html.escape(BOUND_NOTE)}</p>")
    if document.get("inputs"):
        parts.append("<h2>Inputs</h2><pre>" + html.escape(json.dumps(document["inputs"], indent=1)) + "</pre>")
    parts.append("</body></html>")
    page = out / "index.html"
    page.write_text("\n".join(parts))
    return page


def _network_section(counters: dict[str, Any], out: Path) -> list[str]:
    """The network backend's counters: a summary table, queue depth over time of the hottest
    ports, pause time per link (``report/network.py``)."""
    from trainsim.report import network

    parts = ["<h2>Network counters</h2>" + network.summary_html(counters)]
    for title, path in (
        ("Queue depth over time, hottest ports", network.queue_depth_over_time(counters, out / "queues.png")),
        ("Pause time per link", network.pause_per_link(counters, out / "pauses.png")),
    ):
        if path is not None:
            parts.append(f"<h3>{html.escape(title)}</h3>" + _image(title, path))
    return parts


def _image(title: str, path: Path) -> str:
    data = base64.b64encode(path.read_bytes()).decode()
    return f"<img alt='{html.escape(title)}' src='data:image/png;base64,{data}'>"


def _resources_table(resources: list[dict[str, Any]], limit: int = 16) -> str:
    rows = [
        [
            str(r["rank"]),
            f"{r['compute_slowdown']:.3f}x",
            human_time(r["compute_alone_s"]),
            human_time(r["compute_s"]),
            f"{r['network_bytes'] / 1e6:,.1f}",
            f"{r['comm_hbm_bytes'] / 1e6:,.1f}",
            f"{r['hbm_per_network_byte']:.2f}",
        ]
        for r in resources[:limit]
    ]
    headers = ["rank", "compute slowdown", "compute alone", "compute as run", "network MB", "collective HBM MB", "HBM B / network B"]
    return _table(headers, rows)


def _table(headers: list[str], rows: list[list[str]]) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def _step_section(rows: list[dict[str, Any]], step_s: float) -> list[str]:
    """Where the step goes (``report/step_breakdown.py``): a row per class of ranks and the
    step's mean over ranks, with the definitions of the categories shown."""
    rows = [r for r in rows if r.get("step")]
    if not rows:
        return []
    keys = list(rows[0]["step"])
    body = [[_ranks_label(r["ranks"])] + [human_time(r["step"].get(k, 0.0)) for k in keys] for r in rows]
    mean = step_mean([r["step"] for r in rows], [len(r["ranks"]) for r in rows])
    body.append(["step (mean over ranks)"] + [f"{human_time(mean[k])} ({mean[k] / step_s:.1%})" if step_s > 0 else "-" for k in keys])
    from_roles = rows[0].get("step_from") == "roles"
    source = (
        "Categories from the generator's roles of each node (tensor-parallel, data-parallel, pipeline; recomputation)."
        if from_roles
        else "This workload was read from files: its nodes carry no roles, so the categories are those the graph alone "
        "tells (compute, exposed communication per communicator group, p2p wait, idle); recomputation counts as compute "
        "and a pipeline bubble as p2p wait."
    )
    defs = []
    for k in keys:
        if k.startswith("comm["):
            continue
        text = GRAPH_P2P_DEFINITION if k == "p2p_wait" and not from_roles else DEFINITIONS.get(k, "")
        defs.append(f"<li><b>{html.escape(label(k))}</b>: {html.escape(text)}</li>")
    if any(k.startswith("comm[") for k in keys):
        defs.append(f"<li>{html.escape(GROUP_DEFINITION)}</li>")
    return [
        "<h2>Where the step goes</h2>",
        f"<p>Every instant of the step on a rank goes to one category, the first of this list with something in flight; "
        f"the categories of a rank sum to the step ({html.escape(human_time(step_s))}). Communication is counted where "
        f"it is exposed on the rank's own timeline. {html.escape(source)}</p>",
        _table(["ranks"] + [label(k) for k in keys], body),
        "<ul class='muted'>" + "".join(defs) + "</ul>",
    ]


def _ranks_label(ranks: list[int]) -> str:
    return str(ranks[0]) if len(ranks) == 1 else f"{ranks[0]}.. ({len(ranks)} ranks)"


def _breakdown_table(rows: list[dict[str, Any]]) -> str:
    keys = ["finish_s", "compute_s", "comm_s", "overlap_s", "exposed_comm_s", "memory_s", "idle_s"]
    headers = ["ranks", "finish", "compute", "communication", "overlap", "exposed comm", "memory", "idle"]
    body = []
    for r in rows:
        body.append([_ranks_label(r["ranks"])] + [human_time(r[k]) for k in keys])
    return _table(headers, body)


def _collectives_table(colls: list[dict[str, Any]], limit: int = SHOWN_COLLECTIVES) -> str:
    """The first ``limit`` rows, saying so when there are more (the JSON holds every one)."""
    headers = ["ranks", "node", "type", "size (B)", "algorithms", "start", "end", "bus bw (GB/s)", "of bound"]
    body = [
        [str(c.get("rank")) if c.get("ranks", 1) == 1 else f"{c.get('rank')}.. ({c['ranks']} ranks)", str(c.get("node_id")), str(c.get("type")), f"{c.get('size_bytes', 0):,}",
         ", ".join(c.get("algorithms") or []) or "-",
         human_time(c.get("start_s", 0.0)), human_time(c.get("end_s", 0.0)),
         f"{c['busbw_gbps']:.2f}" if c.get("busbw_gbps") is not None else "-",
         f"{c['bound_ratio']:.0%}" if c.get("bound_ratio") is not None else "-"]
        for c in colls[:limit]
    ]
    records = sum(c.get("ranks", 1) for c in colls)
    shown = f"first {limit:,} of {len(colls):,} rows" if len(colls) > limit else f"all {len(colls):,} rows"
    note = f"<p class='muted'>{shown} ({records:,} records: ranks with identical records share a row); the result JSON holds every one.</p>"
    return note + _table(headers, body)
