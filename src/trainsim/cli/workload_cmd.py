"""`trainsim workload ...`: workload conversions from the command line (DESIGN.md, cli layer).

``trainsim workload convert FILE.txt --ranks N --out PREFIX [--passes P] [--dims 8,4]`` reads
an ASTRA-sim 1.0 text workload and writes one Chakra ET file per rank, ``PREFIX.<rank>.et``
(see ``trainsim.workload.astra_text`` and docs/workloads.md). Durations are written in Chakra's
microseconds, converted from the text's cycles (nanoseconds at ASTRA-sim 1.0's 1 GHz).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from trainsim.cli.app import app
from trainsim.cli.force import force_option, honours_force
from trainsim.cli.outputs import check_output_prefix
from trainsim.cli.writes import output_errors
from trainsim.errors import ConfigError

workload_app = typer.Typer(
    name="workload",
    help="Convert workloads between formats.",
    no_args_is_help=True,
    add_completion=False,
)
app.add_typer(workload_app, name="workload")


def parse_dims(text: str | None) -> list[int] | None:
    """``"8,4"`` -> ``[8, 4]`` (ranks per network dimension, dimension 0 first)."""
    if text is None:
        return None
    try:
        sizes = [int(part) for part in text.split(",")]
    except ValueError:
        sizes = []
    if not sizes or min(sizes) < 1:
        raise ConfigError(
            f"{text!r} is not a list of positive integers", field="--dims", hint="e.g. --dims 8,4"
        )
    return sizes


@workload_app.command("convert")
@honours_force
def convert(
    file: Annotated[Path, typer.Argument(help="ASTRA-sim 1.0 text workload (.txt).")],
    ranks: int = typer.Option(..., "--ranks", help="Number of ranks (NPUs)."),
    out: str = typer.Option(..., "--out", help="Output prefix: writes PREFIX.<rank>.et."),
    passes: int = typer.Option(1, "--passes", help="Training iterations to unroll."),
    dims: str | None = typer.Option(
        None,
        "--dims",
        help="Ranks per network dimension, dimension 0 first, e.g. 8,4 (their product is --ranks). "
        "Sets the length of involved_dim, places HYBRID_TRANSFORMER's model-parallel group, and "
        "drops collectives on dimensions of one rank.",
    ),
    header: str | None = typer.Option(
        None,
        "--header",
        help='Header line for a file that has none (LIBRA), e.g. "HYBRID_TRANSFORMER '
        'model_parallel_NPU_group: 16".',
    ),
    update_delays: bool = typer.Option(
        True,
        "--update-delays/--no-update-delays",
        help="Add each layer's update delay after its collectives (as CPU compute nodes).",
    ),
    force: bool = force_option(),
) -> None:
    """Convert an ASTRA-sim 1.0 text workload into Chakra ET files, one per rank."""
    from trainsim import budget
    from trainsim.workload.astra_text import parse_text_workload, text_to_graphs

    check_output_prefix(out, "--out")
    sizes = parse_dims(dims)
    budget.check(
        "files",
        ranks,
        f"--ranks {ranks:,} rank files",
        way_under="use fewer --ranks",
        field="--out",
    )
    workload = parse_text_workload(file, header=header)
    graphs = text_to_graphs(
        workload, ranks, num_passes=passes, dim_sizes=sizes, update_delays=update_delays
    )
    from trainsim.workload.chakra import write_workload

    with output_errors(out, "--out"):
        write_workload(out, graphs)
    for warning in graphs[0].warnings:
        typer.echo(f"warning: {warning}", err=True)
    typer.echo(
        f"wrote {out}.0.et .. {out}.{ranks - 1}.et: {workload.mode}, {len(workload.layers)} layers, "
        f"{passes} pass(es), {len(graphs[0])} nodes per rank"
    )
