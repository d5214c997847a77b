"""`trainsim generate`: per-rank Chakra workloads from a model and a parallelization strategy.

Writes ``PREFIX.<rank>.et`` (through the Chakra writer) and ``PREFIX.comm_groups.json``
(ASTRA-sim's ``--comm-group-configuration``) with ``--out``; simulates the step in memory on a
native platform file with ``--platform`` (one data-parallel replica when it stands for all:
``system/symmetry/replica.py``), with a progress bar on a terminal; prints the per-stage memory
and graph sizes, the step's per-rank times and where the step goes (``report/step_breakdown.py``).
With ``--platform``, ``--json`` is the result document of ``trainsim run --json`` (every rank;
``trainsim report`` reads it) plus the generator's summary, and ``--trace`` the same timeline.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import typer

from trainsim.cli.app import app
from trainsim.cli.force import force_option, honours_force
from trainsim.cli.outputs import check_output_file, check_output_prefix
from trainsim.cli.writes import output_errors, write_output
from trainsim.errors import ConfigError
from trainsim.system.modes import backend_names
from trainsim.units import GB, human_time, precise_time

if TYPE_CHECKING:
    from rich.console import Console

    from trainsim.compute import DeviceSpec
    from trainsim.config.types import Platform
    from trainsim.report.breakdown import RankBreakdown
    from trainsim.system.symmetry.replica import GeneratedRun
    from trainsim.workload.generate import GeneratedWorkload


def _sizes(text: str | None) -> tuple[int, ...] | None:
    if not text:
        return None
    try:
        sizes = tuple(int(x) for x in text.replace("x", ",").split(",") if x.strip())
    except ValueError:
        raise ConfigError(f"{text!r} is not a list of integers like 8,16", field="--network-dims") from None
    if not sizes or min(sizes) < 1:
        raise ConfigError(f"{text!r}: every dimension needs a positive size", field="--network-dims")
    return sizes


def _device(name: str | None, platform: Platform | None) -> DeviceSpec:
    """``--device``: a device of the platform file or of the built-in table; without it the
    platform's only device, else the A100."""
    from trainsim.compute import get_device

    own = platform.devices if platform is not None else {}
    if name is None:
        if len(own) == 1:
            return next(iter(own.values()))  # type: ignore[no-any-return]
        name = "A100"
    return get_device(name, own)


def _stage_layers(text: str | None, option: str = "--layers-per-stage") -> tuple[int, ...]:
    if not text:
        return ()
    try:
        return tuple(int(x) for x in text.split(",") if x.strip())
    except ValueError:
        raise ConfigError(f"{text!r} is not a list of integers like 7,8,8,7", field=option) from None


F = TypeVar("F", bound=Callable[..., Any])


def _collector_paused(command: F) -> F:
    """Run the command with the cyclic garbage collector off (``engine.collector_paused``,
    imported when the command runs: registering the commands imports nothing heavy).
    Generation, simulation and reports make millions of lasting objects and almost no
    cycles; after a 1T-parameter step its report phase spent more time in collections than
    in its own work."""

    @functools.wraps(command)
    def run(*args: Any, **kwargs: Any) -> Any:
        from trainsim.engine import collector_paused

        with collector_paused():
            return command(*args, **kwargs)

    return run  # type: ignore[return-value]


@app.command("generate")
@honours_force
@_collector_paused
def generate_command(
    model: str = typer.Argument(..., help="Zoo model name (e.g. gpt3-175b, llama3-70b, resnet50) or a Hugging Face config.json."),
    out: str | None = typer.Option(None, "--out", "-o", help="Output prefix: writes PREFIX.<rank>.et and PREFIX.comm_groups.json."),
    platform_path: Path | None = typer.Option(None, "--platform", help="Native platform YAML: simulate the generated step on it, in memory (no files needed)."),
    backend: str = typer.Option("congestion_unaware", "--backend", help=f"Network backend of the simulation: {', '.join(backend_names())}."),
    every_rank: bool = typer.Option(False, "--every-rank", help="Simulate every rank, even where one data-parallel replica stands for all."),
    tp: int = typer.Option(1, "--tp", help="Tensor-parallel degree."),
    pp: int = typer.Option(1, "--pp", help="Pipeline-parallel degree."),
    dp: int = typer.Option(1, "--dp", help="Data-parallel degree."),
    ep: int = typer.Option(1, "--ep", help="Expert-parallel degree (divides DP)."),
    cp: int = typer.Option(1, "--cp", help="Context-parallel degree (sequence split over CP ranks; K/V all-gathered per layer)."),
    first_stage_layers: int = typer.Option(0, "--first-stage-layers", help="Layers on the first pipeline stage (0 = as the others); the middle stages share the rest evenly."),
    last_stage_layers: int = typer.Option(0, "--last-stage-layers", help="Layers on the last pipeline stage (0 = as the others)."),
    layers_per_stage: str | None = typer.Option(None, "--layers-per-stage", help="Layers of every pipeline stage, e.g. 7,8,8,7."),
    layers_per_chunk: str | None = typer.Option(None, "--layers-per-chunk", help="Interleaved: layers of every model chunk (PP x virtual stages, chunk c of stage s at c x PP + s)."),
    sp: bool = typer.Option(False, "--sp/--no-sp", help="Sequence parallelism (with TP)."),
    zero: int = typer.Option(0, "--zero", help="ZeRO stage 0-3."),
    fsdp: bool = typer.Option(False, "--fsdp", help="FSDP full sharding (generated as ZeRO-3)."),
    recompute: str = typer.Option("none", "--recompute", help="Activation recomputation: none, selective, full."),
    micro_batch: int = typer.Option(1, "--micro-batch", help="Sequences (samples) per micro-batch."),
    global_batch: int = typer.Option(0, "--global-batch", help="Sequences per step (0 = micro-batch x DP)."),
    schedule: str = typer.Option("1f1b", "--schedule", help="Pipeline schedule: gpipe, 1f1b, interleaved."),
    virtual_stages: int = typer.Option(1, "--virtual-stages", help="Model chunks per rank (interleaved schedule)."),
    order: str = typer.Option("tp-cp-ep-dp-pp", "--order", help="Rank order of the groups, innermost first."),
    seq: int = typer.Option(0, "--seq", help="Sequence length (0 = the model's)."),
    device: str | None = typer.Option(None, "--device", help="Device for compute times and the memory check: a built-in one or one of the platform file's devices (default: the platform's only device, else A100)."),
    kernel_times: Path | None = typer.Option(None, "--kernel-times", help="YAML of measured kernel times overriding the roofline."),
    network_dims: str | None = typer.Option(None, "--network-dims", help="Network dimension sizes, e.g. 8,128: sets involved_dim."),
    overlap_grad_reduce: bool = typer.Option(False, "--overlap-grad-reduce", help="Reduce each layer's gradients right after its last backward."),
    offload_optimizer: bool = typer.Option(False, "--offload-optimizer", help="Keep the optimizer states in the platform's memory tier (its memory section; needs --platform to simulate)."),
    offload_params: bool = typer.Option(False, "--offload-params", help="Keep the layers' weights in the platform's memory tier, loaded per layer and pass (ZeRO-Infinity style)."),
    offload_activations: bool = typer.Option(False, "--offload-activations", help="Store saved activations in the platform's memory tier between forward and backward (PP > 1)."),
    granularity: str = typer.Option("block", "--granularity", help="block (compute between communications fused) or op."),
    memory_check: bool = typer.Option(True, "--memory-check/--no-memory-check", help="Fail when a rank does not fit the device."),
    json_path: Path | None = typer.Option(None, "--json", help="Write a JSON summary (memory per stage, node counts); with --platform, the result as `trainsim run --json` writes it (`trainsim report` reads it)."),
    trace_path: Path | None = typer.Option(None, "--trace", help="With --platform: write a Perfetto / Chrome-trace JSON timeline of the step."),
    expand: bool = typer.Option(False, "--expand", help="In the timeline, one process per rank (default: identical ranks folded)."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Print nothing but errors."),
    force: bool = force_option(),
) -> None:
    """Generate one training step's per-rank workload graphs; write them (--out), simulate them
    on a platform (--platform), or both."""
    from trainsim import budget
    from trainsim.compute import OperatorTimer, load_kernel_times
    from trainsim.workload.generate import Parallelism, generate
    from trainsim.workload.models import get_model

    if out is None and platform_path is None:
        raise ConfigError(
            "nothing to do: no --out and no --platform",
            hint="--out PREFIX writes the rank files, --platform FILE simulates the step; give either or both",
        )
    if backend not in backend_names():
        raise ConfigError(f"unknown network backend {backend!r}; expected one of {', '.join(backend_names())}", field="--backend")
    if out is not None:
        check_output_prefix(out, "--out")
        world = tp * pp * dp
        budget.check("files", world + 1, f"--out writes {world:,} rank files and the groups", way_under="use smaller --tp, --pp or --dp", field="--out")
    check_output_file(json_path, "--json")
    check_output_file(trace_path, "--trace")
    if trace_path is not None and platform_path is None:
        raise ConfigError("--trace needs a simulation", field="--trace", hint="add --platform FILE to simulate the generated step")
    start = time.perf_counter()
    platform = None
    sizes = _sizes(network_dims)
    if platform_path is not None:
        from trainsim.config.platform import load_platform

        platform = load_platform(platform_path)
        if sizes is None:
            sizes = platform.network.sizes
        elif tuple(sizes) != tuple(platform.network.sizes):
            raise ConfigError(
                f"--network-dims {network_dims} differs from the platform's dimensions "
                f"{','.join(str(s) for s in platform.network.sizes)}",
                file=str(platform_path),
                field="--network-dims",
            )
    spec = get_model(model, seq=seq or None)
    par = Parallelism(
        tp=tp,
        pp=pp,
        dp=dp,
        ep=ep,
        cp=cp,
        first_stage_layers=first_stage_layers,
        last_stage_layers=last_stage_layers,
        layers_per_stage=_stage_layers(layers_per_stage),
        layers_per_chunk=_stage_layers(layers_per_chunk, "--layers-per-chunk"),
        sp=sp,
        zero=zero,
        fsdp=fsdp,
        recompute=recompute,  # type: ignore[arg-type]
        micro_batch=micro_batch,
        global_batch=global_batch,
        schedule=schedule,  # type: ignore[arg-type]
        virtual_stages=virtual_stages,
        order=order,
        overlap_grad_reduce=overlap_grad_reduce,
        granularity=granularity,  # type: ignore[arg-type]
        offload_optimizer=offload_optimizer,
        offload_params=offload_params,
        offload_activations=offload_activations,
    )
    timer = OperatorTimer(_device(device, platform), overrides=load_kernel_times(kernel_times) if kernel_times else None)
    workload = generate(spec, par, timer, network_sizes=sizes, check_memory=memory_check)
    if par.offloads and platform is not None:
        from trainsim.workload.generate.memory import check_offload

        if platform.memory.mode == "NO_MEMORY_EXPANSION":
            raise ConfigError("offloading (--offload-optimizer/-params/-activations) needs a memory tier: the platform's memory section has mode none", file=str(platform_path), field="memory.mode")
        from trainsim.memory.expansion import resolve_memory

        check_offload(workload.memory, resolve_memory(platform.memory).capacity_per_npu(par.world))
    generated = time.perf_counter() - start
    summary: dict[str, Any] = {
        **workload.info,
        "group_names": workload.group_names,
        "memory": [m.to_dict() for m in workload.memory],
        "generate_s": generated,
    }
    if out is not None:
        from trainsim.workload.chakra import write_workload

        Path(out).parent.mkdir(parents=True, exist_ok=True)
        with output_errors(out, "--out"):
            write_workload(out, workload.graphs)
            workload.write_comm_groups(f"{out}.comm_groups.json")
        summary.update(prefix=out, comm_groups=f"{out}.comm_groups.json", write_s=time.perf_counter() - start - generated)
    run = None
    rows: list[RankBreakdown] = []
    if platform is not None:
        from trainsim.cli.run_cmd import ProgressDisplay, result_document

        if trace_path is not None and expand:  # refused before the step is simulated, not after
            from trainsim.report.perfetto import check_trace_size

            per_stage = workload.info["nodes_per_stage"]
            check_trace_size(sum(per_stage[stage] for stage in workload.stage_of_rank), par.world)
        from trainsim.report.breakdown import breakdown
        from trainsim.report.step_breakdown import roles_of
        from trainsim.system.symmetry.replica import simulate_generated

        with ProgressDisplay(enabled=not quiet) as display:
            run = simulate_generated(platform, workload, backend=backend, replica_slice=not every_rank, progress=display.update)
        rows = breakdown(run.result, roles_of(workload))
        flop_per_gpu = workload.executed_flop() / par.world
        if json_path is not None:  # (the collective table and utilization are for the document alone)
            summary.update(result_document(run.result, platform.network, rows, compat_astra=platform.compat == "astra"))
        summary["inputs"] = {"platform": str(platform_path), "model": model, "backend": backend, "device": device, "parallelism": asdict(par)}
        summary["simulation"] = {
            **run.to_dict(),
            "platform": str(platform_path),
            "backend": backend,
            "flop_per_gpu": flop_per_gpu,
            "flops_per_gpu": flop_per_gpu / run.makespan_s if run.makespan_s > 0 else None,
        }
        if trace_path is not None:
            from trainsim.report.perfetto import write_trace

            with output_errors(trace_path, "--trace"):
                write_trace(trace_path, run.result, expand=expand)
    total = time.perf_counter() - start
    summary["total_s"] = total
    if json_path is not None:
        from trainsim.report.document import dumps

        write_output(json_path, dumps(summary) + "\n", "--json")
    if not quiet:
        _print(workload, spec.name, par.world, timer.name)
        from trainsim.cli.console import stdout_console

        console = stdout_console()
        if out is not None:
            console.print(f"wrote {par.world} rank files {out}.<rank>.et and {out}.comm_groups.json in {human_time(summary['write_s'])}")
        if run is not None:
            _print_run(console, run, summary["simulation"])
            _print_breakdown(console, rows, run.makespan_s)
        console.print(f"total {human_time(total)} (generation {human_time(generated)})")


def _print(workload: GeneratedWorkload, name: str, world: int, device: str) -> None:
    from rich.table import Table

    from trainsim.cli.console import stdout_console

    console = stdout_console()
    table = Table(title=f"{name} on {world} ranks ({device}): {workload.info['microbatches']} micro-batches per step")
    for col in ("stage", "nodes", "compute", "weights GB", "grads GB", "optimizer GB", "activations GB", "total GB"):
        table.add_column(col, justify="right")
    for stage, mem in enumerate(workload.memory):
        nodes = workload.info["nodes_per_stage"][stage] if stage < len(workload.info["nodes_per_stage"]) else 0
        comp = workload.info["compute_s_per_stage"][min(stage, len(workload.info["compute_s_per_stage"]) - 1)]
        table.add_row(
            str(stage), str(nodes), human_time(comp),
            f"{mem.weights / GB:.2f}", f"{mem.gradients / GB:.2f}", f"{mem.optimizer / GB:.2f}",
            f"{(mem.activations + mem.transient) / GB:.2f}", f"{mem.total / GB:.2f}",
        )  # fmt: skip
    console.print(table)


def _print_run(console: Console, run: GeneratedRun, simulation: dict[str, Any]) -> None:
    from trainsim.cli.run_cmd import print_summary

    title = f"step {precise_time(run.makespan_s)}, {run.ranks_simulated} of {run.world} ranks simulated"
    print_summary(console, run.ranks, run.makespan_s, title=title)
    if run.mode == "replica slice":
        console.print(
            (f"data-parallel replica 0 ({run.replica_ranks} ranks) stands for every replica" if run.replica_period == 1 else
             f"data-parallel replicas 0-{run.replica_period - 1} ({run.replica_ranks} ranks) stand for every replica "
             f"(replica k repeats replica k mod {run.replica_period}: its rings cross the network unevenly)")
            + ("; one rank per pipeline stage for its tensor-parallel peers" if run.ranks_simulated < run.replica_ranks else ""),
            highlight=False,
            soft_wrap=True,
        )
    if run.why_every_rank:
        console.print(f"every rank simulated: {run.why_every_rank}", highlight=False, soft_wrap=True)
    rate = simulation["flops_per_gpu"]
    if rate is not None:
        console.print(f"{rate / 1e12:.1f} TFLOP/s per GPU executed (recomputation included)")
    console.print(f"simulated in {human_time(run.wall_s)}, {run.events:,} events")


def _print_breakdown(console: Console, rows: list[RankBreakdown], step_s: float, max_rows: int = 20) -> None:
    """Where the step goes, per class of ranks (the slowest-finishing first) and for the step
    as a whole (each category's mean over ranks, in % of the step); docs/breakdown.md defines
    the categories. Categories that are zero on every rank are left out."""
    from rich.table import Table

    from trainsim.report.step_breakdown import label, step_mean

    if not rows or not rows[0].step:
        return
    keys = [k for k in rows[0].step if any(r.step[k] > 0 for r in rows)]
    table = Table(title=f"where the step goes: {human_time(step_s)} per rank, communication exposed only")
    table.add_column("ranks", justify="right")
    for key in keys:
        table.add_column(label(key), justify="right")
    shown = sorted(rows, key=lambda r: -r.finish_s)
    for row in shown[:max_rows]:
        table.add_row(_rank_label(row.ranks), *(human_time(row.step[k]) for k in keys))
    mean = step_mean([r.step for r in rows], [len(r.ranks) for r in rows])
    table.add_row("step", *(f"{mean[k] / step_s:.1%}" if step_s > 0 else "-" for k in keys), style="bold")
    left = [label(k) for k in rows[0].step if k not in keys]
    notes = [f"{len(shown) - max_rows} more classes of ranks not shown (--json has every one)"] if len(shown) > max_rows else []
    notes += [f"0 on every rank: {', '.join(left)}"] if left else []
    notes += ["step: mean over ranks, % of the step; docs/breakdown.md defines each category"]
    table.caption = "; ".join(notes)
    console.print(table)


def _rank_label(ranks: list[int]) -> str:
    from trainsim.cli.run_cmd import _rank_ranges

    return _rank_ranges(sorted(ranks))
