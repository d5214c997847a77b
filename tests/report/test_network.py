"""The network counters on the report page (``report/network.py``): queue depth over time of
the hottest ports and pause time per link, from a packet-level run's result document."""

from __future__ import annotations

import json
from pathlib import Path

from trainsim.config.platform import load_platform
from trainsim.report.html import write_report
from trainsim.report.network import paused_links, summary_html
from trainsim.system.api import simulate
from trainsim.workload.micro import collective_workload

PLATFORM = Path(__file__).resolve().parents[1] / "network" / "packet" / "data" / "oversubscribed_8.yaml"


def _document() -> dict:
    platform = load_platform(PLATFORM)
    result = simulate(platform, collective_workload(8, "all_to_all", 1 << 18), backend="packet")
    return json.loads(json.dumps(result.to_dict()))  # as `trainsim report` reads it


def test_the_page_shows_queues_and_pauses(tmp_path: Path) -> None:
    doc = _document()
    page = write_report(doc, tmp_path).read_text()
    assert "<h2>Network counters</h2>" in page
    assert "Queue depth over time, hottest ports" in page and "Pause time per link" in page
    assert (tmp_path / "queues.png").stat().st_size > 0 and (tmp_path / "pauses.png").stat().st_size > 0
    assert "PFC pause frames" in summary_html(doc["network_counters"])


def test_paused_links_longest_first() -> None:
    counters = {
        "links": [
            {"src": 0, "dst": 8, "pause_ns": 5.0},
            {"src": 1, "dst": 8, "pause_ns": 0.0},
            {"src": 2, "dst": 8, "pause_ns": 9.0},
        ]
    }
    assert [ln["src"] for ln in paused_links(counters)] == [2, 0]


def test_a_run_without_counters_has_no_section(tmp_path: Path) -> None:
    doc = _document()
    del doc["network_counters"]
    page = write_report(doc, tmp_path).read_text()
    assert "Network counters" not in page and not (tmp_path / "queues.png").exists()
