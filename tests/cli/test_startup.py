"""The console script starts without the heavy libraries: registering every command imports
the standard library, typer and a few tiny trainsim modules only (the rest is imported inside
the commands). Checked in a fresh interpreter, by the modules imported, never by a clock."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import trainsim

HEAVY = ("numpy", "scipy", "pydantic", "rich", "yaml", "google.protobuf", "matplotlib", "pandas")
LIGHT_TRAINSIM = {
    "trainsim",
    "trainsim.errors",
    "trainsim.budget",  # standard library only: the limits every command checks
    "trainsim.units",
    "trainsim.system",
    "trainsim.system.modes",
    "trainsim.lazyimport",
    "trainsim.network",
    "trainsim.network.protocol",
    "trainsim.network.registry",
}

_PROBE = (
    "import json, sys\n"
    "import trainsim.cli.main as m\n"
    "m._register_commands()\n"
    "print(json.dumps(sorted(sys.modules)))\n"
)


def _modules_after_registration() -> list[str]:
    src = str(Path(trainsim.__file__).resolve().parents[1])
    path = os.pathsep.join(p for p in (src, os.environ.get("PYTHONPATH")) if p)
    done = subprocess.run(
        [sys.executable, "-c", _PROBE],
        env={**os.environ, "PYTHONPATH": path},
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return json.loads(done.stdout)


def test_registering_the_commands_imports_no_heavy_library() -> None:
    modules = _modules_after_registration()
    heavy = [m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY)]
    assert heavy == []
    from trainsim.cli.main import COMMAND_MODULES

    assert set(COMMAND_MODULES) <= set(modules)  # the probe did register them
    # of trainsim: the cli package and the tiny modules it imports, nothing else
    trainsim_modules = [m for m in modules if m.split(".")[0] == "trainsim"]
    others = [
        m
        for m in trainsim_modules
        if m not in LIGHT_TRAINSIM and m.split(".")[:2] != ["trainsim", "cli"]
    ]
    assert others == []


def test_help_constants_agree_with_the_library() -> None:
    """The constants the commands show in --help without importing their library."""
    from trainsim.cli import optimize_cmd, pcm_cmd
    from trainsim.memory.pcm.config import Scheme
    from trainsim.optimize.bandwidth import OBJECTIVES
    from trainsim.studies.pcm import study

    assert optimize_cmd.OBJECTIVES == OBJECTIVES
    assert study.PAPER_REDUCTIONS[Scheme.TRI][1] == pcm_cmd.PAPER_TRI_WRITE_REDUCTION
