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
from trainsim.units import human_time

STYLE = """
body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;margin:2em auto;max-width:1000px;color:#222}
h1{font-size:1.5em}h2{font-size:1.15em;margin-top:1.6em;border-bottom:1px solid #ddd}
table{border-collapse:collapse;font-size:.9em}td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}
th{background:#f3f3f3}td:first-child,th:first-child{text-align:left}img{max-width:100%}
.muted{color:#777;font-size:.85em}pre{background:#f7f7f7;padding:.6em;overflow:auto;font-size:.8em}
"""


SHOWN_COLLECTIVES = 200  # rows of the collectives table on the page


def write_report(document: dict[str, Any], out_dir: str | Path) -> Path:
    """Write PNG plots and ``index.html`` into ``out_dir``; returns the HTML path."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    figures = [
        ("Breakdown per rank class", plots.breakdown_bars(document, out / "breakdown.png")),
        ("Network utilization per dimension", plots.utilization_over_time(document, out / "utilization.png")),
        ("Collective bandwidth vs size", plots.collective_bandwidth(document, out / "collectives.png")),
    ]
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'><title>trainsim report</title>",
        f"<style>{STYLE}</style></head><body>",
        "<h1>trainsim report</h1>",
        f"<p>makespan <b>{human_time(document['makespan_s'])}</b> over {len(document['ranks'])} ranks; "
        f"{document.get('events', 0):,} events.</p>",
        "<h2>Breakdown</h2>",
        _breakdown_table(document.get("breakdown", [])),
        "<p class='muted'>exposed communication = finish minus summed GPU compute (ASTRA-sim's definition); "
        "idle = time with nothing in flight (waiting on a peer or a pipeline bubble).</p>",
    ]
    for title, path in figures:
        if path is None:
            continue
        data = base64.b64encode(path.read_bytes()).decode()
        parts.append(f"<h2>{html.escape(title)}</h2><img alt='{html.escape(title)}' src='data:image/png;base64,{data}'>")
    collectives = rows_of(document.get("collectives"))
    if collectives:
        parts.append("<h2>Collectives</h2>" + _collectives_table(collectives))
    if document.get("inputs"):
        parts.append("<h2>Inputs</h2><pre>" + html.escape(json.dumps(document["inputs"], indent=1)) + "</pre>")
    parts.append("</body></html>")
    page = out / "index.html"
    page.write_text("\n".join(parts))
    return page


def _table(headers: list[str], rows: list[list[str]]) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def _breakdown_table(rows: list[dict[str, Any]]) -> str:
    keys = ["finish_s", "compute_s", "comm_s", "overlap_s", "exposed_comm_s", "memory_s", "idle_s"]
    headers = ["ranks", "finish", "compute", "communication", "overlap", "exposed comm", "memory", "idle"]
    body = []
    for r in rows:
        ranks = r["ranks"]
        label = str(ranks[0]) if len(ranks) == 1 else f"{ranks[0]}.. ({len(ranks)} ranks)"
        body.append([label] + [human_time(r[k]) for k in keys])
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
