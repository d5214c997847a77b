"""No import cycles (issue 15): every module of trainsim imports on its own, first, in a fresh
interpreter; a cycle between module-level imports fails with "partially initialized module"
for the module that closes it. Third-party libraries stay loaded between modules (only
trainsim's are dropped), so the check costs seconds."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import trainsim

_PROBE = r"""
import importlib, json, pkgutil, sys, traceback
import trainsim
names = sorted(m.name for m in pkgutil.walk_packages(trainsim.__path__, "trainsim."))
failed = {}
for name in names:
    for loaded in [m for m in sys.modules if m == "trainsim" or m.startswith("trainsim.")]:
        del sys.modules[loaded]
    try:
        importlib.import_module(name)
    except Exception as exc:
        failed[name] = f"{type(exc).__name__}: {exc}"
print(json.dumps({"modules": len(names), "failed": failed}))
"""


def test_every_module_imports_first_on_its_own():
    src = str(Path(trainsim.__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (src, os.environ.get("PYTHONPATH")) if p)}
    done = subprocess.run([sys.executable, "-c", _PROBE], env=env, capture_output=True, text=True, check=True, timeout=600)
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["modules"] > 100
    assert report["failed"] == {}
