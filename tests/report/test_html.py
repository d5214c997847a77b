"""The HTML report: self-contained (no external resource), and rendered by headless Chromium
without a failed load (slow test: needs Debian's chromium)."""

import json
import re
import shutil
import subprocess

import pytest

from trainsim.config.types import DimSpec, NetworkSpec
from trainsim.report.html import write_report

from .test_reference_and_trace import dp_result


def _document():
    from trainsim.report.breakdown import breakdown
    from trainsim.report.collectives import collective_rows
    from trainsim.report.utilization import injection_utilization

    result = dp_result()
    doc = result.to_dict()
    doc["breakdown"] = [b.to_dict() for b in breakdown(result)]
    network = NetworkSpec((DimSpec("Ring", 8, 50e9, 500.0),))
    doc["collectives"] = collective_rows(result, network)
    doc["dims"] = injection_utilization(result, network)
    return doc


def test_report_is_self_contained(tmp_path):
    page = write_report(_document(), tmp_path)
    html = page.read_text()
    refs = re.findall(r"""(?:src|href)\s*=\s*['"]([^'"]+)['"]""", html)
    assert refs and all(r.startswith("data:") for r in refs)
    assert "<h2>Collectives</h2>" in html and "Network utilization" in html
    json.dumps(_document())


@pytest.mark.slow
def test_chromium_renders_the_report_without_failed_loads(tmp_path):
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.skip("headless Chromium is not installed (Debian package chromium)")
    page = write_report(_document(), tmp_path / "report")
    shot = tmp_path / "shot.png"
    proc = subprocess.run(
        [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--enable-logging=stderr", "--v=0",
         "--window-size=1100,1700", f"--screenshot={shot}", page.as_uri()],
        capture_output=True, text=True, timeout=120,
    )
    assert shot.read_bytes()[:4] == b"\x89PNG"
    assert "Failed to load resource" not in proc.stderr
    assert "net::ERR_" not in proc.stderr
