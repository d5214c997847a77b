"""`trainsim sweep SPEC.yaml` (run), `trainsim sweep show STORE`, `trainsim sweep plot STORE`."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import typer
from typer.core import TyperGroup

from trainsim.cli.app import app
from trainsim.cli.force import force_option, honours_force
from trainsim.cli.outputs import PLOT_SUFFIXES, check_output_dir, check_output_file
from trainsim.errors import ConfigError


class _SpecOrCommand(TyperGroup):
    """Lets ``trainsim sweep SPEC.yaml`` stand for ``trainsim sweep run SPEC.yaml``."""

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        if args and args[0] not in self.commands and args[0].endswith((".yaml", ".yml")):
            args = ["run", *args]
        return super().resolve_command(ctx, args)


sweep_app = typer.Typer(cls=_SpecOrCommand, no_args_is_help=True, help="Design-space sweeps: run, show, plot.")
app.add_typer(sweep_app, name="sweep")


@sweep_app.command("run")
@honours_force
def sweep_run(
    spec_path: Path = typer.Argument(..., help="Sweep file (YAML)."),
    store_path: Path = typer.Option(..., "--store", help="SQLite store for the results (made with its folder if missing); the same store again resumes."),
    jobs: int | None = typer.Option(None, "--jobs", "-j", help="Local worker processes (default: all cores)."),
    dask: str | None = typer.Option(None, "--dask", help="tcp://HOST:PORT of a Dask scheduler, or local:N."),
    quiet: bool = typer.Option(False, "--quiet", "-q"),
    force: bool = force_option(),
) -> None:
    """Run every combination of a sweep file that the store does not hold yet."""
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    from trainsim.budget import workers
    from trainsim.sweep import load_sweep
    from trainsim.sweep.runner import run_sweep
    from trainsim.sweep.store import SweepStore

    check_output_dir(store_path.parent, "--store")
    check_output_file(store_path, "--store")
    spec = load_sweep(spec_path)
    if not dask:
        jobs, capped = workers(jobs)
        if capped:
            typer.echo(f"warning: {capped}", err=True)
    console = Console(stderr=True)
    start = time.perf_counter()
    with SweepStore(store_path) as store:
        if quiet or not console.is_terminal:
            summary = run_sweep(spec, store, jobs=jobs, dask=dask)
        else:
            columns = (TextColumn("sweep"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn())
            with Progress(*columns, console=console, transient=True) as bar:
                task = bar.add_task("sweep", total=None)

                def progress(done: int, total: int) -> None:
                    bar.update(task, completed=done, total=total)

                summary = run_sweep(spec, store, jobs=jobs, dask=dask, progress=progress)
    if summary.ran and summary.statuses.get("error") == summary.ran:
        raise ConfigError(
            f"all {summary.ran} combinations that ran failed (kept in {store_path}); the first: {summary.first_error}",
            file=str(spec_path),
        )
    if not quiet:
        states = ", ".join(f"{n} {s}" for s, n in sorted(summary.statuses.items())) or "nothing new"
        typer.echo(
            f"{summary.total} combinations: {summary.skipped} already in {store_path}, ran {summary.ran} ({states}) "
            f"in {time.perf_counter() - start:.1f} s"
        )
        if summary.first_error:
            typer.echo(f"first error: {summary.first_error}")


@sweep_app.command("show")
def sweep_show(
    store_path: Path = typer.Argument(..., help="Sweep store (SQLite)."),
    sort: str = typer.Option("makespan_s", "--sort", help="Metric to rank by (ascending)."),
    top: int = typer.Option(10, "--top", min=1, help="Rows to print."),
    export_path: Path | None = typer.Option(None, "--export", help="Write every row to .csv or .parquet."),
    where_expr: str | None = typer.Option(None, "--where", help="Keep rows where this expression holds, e.g. 'size == 1073741824'."),
    metrics: str | None = typer.Option(None, "--metrics", help="Metric columns to print, comma-separated (default: the sort metric and makespan_s)."),
) -> None:
    """Print the best rows of a sweep store."""
    from rich.table import Table

    from trainsim.cli.console import stdout_console
    from trainsim.sweep.evaluate import METRICS
    from trainsim.sweep.results import best_rows, export, format_cell, load_results, where

    check_output_file(export_path, "--export", suffixes=(".csv", ".parquet"))
    frame = load_results(store_path)
    if export_path is not None:
        export(frame, export_path)
        typer.echo(f"wrote {len(frame)} rows to {export_path}")
    best = best_rows(where(frame, where_expr), sort, top)
    shown_metrics = [sort] + (["makespan_s"] if sort != "makespan_s" else [])
    if metrics:
        shown_metrics = [m.strip() for m in metrics.split(",") if m.strip()]
        unknown = [m for m in shown_metrics if m not in METRICS and m not in frame.columns]  # a strategy search's own metrics too
        if unknown:
            raise ConfigError(f"unknown metric {unknown[0]!r}; expected one of {', '.join(METRICS)} or a column of the store", field="--metrics")
    hidden = {"key", "wall_s", "error", "status", *METRICS}
    table = Table(title=f"{len(frame)} rows in {store_path}; best {len(best)} by {sort}")
    cols = [c for c in best.columns if c not in hidden] + [m for m in shown_metrics if m in best.columns]
    for col in cols:
        table.add_column(str(col), justify="right" if str(col) in METRICS else "left")
    for _, row in best.iterrows():
        table.add_row(*(format_cell(frame, str(c), row[c]) for c in cols))
    stdout_console().print(table)
    failed = frame[frame["status"] != "ok"] if not frame.empty else frame
    if len(failed):
        typer.echo(f"{len(failed)} combinations did not run; first: {failed.iloc[0]['error']}")


@sweep_app.command("plot")
def sweep_plot(
    store_path: Path = typer.Argument(..., help="Sweep store (SQLite)."),
    x: str = typer.Option(..., "--x"),
    y: str = typer.Option("makespan_s", "--y"),
    hue: str | None = typer.Option(None, "--hue", help="Column(s) whose values get one line each (comma-separated)."),
    out: Path = typer.Option(Path("sweep.png"), "--out"),
    logx: bool = typer.Option(False, "--logx"),
    logy: bool = typer.Option(False, "--logy"),
    where_expr: str | None = typer.Option(None, "--where", help="Keep rows where this expression holds."),
) -> None:
    """Plot a metric against an axis (PNG); ``--hue a,b`` draws one line per combination."""
    from trainsim.sweep.results import load_results, plot, where

    check_output_file(out, "--out", suffixes=PLOT_SUFFIXES)
    path = plot(where(load_results(store_path), where_expr), x, y, out, hue=hue, logx=logx, logy=logy)
    typer.echo(f"wrote {path}")

