"""``trainsim repurpose``: run the RePurpose study and write its results (issue 10).

Place: ``trainsim.cli``, the only layer that prints; the work is :mod:`trainsim.studies.repurpose`.
Writes into ``--out``: ``results.json`` (configuration, seed-averaged summary, the issue's
checks, every record with its plan), ``latency.json`` (latency on the shipped platforms from
simulator runs, seconds, per batch size), ``table.md`` (both tables) and
``accuracy_vs_communication.png``. With ``--et-out DIR`` every simulated deployment is also
written as Chakra ET files and a sized platform file, listed in ``DIR/index.json``, for
``trainsim run PLATFORM --workload PREFIX --backend BACKEND``.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Annotated

import typer

from trainsim.cli.app import app
from trainsim.cli.outputs import check_output_dir
from trainsim.errors import ConfigError
from trainsim.system.modes import backend_names


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
    batch: Annotated[
        list[int] | None,
        typer.Option(
            "--batch",
            help="Samples per simulated batch (one message per worker pair per layer carries the "
            "whole batch; default 1); repeat for several.",
        ),
    ] = None,
    backend: Annotated[
        str,
        typer.Option(
            "--backend", help=f"Network backend of the latency simulations: {', '.join(backend_names())}."
        ),
    ] = "flow",
    et_out: Annotated[
        Path | None,
        typer.Option(
            "--et-out",
            help="Also write every simulated deployment as Chakra ET files and sized platform "
            "files here (index.json lists them), for trainsim run.",
        ),
    ] = None,
) -> None:
    """Restructure a trained digits MLP for K workers (RePurpose) and compare it with baselines."""
    from trainsim.studies.repurpose import (
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
    if backend not in backend_names():
        raise ConfigError(f"{backend!r}: expected one of {', '.join(backend_names())}", field="--backend")
    for b in batch or ():
        if b < 1:
            raise ConfigError(f"{b!r}: expected a batch of at least 1 sample", field="--batch")
    check_output_dir(out, "--out")
    check_output_dir(et_out, "--et-out")
    start = time.perf_counter()
    result = run_study(config, progress=typer.echo)
    elapsed = time.perf_counter() - start
    latency = latency_table(
        result, batches=tuple(batch) if batch else (1,), backend=backend, et_out=et_out
    )
    doc = result.to_dict()
    doc["wall_time_s"] = elapsed
    doc["latency_wall_time_s"] = time.perf_counter() - start - elapsed
    (out / "results.json").write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    (out / "latency.json").write_text(
        json.dumps([r.to_dict() for r in latency], indent=1) + "\n", encoding="utf-8"
    )
    tables = f"## Accuracy and communication\n\n{markdown_table(result)}\n\n## Latency from simulator runs (backend {backend})\n\n{latency_markdown(latency)}\n"
    (out / "table.md").write_text(tables, encoding="utf-8")
    accuracy_vs_communication(result).savefig(out / "accuracy_vs_communication.png", dpi=120)
    typer.echo(markdown_table(result))
    for check in result.checks():
        typer.echo(
            f"[{'ok' if check['holds'] else 'NOT MET'}] {check['claim']}: {', '.join(f'{v:.4f}' for v in check['values'])}"
        )
    typer.echo(
        f"study: {elapsed:.1f} s, latency simulations: {doc['latency_wall_time_s']:.1f} s; results in {out}"
    )
