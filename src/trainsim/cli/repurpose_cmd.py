"""``trainsim repurpose``: run the RePurpose study and write its results (issue 10).

Place: ``trainsim.cli``, the only layer that prints; the work is :mod:`trainsim.inference`.
Writes into ``--out``: ``results.json`` (configuration, seed-averaged summary, the issue's
checks, every record with its plan), ``latency.json`` (analytical latency per sample on the
shipped platforms, seconds), ``table.md`` (both tables) and ``accuracy_vs_communication.png``.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Annotated

import typer

from trainsim.cli.app import app
from trainsim.errors import ConfigError


@app.command("repurpose")
def repurpose(
    workers: Annotated[
        list[int],
        typer.Option("--workers", help="Worker count K (2, 4, 8, ...); repeat for several."),
    ],
    budget: Annotated[
        list[float],
        typer.Option(
            "--budget",
            help="Budget F, fraction of direct tensor-parallel traffic in [0, 1]; repeat for several.",
        ),
    ],
    out: Annotated[
        Path,
        typer.Option(
            "--out", help="Directory for results.json, latency.json, table.md and the plot."
        ),
    ],
    seed: Annotated[
        list[int] | None,
        typer.Option(
            "--seed",
            help="Seed S (split and MLP initialization; default 0); repeat to average several.",
        ),
    ] = None,
) -> None:
    """Restructure a trained digits MLP for K workers (RePurpose) and compare it with baselines."""
    from trainsim.inference import (
        StudyConfig,
        accuracy_vs_communication,
        latency_markdown,
        latency_table,
        markdown_table,
        run_study,
    )

    config = StudyConfig(
        workers=tuple(workers),
        budgets=tuple(sorted(set(budget))),
        seeds=tuple(seed) if seed else (0,),
    )
    if out.exists() and not out.is_dir():
        raise ConfigError(
            f"{str(out)!r} is a file: expected a directory (created if missing)", field="--out"
        )
    out.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    result = run_study(config, progress=typer.echo)
    elapsed = time.perf_counter() - start
    latency = latency_table(result)
    doc = result.to_dict()
    doc["wall_time_s"] = elapsed
    (out / "results.json").write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    (out / "latency.json").write_text(
        json.dumps([r.to_dict() for r in latency], indent=1) + "\n", encoding="utf-8"
    )
    tables = f"## Accuracy and communication\n\n{markdown_table(result)}\n\n## Latency per sample (analytical)\n\n{latency_markdown(latency)}\n"
    (out / "table.md").write_text(tables, encoding="utf-8")
    accuracy_vs_communication(result).savefig(out / "accuracy_vs_communication.png", dpi=120)
    typer.echo(markdown_table(result))
    for check in result.checks():
        typer.echo(
            f"[{'ok' if check['holds'] else 'NOT MET'}] {check['claim']}: {', '.join(f'{v:.4f}' for v in check['values'])}"
        )
    typer.echo(f"study: {elapsed:.1f} s; results in {out}")
