"""`trainsim report RESULT.json --out DIR`: plots and a self-contained HTML page."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from trainsim.cli.app import app
from trainsim.cli.outputs import check_output_dir
from trainsim.cli.writes import output_errors
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
    except RecursionError:
        raise ConfigError("not a trainsim result: JSON nested too deep for the parser", file=file) from None
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
    _check_rows(document, file, hint)
    document["collectives"] = rows_of(document.get("collectives"), file=file)
    check_output_dir(out, "--out")
    try:
        with output_errors(out, "--out"):
            page = write_report(document, out)
    except (KeyError, TypeError, ValueError, IndexError, AttributeError) as exc:
        # a field the checks above do not cover: still one line naming the file
        raise ConfigError(f"a malformed result ({type(exc).__name__}: {exc})", file=file, hint=hint) from None
    typer.echo(f"wrote {page}")


_REQUIRED = {"ranks": ("finish_s",), "breakdown": ("ranks", "finish_s"), "dims": ("dim",)}


def _check_rows(document: dict, file: str, hint: str) -> None:
    """The rows the plots read: required keys present, every ``*_s`` a finite number (rounding
    may leave -1e-18 s of idle time),
    ``breakdown[].step`` a mapping of numbers, ``dims[].utilization`` pairs of numbers."""
    from trainsim.config.files import type_name

    def number(value: object) -> bool:
        return not isinstance(value, bool) and isinstance(value, int | float) and abs(value) < float("inf")

    for key, required in _REQUIRED.items():
        for i, row in enumerate(document.get(key) or []):
            where = f"{key}[{i}]"
            for name in required:
                if name not in row:
                    raise ConfigError(f"missing {name!r}", file=file, field=where, hint=hint)
            for name, value in row.items():
                if name.endswith("_s") and not number(value):
                    raise ConfigError(f"got {value!r}; expected a number of seconds", file=file, field=f"{where}.{name}", hint=hint)
            step = row.get("step", {})
            if not isinstance(step, dict) or not all(number(v) for v in step.values()):
                raise ConfigError(f"got {type_name(step)}; expected a mapping of seconds", file=file, field=f"{where}.step", hint=hint)
            util = row.get("utilization", [])
            ok = isinstance(util, list) and all(isinstance(p, list) and len(p) == 2 and all(number(x) for x in p) for p in util)
            if not ok:
                raise ConfigError("expected a list of [time s, utilization] pairs", file=file, field=f"{where}.utilization", hint=hint)
