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
from typing import TYPE_CHECKING

import typer

from trainsim import budget
from trainsim.cli.app import app
from trainsim.cli.force import force_option, honours_force
from trainsim.cli.outputs import PLOT_SUFFIXES, check_output_file
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
            json_path.write_text(text + "\n")
    if not quiet:
        print_result(console, result, [t.bytes_on_dims() for t in traffic])
    if write_network is not None:
        from trainsim.optimize.verify import simulation_network, write_astra_network

        write_astra_network(write_network, simulation_network(net, result.bandwidths_gbps))
    if plot is not None:
        points = budget_sweep(net, pairs, _budgets(budgets, float(result.bandwidths_gbps.sum())), constraint,
                              objective=objective, cost_coeffs=coeffs)
        from trainsim.optimize.plot import plot_sweep

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
