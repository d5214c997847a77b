"""`trainsim generate`: per-rank Chakra workloads from a model and a parallelization strategy.

Writes ``PREFIX.<rank>.et`` (through the Chakra writer) and ``PREFIX.comm_groups.json``
(ASTRA-sim's ``--comm-group-configuration``), and prints the per-stage memory and graph sizes.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import typer

from trainsim.cli.app import app
from trainsim.cli.outputs import check_output_file, check_output_prefix
from trainsim.errors import ConfigError
from trainsim.units import GB, human_time


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


@app.command("generate")
def generate_command(
    model: str = typer.Argument(..., help="Zoo model name (e.g. gpt3-175b, llama3-70b, resnet50) or a Hugging Face config.json."),
    out: str = typer.Option(..., "--out", "-o", help="Output prefix: writes PREFIX.<rank>.et and PREFIX.comm_groups.json."),
    tp: int = typer.Option(1, "--tp", help="Tensor-parallel degree."),
    pp: int = typer.Option(1, "--pp", help="Pipeline-parallel degree."),
    dp: int = typer.Option(1, "--dp", help="Data-parallel degree."),
    ep: int = typer.Option(1, "--ep", help="Expert-parallel degree (divides DP)."),
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
    device: str = typer.Option("A100", "--device", help="Device for compute times and the memory check."),
    kernel_times: Path | None = typer.Option(None, "--kernel-times", help="YAML of measured kernel times overriding the roofline."),
    network_dims: str | None = typer.Option(None, "--network-dims", help="Network dimension sizes, e.g. 8,128: sets involved_dim."),
    overlap_grad_reduce: bool = typer.Option(False, "--overlap-grad-reduce", help="Reduce each layer's gradients right after its last backward."),
    granularity: str = typer.Option("block", "--granularity", help="block (compute between communications fused) or op."),
    memory_check: bool = typer.Option(True, "--memory-check/--no-memory-check", help="Fail when a rank does not fit the device."),
    json_path: Path | None = typer.Option(None, "--json", help="Write a JSON summary (memory per stage, node counts)."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Print nothing but errors."),
) -> None:
    """Generate one training step's per-rank workload graphs."""
    from trainsim.compute import OperatorTimer, load_kernel_times
    from trainsim.workload.chakra import write_workload  # lands with the Chakra writer
    from trainsim.workload.generate import Parallelism, generate
    from trainsim.workload.models import get_model

    check_output_prefix(out, "--out")
    check_output_file(json_path, "--json")
    start = time.perf_counter()
    spec = get_model(model, seq=seq or None)
    par = Parallelism(
        tp=tp,
        pp=pp,
        dp=dp,
        ep=ep,
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
    )
    timer = OperatorTimer(device, overrides=load_kernel_times(kernel_times) if kernel_times else None)
    workload = generate(spec, par, timer, network_sizes=_sizes(network_dims), check_memory=memory_check)
    generated = time.perf_counter() - start
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    write_workload(out, workload.graphs)
    workload.write_comm_groups(f"{out}.comm_groups.json")
    total = time.perf_counter() - start
    summary = {
        **workload.info,
        "prefix": out,
        "comm_groups": f"{out}.comm_groups.json",
        "group_names": workload.group_names,
        "memory": [m.to_dict() for m in workload.memory],
        "generate_s": generated,
        "total_s": total,
    }
    if json_path is not None:
        json_path.write_text(json.dumps(summary, indent=1) + "\n")
    if not quiet:
        from rich.console import Console
        from rich.table import Table

        console = Console()
        table = Table(title=f"{spec.name} on {par.world} ranks ({device}): {workload.info['microbatches']} micro-batches per step")
        for col in ("stage", "nodes", "compute", "weights GB", "grads GB", "optimizer GB", "activations GB", "total GB"):
            table.add_column(col, justify="right")
        for stage, mem in enumerate(workload.memory):
            nodes = workload.info["nodes_per_stage"][stage] if stage < len(workload.info["nodes_per_stage"]) else 0
            comp = workload.info["compute_s_per_stage"][min(stage, len(workload.info["compute_s_per_stage"]) - 1)]
            table.add_row(
                str(stage), str(nodes), human_time(comp),
                f"{mem.weights / GB:.2f}", f"{mem.gradients / GB:.2f}", f"{mem.optimizer / GB:.2f}",
                f"{(mem.activations + mem.transient) / GB:.2f}", f"{mem.total / GB:.2f}",
            )
        console.print(table)
        console.print(f"wrote {par.world} rank files {out}.<rank>.et and {out}.comm_groups.json in {human_time(total)} (generation {human_time(generated)})")
