"""``trainsim study comet``: the best strategy on each cluster of a grid (optimize/comet.py,
docs/comet.md); registered on ``study_cmd``'s ``study`` group.

CLI layer (DESIGN.md, "Layers"): parses the grid, runs ``trainsim.optimize.comet.run_study``
into a sweep store, prints a rich table and writes the frontier plot. Times in seconds.
"""

from __future__ import annotations

from pathlib import Path

import typer

from trainsim.cli.study_cmd import study_app
from trainsim.errors import ConfigError


def _floats(text: str | None, option: str) -> tuple[float, ...] | None:
    if text is None:
        return None
    try:
        values = tuple(float(v) for v in text.split(",") if v.strip())
    except ValueError:
        raise ConfigError(f"{option} {text!r}: expected comma-separated numbers, e.g. 40,80", field=option) from None
    if not values or any(v < 0 for v in values):
        raise ConfigError(f"{option} {text!r}: expected numbers >= 0", field=option)
    return values


@study_app.command("comet")
def comet(
    store: Path = typer.Option(..., "--store", help="Sweep store (SQLite) for one row per cluster; a re-run resumes from it."),
    grid_name: str = typer.Option("default", "--grid", help="default (8 clusters) or full (64: HBM x tier x inter-node x NPUs per node)."),
    model: str = typer.Option("transformer-1t", "--model", help="Model every cluster trains (the zoo's or a config.json)."),
    global_batch: int = typer.Option(1536, "--global-batch", help="Sequences per step."),
    hbm_gb: str | None = typer.Option(None, "--hbm-gb", help="HBM capacities per NPU, GB (replaces the grid's)."),
    hbm_tbps: str | None = typer.Option(None, "--hbm-tbps", help="HBM bandwidths, TB/s."),
    tflops: str | None = typer.Option(None, "--tflops", help="NPU dense bf16 TFLOP/s."),
    expansion_gbps: str | None = typer.Option(None, "--expansion-gbps", help="Tier bandwidths per NPU, GB/s (0: no tier)."),
    inter_gbps: str | None = typer.Option(None, "--inter-gbps", help="Inter-node bandwidths per NPU, GB/s."),
    intra_gbps: str | None = typer.Option(None, "--intra-gbps", help="Intra-node bandwidths per NPU, GB/s."),
    npus_per_node: str | None = typer.Option(None, "--npus-per-node", help="NPUs per node (nodes = 1,024 / this)."),
    npus: int = typer.Option(1024, "--npus", help="NPUs of every cluster."),
    space: str = typer.Option("3d", "--space", help="Strategies: 3d (TP x PP x DP, TP within a node) or comet-2d (COMET's MP x DP: TP of any degree, crossing nodes, PP 1)."),
    zero: str = typer.Option("0", "--zero", help="ZeRO stages searched (default 0: model x data parallelism without ZeRO; 0,1,2,3 adds ZeRO)."),
    pcm: bool = typer.Option(False, "--pcm", help="Also a PCM-backed tier (tri-level, 4 x 16 banks x 8 devices per NPU) for every cluster with a tier."),
    plot: Path | None = typer.Option(None, "--plot", help="Write the frontier plot (PNG) here."),
    top_k: int = typer.Option(0, "--top-k", help="Simulate each cluster's best K strategies and report the estimate's error (0: estimates only)."),
    jobs: int = typer.Option(1, "--jobs", help="Processes for the simulations."),
    max_every_rank: int = typer.Option(64, "--max-every-rank", help="Simulate strategies that need every rank (ZeRO-3, offload to a per-node or pooled tier) only up to this many NPUs."),
) -> None:
    """The best strategy on every cluster of a grid (COMET: Kadiyala, Rashidi et al. 2022)."""
    from dataclasses import replace

    from rich.table import Table

    from trainsim.cli.console import stdout_console
    from trainsim.optimize.comet import (
        DEFAULT_GRID,
        FULL_GRID,
        StudyInputs,
        cluster_of,
        expansion_gains,
        grid,
        plot_frontier,
        run_study,
        split_spread,
    )
    from trainsim.sweep.runner import run_items
    from trainsim.sweep.store import SweepStore

    if grid_name not in ("default", "full"):
        raise ConfigError(f"--grid {grid_name!r}: expected default or full", field="grid")
    axes: dict[str, tuple] = dict(DEFAULT_GRID if grid_name == "default" else FULL_GRID)
    for name, text, option in (("hbm_gb", hbm_gb, "--hbm-gb"), ("hbm_tbps", hbm_tbps, "--hbm-tbps"), ("tflops", tflops, "--tflops"),
                               ("expansion_gbps", expansion_gbps, "--expansion-gbps"), ("inter_gbps", inter_gbps, "--inter-gbps"),
                               ("intra_gbps", intra_gbps, "--intra-gbps")):  # fmt: skip
        values = _floats(text, option)
        if values is not None:
            axes[name] = values
    if npus_per_node is not None:
        per = _floats(npus_per_node, "--npus-per-node") or ()
        if any(p < 1 or p != int(p) or npus % int(p) for p in per):
            raise ConfigError(f"--npus-per-node {npus_per_node!r}: expected whole divisors of --npus {npus}", field="npus_per_node")
        axes["npus_per_node"] = tuple(int(p) for p in per)
    clusters = [replace(c, nodes=npus // c.npus_per_node) for c in grid(**axes)]
    if pcm:
        pcm_opts = (("banks", 16), ("channels", 4), ("devices", 8), ("load", 0.5), ("requests", 4000), ("scheme", "tri"))
        clusters += [replace(c, expansion_technology="pcm", pcm=pcm_opts, expansion_gbps=0.0) for c in clusters if c.expansion_gbps > 0]
        clusters = list(dict.fromkeys(clusters))
    zeros = tuple(int(z) for z in (_floats(zero, "--zero") or (0,)))
    if top_k < 0 or jobs < 1:
        raise ConfigError(f"--top-k {top_k} / --jobs {jobs}: expected top-k >= 0 and jobs >= 1", field="top_k")
    inputs = StudyInputs.named(space, zeros, model=model, global_batch=global_batch, top_k=top_k, max_every_rank=max_every_rank)
    console = stdout_console()
    store.parent.mkdir(parents=True, exist_ok=True)
    with SweepStore(store) as st:
        rows = run_study(clusters, st, inputs, progress=console.print, run=run_items if top_k else None, jobs=jobs)
    table = Table(title=f"{model}, batch {global_batch}, space {space}: best strategy per cluster (estimate)")
    for col in ("cluster", "step", "TP", "PP", "DP", "mb", "ZeRO", "recompute", "offload", "memory/NPU", "simulated", "error"):
        table.add_column(col, justify="right")
    for r in rows:
        c = cluster_of(r)
        if r["status"] != "ok":
            table.add_row(c.name, "infeasible", *[""] * 7, str(r.get("error") or "")[:60], "", "")
            continue
        off = ",".join(k for k, f in (("opt", "best_offload_optimizer"), ("w", "best_offload_params"), ("act", "best_offload_activations")) if r.get(f))
        table.add_row(c.name, f"{r['step_s']:.2f} s", str(r["best_tp"]), str(r["best_pp"]), str(r["best_dp"]), str(r["best_micro_batch"]),
                      str(r["best_zero"]), str(r["best_recompute"]), off, f"{r['memory_per_gpu_bytes'] / 1e9:.1f} GB",
                      "" if r.get("best_simulated_s") is None else f"{r['best_simulated_s']:.3f} s",
                      "" if r.get("best_estimate_error") is None else f"{r['best_estimate_error']:+.2%}")  # fmt: skip
    console.print(table)
    ok = [r["step_s"] for r in rows if r["status"] == "ok"]
    if ok:
        console.print(f"{len(ok)} of {len(rows)} clusters feasible; spread (slowest / fastest best step) {max(ok) / min(ok):.2f}x")
    spread = split_spread(rows)
    if spread is not None:
        (slow_c, slow_s, slow_t), (fast_c, fast_s, fast_t) = spread["slowest"], spread["fastest"]
        console.print(f"spread over every (cluster, TP x PP x DP split) that fits ({spread['cells']}): {spread['all']:.2f}x "
                      f"(slowest {slow_s} on {slow_c}: {slow_t:.2f} s; fastest {fast_s} on {fast_c}: {fast_t:.2f} s)")
        console.print(f"largest spread of one fixed split across clusters: {spread['fixed']:.2f}x "
                      f"({spread['fixed_split']}, fits on {spread['fixed_clusters']} clusters)")  # fmt: skip
    errors = [abs(r["max_abs_estimate_error"]) for r in rows if r.get("max_abs_estimate_error") is not None]
    if errors:
        sims = sum(int(r.get("simulated") or 0) for r in rows)
        console.print(f"estimate against simulation: {sims} strategies simulated, largest error {max(errors):.2%}")
    for g in expansion_gains(rows):
        gain = "infeasible with the tier" if g["gain"] is None else ("only with the tier" if g["gain"] == float("inf") else f"{g['gain']:.3f}x")
        console.print(f"gain from the tier on {g['cluster'].name}: {gain}")
    if plot is not None:
        plot.parent.mkdir(parents=True, exist_ok=True)
        console.print(f"frontier plot: {plot_frontier(rows, plot)}")
