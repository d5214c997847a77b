"""``trainsim pcm``: studies of tri-level MLC phase-change memory (studies/pcm, docs/pcm.md).

CLI layer (DESIGN.md, "Layers"): parses options, runs ``trainsim.studies.pcm.study``, prints
rich tables and writes matplotlib PNGs and a ``results.json`` into ``--out``. Latencies in ns.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from trainsim.cli.app import app
from trainsim.cli.outputs import check_output_dir
from trainsim.errors import ConfigError

if TYPE_CHECKING:
    from rich.table import Table

    from trainsim.memory.pcm.config import PcmConfig, Scheme
    from trainsim.studies.pcm import study

PAPER_TRI_WRITE_REDUCTION = 0.561
"""``study.PAPER_REDUCTIONS[Scheme.TRI][1]``, the default of ``pcm calibrate --target``, for
``--help`` without importing the study (numpy); tests/cli/test_startup.py checks that the two
agree."""

pcm_app = typer.Typer(
    help="Tri-level MLC phase-change memory: latency, IPC and sweeps.", no_args_is_help=True
)
app.add_typer(pcm_app, name="pcm")


def _schemes(scheme: str) -> tuple[Scheme, ...]:
    from trainsim.memory.pcm.config import Scheme
    from trainsim.studies.pcm import study

    if scheme == "all":
        return study.SCHEMES
    try:
        return (Scheme(scheme),)
    except ValueError:
        raise ConfigError(
            f"got {scheme!r}, expected base, tri, tri+fpc or all", field="--scheme"
        ) from None


def _config(
    spare_bits: int,
    faults: int,
    relaxed: int | None,
    metric: str,
    cores: int,
    mpki: float,
    rob: int,
    instructions: int,
    seed: int,
    banks: int = 2,
    scheduler: str = "frfcfs",
) -> PcmConfig:
    from trainsim.memory.pcm.config import PcmConfig, ReadMetric, Scheduler

    try:
        read_metric = ReadMetric(metric.upper())
    except ValueError:
        raise ConfigError(f"got {metric!r}, expected R or M", field="--read-metric") from None
    if scheduler not in tuple(Scheduler):
        raise ConfigError(
            f"got {scheduler!r}, expected " + ", ".join(x.value for x in Scheduler),
            field="--scheduler",
        )
    if banks < 1:
        raise ConfigError(f"got {banks!r}, expected an integer >= 1", field="--banks")
    changes: dict[str, Any] = {
        "memory.banks": banks,
        "memory.scheduler": scheduler,
        "spare.spare_bits": spare_bits,
        "spare.faults": faults,
        "read.metric": read_metric,
        "core.cores": cores,
        "core.mpki": mpki,
        "core.rob": rob,
        "core.instructions": instructions,
    }
    if relaxed is not None:
        changes["cell.relaxed_iterations"] = relaxed
    return PcmConfig(seed=seed).replace(**changes)


def _pct(x: float) -> str:
    return f"{100 * x:+.1f}%"


def _table(title: str, columns: str) -> Table:
    """A table with right-justified columns named by ``columns`` (``-`` stands for a space)."""
    from rich.table import Table

    t = Table(title=title)
    for col in columns.split():
        t.add_column(col.replace("-", " "), justify="right")
    return t


def _comparison_table(title: str, comp: study.Comparison) -> Table:
    from trainsim.memory.pcm.config import Scheme

    t = _table(
        title,
        "scheme read-ns write-ns read-red. write-red. relaxed-writes 3-level-reads bank-util IPC"
        " IPC-gain",
    )
    for name, r in comp.results.items():
        base = name == Scheme.BASE.value
        ipc_known = r.ipc == r.ipc
        t.add_row(
            name,
            f"{r.read_latency_ns:.0f}",
            f"{r.write_latency_ns:.0f}",
            "" if base else _pct(comp.reduction(name, "read")),
            "" if base else _pct(comp.reduction(name, "write")),
            f"{100 * r.relaxed_write_fraction:.1f}%",
            f"{100 * r.tri_read_fraction:.1f}%",
            f"{100 * r.bank_utilization:.1f}%",
            f"{r.ipc:.4f}" if ipc_known else "-",
            "" if base or not ipc_known else _pct(comp.ipc_gain(name)),
        )
    return t


def _sweep_table(
    title: str, label: str, points: list[study.SweepPoint], schemes: tuple[Scheme, ...]
) -> Table:
    from rich.table import Table

    t = Table(title=title)
    t.add_column(label, justify="right")
    for s in schemes:
        t.add_column(f"{s.value}: tri-level lines", justify="right")
        t.add_column(f"{s.value}: write red.", justify="right")
        t.add_column(f"{s.value}: read red.", justify="right")
    for p in points:
        row = [str(p.value)]
        for s in schemes:
            row += [
                f"{100 * p.tri_line_fraction[s.value]:.1f}%",
                _pct(p.comparison.reduction(s, "write")),
                _pct(p.comparison.reduction(s, "read")),
            ]
        t.add_row(*row)
    return t


def _gap_table(d: study.Diagnosis) -> Table:
    t = _table(
        title=(
            "Why (fractions of base latency): "
            f"{100 * d.intermediate_lines:.0f}% of lines have 01/10 cells, "
            f"{100 * d.enumerative_tri_lines:.0f}% would qualify with the best count-based code; "
            f"a tri-level write gains {100 * d.qualified_write_reduction:.0f}%, "
            f"3-level sensing {100 * d.sensing_reduction:.0f}%"
        ),
        columns="scheme tri-lines",
    )
    for col in ("read: sensing", "read: waiting", "write: service", "write: waiting"):
        t.add_column(col, justify="right")
    t.add_column("stall share model / paper", justify="right")
    for name, g in d.schemes.items():
        t.add_row(
            name,
            f"{100 * g.tri_lines:.1f}%",
            _pct(g.read_from_sensing),
            _pct(g.read_from_waiting),
            _pct(g.write_from_service),
            _pct(g.write_from_waiting),
            f"{d.model_stall_share:.2f} / {g.paper_stall_share:.2f}",
        )
    return t


def _load_label(load: float | None) -> str:
    return "cores" if load is None else f"{load:g}"


def _conditions_table(points: list[study.ConditionPoint], schemes: tuple[Scheme, ...]) -> Table:
    t = _table(
        "Conditions: banks x load (cores = closed loop; a number = open loop, fraction of base "
        "capacity) x qualifying share; * = both reductions in issue 11's bands",
        "banks load qualifying",
    )
    for s in schemes:
        t.add_column(f"{s.value}: write / read red.", justify="right")
    for p in points:
        cells = []
        for s in schemes:
            w, r = p.reductions(s)
            cells.append(f"{100 * w:.1f} / {100 * r:.1f}{' *' if p.in_bands(s) else ''}")
        t.add_row(str(p.banks), _load_label(p.load), f"{100 * p.qualifying:.0f}%", *cells)
    return t


def _conditions_plot(
    path: Path, points: list[study.ConditionPoint], schemes: tuple[Scheme, ...]
) -> None:
    """Reductions against load (at the pool's share) and against the share (per load), by banks."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from trainsim.studies.pcm.study import PAPER_REDUCTIONS, READ_RANGE, WRITE_RANGE

    pool_q = min(p.qualifying for p in points)
    loads = list(dict.fromkeys(p.load for p in points))
    banks = sorted({p.banks for p in points})
    fig, axes = plt.subplots(len(schemes), 2, figsize=(11, 3.6 * len(schemes)), squeeze=False)
    for row, s in zip(axes, schemes, strict=True):
        for nb, color in zip(banks, ("tab:blue", "tab:orange", "tab:green"), strict=False):
            at_q = [p for p in points if p.banks == nb and p.qualifying == pool_q]
            xs = [loads.index(p.load) for p in at_q]
            row[0].plot(
                xs,
                [100 * p.reductions(s)[0] for p in at_q],
                "o-",
                color=color,
                label=f"{nb} banks write",
            )
            row[0].plot(
                xs,
                [100 * p.reductions(s)[1] for p in at_q],
                "s--",
                color=color,
                label=f"{nb} banks read",
            )
            for load, marker in zip(loads, ("o", "^", "v", "D", "x"), strict=False):
                pts = sorted(
                    (p for p in points if p.banks == nb and p.load == load),
                    key=lambda p: p.qualifying,
                )
                if nb != banks[0] and load is not None:
                    continue  # open loop: the banks give the same curve (docs/pcm.md)
                row[1].plot(
                    [100 * p.qualifying for p in pts],
                    [100 * p.reductions(s)[0] for p in pts],
                    marker + "-",
                    color=color,
                    label=f"{nb} banks, load {_load_label(load)} write",
                )
        row[0].set(
            xticks=range(len(loads)),
            xticklabels=[_load_label(x) for x in loads],
            xlabel=f"memory load (qualifying share {100 * pool_q:.0f}%)",
            ylabel="reduction vs base (%)",
            title=f"{s.value}: load and banks",
        )
        row[1].set(
            xlabel="lines that qualify for tri (%)",
            ylabel="write reduction vs base (%)",
            title=f"{s.value}: qualifying share",
        )
        paper_read, paper_write, _ = PAPER_REDUCTIONS[s]
        for a in row:
            a.axhspan(100 * WRITE_RANGE[0], 100 * WRITE_RANGE[1], color="0.9", zorder=0)
            a.axhline(100 * paper_write, color="k", lw=0.8, ls=":")
            a.legend(fontsize=6)
        row[0].axhline(100 * READ_RANGE[0], color="0.6", lw=0.8, ls="--")
        row[0].axhline(100 * paper_read, color="k", lw=0.8, ls="-.")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _band_table(band: study.IpcBand, schemes: tuple[Scheme, ...]) -> Table:
    from rich.table import Table

    from trainsim.memory.pcm.config import Scheme

    t = Table(title="IPC band (closed loop, per-core IPC)")
    t.add_column("MPKI", justify="right")
    t.add_column("ROB", justify="right")
    t.add_column("base IPC", justify="right")
    for s in schemes:
        t.add_column(f"{s.value} IPC gain", justify="right")
    gains = {s: band.gains(s) for s in schemes}
    for i, (mpki, rob, ipc) in enumerate(band.rows):
        t.add_row(
            f"{mpki:g}",
            str(rob),
            f"{ipc[Scheme.BASE.value]:.4f}",
            *[_pct(gains[s][i]) for s in schemes],
        )
    t.add_row("band", "", "", *[f"{_pct(min(gains[s]))} .. {_pct(max(gains[s]))}" for s in schemes])
    return t


def _plots(
    out: Path,
    main: study.Comparison,
    sweeps: dict[str, list[study.SweepPoint]],
    band: study.IpcBand | None,
    schemes: tuple[Scheme, ...],
) -> list[Path]:
    import matplotlib

    from trainsim.memory.pcm.config import Scheme

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    written = []
    names = list(main.results)
    fig, ax = plt.subplots(1, 3, figsize=(13, 3.8))
    x = range(len(names))
    ax[0].bar(
        [i - 0.2 for i in x], [main.results[n].read_latency_ns for n in names], 0.4, label="read"
    )
    ax[0].bar(
        [i + 0.2 for i in x], [main.results[n].write_latency_ns for n in names], 0.4, label="write"
    )
    ax[0].set(xticks=list(x), xticklabels=names, ylabel="mean latency (ns)", title="Latency")
    ax[0].legend()
    ax[1].bar(names, [100 * main.results[n].relaxed_write_fraction for n in names])
    ax[1].set(ylabel="relaxed writes (%)", title="Relaxed (tri-level) writes")
    ax[2].bar(names, [100 * main.results[n].bank_utilization for n in names])
    ax[2].set(ylabel="bank utilization (%)", title="Bank utilization")
    fig.tight_layout()
    written.append(out / "latency.png")
    fig.savefig(written[-1], dpi=110)
    plt.close(fig)
    for key, points in sweeps.items():
        fig, ax = plt.subplots(1, 2, figsize=(10, 3.8))
        labels = [str(p.value) for p in points]
        xs = range(len(points))
        for s in schemes:
            if s is Scheme.BASE:
                continue
            ax[0].plot(
                xs,
                [100 * p.comparison.reduction(s, "write") for p in points],
                "o-",
                label=f"{s.value} write",
            )
            ax[0].plot(
                xs,
                [100 * p.comparison.reduction(s, "read") for p in points],
                "s--",
                label=f"{s.value} read",
            )
            ax[1].plot(
                xs, [100 * p.tri_line_fraction[s.value] for p in points], "o-", label=s.value
            )
        ax[0].set(
            xticks=list(xs),
            xticklabels=labels,
            xlabel=key,
            ylabel="latency reduction vs base (%)",
            title=f"{key} sweep",
        )
        ax[1].set(
            xticks=list(xs),
            xticklabels=labels,
            xlabel=key,
            ylabel="lines stored tri-level (%)",
            title="Qualifying lines",
        )
        for a in ax:
            a.legend(fontsize=7)
            a.tick_params(axis="x", labelrotation=30 if key == "data" else 0, labelsize=7)
        fig.tight_layout()
        written.append(out / f"sweep_{key.replace(' ', '_')}.png")
        fig.savefig(written[-1], dpi=110)
        plt.close(fig)
    if band is not None:
        fig, ax = plt.subplots(figsize=(6, 3.8))
        for s in schemes:
            if s is Scheme.BASE:
                continue
            for rob in sorted({r for _, r, _ in band.rows}):
                pts = [
                    (m, g)
                    for (m, r, _), g in zip(band.rows, band.gains(s), strict=True)
                    if r == rob
                ]
                ax.plot(
                    [m for m, _ in pts],
                    [100 * g for _, g in pts],
                    "o-",
                    label=f"{s.value}, ROB {rob}",
                )
        ax.set(xlabel="MPKI", ylabel="IPC gain vs base (%)", title="IPC band")
        ax.legend(fontsize=7)
        fig.tight_layout()
        written.append(out / "ipc_band.png")
        fig.savefig(written[-1], dpi=110)
        plt.close(fig)
    return written


def _json(
    main: study.Comparison,
    sweeps: dict[str, list[study.SweepPoint]],
    band: study.IpcBand | None,
    cfg: PcmConfig,
    seconds: float,
    diagnosis: study.Diagnosis | None = None,
) -> dict[str, Any]:
    from trainsim.memory.pcm.config import Scheme

    def comp(c: study.Comparison) -> dict[str, Any]:
        d: dict[str, Any] = {"results": {k: asdict(r) for k, r in c.results.items()}, **c.extra}
        for s in c.results:
            if s != Scheme.BASE.value:
                d[f"{s}_read_reduction"] = c.reduction(s, "read")
                d[f"{s}_write_reduction"] = c.reduction(s, "write")
        return d

    out: dict[str, Any] = {"config": asdict(cfg), "main": comp(main), "seconds": seconds}
    out["sweeps"] = {
        k: [
            {
                "value": p.value,
                "tri_line_fraction": p.tri_line_fraction,
                "expected_write_ns": p.expected_write_ns,
                **comp(p.comparison),
            }
            for p in pts
        ]
        for k, pts in sweeps.items()
    }
    if diagnosis is not None:
        gap = asdict(diagnosis)
        gap.pop("comparison")
        out["diagnosis"] = gap
    if band is not None:
        out["ipc_band"] = [{"mpki": m, "rob": r, "ipc": ipc} for m, r, ipc in band.rows]
    return out


@pcm_app.command("study")
def study_cmd(
    spare_bits: Annotated[
        int, typer.Option("--spare-bits", help="Spare (ECP) bits per 64 B line.")
    ] = 61,
    scheme: Annotated[
        str, typer.Option("--scheme", help="base, tri, tri+fpc or all (compared with base).")
    ] = "all",
    load: Annotated[
        float | None,
        typer.Option(
            "--load",
            help="Open-loop load, a fraction of the base capacity; default: closed-loop cores.",
        ),
    ] = None,
    trace: Annotated[
        Path | None, typer.Option("--trace", help="Replay a text trace (docs/pcm.md) instead.")
    ] = None,
    data: Annotated[
        str,
        typer.Option(
            "--data", help="Content: mix, a kind (zeros, small_int, ...) or files:PKG:.ext"
        ),
    ] = "mix",
    faults: Annotated[
        int, typer.Option("--faults", help="Stuck-at faults per line (each uses an ECP entry).")
    ] = 0,
    relaxed: Annotated[
        int | None,
        typer.Option(
            "--relaxed-iterations", help="SET pulses of the merged level (default: calibrated)."
        ),
    ] = None,
    read_metric: Annotated[
        str, typer.Option("--read-metric", help="Read sensing metric: R or M.")
    ] = "M",
    cores: Annotated[int, typer.Option("--cores")] = 4,
    mpki: Annotated[float, typer.Option("--mpki")] = 10.0,
    rob: Annotated[int, typer.Option("--rob")] = 128,
    instructions: Annotated[
        int, typer.Option("--instructions", help="Instructions per core.")
    ] = 300_000,
    sweeps: Annotated[
        bool, typer.Option("--sweeps/--no-sweeps", help="Also run the IPC band and the sweeps.")
    ] = True,
    seed: Annotated[int, typer.Option("--seed")] = 1,
    banks: Annotated[
        int, typer.Option("--banks", help="Banks per channel (NVMain's MLC example: 2).")
    ] = 2,
    scheduler: Annotated[
        str,
        typer.Option("--scheduler", help="frfcfs (NVMain's example), frfcfs-wqf or read-first."),
    ] = "frfcfs",
    out: Annotated[
        Path, typer.Option("--out", help="Folder for PNG plots and results.json.")
    ] = Path("out/pcm"),
) -> None:
    """Compare base, tri and tri+fpc; print tables, write plots and results.json into --out."""
    from trainsim.cli.console import stdout_console
    from trainsim.memory.pcm.config import Scheme
    from trainsim.memory.pcm.run import Pool, run_trace
    from trainsim.memory.pcm.trace import read_trace
    from trainsim.studies.pcm import study

    check_output_dir(out, "--out")
    console = stdout_console()
    t0 = time.perf_counter()
    cfg = _config(
        spare_bits,
        faults,
        relaxed,
        read_metric,
        cores,
        mpki,
        rob,
        instructions,
        seed,
        banks,
        scheduler,
    )
    schemes = _schemes(scheme)
    pool = Pool.of(data, seed=seed)
    if trace is not None:
        tr = read_trace(trace)
        results = {
            s.value: run_trace(cfg, s, pool, tr)
            for s in (Scheme.BASE, *[s for s in schemes if s is not Scheme.BASE])
        }
        main = study.Comparison(results, f"trace {trace}")
    else:
        main = study.compare(cfg, pool, schemes, load=load)
    mode = (
        "closed-loop cores"
        if load is None and trace is None
        else (f"open loop, load {load}" if trace is None else f"trace {trace}")
    )
    console.print(
        _comparison_table(
            f"PCM study: {mode}, data {data}, spare {cfg.spare.spare_bits} bits, "
            f"{cfg.memory.banks} banks, {cfg.memory.scheduler.value}",
            main,
        )
    )
    others = tuple(s for s in schemes if s is not Scheme.BASE)
    diagnosis = None
    if load is None and trace is None and set(study.SCHEMES) <= set(schemes):
        diagnosis = study.diagnose(cfg, pool, main)
        console.print(_gap_table(diagnosis))
    swept: dict[str, list[study.SweepPoint]] = {}
    band = None
    grid: list[study.ConditionPoint] = []
    if sweeps and others:
        band = study.ipc_band(cfg, pool, schemes=(Scheme.BASE, *others))
        # the sweeps run half as many instructions per core as the main comparison
        half = cfg.replace(**{"core.instructions": max(1, instructions // 2)})
        console.print(_band_table(band, others))
        swept["spare bits"] = study.spare_sweep(half, pool, schemes=others)
        swept["faults"] = study.aging_sweep(half, pool, schemes=others)
        swept["load"] = study.load_sweep(half, pool, schemes=others, requests=10_000)
        swept["data"] = study.mix_sweep(
            half,
            schemes=others,
            sources=("mix", "zeros", "small_int", "int16", "pointer", "text", "files:numpy:.so"),
        )
        for key, pts in swept.items():
            console.print(_sweep_table(f"Sweep over {key}", key, pts, others))
        # open-loop cells: one request per 30 instructions (10,000 at the default length)
        grid = study.conditions(half, pool, requests=max(1_000, instructions // 30))
        console.print(_conditions_table(grid, others))
    out.mkdir(parents=True, exist_ok=True)
    files = _plots(out, main, swept, band, schemes)
    if grid:
        files.append(out / "conditions.png")
        _conditions_plot(files[-1], grid, others)
    seconds = time.perf_counter() - t0
    record = _json(main, swept, band, cfg, seconds, diagnosis)
    record["conditions"] = [
        {
            "banks": p.banks,
            "load": p.load,
            "qualifying": p.qualifying,
            **{
                f"{s.value}_{what}_reduction": p.comparison.reduction(s, what)
                for s in others
                for what in ("write", "read")
            },
            **{f"{s.value}_ipc_gain": p.comparison.ipc_gain(s) for s in others},
        }
        for p in grid
    ]
    (out / "results.json").write_text(json.dumps(record, indent=1, default=str))
    console.print(f"wrote {len(files)} plots and results.json to {out} in {seconds:.1f} s")


@pcm_app.command("calibrate")
def calibrate_cmd(
    target: Annotated[
        float, typer.Option("--target", help="Write-latency reduction of tri to match.")
    ] = PAPER_TRI_WRITE_REDUCTION,
    data: Annotated[str, typer.Option("--data")] = "mix",
    seed: Annotated[int, typer.Option("--seed")] = 1,
) -> None:
    """Calibrate the merged level's SET pulses against the write-latency figure (closed loop)."""
    from rich.table import Table

    from trainsim.cli.console import stdout_console
    from trainsim.memory.pcm.config import PcmConfig
    from trainsim.memory.pcm.run import Pool
    from trainsim.studies.pcm import study

    cfg = PcmConfig(seed=seed)
    cal = study.calibrate(cfg, Pool.of(data, seed=seed), target)
    t = Table(
        title=f"Calibration of cell.relaxed_iterations against a {100 * target:.1f}% write reduction"
    )
    t.add_column("relaxed iterations", justify="right")
    t.add_column("tri write reduction", justify="right")
    for r, red in cal.reductions.items():
        t.add_row(f"{r}{' (chosen)' if r == cal.chosen else ''}", _pct(red))
    stdout_console().print(t)
