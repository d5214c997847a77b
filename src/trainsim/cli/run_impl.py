"""The body of `trainsim run` and its fast command-line parser (cli layer; ``run_cmd`` is the
typer command around it, docs/speed.md "Start-up").

Nothing here imports typer, pydantic or rich at module level: ``main`` reads a plain
``trainsim run`` command line with :func:`fast_parse` and calls :func:`run` without building the
typer app (typer 0.29 builds a pydantic adapter for each of the 22 options at every call). A
command line the fast parser does not read exactly as click would (``--help``, an unknown
option, a repeated option, an empty value, a number in an unusual spelling)
goes to the typer command, which gives click's own help and errors. ``tests/cli/test_run_fast``
checks the two parsers against each other.
"""

from __future__ import annotations

import gc
import re
import sys
import time
import warnings
from contextlib import nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trainsim.cli.astra_args import parse_bool
from trainsim.cli.outputs import check_output_file
from trainsim.cli.writes import output_errors, write_output
from trainsim.errors import ConfigError
from trainsim.units import human_time, precise_time

if TYPE_CHECKING:
    from collections.abc import Sequence

    from rich.console import Console
    from rich.progress import Progress

    from trainsim.config.types import NetworkSpec
    from trainsim.report.breakdown import RankBreakdown
    from trainsim.system.result import RankResult, RunResult

DEFAULTS: dict[str, Any] = {
    "platform": None,
    "workload": None,
    "workload_configuration": None,
    "system_configuration": None,
    "network_configuration": None,
    "remote_memory_configuration": None,
    "comm_group_configuration": None,
    "backend": "congestion_unaware",
    "compat": None,
    "json_path": None,
    "trace_path": None,
    "expand": False,
    "quiet": False,
    "astra_output": None,
    "comm_scale": None,
    "compute_scale": None,
    "injection_scale": None,
    "rendezvous_protocol": None,
    "num_queues_per_dim": None,
    "logging_configuration": None,
    "logging_folder": None,
    "force": False,
}
"""Every parameter of `trainsim run` and its default (those of ``run_cmd.run_command``)."""

OPTIONS: dict[str, tuple[str, str]] = {
    "--workload": ("workload", "str"),
    "--workload-configuration": ("workload_configuration", "str"),
    "--system-configuration": ("system_configuration", "path"),
    "--network-configuration": ("network_configuration", "path"),
    "--remote-memory-configuration": ("remote_memory_configuration", "path"),
    "--comm-group-configuration": ("comm_group_configuration", "path"),
    "--backend": ("backend", "str"),
    "--compat": ("compat", "str"),
    "--json": ("json_path", "path"),
    "--trace": ("trace_path", "path"),
    "--expand": ("expand", "true"),
    "--quiet": ("quiet", "true"),
    "-q": ("quiet", "true"),
    "--astra-output": ("astra_output", "true"),
    "--no-astra-output": ("astra_output", "false"),
    "--comm-scale": ("comm_scale", "float"),
    "--compute-scale": ("compute_scale", "float"),
    "--injection-scale": ("injection_scale", "float"),
    "--rendezvous-protocol": ("rendezvous_protocol", "str"),
    "--num-queues-per-dim": ("num_queues_per_dim", "int"),
    "--logging-configuration": ("logging_configuration", "path"),
    "--logging-folder": ("logging_folder", "path"),
    "--force": ("force", "true"),
}
"""The options of `trainsim run` as click spells them: parameter name and how its value is read
(``true`` / ``false``: a flag that sets the parameter to that value)."""

_INT = re.compile(r"-?[1-9][0-9]*|0")
_FLOAT = re.compile(r"-?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?")


def _value(kind: str, text: str) -> Any:
    """``text`` read as ``kind`` where every reader agrees on it, else None (then the typer
    command reads the line)."""
    if text == "":
        return None
    if kind == "str":
        return text
    if kind == "path":
        return Path(text)
    if kind == "int":
        return int(text) if _INT.fullmatch(text) else None
    return float(text) if _FLOAT.fullmatch(text) else None


def fast_parse(args: list[str]) -> dict[str, Any] | None:
    """The keyword arguments of :func:`run` for ``args`` (after ``run``, ASTRA-sim's boolean
    flags already rewritten by ``astra_args.astra_argv``), or None where the line is not one
    this parser reads exactly as click does (module docstring)."""
    kwargs = dict(DEFAULTS)
    seen: set[str] = set()
    i = 0
    while i < len(args):
        arg = args[i]
        i += 1
        if not arg.startswith("-") and arg:
            if "platform" in seen:
                return None
            seen.add("platform")
            kwargs["platform"] = Path(arg)
            continue
        flag, eq, inline = arg.partition("=")
        option = OPTIONS.get(flag)
        if option is None or flag == "-q" and eq:
            return None
        name, kind = option
        if name in seen:
            return None
        seen.add(name)
        if kind in ("true", "false"):
            if eq:
                return None
            kwargs[name] = kind == "true"
            continue
        if not eq:
            if i == len(args):
                return None
            inline = args[i]
            i += 1
        value = _value(kind, inline)
        if value is None:
            return None
        kwargs[name] = value
    return kwargs


_GC_PAUSED: list[bool] = []


def pause_gc() -> None:
    """Pause the cyclic garbage collector for start-up (the console script's ``run`` only):
    importing and reading allocate much and free little, so its collections find nothing.
    :func:`run` resumes it before simulating (:func:`resume_gc`)."""
    if gc.isenabled():
        gc.disable()
        _GC_PAUSED.append(True)


def resume_gc() -> None:
    """The collector back on if :func:`pause_gc` paused it, what start-up made frozen first (it
    lives to the end of the process: later collections need not scan it)."""
    if _GC_PAUSED:
        _GC_PAUSED.clear()
        gc.freeze()
        gc.enable()


def run(
    *,
    platform: Path | None,
    workload: str | None,
    workload_configuration: str | None,
    system_configuration: Path | None,
    network_configuration: Path | None,
    remote_memory_configuration: Path | None,
    comm_group_configuration: Path | None,
    backend: str,
    compat: str | None,
    json_path: Path | None,
    trace_path: Path | None,
    expand: bool,
    quiet: bool,
    astra_output: bool | None,
    comm_scale: float | None,
    compute_scale: float | None,
    injection_scale: float | None,
    rendezvous_protocol: str | None,
    num_queues_per_dim: int | None,
    logging_configuration: Path | None,
    logging_folder: Path | None,
    force: bool,
) -> None:
    """Simulate one training step of a workload on a platform (`trainsim run`; ``force``: past
    the limits of ``trainsim.budget``)."""
    from trainsim.budget import forced
    from trainsim.config.knobs import with_knobs
    from trainsim.system.api import load_inputs, simulate

    with forced(force):
        if workload and workload_configuration and workload != workload_configuration:
            raise ConfigError(
                f"{workload!r} and --workload-configuration {workload_configuration!r} name two workloads; expected one",
                field="--workload",
            )
        prefix = workload or workload_configuration
        check_output_file(json_path, "--json")
        check_output_file(trace_path, "--trace")
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
        _show_warnings(caught, quiet)
        to_stdout = json_path is not None and str(json_path) == "-"
        with _logging(logging_configuration, logging_folder), warnings.catch_warnings(record=True) as caught, ProgressDisplay(enabled=not quiet and not to_stdout) as display:
            warnings.simplefilter("always")  # e.g. a custom collective's graphs, read by the run
            resume_gc()
            result = simulate(plat, graphs, backend=backend, compat=compat, progress=display.update)
        _show_warnings(caught, quiet)
        if trace_path is not None:
            from trainsim.report.perfetto import write_trace

            with output_errors(trace_path, "--trace"):
                write_trace(trace_path, result, expand=expand)
        if json_path is not None:
            from trainsim.report.document import dumps

            document = result_document(result, plat.network, compat_astra=(compat or plat.compat) == "astra")
            document["inputs"] = {"platform": str(platform) if platform else None, "workload": prefix, "network": str(network_configuration) if network_configuration else None, "system": str(system_configuration) if system_configuration else None, "backend": backend, "compat": compat or plat.compat}
            text = dumps(document)
            if str(json_path) == "-":
                _echo(text)
                return
            write_output(json_path, text + "\n", "--json")
        if quiet:
            return
        if astra_output if astra_output is not None else platform is None:
            from trainsim.report.astra_lines import astra_rank_lines

            _echo("\n".join(astra_rank_lines(result)))
        print_summary(None, result.ranks, result.makespan_s)


def _echo(text: str) -> None:
    """``text`` and a newline on standard output (as ``typer.echo``)."""
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def _logging(config: Path | None, folder: Path | None) -> Any:
    """ASTRA-sim's logging flags (``config.log_config``); without them nothing to set up, and
    Python's logging is not imported."""
    if config is None and folder is None:
        return nullcontext()
    from trainsim.config.log_config import configure_logging

    return configure_logging(config, folder)


def result_document(
    result: RunResult, network: NetworkSpec, breakdown_rows: list[RankBreakdown] | None = None, *, compat_astra: bool = False
) -> dict[str, Any]:
    """The JSON document of a result (what ``trainsim report`` reads): the result itself, its
    breakdown (``breakdown_rows``, or the graph-only one of ``report.breakdown``), collective
    rows and per-dimension utilization."""
    from trainsim.report.breakdown import breakdown
    from trainsim.report.collectives import collective_table
    from trainsim.report.utilization import injection_utilization

    document = result.to_dict()
    document["breakdown"] = [b.to_dict() for b in (breakdown(result) if breakdown_rows is None else breakdown_rows)]
    document["collectives"] = collective_table(result, network)
    document["dims"] = injection_utilization(result, network, compat_astra=compat_astra)
    if result.resources is not None:
        from trainsim.report.hbm import hbm_over_time

        document["hbm"] = hbm_over_time(result)
    return document


class ProgressDisplay:
    """A rich progress bar (nodes done, simulated time) for runs longer than a second, on a
    terminal only: never in piped output or ``--json -``."""

    def __init__(self, *, enabled: bool, delay_s: float = 1.0) -> None:
        self.console: Console | None = None  # made when a bar may be drawn (rich loads then)
        self.enabled = enabled
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
        if self.console is None:
            from rich.console import Console

            self.console = Console(stderr=True)
            self.enabled = self.console.is_terminal
            if not self.enabled:
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


SUMMARY_COLUMNS = ("ranks", "finish", "compute", "communication", "exposed comm")


def print_summary(
    console: Console | None, ranks: Sequence[RankResult], makespan_s: float, *, title: str | None = None, max_rows: int = 20
) -> None:
    """A table of per-rank times; ranks with identical times share a row, the slowest first.
    Times keep every digit down to the ns (``precise_time``), so that runs can be compared.
    ``console`` None: standard output (``console.stdout_console``), where piped written as
    :func:`plain_table` without importing rich when that gives rich's text."""
    rows: dict[tuple[float, ...], list[int]] = {}
    for r in ranks:
        rows.setdefault((r.finish_s, r.compute_s, r.comm_s, r.exposed_comm_s), []).append(r.rank)
    title = title or f"{len(ranks)} ranks, makespan {precise_time(makespan_s)}"
    shown = sorted(rows.items(), key=lambda item: -item[0][0])  # slowest classes first
    cells = [
        [_rank_ranges(members), *(precise_time(t) for t in (finish, compute, comm, exposed))]
        for (finish, compute, comm, exposed), members in shown[:max_rows]
    ]
    caption = None
    if len(shown) > max_rows:
        caption = f"{len(shown) - max_rows} more classes of ranks (finishing earlier) not shown; --json has every rank"
    if console is None:
        text = None if caption is not None or _stdout_may_be_a_terminal() else plain_table(title, SUMMARY_COLUMNS, cells)
        if text is not None:
            _echo(text)
            return
        from trainsim.cli.console import stdout_console

        console = stdout_console()
    from rich.table import Table

    table = Table(title=title, caption=caption)
    for name in SUMMARY_COLUMNS:
        table.add_column(name, justify="right")
    for row in cells:
        table.add_row(*row)
    console.print(table)


def _stdout_may_be_a_terminal() -> bool:
    """Whether rich could treat standard output as a terminal (its ``Console.is_terminal``:
    a tty, or the TTY_COMPATIBLE / FORCE_COLOR variables, or an IDE's shell)."""
    import os

    if any(name in os.environ for name in ("TTY_COMPATIBLE", "FORCE_COLOR", "TTY_INTERACTIVE")):
        return True
    if "idlelib" in sys.modules or "IPython" in sys.modules:
        return True
    try:
        return sys.stdout.isatty()
    except (AttributeError, ValueError):
        return True


def plain_table(title: str, headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str | None:
    """The text rich prints for a ``Table(title=title)`` of right-justified columns on a
    console that is not a terminal (``console.stdout_console``: no width limit, no styles), or
    None where this might differ from rich (no rows; a cell or the title that is not plain ASCII,
    holds markup or ends in a space; a title wider than the table). ``tests/cli/test_run_fast.py`` compares the two."""
    texts = [title, *headers, *(cell for row in rows for cell in row)]
    if not all(text.isascii() and text.isprintable() and "[" not in text and text == text.strip() for text in texts):
        return None  # rich measures other characters its own way, reads [...] as markup, trims
    if not rows:
        return None
    widths = [max([len(header), *(len(row[i]) for row in rows)]) + 2 for i, header in enumerate(headers)]
    width = sum(widths) + len(widths) + 1
    if len(title) > width or not title:
        return None
    left = (width - len(title)) // 2
    lines = [" " * left + title + " " * (width - len(title) - left)]

    def rule(first: str, line: str, cross: str, last: str) -> str:
        return first + cross.join(line * w for w in widths) + last

    def row(edge: str, cells: Sequence[str]) -> str:
        return edge + edge.join(" " + cell.rjust(w - 2) + " " for cell, w in zip(cells, widths, strict=True)) + edge

    lines += [rule("┏", "━", "┳", "┓"), row("┃", headers), rule("┡", "━", "╇", "┩")]
    lines += [row("│", cells) for cells in rows]
    lines.append(rule("└", "─", "┴", "┘"))
    return "\n".join(lines)


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


def _show_warnings(caught: list[warnings.WarningMessage], quiet: bool) -> None:
    """Each distinct warning once, as one yellow line on standard error (not Python's
    file:line format)."""
    if quiet or not caught:
        return
    from rich.console import Console

    err = Console(stderr=True)
    for message in dict.fromkeys(str(w.message) for w in caught):
        err.print(f"[yellow]warning:[/] {message}", highlight=False, soft_wrap=True)
