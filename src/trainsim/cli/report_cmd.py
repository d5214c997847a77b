"""`trainsim report RESULT.json --out DIR`: plots and a self-contained HTML page."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from trainsim.cli.app import app
from trainsim.cli.outputs import check_output_dir
from trainsim.errors import ConfigError


@app.command("report")
def report_command(
    result_path: Path = typer.Argument(..., help="Result JSON written by `trainsim run --json`."),
    out: Path = typer.Option(Path("report"), "--out", help="Output folder."),
) -> None:
    """Write breakdown / utilization / collective plots and an offline HTML report."""
    from trainsim.config.files import read_text, type_name
    from trainsim.report.collectives import rows_of
    from trainsim.report.html import write_report

    file = str(result_path)
    try:  # json.loads, not the strict config reader: the result's own json.dumps may write NaN
        document = json.loads(read_text(result_path))
    except json.JSONDecodeError as exc:
        raise ConfigError(f"not JSON: {exc}", file=file) from None
    hint = "write one with `trainsim run ... --json RESULT.json`"
    if not isinstance(document, dict) or "makespan_s" not in document or "ranks" not in document:
        raise ConfigError("not a trainsim result (expected makespan_s and ranks)", file=file, hint=hint)
    makespan = document["makespan_s"]
    if isinstance(makespan, bool) or not isinstance(makespan, int | float) or not 0 <= makespan < float("inf"):
        raise ConfigError(f"got {makespan!r}; expected a number of seconds >= 0", file=file, field="makespan_s", hint=hint)
    for key in ("ranks", "breakdown", "dims"):
        rows = document.get(key, [])
        bad = next((r for r in rows if not isinstance(r, dict)), None) if isinstance(rows, list) else rows
        if bad is not None:
            raise ConfigError(f"got {type_name(bad)}; expected a list of objects", file=file, field=key, hint=hint)
    document["collectives"] = rows_of(document.get("collectives"), file=file)
    check_output_dir(out, "--out")
    page = write_report(document, out)
    typer.echo(f"wrote {page}")
