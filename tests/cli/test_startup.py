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


def _env() -> dict[str, str]:
    """This process's environment with this checkout's sources first on the path."""
    src = str(Path(trainsim.__file__).resolve().parents[1])
    return {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (src, os.environ.get("PYTHONPATH")) if p)}


def _modules_after_registration() -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE],
        env=_env(),
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


_RUN_PROBE = (
    "import json, sys\n"
    "from trainsim.cli.main import main\n"
    "code = main(sys.argv[1:])\n"
    "print(json.dumps([code, sorted(sys.modules)]))\n"
)
ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "reference-data" / "reference-results" / "inputs"
EXAMPLE = ROOT / "examples" / "ring_allreduce"


def _modules_after_run(*args: str) -> set[str]:
    done = subprocess.run(
        [sys.executable, "-c", _RUN_PROBE, "run", *args],
        env=_env(),
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    code, modules = json.loads(done.stdout.strip().splitlines()[-1])
    assert code == 0, done.stderr
    return set(modules)


def _loaded(modules: set[str], names: tuple[str, ...]) -> list[str]:
    return [n for n in names if any(m == n or m.startswith(n + ".") for m in modules)]


def test_run_loads_only_the_libraries_its_inputs_need() -> None:
    """`trainsim run` does not build the typer app for a plain command line (cli/run_impl.py),
    reads canonical Chakra files without protobuf, writes a piped summary without rich, imports
    YAML only for a platform file and pydantic only for a platform file the fast path declines
    (config/platform_fast.py); never scipy or logging for these inputs (docs/speed.md,
    "Start-up")."""
    never = ("typer", "click", "scipy", "google.protobuf", "logging", "matplotlib", "trainsim.cli.app")
    platform_run = _modules_after_run(str(EXAMPLE / "platform.yaml"), "--workload", str(EXAMPLE / "workload" / "ring"), "-q")
    assert _loaded(platform_run, never + ("rich", "pydantic")) == []
    assert "yaml" in platform_run and "trainsim.config.platform_fast" in platform_run
    astra_run = _modules_after_run(
        f"--workload-configuration={REFERENCE / 'workload' / 'dp' / '8npus_64layers_64MiB' / 'et'}",
        f"--system-configuration={REFERENCE / 'system' / '1d_ring.json'}",
        f"--network-configuration={REFERENCE / 'network' / 'ring8.yml'}",
        f"--remote-memory-configuration={REFERENCE / 'remote_memory.json'}",
    )
    assert _loaded(astra_run, never + ("pydantic", "rich")) == []  # the piped summary is plain


_LOAD_PROBE = (
    "import json, sys\n"
    "from trainsim.config.platform import load_platform\n"
    "for path in sys.argv[1:]:\n"
    "    load_platform(path)\n"
    "print(json.dumps(sorted(sys.modules)))\n"
)


def test_valid_platform_files_load_without_pydantic() -> None:
    """Every example platform file (units in strings, clos tiers, wafers, NCCL, memory tiers)
    is read by the fast path: no pydantic. Not the RoCE ones: a ``backends`` (or ``endpoint``)
    section is a plug-in's, validated by that plug-in's own pydantic model."""
    import yaml

    examples = [
        p for p in sorted((ROOT / "examples").rglob("*.yaml"))
        if "network" in (doc := yaml.safe_load(p.read_text())) and not {"backends", "endpoint"} & set(doc)
    ]  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-c", _LOAD_PROBE, *map(str, examples)],
        env=_env(), capture_output=True, text=True, check=True, timeout=300,
    )  # fmt: skip
    assert len(examples) >= 10
    assert _loaded(set(json.loads(done.stdout)), ("pydantic",)) == []


def _console_run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "trainsim.cli.main", "run", *args],
        env=_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_the_console_script_run_ends_with_every_output_written(tmp_path: Path) -> None:
    """The fast path ends the process itself (main._exit_now) only after flushing: the piped
    summary, the --json file and the exit code are whole; with the logging flags (an atexit
    callback) the ordinary exit writes the log files."""
    example = [str(EXAMPLE / "platform.yaml"), "--workload", str(EXAMPLE / "workload" / "ring")]
    done = _console_run(*example, "--json", str(tmp_path / "r.json"), "--astra-output")
    assert done.returncode == 0, done.stderr
    assert done.stdout.count(" finished, ") == 8 and done.stdout.rstrip().endswith("┘")
    assert len(json.loads((tmp_path / "r.json").read_text())["ranks"]) == 8
    logged = _console_run(*example, "-q", "--logging-folder", str(tmp_path / "log"))
    assert logged.returncode == 0, logged.stderr
    assert "sys[7] finished" in (tmp_path / "log" / "log.log").read_text()
    missing = _console_run(str(EXAMPLE / "platform.yaml"), "--workload", str(tmp_path / "none"))
    assert missing.returncode == 2 and "rank file missing" in missing.stderr


def _blas_threads_after_import(extra_env: dict[str, str]) -> dict[str, str]:
    """OPENBLAS/MKL thread settings a fresh interpreter sees after importing the command line."""
    probe = (
        "import json, os\n"
        "import trainsim.cli.main\n"
        "print(json.dumps({v: os.environ.get(v) for v in ('OPENBLAS_NUM_THREADS', 'MKL_NUM_THREADS')}))\n"
    )
    env = {k: v for k, v in _env().items() if k not in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")}
    done = subprocess.run(
        [sys.executable, "-c", probe], env={**env, **extra_env}, capture_output=True, text=True, check=True, timeout=120
    )
    return json.loads(done.stdout)


def test_the_command_line_runs_numpy_with_one_blas_thread_unless_the_user_says() -> None:
    # one thread saves each process the pool's start-up CPU (docs/speed.md, "One BLAS thread")
    assert _blas_threads_after_import({}) == {"OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    assert _blas_threads_after_import({"OPENBLAS_NUM_THREADS": "4"})["OPENBLAS_NUM_THREADS"] == "4"
