"""`trainsim optimize bandwidth`: LIBRA's per-dimension bandwidth optimization.

Prints the optimum beside the equal split of the same total (bandwidths in GB/s = 1e9 B/s per
NPU, times, costs), the constraints (binding ones with their shadow prices) and the certified
optimality gap; ``--plot`` draws time and cost across a range of total budgets, ``--json``
writes the result object, ``--write-network`` the optimum as an ASTRA-sim network YAML and
``--verify`` simulates the (single, text) workload at both allocations.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from trainsim import budget
from trainsim.cli.app import app
from trainsim.cli.force import force_option, honours_force
from trainsim.cli.outputs import PLOT_SUFFIXES, check_output_file
from trainsim.cli.writes import output_errors, write_output
from trainsim.errors import ConfigError
from trainsim.units import human_time

if TYPE_CHECKING:
    import numpy as np
    from rich.console import Console

    from trainsim.optimize.bandwidth import BandwidthResult

OBJECTIVES = ("perf", "perf_per_cost")
"""``trainsim.optimize.bandwidth.OBJECTIVES``, for ``--help`` without importing the optimizer
(scipy); tests/cli/test_startup.py checks that the two agree."""

optimize_app = typer.Typer(help="Optimize a platform design (LIBRA bandwidth allocation).", no_args_is_help=True)
app.add_typer(optimize_app, name="optimize")


def _budgets(spec: str | None, total: float) -> list[float]:
    import numpy as np

    if spec is None:
        return [float(x) for x in np.linspace(0.25 * total, 2.0 * total, 12)]
    try:
        start, stop, count = (float(x) for x in spec.split(":"))
    except ValueError:
        start = stop = count = float("nan")
    if not (0 < start <= stop < float("inf") and count >= 1 and count.is_integer()):
        raise ConfigError(f"--budgets {spec!r}: expected START:STOP:COUNT in GB/s with 0 < START <= STOP, COUNT >= 1, e.g. 100:1000:10", field="budgets")
    budget.check("points", count, f"--budgets {spec}: {count:,.0f} optimizer runs", way_under="use a smaller COUNT", field="--budgets")
    return [float(x) for x in np.linspace(start, stop, int(count))]


@optimize_app.command("bandwidth")
@honours_force
def bandwidth_command(
    network: Path = typer.Option(..., "--network", help="LIBRA network YAML (Topology, NpusCount, CostDimension)."),
    workload: list[str] = typer.Option(..., "--workload", help="ASTRA-sim 1.0 text workload (.txt) or Chakra ET prefix; repeat for several."),
    constraint: list[str] = typer.Option(..., "--constraint", help="Linear constraint over B0.. and sum (GB/s), e.g. 'sum == 500'; repeat."),
    communicator: list[Path] = typer.Option([], "--communicator", help="LIBRA communicator YAML, one per text workload, in order."),
    cost: Path | None = typer.Option(None, "--cost", help="LIBRA cost model YAML ($ per GB/s)."),
    objective: str = typer.Option("perf", "--objective", help=f"One of {', '.join(OBJECTIVES)}."),
    weight: list[float] = typer.Option([], "--weight", help="Weight of each workload, in order (default 1)."),
    no_pipeline: bool = typer.Option(False, "--no-pipeline", help="A collective takes the sum of its dimensions' times, not the max."),
    plot: Path | None = typer.Option(None, "--plot", help="Write a plot of time and cost across the total budget (PNG, SVG, PDF)."),
    budgets: str | None = typer.Option(None, "--budgets", help="Budget range for --plot, START:STOP:COUNT GB/s (default 0.25x..2x the optimum's total)."),
    json_path: Path | None = typer.Option(None, "--json", help="Write the result as JSON ('-' for stdout)."),
    write_network: Path | None = typer.Option(None, "--write-network", help="Write the optimum as an ASTRA-sim network YAML."),
    verify: bool = typer.Option(False, "--verify", help="Simulate the workload at the optimum and at the equal split."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Print nothing but errors."),
    force: bool = force_option(),
) -> None:
    """Per-dimension bandwidths that minimize step time (or time x cost) under constraints."""
    from trainsim.cli.console import stdout_console
    from trainsim.optimize.api import budget_sweep, load_workloads
    from trainsim.optimize.bandwidth import optimize_bandwidth
    from trainsim.optimize.cost import cost_coefficients
    from trainsim.optimize.libra_inputs import load_communicator, load_cost_model, load_network

    if verify and (len(workload) != 1 or not workload[0].endswith(".txt")):
        raise ConfigError("--verify simulates one text workload", field="verify")
    check_output_file(json_path, "--json")
    check_output_file(write_network, "--write-network")
    check_output_file(plot, "--plot", suffixes=PLOT_SUFFIXES)
    if budgets is not None:
        _budgets(budgets, 1.0)  # its errors and its budget before the optimization, not after
    net = load_network(network)
    traffic = load_workloads(net, workload, list(communicator) or None, pipelined=not no_pipeline)
    if weight and len(weight) != len(traffic):
        raise ConfigError(f"{len(weight)} weights for {len(traffic)} workloads", field="weight")
    pairs = list(zip(traffic, weight or [1.0] * len(traffic), strict=True))
    coeffs = None if cost is None else cost_coefficients(net, load_cost_model(cost))
    result = optimize_bandwidth(net, pairs, constraint, objective=objective, cost_coeffs=coeffs)
    console = stdout_console()
    if json_path is not None:
        text = json.dumps(result.to_dict(), indent=1)
        if str(json_path) == "-":
            typer.echo(text)
            quiet = True
        else:
            write_output(json_path, text + "\n", "--json")
    if not quiet:
        print_result(console, result, [t.bytes_on_dims() for t in traffic])
    if write_network is not None:
        from trainsim.optimize.verify import simulation_network, write_astra_network

        with output_errors(write_network, "--write-network"):
            write_astra_network(write_network, simulation_network(net, result.bandwidths_gbps))
    if plot is not None:
        points = budget_sweep(net, pairs, _budgets(budgets, float(result.bandwidths_gbps.sum())), constraint,
                              objective=objective, cost_coeffs=coeffs)
        from trainsim.optimize.plot import plot_sweep

        with output_errors(plot, "--plot"):
            plot_sweep(points, plot, title=", ".join(t.name for t in traffic) + f" on {'x'.join(map(str, net.sizes))}")
    if verify:
        from trainsim.optimize.verify import verify_allocation
        from trainsim.workload.astra_text import parse_text_workload

        comm = load_communicator(communicator[0], net) if communicator else None
        from trainsim.optimize.libra_inputs import Communicator

        check = verify_allocation(net, parse_text_workload(workload[0]).layers, comm or Communicator.full(net),
                                  result.bandwidths_gbps, result.equal_bandwidths_gbps, pipelined=not no_pipeline)
        if not quiet:
            console.print(
                f"simulated: optimum {human_time(check.sim_time_s)}, equal split {human_time(check.sim_baseline_s)}, "
                f"speed-up {check.sim_speedup:.3f}x (model {check.model_speedup:.3f}x, {check.speedup_error:+.1%})"
            )


def print_result(console: Console, result: BandwidthResult, dim_bytes: list[np.ndarray]) -> None:
    import numpy as np
    from rich.table import Table

    table = Table(title=f"LIBRA bandwidths ({result.objective})")
    for name in ("dimension", "optimum GB/s", "equal split GB/s", "bytes per rank per step"):
        table.add_column(name, justify="right")
    total_bytes = np.sum(dim_bytes, axis=0)
    for d, name in enumerate(result.dims):
        table.add_row(name, f"{result.bandwidths_gbps[d]:.2f}", f"{result.equal_bandwidths_gbps[d]:.2f}", f"{total_bytes[d]:.4g}")
    console.print(table)
    equal_note = "" if result.equal_feasible else " (breaks the constraints)"
    console.print(f"step time: optimum {human_time(result.time_s)}, equal split {human_time(result.equal_time_s)}{equal_note}, "
                  f"speed-up {result.speedup:.4f}x")
    if result.cost is not None and result.equal_cost is not None:
        console.print(f"network cost: optimum ${result.cost:,.0f}, equal split ${result.equal_cost:,.0f}")
    cons = Table(title="constraints")
    for name in ("constraint", "value", "holds", "binding", "shadow price (s per unit)"):
        cons.add_column(name, justify="right")
    for c in result.constraints:
        price = "" if c.marginal_s is None or not c.binding else f"{c.marginal_s + 0.0:.4g}"
        cons.add_row(c.text, f"{c.activity:.4f}", "yes" if c.holds else "NO", "yes" if c.binding else "", price)
    console.print(cons)
    console.print(f"certified optimality gap: {result.gap:.2e}")


def _int_list(text: str | None, name: str, least: int = 1) -> tuple[int, ...] | None:
    if text is None:
        return None
    try:
        values = tuple(int(x) for x in text.split(","))
    except ValueError:
        raise ConfigError(f"{name} {text!r}: expected comma-separated integers, e.g. 1,2,4,8", field=name.lstrip("-")) from None
    if any(v < least for v in values):
        raise ConfigError(f"{name} {text!r}: expected integers >= {least}", field=name.lstrip("-"))
    return values


@optimize_app.command("strategy")
def strategy_command(
    model: str = typer.Argument(..., help="Model name (trainsim generate's) or a Hugging Face config.json."),
    gpus: int = typer.Option(..., "--gpus", help="GPUs the job uses (the first N ranks of the platform)."),
    platform: Path = typer.Option(..., "--platform", help="Native platform YAML (may have more GPUs than the job)."),
    global_batch: int = typer.Option(..., "--global-batch", help="Sequences per step (fixed)."),
    device: str = typer.Option("A100", "--device", help="Device of the operator timer (compute/devices.yaml)."),
    seq: int | None = typer.Option(None, "--seq", help="Sequence length (default: the model's)."),
    top_k: int = typer.Option(3, "--top-k", help="Simulate the best K candidates of the estimate (0: none)."),
    store: Path | None = typer.Option(None, "--store", help="Sweep store (SQLite) for the rows; a re-run resumes from it."),
    jobs: int = typer.Option(1, "--jobs", help="Processes for the simulations."),
    max_every_rank: int = typer.Option(64, "--max-every-rank", help="Simulate strategies that need every rank (ZeRO-3/FSDP, overlapped reduction, offload to a per-node or pooled tier) only up to this many GPUs."),
    tp: str | None = typer.Option(None, "--tp", help="TP degrees to search (default: every divisor of --gpus)."),
    pp: str | None = typer.Option(None, "--pp", help="PP degrees to search (default: every divisor)."),
    micro_batch: str | None = typer.Option(None, "--micro-batch", help="Micro-batch sizes (default: every divisor of the per-replica batch)."),
    zero: str = typer.Option("0,1,2,3", "--zero", help="ZeRO stages to search (3 = FSDP)."),
    recompute: str = typer.Option("none,selective,full", "--recompute", help="Recomputation modes to search."),
    schedules: str = typer.Option("1f1b,gpipe,interleaved", "--schedules", help="Pipeline schedules to search."),
    no_sp: bool = typer.Option(False, "--no-sp", help="Do not search sequence parallelism."),
    overlap: bool = typer.Option(False, "--overlap-grad-reduce", help="Also search overlapped gradient reduction (simulated on every rank)."),
    offload: bool | None = typer.Option(None, "--offload/--no-offload", help="Search optimizer-state offload to the platform's memory tier (default: when it has one)."),
    offload_params: bool | None = typer.Option(None, "--offload-params/--no-offload-params", help="Search weight offload to the memory tier, loaded per layer and pass (default: when it has one)."),
    offload_activations: bool | None = typer.Option(None, "--offload-activations/--no-offload-activations", help="Search activation offload to the memory tier, PP > 1 (default: when it has one)."),
    rows: int = typer.Option(15, "--rows", help="Ranked rows to print."),
    json_path: Path | None = typer.Option(None, "--json", help="Write the ranked rows and rejections as JSON ('-' for stdout)."),
) -> None:
    """The fastest way to split MODEL over --gpus GPUs of a platform: every TP/PP/DP/micro-batch/
    ZeRO/SP/recompute/schedule, pruned by memory, ranked by an analytical estimate, the best simulated."""
    from trainsim.cli.console import stdout_console
    from trainsim.optimize.strategy.search import SearchInputs, check_inputs, search
    from trainsim.optimize.strategy.space import SearchSpace
    from trainsim.sweep.runner import run_items
    from trainsim.sweep.store import SweepStore

    check_output_file(json_path, "--json")
    if jobs < 1 or top_k < 0:
        raise ConfigError(f"--jobs {jobs} / --top-k {top_k}: expected jobs >= 1 and top-k >= 0", field="jobs")
    space = SearchSpace(
        tp=_int_list(tp, "--tp"), pp=_int_list(pp, "--pp"), micro_batch=_int_list(micro_batch, "--micro-batch"),
        zero=_int_list(zero, "--zero", 0) or (0,), recompute=tuple(recompute.split(",")), sp=(False,) if no_sp else (False, True),
        schedules=tuple(schedules.split(",")), overlap=(False, True) if overlap else (False,),
        offload=_both(offload), offload_params=_both(offload_params), offload_activations=_both(offload_activations),
    )  # fmt: skip
    inputs = SearchInputs(model, gpus, global_batch, str(platform), device, seq)
    check_inputs(inputs)
    console = stdout_console()
    quiet = json_path is not None and str(json_path) == "-"
    say = (lambda _m: None) if quiet else (lambda m: console.print(m))
    if store is not None:
        store.parent.mkdir(parents=True, exist_ok=True)
    sweep_store = SweepStore(store) if store is not None else None
    try:
        result = search(inputs, space=space, top_k=top_k, store=sweep_store, run=run_items, jobs=jobs, max_every_rank=max_every_rank, progress=say)
    finally:
        if sweep_store is not None:
            sweep_store.close()
    if json_path is not None:
        text = json.dumps(_strategy_json(result, rows), indent=1)
        if quiet:
            typer.echo(text)
            return
        json_path.write_text(text + "\n")
    _print_strategies(console, result, rows)


def _both(flag: bool | None) -> tuple[bool, ...] | None:
    """A ``--x/--no-x`` search flag as the values searched (None: the search's default)."""
    return None if flag is None else ((False, True) if flag else (False,))


def _offload_label(params: dict, memory: Any) -> str:
    """What a strategy keeps in the memory tier, in GB per GPU (the ranking's offload column)."""
    from trainsim.units import GB

    weights, acts = memory.offloaded_weights, memory.offloaded_activations
    parts = [(params.get("offload_optimizer"), "optimizer", memory.offloaded - weights - acts),
             (params.get("offload_params"), "weights", weights), (params.get("offload_activations"), "activations", acts)]  # fmt: skip
    return ", ".join(f"{name} {b / GB:.1f} GB" for on, name, b in parts if on)


def _strategy_label(params: dict) -> str:
    sched = str(params["schedule"]) + (f" v{params['virtual_stages']}" if int(params["virtual_stages"]) > 1 else "")
    return sched if int(params["pp"]) > 1 else "-"


def _strategy_json(result, rows: int) -> dict:  # type: ignore[no-untyped-def]
    return {
        "enumerated": result.enumerated, "valid": result.valid, "fit": len(result.rows),
        "simulated_now": result.simulated_now, "not_simulated_every_rank": len(result.skipped), "simulated_reused": result.simulated_reused, "wall_s": result.wall_s,
        "max_abs_estimate_error": result.max_abs_error(),
        "rows": [
            {**r.params, "estimate_s": r.estimate.step_s, "memory_per_gpu_bytes": r.memory.total, "simulated_s": r.simulated_s,
             "estimate_error": r.error, **r.metrics, **({"simulation_error": r.sim_error} if r.sim_error else {})}
            for r in result.rows[: max(rows, len(result.simulated))]
        ],
        "rejected": {k: {"count": v.count, "example": v.example} for k, v in result.rejections.items()},
    }  # fmt: skip


def _print_strategies(console: Console, result, rows: int) -> None:  # type: ignore[no-untyped-def]
    from rich.table import Table

    from trainsim.units import GB

    console.print(
        f"{result.enumerated:,} combinations enumerated, {result.valid:,} valid for the model, {len(result.rows):,} fit in "
        f"{result.capacity_bytes / GB:.0f} GB; estimated in {result.wall_s.get('estimate', 0):.1f} s"
        + (f"; job on the first {result.rows[0].parallelism.world} of {result.platform_npus} NPUs" if result.rows and result.platform_npus > result.rows[0].parallelism.world else "")
    )  # fmt: skip
    table = Table(title="strategies, best estimate first")
    for name in ("#", "TP", "PP", "DP", "micro-batch", "schedule", "SP", "ZeRO", "recompute", "offload", "memory/GPU", "estimate", "simulated", "error", "TFLOP/s/GPU"):
        table.add_column(name, justify="right")
    shown = [r for i, r in enumerate(result.rows) if i < rows or r.simulated_s is not None or r.sim_error]
    for r in shown:
        p = r.params
        sim = "" if r.simulated_s is None else human_time(r.simulated_s)
        if r.sim_error:
            sim = f"failed: {r.sim_error[:40]}"
        table.add_row(
            str(result.rows.index(r) + 1), str(p["tp"]), str(p["pp"]), str(p["dp"]), str(p["micro_batch"]), _strategy_label(p),
            "yes" if p["sp"] else "", str(p["zero"]), str(p["recompute"]),
            _offload_label(p, r.memory), f"{r.memory.total / GB:.1f} GB", human_time(r.estimate.step_s),
            sim, "" if r.error is None else f"{r.error:+.2%}", "" if "tflops_per_gpu" not in r.metrics else f"{r.metrics['tflops_per_gpu']:.1f}",
        )  # fmt: skip
    console.print(table)
    sims = result.simulated
    if sims:
        best = result.best
        console.print(
            f"simulated {len(sims)} ({result.simulated_now} now, {result.simulated_reused} from the store); estimate error "
            f"max {result.max_abs_error():.2%}; fastest simulated: TP {best.params['tp']} PP {best.params['pp']} DP {best.params['dp']} "
            f"micro-batch {best.params['micro_batch']}, {human_time(best.simulated_s)}"
        )  # fmt: skip
    if result.skipped:
        console.print(
            f"not simulated: {len(result.skipped)} strategies ranked above the simulated ones need every rank "
            f"(ZeRO-3/FSDP, overlapped reduction or offload to a shared tier; the replica slice does not apply) on more than --max-every-rank GPUs; "
            f"best of them: TP {result.skipped[0].params['tp']} PP {result.skipped[0].params['pp']} ZeRO {result.skipped[0].params['zero']}, "
            f"estimate {human_time(result.skipped[0].estimate.step_s)}"
        )  # fmt: skip
    if result.rejections:
        rej = Table(title="rejected")
        for name in ("reason", "strategies", "closest (example)"):
            rej.add_column(name)
        for reason, r in sorted(result.rejections.items(), key=lambda kv: -kv[1].count):
            extra = f"; up to {r.most_gb:.1f} GB" if r.most_gb else ""
            rej.add_row(reason, f"{r.count:,}", r.example + extra)
        console.print(rej)
