"""`trainsim run`: ASTRA-sim's flags unchanged, or the native form ``run PLATFORM --workload``.

Prints a per-rank summary (ranks with identical times are folded into one row) in human units,
after ASTRA-sim's own per-rank lines (``sys[N] finished, ...``: report/astra_lines.py) when the
inputs are ASTRA-sim's files or ``--astra-output`` asks; ``--json PATH`` writes the result
object of :func:`trainsim.system.api.run`.

The command's body is :func:`trainsim.cli.run_impl.run` (no typer there): ``main`` calls it
directly for a command line its fast parser reads (``run_impl.fast_parse``), this command for
every other one (``--help``, a mistake, an unusual spelling).
"""

from __future__ import annotations

from pathlib import Path

import typer

from trainsim.cli.app import app
from trainsim.cli.force import force_option
from trainsim.cli.run_impl import (  # noqa: F401  (re-exported for the other commands)
    DEFAULTS,
    ProgressDisplay,
    _rank_ranges,
    print_summary,
    result_document,
    run,
)
from trainsim.system.modes import COMPAT_MODES, backend_names


@app.command("run")
def run_command(
    platform: Path | None = typer.Argument(None, help="Native platform YAML (instead of ASTRA-sim's files)."),
    workload: str | None = typer.Option(None, "--workload", help="Workload prefix: rank files PREFIX.<rank>.et."),
    workload_configuration: str | None = typer.Option(None, "--workload-configuration", help="ASTRA-sim: workload prefix."),
    system_configuration: Path | None = typer.Option(None, "--system-configuration", help="ASTRA-sim system JSON."),
    network_configuration: Path | None = typer.Option(None, "--network-configuration", help="ASTRA-sim network YAML."),
    remote_memory_configuration: Path | None = typer.Option(None, "--remote-memory-configuration", help="ASTRA-sim remote-memory JSON."),
    comm_group_configuration: Path | None = typer.Option(None, "--comm-group-configuration", help="ASTRA-sim communicator-group JSON."),
    backend: str = typer.Option(DEFAULTS["backend"], "--backend", help=f"Network backend: {', '.join(backend_names())}."),
    compat: str | None = typer.Option(None, "--compat", help=f"Arithmetic conventions: {', '.join(COMPAT_MODES)} ('astra' reproduces ASTRA-sim's numbers; default: astra for ASTRA-sim's files, else the platform file's)."),
    json_path: Path | None = typer.Option(None, "--json", help="Write the result as JSON to this path ('-' for stdout)."),
    trace_path: Path | None = typer.Option(None, "--trace", help="Write a Perfetto / Chrome-trace JSON timeline."),
    expand: bool = typer.Option(False, "--expand", help="In the timeline, one process per rank (default: identical ranks folded)."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Print nothing but errors."),
    astra_output: bool | None = typer.Option(None, "--astra-output/--no-astra-output", help="Before the summary, ASTRA-sim's per-rank lines ('sys[N] finished, X cycles, exposed communication Y cycles.', whole ns); default: on for ASTRA-sim's files, off for a platform file."),
    comm_scale: float | None = typer.Option(None, "--comm-scale", help="ASTRA-sim: every communication size x this (whole bytes)."),
    compute_scale: float | None = typer.Option(None, "--compute-scale", help="ASTRA-sim: every compute time x this."),
    injection_scale: float | None = typer.Option(None, "--injection-scale", help="ASTRA-sim: the endpoint delay x this."),
    rendezvous_protocol: str | None = typer.Option(None, "--rendezvous-protocol", metavar="[BOOL]", help="ASTRA-sim: the receiver sends an 8 KiB control message before each message (alone, or =true / =false)."),
    num_queues_per_dim: int | None = typer.Option(None, "--num-queues-per-dim", help="ASTRA-sim: dimension queues per network dimension (default 1)."),
    logging_configuration: Path | None = typer.Option(None, "--logging-configuration", help="ASTRA-sim: spdlog_setup TOML file of log sinks and loggers."),
    logging_folder: Path | None = typer.Option(None, "--logging-folder", help="ASTRA-sim: write log.log and err.log of the run in this folder."),
    force: bool = force_option(),
) -> None:
    """Simulate one training step of a workload on a platform."""
    run(**locals())
