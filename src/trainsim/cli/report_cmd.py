"""`trainsim report RESULT.json --out DIR`: plots and a self-contained HTML page."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from trainsim.cli.app import app
from trainsim.errors import ConfigError


@app.command("report")
def report_command(
    result_path: Path = typer.Argument(..., help="Result JSON written by `trainsim run --json`."),
    out: Path = typer.Option(Path("report"), "--out", help="Output folder."),
) -> None:
    """Write breakdown / utilization / collective plots and an offline HTML report."""
    from trainsim.report.html import write_report

    try:
        document = json.loads(result_path.read_text())
    except FileNotFoundError:
        raise ConfigError("no such result file", file=str(result_path)) from None
    except json.JSONDecodeError as exc:
        raise ConfigError(f"not JSON: {exc}", file=str(result_path)) from None
    if not isinstance(document, dict) or "makespan_s" not in document or "ranks" not in document:
        raise ConfigError("not a trainsim result (expected makespan_s and ranks)", file=str(result_path), hint="write one with `trainsim run ... --json RESULT.json`")
    page = write_report(document, out)
    typer.echo(f"wrote {page}")
