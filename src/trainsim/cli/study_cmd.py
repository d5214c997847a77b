"""``trainsim study fred``: the FRED wafer-scale fabric study (studies/fred, docs/fred.md).

CLI layer: reads the platform files, runs ``trainsim.studies.fred.study`` and prints its tables
(measured values beside the paper's) and, with ``--json``, writes them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from trainsim.cli.app import app

study_app = typer.Typer(help="Research studies built on the simulator.", no_args_is_help=True)
app.add_typer(study_app, name="study")


@study_app.command("fred")
def fred_cmd(
    platforms: Annotated[
        Path | None, typer.Option("--platforms", help="Folder of mesh.yaml, fred_a.yaml .. fred_d.yaml (default: examples/fred).")
    ] = None,
    placement: Annotated[str, typer.Option("--placement", help="Ranks on the mesh: column, snake or linear (studies/fred/placement.py).")] = "column",
    order: Annotated[str, typer.Option("--order", help="Generator rank order, innermost first.")] = "tp-cp-ep-pp-dp",
    device: Annotated[str, typer.Option("--device", help="Compute device of the operator timer.")] = "H100",
    json_path: Annotated[Path | None, typer.Option("--json", help="Write the tables as JSON.")] = None,
    figures: Annotated[Path | None, typer.Option("--figures", help="Folder for a PNG of each fabric.")] = None,
) -> None:
    """FRED vs the wafer's 2-D mesh: collective bandwidth, I/O and end-to-end speed-ups."""
    from dataclasses import asdict

    from rich.table import Table

    from trainsim.cli.console import stdout_console
    from trainsim.cli.outputs import check_output_dir, check_output_file
    from trainsim.report.document import dumps
    from trainsim.studies.fred import study

    if json_path is not None:
        check_output_file(json_path, "--json")
    if figures is not None:
        check_output_dir(figures, "--figures")
    nets = study.load_nets(platforms, placement)
    con = stdout_console()
    if figures is not None:
        from trainsim.studies.fred.plot import draw_fabric

        for name, net in nets.items():
            title = "Wafer 2-D mesh" if name == "mesh" else f"FRED-{name[-1].upper()}"
            png = figures / (f"{name}.png" if name.startswith("fred") else f"fred_{name}.png")
            con.print(f"wrote {draw_fabric(net.fabric, title, png)}")
    coll = study.collective_rows(nets)
    t = Table(title="Effective per-NPU bandwidth of all-reduces (1 GB; bytes each NPU sends / time)")
    for col in ("fabric", "collective", "GB sent / NPU", "time (us)", "per-NPU TB/s", "paper TB/s"):
        t.add_column(col, justify="right")
    for c in coll:
        if c.what.startswith("20"):
            paper = study.PAPER_ALL_REDUCE_TBPS.get(c.fabric)
            ref = f"{paper:.2f}" if paper else "half the bytes"
        else:
            ref = f"{study.PAPER_GROUP_TBPS['mesh' if c.fabric == 'mesh' else 'fred']:.2f}"
        t.add_row(c.fabric, c.what, f"{c.bytes_per_npu / 1e9:.3f}", f"{c.time_us:.1f}", f"{c.per_npu_gbps / 1e3:.3f}", ref)
    con.print(t)
    io = study.io_rows(nets)
    t = Table(title=f"I/O: fraction of the controllers' line rate streaming weights in (paper, mesh: ~{study.PAPER_IO_FRACTION})")
    t.add_column("fabric")
    t.add_column("every NPU needs all", justify="right")
    t.add_column("sharded over NPUs", justify="right")
    for name, (shared, sharded) in io.items():
        t.add_row(name, f"{shared:.3f}", f"{sharded:.3f}")
    con.print(t)
    rows = study.speedup_rows(nets, device=device, order=order)
    t = Table(title="End-to-end step time (s) and speed-up of FRED-D over the mesh")
    for col in ("workload", *study.FABRICS, "speed-up D", "paper", "within 20%"):
        t.add_column(col, justify="right")
    for r in rows:
        t.add_row(r.workload, *(f"{r.steps[f].step_s:.4g}" for f in study.FABRICS), f"{r.speedup:.3f}x", f"{r.paper:.2f}x", "yes" if r.within_20pct else "no")
    con.print(t)
    if json_path is not None:
        doc = {
            "collectives": [asdict(c) for c in coll],
            "io_fraction": io,
            "speedups": [{"workload": r.workload, "paper": r.paper, "speedup": r.speedup, "steps": {k: asdict(v) for k, v in r.steps.items()}} for r in rows],
        }
        json_path.write_text(dumps(doc) + "\n")
