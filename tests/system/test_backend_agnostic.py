"""The system layer never names a concrete network backend (issue 15): it builds backends
through ``network/registry.py`` and decides its fast paths by their declared capabilities, so a
backend added as a plug-in gets them with no edit here. The names checked come from the
registry itself: every built-in backend's name and class name."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import trainsim.system
from trainsim.network.base import BackendBase
from trainsim.network.registry import _BUILTIN

SYSTEM = Path(trainsim.system.__file__).parent


def _pattern() -> re.Pattern[str]:
    """A backend's name as a string literal (or, where it is not a common word, anywhere),
    its factory's name, its module path and every backend class its module holds (a factory's
    module holds the classes it builds)."""
    parts = []
    for entry in _BUILTIN:
        assert isinstance(entry.factory, str)
        module, _, cls = entry.factory.partition(":")
        parts.append(f"[\"']{re.escape(entry.name)}[\"']")
        if "_" in entry.name:
            parts.append(rf"\b{re.escape(entry.name)}\b")
        parts += [rf"\b{re.escape(cls)}\b", re.escape(module)]
        for name, obj in vars(importlib.import_module(module)).items():
            if isinstance(obj, type) and issubclass(obj, BackendBase) and obj is not BackendBase:
                parts.append(rf"\b{re.escape(name)}\b")
    return re.compile("|".join(parts))


def test_system_layer_names_no_backend():
    pattern = _pattern()
    hits = [
        f"{path.name}:{i}: {line.strip()}"
        for path in sorted(SYSTEM.rglob("*.py"))
        for i, line in enumerate(path.read_text().splitlines(), 1)
        if pattern.search(line)
    ]
    assert hits == []


def test_the_check_would_catch_a_name():
    pattern = _pattern()
    assert pattern.search('if backend == "flow":')
    assert pattern.search("from trainsim.network.flow import FlowNetwork")
    assert pattern.search("backend = 'congestion_unaware'")
    assert pattern.search("isinstance(net, AnalyticalNetwork)")
    assert pattern.search("a flow (a transfer in a backend)") is None  # DESIGN.md's word
