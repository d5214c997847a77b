"""``trainsim study roce``: congestion control on training traffic (studies/roce/study.py,
docs/roce.md); registered on ``study_cmd``'s ``study`` group.

CLI layer: parses the options, runs ``trainsim.studies.roce.study.run_study`` into a sweep
store (a temporary one without ``--store``), prints one table per experiment (each scheme
against PFC only) and, on request, writes the rows as CSV or JSON.
"""

from __future__ import annotations

from pathlib import Path

import typer

from trainsim.cli.study_cmd import study_app


@study_app.command("roce")
def roce(
    platform: str = typer.Option("32", "--platform", help="32 or 128 (the HOTI'22 fabric, examples/roce) or a platform file with a backends.packet section."),
    schemes: str = typer.Option("all", "--schemes", help="Comma-separated: none, dcqcn, dctcp, timely, hpcc (or all); PFC only (none) always runs."),
    experiments: str = typer.Option("allreduce,alltoall,alltoall_naive,incast", "--experiments",
                                    help="Comma-separated: allreduce, alltoall, alltoall_naive, incast, resnet50, dlrm (or all)."),
    size_mib: str = typer.Option("1", "--size-mib", help="Sizes per NPU in MiB, comma-separated (collectives and incast)."),
    engine: str = typer.Option("auto", "--engine", help="Packet engine: auto, native (compiled core) or python (reference)."),
    store: Path | None = typer.Option(None, "--store", help="Sweep store (SQLite) keeping each finished row; a re-run resumes from it."),
    csv_path: Path | None = typer.Option(None, "--csv", help="Write the rows as CSV."),
    json_path: Path | None = typer.Option(None, "--json", help="Write the rows as JSON."),
) -> None:
    """Each RoCE congestion-control scheme against PFC only (HOTI'22, Rashidi et al.)."""
    import csv
    import tempfile

    from rich.table import Table

    from trainsim.cli.console import stdout_console
    from trainsim.cli.outputs import check_output_file
    from trainsim.errors import ConfigError
    from trainsim.report.document import dumps
    from trainsim.studies.roce import study
    from trainsim.sweep.store import SweepStore

    for path, option in ((csv_path, "--csv"), (json_path, "--json")):
        if path is not None:
            check_output_file(path, option)
    if engine not in ("auto", "native", "python"):
        raise ConfigError(f"{engine!r}: expected auto, native or python", field="engine")
    path = study.platform_path(platform)
    wanted = study.cases(study.parse_names(experiments, study.EXPERIMENTS, "experiments"), study.parse_sizes(size_mib),
                         study.parse_names(schemes, study.SCHEMES, "schemes"))  # fmt: skip
    console = stdout_console()
    with tempfile.TemporaryDirectory(prefix="trainsim-roce-") as tmp:
        if store is not None:
            store.parent.mkdir(parents=True, exist_ok=True)
        with SweepStore(store if store is not None else Path(tmp) / "roce.sqlite") as st:
            rows = study.run_study(path, wanted, st, engine=engine, progress=console.print)
    npus = study.load_study_platform(path).network.npus
    groups: dict[tuple[str, float | None], list[dict]] = {}
    for r in rows:
        groups.setdefault((r["experiment"], r["size_mib"]), []).append(r)
    for (experiment, size), group in groups.items():
        title = study.TITLES[experiment].replace("N-1", str(npus - 1)) + f", {npus} NPUs"
        title += "" if size is None else f", {size:g} MiB per NPU"
        models = size is None
        t = Table(title=title)
        cols = ["scheme", "time (us)", "vs PFC only", "pauses (us)", "ECN marks", "drops", "packets"]
        cols += ["exposed comm (us)", "vs PFC only"] if models else []
        for c in (*cols, "CPU s"):
            t.add_column(c, justify="left" if c == "scheme" else "right")
        for r in group:
            cells = [r["scheme"], f"{r['time_us']:.1f}", f"{r['vs_pfc_only']:.3f}", f"{r['pause_us']:.1f}", str(r["ecn_marks"]),
                     str(r["drops"]), str(r["packets"])]  # fmt: skip
            if models:
                cells += [f"{r['exposed_comm_us']:.1f}", f"{r['exposed_vs_pfc_only']:.3f}"]
            t.add_row(*cells, f"{r['cpu_s']:.2f}")
        console.print(t)
    out = study.table_rows(rows)
    if csv_path is not None:
        with csv_path.open("w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=study.COLUMNS)
            writer.writeheader()
            writer.writerows(out)
        console.print(f"wrote {csv_path}")
    if json_path is not None:
        json_path.write_text(dumps({"platform": str(path), "npus": npus, "rows": out}) + "\n")
        console.print(f"wrote {json_path}")


@study_app.command("roce-micro")
def roce_micro() -> None:
    """The DCQCN / HPCC papers' micro-benchmarks on the packet backend beside the published figures."""
    from rich.table import Table

    from trainsim.cli.console import stdout_console
    from trainsim.studies.roce import micro

    t = Table(title="Against the papers' micro-benchmarks (stars of 1 us links, reference engine)")
    for c in ("benchmark", "ours", "published", "source", "agrees (band)"):
        t.add_column(c)
    for r in micro.comparison_rows():
        ours = r.unit if r.ours is None and r.key == "dcqcn_fair_gbps" else "never" if r.ours is None else f"{r.ours:.4g} {r.unit}"
        src = f"{r.published.paper}, {r.published.where}"
        t.add_row(r.benchmark, ours, r.published.claim, src, ("yes" if r.agrees else "no") + f" ({r.band})")
    stdout_console().print(t)
