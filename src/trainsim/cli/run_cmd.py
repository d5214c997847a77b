"""`trainsim run`: ASTRA-sim's flags unchanged, or the native form ``run PLATFORM --workload``.

Prints a per-rank summary (ranks with identical times are folded into one row) in human units,
after ASTRA-sim's own per-rank lines (``sys[N] finished, ...``: report/astra_lines.py) when the
inputs are ASTRA-sim's files or ``--astra-output`` asks; ``--json PATH`` writes the result
object of :func:`trainsim.system.api.run`.
"""

from __future__ import annotations

import time
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from trainsim.cli.app import app
from trainsim.cli.astra_args import parse_bool
from trainsim.cli.force import force_option, honours_force
from trainsim.cli.outputs import check_output_file
from trainsim.cli.writes import output_errors, write_output
from trainsim.errors import ConfigError
from trainsim.system.modes import COMPAT_MODES, backend_names
from trainsim.units import human_time, precise_time

if TYPE_CHECKING:
    from collections.abc import Sequence

    from rich.console import Console
    from rich.progress import Progress

    from trainsim.config.types import NetworkSpec
    from trainsim.report.breakdown import RankBreakdown
    from trainsim.system.result import RankResult, RunResult


@app.command("run")
@honours_force
def run_command(
    platform: Path | None = typer.Argument(None, help="Native platform YAML (instead of ASTRA-sim's files)."),
    workload: str | None = typer.Option(None, "--workload", help="Workload prefix: rank files PREFIX.<rank>.et."),
    workload_configuration: str | None = typer.Option(None, "--workload-configuration", help="ASTRA-sim: workload prefix."),
    system_configuration: Path | None = typer.Option(None, "--system-configuration", help="ASTRA-sim system JSON."),
    network_configuration: Path | None = typer.Option(None, "--network-configuration", help="ASTRA-sim network YAML."),
    remote_memory_configuration: Path | None = typer.Option(None, "--remote-memory-configuration", help="ASTRA-sim remote-memory JSON."),
    comm_group_configuration: Path | None = typer.Option(None, "--comm-group-configuration", help="ASTRA-sim communicator-group JSON."),
    backend: str = typer.Option("congestion_unaware", "--backend", help=f"Network backend: {', '.join(backend_names())}."),
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
    from rich.console import Console

    from trainsim.config.knobs import with_knobs
    from trainsim.config.log_config import configure_logging
    from trainsim.system.api import load_inputs, simulate

    if workload and workload_configuration and workload != workload_configuration:
        raise ConfigError(
            f"{workload!r} and --workload-configuration {workload_configuration!r} name two workloads; expected one",
            field="--workload",
        )
    prefix = workload or workload_configuration
    check_output_file(json_path, "--json")
    check_output_file(trace_path, "--trace")
    err = Console(stderr=True)
    rendezvous = None if rendezvous_protocol is None else parse_bool(rendezvous_protocol, "--rendezvous-protocol")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        plat, graphs = load_inputs(
            platform,
            prefix,
            network=network_configuration,
            system=system_configuration,
            memory=remote_memory_configuration,
            comm_groups=comm_group_configuration,
        )
    plat = with_knobs(
        plat,
        comm_scale=comm_scale,
        compute_scale=compute_scale,
        injection_scale=injection_scale,
        rendezvous=rendezvous,
        queues_per_dim=num_queues_per_dim,
    )
    _show_warnings(err, caught, quiet)
    to_stdout = json_path is not None and str(json_path) == "-"
    with configure_logging(logging_configuration, logging_folder), warnings.catch_warnings(record=True) as caught, ProgressDisplay(enabled=not quiet and not to_stdout) as display:
        warnings.simplefilter("always")  # e.g. a custom collective's graphs, read by the run
        result = simulate(plat, graphs, backend=backend, compat=compat, progress=display.update)
    _show_warnings(err, caught, quiet)
    if trace_path is not None:
        from trainsim.report.perfetto import write_trace

        with output_errors(trace_path, "--trace"):
            write_trace(trace_path, result, expand=expand)
    if json_path is not None:
        from trainsim.report.document import dumps

        document = result_document(result, plat.network)
        document["inputs"] = {"platform": str(platform) if platform else None, "workload": prefix, "network": str(network_configuration) if network_configuration else None, "system": str(system_configuration) if system_configuration else None, "backend": backend, "compat": compat or plat.compat}
        text = dumps(document)
        if str(json_path) == "-":
            typer.echo(text)
            return
        write_output(json_path, text + "\n", "--json")
    if quiet:
        return
    if astra_output if astra_output is not None else platform is None:
        from trainsim.report.astra_lines import astra_rank_lines

        typer.echo("\n".join(astra_rank_lines(result)))
    from trainsim.cli.console import stdout_console

    print_summary(stdout_console(), result.ranks, result.makespan_s)


def result_document(result: RunResult, network: NetworkSpec, breakdown_rows: list[RankBreakdown] | None = None) -> dict[str, Any]:
    """The JSON document of a result (what ``trainsim report`` reads): the result itself, its
    breakdown (``breakdown_rows``, or the graph-only one of ``report.breakdown``), collective
    rows and per-dimension utilization."""
    from trainsim.report.breakdown import breakdown
    from trainsim.report.collectives import collective_table
    from trainsim.report.utilization import injection_utilization

    document = result.to_dict()
    document["breakdown"] = [b.to_dict() for b in (breakdown(result) if breakdown_rows is None else breakdown_rows)]
    document["collectives"] = collective_table(result, network)
    document["dims"] = injection_utilization(result, network)
    if result.resources is not None:
        from trainsim.report.hbm import hbm_over_time

        document["hbm"] = hbm_over_time(result)
    return document


class ProgressDisplay:
    """A rich progress bar (nodes done, simulated time) for runs longer than a second, on a
    terminal only: never in piped output or ``--json -``."""

    def __init__(self, *, enabled: bool, delay_s: float = 1.0) -> None:
        from rich.console import Console

        self.console = Console(stderr=True)
        self.enabled = enabled and self.console.is_terminal
        self.delay_s = delay_s
        self.start = time.monotonic()
        self.bar: Progress | None = None
        self.task: Any = None

    def __enter__(self) -> ProgressDisplay:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.stop()

    def update(self, now_ns: float, done: int, total: int) -> None:
        if not self.enabled or time.monotonic() - self.start < self.delay_s:
            return
        if self.bar is None:
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
            )

            self.bar = Progress(
                TextColumn("simulating"), BarColumn(), MofNCompleteColumn(), TextColumn("nodes, at {task.fields[sim]}"),
                TimeElapsedColumn(), console=self.console, transient=True,
            )
            self.bar.start()
            self.task = self.bar.add_task("run", total=total, sim="0 s")
        self.bar.update(self.task, completed=done, sim=human_time(now_ns * 1e-9))


def print_summary(
    console: Console, ranks: Sequence[RankResult], makespan_s: float, *, title: str | None = None, max_rows: int = 20
) -> None:
    """A table of per-rank times; ranks with identical times share a row, the slowest first.
    Times keep every digit down to the ns (``precise_time``), so that runs can be compared."""
    from rich.table import Table

    rows: dict[tuple[float, ...], list[int]] = {}
    for r in ranks:
        rows.setdefault((r.finish_s, r.compute_s, r.comm_s, r.exposed_comm_s), []).append(r.rank)
    table = Table(title=title or f"{len(ranks)} ranks, makespan {precise_time(makespan_s)}")
    for name in ("ranks", "finish", "compute", "communication", "exposed comm"):
        table.add_column(name, justify="right")
    shown = sorted(rows.items(), key=lambda item: -item[0][0])  # slowest classes first
    for (finish, compute, comm, exposed), members in shown[:max_rows]:
        table.add_row(_rank_ranges(members), *(precise_time(t) for t in (finish, compute, comm, exposed)))
    if len(shown) > max_rows:
        table.caption = f"{len(shown) - max_rows} more classes of ranks (finishing earlier) not shown; --json has every rank"
    console.print(table)


def _rank_ranges(ranks: list[int], width: int = 40) -> str:
    """``[0, 1, 2, 5]`` -> ``"0-2, 5"``; past ``width`` characters, the ranges that fit and how
    many more there are (never a number cut in two)."""
    parts = []
    start = prev = ranks[0]
    for r in ranks[1:] + [None]:  # type: ignore[list-item]
        if r is not None and r == prev + 1:
            prev = r
            continue
        parts.append(str(start) if start == prev else f"{start}-{prev}")
        if r is not None:
            start = prev = r
    text = ", ".join(parts)
    if len(text) <= width:
        return text
    shown: list[str] = []
    while len(", ".join([*shown, parts[len(shown)]])) <= width - 16:  # room for ", ... (N more)"
        shown.append(parts[len(shown)])
    return ", ".join([*shown, f"... ({len(parts) - len(shown)} more)"])


def _show_warnings(err: Console, caught: list[warnings.WarningMessage], quiet: bool) -> None:
    """Each distinct warning once, as one yellow line (not Python's file:line format)."""
    if not quiet:
        for message in dict.fromkeys(str(w.message) for w in caught):
            err.print(f"[yellow]warning:[/] {message}", highlight=False, soft_wrap=True)
