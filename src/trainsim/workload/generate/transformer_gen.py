"""Per-rank training-step graphs of a transformer under TP/SP/PP/DP/EP/ZeRO
(DESIGN.md, workload layer: generators).

For each pipeline stage one template graph is emitted (:mod:`.emitter`), then specialized per
rank. A stage runs its schedule's passes (:mod:`.schedule`) in order; each pass is the chunk's
forward or backward program, compiled once from :mod:`trainsim.workload.models.ops`:

- compute between two communication points is one COMP node (``granularity="block"``) or one
  node per operator (``"op"``); its duration is the sum of the timer's operator times, and
  ``num_ops``/``tensor_size`` are the summed FLOPs and bytes (for ASTRA-sim's roofline mode);
- context parallelism: each rank holds ``seq / cp`` tokens; per layer and pass an all-gather
  of K and V over the CP group (reduce-scatter of their gradients backward), blocking;
- pipelines may split layers unevenly (``Parallelism.chunk_layers``: first/last stage counts,
  per-stage or per-chunk lists);
- tensor-parallel collectives block the next compute (Megatron-LM: 2 all-reduces per block per
  pass, or reduce-scatter/all-gather with SP); expert all-to-alls likewise;
- recomputation: ``full`` re-runs each layer's forward (with its collectives) before its
  backward (Megatron ``--recompute-method uniform``, 1 layer per checkpoint); ``selective``
  re-runs the attention core (Korthikanti et al. 2022, §5);
- stages exchange activations and gradients with SEND/RECV (Megatron SC'21 §4.1 scatter/gather:
  with TP and no SP each TP rank sends 1/t of the tensor and the receiver all-gathers);
- after the last backward: tied-embedding gradient all-reduce between first and last stage,
  data-parallel gradient all-reduce (ZeRO-1/2: reduce-scatter, then the optimizer step on the
  shard and an all-gather of the updated weights), expert gradients over the expert-DP group;
  ``overlap_grad_reduce`` issues each layer's reduction right after its last backward instead;
- ZeRO-3/FSDP: per layer and pass of every micro-batch, an all-gather of the layer's weights,
  and after each backward a reduce-scatter of its gradients (Rajbhandari et al. 2020, §5.3;
  PyTorch FSDP, Zhao et al. 2023, §3.2-3.4); the gathers of the next ``zero3_prefetch`` layers
  are issued when a layer starts (after the compute before it: a bounded prefetch), all of
  them queued on one stream per rank in issue order; ``reshard_after_forward=False`` (FSDP
  SHARD_GRAD_OP) keeps the forward's gathered weights for the backward.

Sizes in bytes, times in seconds.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from trainsim.enums import CommType, NodeType
from trainsim.workload.generate.emitter import NEXT, PREV, RECOMPUTE_PREFIX, Emitter, Template
from trainsim.workload.generate.memory import layer_activation_bytes, stage_params
from trainsim.workload.generate.parallel import Parallelism
from trainsim.workload.generate.schedule import stage_schedule
from trainsim.workload.models.ops import (
    Item,
    Op,
    Shard,
    block_items,
    embedding_items,
    head_items,
)
from trainsim.workload.models.transformer import TransformerSpec

OPTIMIZER_BYTES_PER_PARAM = 28.0  # Adam: read+write fp32 weight, m, v (24) + read grad (2) + write bf16 weight (2)


@dataclass(frozen=True)
class CompStep:
    name: str
    ops: tuple[Op, ...]


@dataclass(frozen=True)
class CollStep:
    name: str
    comm_type: int
    size: int
    role: str


@dataclass(frozen=True)
class Marker:
    """Layer boundary inside a pass program: ``start`` or ``done`` of layer ``layer``."""

    what: str
    layer: int


Step = CompStep | CollStep | Marker


def _compile(items: Sequence[tuple[str, Item]], direction: str, selective: bool) -> list[Step]:
    """Turn labelled items into steps for one pass (``"fwd"`` or ``"bwd"``)."""
    steps: list[Step] = []
    ops: list[Op] = []
    label = ""

    def flush() -> None:
        if ops:
            steps.append(CompStep(f"{label}.{ops[0].name}" + (f"..{ops[-1].name}" if len(ops) > 1 else ""), tuple(ops)))
            ops.clear()

    seq = items if direction == "fwd" else list(reversed(items))
    recomputed_core = False
    for lab, item in seq:
        if isinstance(item, Op):
            if not ops:
                label = lab
            if direction == "fwd":
                ops.append(item)
            else:
                if selective and item.core and not recomputed_core:
                    core = [it for lb, it in items if lb == lab and isinstance(it, Op) and it.core]
                    ops.extend(Op(RECOMPUTE_PREFIX + c.name, c.kind, c.flops, c.nbytes, c.shape) for c in core)
                    recomputed_core = True
                if not item.core:
                    recomputed_core = False
                ops.append(item.backward())
        else:
            ctype, size = (item.fwd, item.fwd_size) if direction == "fwd" else (item.bwd, item.bwd_size)
            if ctype is None or size <= 0:
                continue
            flush()
            steps.append(CollStep(f"{lab}.{item.name}.{direction}", int(ctype), int(size), item.group))
    flush()
    return steps


def _merge(steps: Sequence[Step], keep_markers: bool) -> list[Step]:
    """Merge adjacent compute steps (and drop markers unless ``keep_markers``)."""
    out: list[Step] = []
    for step in steps:
        if isinstance(step, Marker):
            if keep_markers:
                out.append(step)
            continue
        if isinstance(step, CompStep) and out and isinstance(out[-1], CompStep):
            prev = out[-1]
            out[-1] = CompStep(f"{prev.name.split('..')[0]}..{step.ops[-1].name}", prev.ops + step.ops)
        else:
            out.append(step)
    return out


def _split_ops(steps: Sequence[Step]) -> list[Step]:
    """``granularity="op"``: one compute step per operator."""
    out: list[Step] = []
    for step in steps:
        if isinstance(step, CompStep):
            prefix = step.name.split(".")[0]
            out.extend(CompStep(f"{prefix}.{op.name}", (op,)) for op in step.ops)
        else:
            out.append(step)
    return out


class TransformerGenerator:
    """Builds the stage templates of one (model, strategy) pair."""

    def __init__(self, spec: TransformerSpec, par: Parallelism, timer: object | None, *, groups: dict[str, int] | None = None) -> None:
        par.check_transformer(spec.heads, spec.kv_heads, spec.ffn, spec.layers, spec.experts, spec.seq)
        self.spec = spec
        self.par = par
        self.timer = timer
        self.group_sizes = groups or {}
        self.shard = Shard(par.micro_batch, spec.seq, par.tp, par.sp, par.ep, par.act_bytes, par.cp)
        self.chunk_ranges = par.chunk_layers(spec.layers)  # layers of each global chunk
        self.stage_layer_counts = par.stage_layers(spec.layers)
        self.n_global_chunks = par.chunks
        zero3 = par.zero >= 3
        self.keep_markers = zero3 or par.overlap_grad_reduce or par.offload_params
        sel = par.recompute == "selective" and not spec.fused_attention
        block = [("L", it) for it in block_items(spec, self.shard)]
        self.block_fwd = _compile(block, "fwd", False)
        # full recomputation's forward: the same steps, ops named as recomputation
        self.block_recompute = [
            CompStep(s.name, tuple(replace(op, name=RECOMPUTE_PREFIX + op.name) for op in s.ops)) if isinstance(s, CompStep) else s
            for s in self.block_fwd
        ]
        self.block_bwd = _compile(block, "bwd", sel)
        self.emb_fwd = _compile([("emb", it) for it in embedding_items(spec, self.shard)], "fwd", False)
        self.emb_bwd = _compile([("emb", it) for it in embedding_items(spec, self.shard)], "bwd", False)
        self.head_fwd = _compile([("head", it) for it in head_items(spec, self.shard)], "fwd", False)
        self.head_bwd = _compile([("head", it) for it in head_items(spec, self.shard)], "bwd", False)
        self._programs: dict[tuple[int, str], list[Step]] = {}

    # -- parameter counts per rank (counts, not bytes) ---------------------------------------

    def layer_params(self) -> float:
        """Dense parameters of one layer on one rank (TP-sharded)."""
        return self.spec.dense_params_per_layer() / self.par.tp

    def layer_expert_params(self) -> float:
        return self.spec.expert_params_per_layer() / self.par.ep

    def embedding_params(self) -> float:
        spec = self.spec
        return spec.vocab * spec.hidden / self.par.tp + (spec.seq * spec.hidden if spec.learned_positions else 0)

    def head_params(self) -> float:
        spec = self.spec
        return spec.norm_params() + (0 if spec.tied_embeddings else spec.vocab * spec.hidden / self.par.tp)

    def stage_params(self, stage: int) -> tuple[float, float]:
        """(dense, expert) parameters held by one rank of ``stage`` (:func:`.memory.stage_params`)."""
        return stage_params(self.spec, self.par, stage)

    # -- programs ----------------------------------------------------------------------------

    def program(self, gchunk: int, direction: str) -> list[Step]:
        """Steps of one pass of global chunk ``gchunk``; layer markers carry global layer ids."""
        key = (gchunk, direction)
        cached = self._programs.get(key)
        if cached is not None:
            return cached
        layers = self.chunk_ranges[gchunk]
        steps: list[Step] = []
        recompute_full = self.par.recompute == "full"
        if direction == "fwd":
            if gchunk == 0:
                steps += self.emb_fwd
            for layer in layers:
                steps.append(Marker("start", layer))
                steps += [_relabel(s, layer) for s in self.block_fwd]
                steps.append(Marker("done", layer))
            if gchunk == self.n_global_chunks - 1:
                steps += self.head_fwd
        else:
            if gchunk == self.n_global_chunks - 1:
                steps += self.head_bwd
            for layer in reversed(layers):
                steps.append(Marker("start", layer))
                if recompute_full:
                    steps += [_relabel(s, layer, "recompute") for s in self.block_recompute]
                steps += [_relabel(s, layer) for s in self.block_bwd]
                steps.append(Marker("done", layer))
            if gchunk == 0:
                steps += self.emb_bwd
        steps = _merge(steps, self.keep_markers)
        if self.par.granularity == "op":
            steps = _split_ops(steps)
        self._programs[key] = steps
        return steps

    # -- emission ----------------------------------------------------------------------------

    def p2p_bytes(self) -> tuple[int, bool]:
        """(bytes each rank sends between stages, whether the receiver all-gathers over TP)."""
        par = self.par
        full = self.shard.tokens * self.spec.hidden * par.act_bytes
        if par.tp > 1 and par.sp:
            return full // par.tp, False
        if par.tp > 1 and par.pp_scatter_gather:
            return full // par.tp, True
        return full, False

    def _tag(self, mb: int, gchunk: int, backward: bool) -> int:
        return (mb * self.n_global_chunks + gchunk) * 2 + int(backward)

    def stage_template(self, stage: int, timer: object | None = None) -> Template:
        par = self.par
        em = Emitter(f"generated:{self.spec.name}:stage{stage}", timer if timer is not None else self.timer, par.precision)
        m = par.microbatches
        v = par.virtual_stages
        schedule = stage_schedule(par.schedule if par.pp > 1 or v > 1 else "1f1b", stage, par.pp, m, v)
        last_bwd = {}
        for kind, mb, chunk in schedule:
            if kind == "B":
                last_bwd[chunk] = mb
        p2p_size, gather = self.p2p_bytes()
        tp_on = par.tp > 1
        zero3 = par.zero >= 3 and par.dp_cp > 1
        dp_on = par.dp_cp > 1
        edp_size = self.group_sizes.get("edp", 1)
        overlap = par.overlap_grad_reduce and dp_on and not zero3
        grad_coll = CommType.REDUCE_SCATTER if par.zero >= 1 else CommType.ALL_REDUCE
        layer_grad = self.layer_params() * par.grad_bytes
        layer_w_shard = self.layer_params() * par.param_bytes / par.dp_cp
        expert_grad = self.layer_expert_params() * par.grad_bytes
        ag_ids: dict[tuple[str, int, int], int] = {}
        load_ids: dict[tuple[str, int, int], int] = {}  # offload_params: each layer's weight load
        layer_copy = int(self.layer_params() * par.param_bytes / (par.dp_cp if zero3 else 1))
        act_store, act_load = self._activation_offload(schedule)
        act_store_ids: dict[tuple[int, int], int] = {}
        act_load_ids: dict[tuple[int, int], int] = {}
        copies: list[tuple[str, int, int, int, int]] = []  # activation transfers not yet emitted

        def flush_copies() -> None:
            """Emit the waiting activation stores and loads (in order): after the weight loads
            a pass needs first, so that they queue behind those on the copy engine."""
            gate = [em.tail] if em.tail is not None else []
            for what, mb_, chunk_, size_, after in copies:
                if what == "store":
                    act_store_ids[(mb_, chunk_)] = em.memory(f"mb{mb_}.c{chunk_}.activations_store", NodeType.MEM_STORE_NODE, size_, [after], copy_engine=True)
                else:
                    deps = [act_store_ids[(mb_, chunk_)], *gate]
                    act_load_ids[(mb_, chunk_)] = em.memory(f"mb{mb_}.c{chunk_}.activations_load", NodeType.MEM_LOAD_NODE, size_, deps, copy_engine=True)
            copies.clear()
        dp_stream: list[int | None] = [None]  # the last ZeRO-3 collective on the DP group
        gather_bwd = par.reshard_after_forward

        def dp_collective(name: str, ctype: int, size: int, deps: list[int], *, chained: bool = False) -> int:
            """A ZeRO-3 collective on the DP group, queued behind the previous one: one NCCL
            stream per process group (PyTorch ProcessGroupNCCL), so gathers and reduce-scatters
            of a rank run one at a time, in issue order."""
            stream = [dp_stream[0]] if dp_stream[0] is not None else []
            nid = em.collective(name, ctype, size, "dp", deps + stream, chained=chained)
            dp_stream[0] = nid
            return nid

        def issue_ag(direction: str, mb: int, layer: int, chunk_layers: range) -> None:
            """All-gather ``layer``'s weights, issued now: after the compute emitted so far
            (the layers before the one starting), which bounds the prefetch."""
            if layer not in chunk_layers or (direction, mb, layer) in ag_ids:
                return
            gate = [em.tail] if em.tail is not None else []
            loaded = load_ids.get((direction, mb, layer))
            gate += [loaded] if loaded is not None else []
            ag_ids[(direction, mb, layer)] = dp_collective(f"mb{mb}.L{layer}.{direction}.zero3_allgather", CommType.ALL_GATHER, int(layer_w_shard), gate)

        def issue_load(direction: str, mb: int, layer: int, chunk_layers: range) -> None:
            """Load ``layer``'s weights from the tier (``offload_params``), issued now, on the
            copy engine: after the compute emitted so far, as a ZeRO-3 gather is."""
            if layer not in chunk_layers or (direction, mb, layer) in load_ids:
                return
            gate = [em.tail] if em.tail is not None else []
            load_ids[(direction, mb, layer)] = em.memory(f"mb{mb}.L{layer}.{direction}.weights_load", NodeType.MEM_LOAD_NODE, layer_copy, gate, copy_engine=True)

        pending: list[int] = []
        kept = layer_activation_bytes(self.spec, par)[0]
        for index, (kind, mb, chunk) in enumerate(schedule):
            gchunk = chunk * par.pp + stage
            direction = "fwd" if kind == "F" else "bwd"
            chunk_layers = self.chunk_ranges[gchunk]
            prefix = f"mb{mb}" + (f".c{chunk}" if v > 1 else "")
            ahead = schedule[index + 1] if index + 1 < len(schedule) else None
            if ahead is not None and ahead[0] == "B" and (ahead[1], ahead[2]) in act_load:
                # prefetch the next backward's activations while this pass runs
                size = int(kept * len(self.chunk_ranges[ahead[2] * par.pp + stage]))
                copies.append(("load", ahead[1], ahead[2], size, -1))
            weight_loads = par.offload_params and (direction == "fwd" or gather_bwd or not zero3)
            if copies and not weight_loads:
                flush_copies()
            # receive the input of this pass
            if kind == "F" and gchunk > 0:
                r = em.recv(f"{prefix}.recv_act", p2p_size, PREV, self._tag(mb, gchunk - 1, False))
                pending.append(r)
                if gather:
                    pending.append(em.collective(f"{prefix}.act_allgather", CommType.ALL_GATHER, p2p_size, "tp", pending))
                    pending = []
            if kind == "B" and gchunk < self.n_global_chunks - 1:
                r = em.recv(f"{prefix}.recv_grad", p2p_size, NEXT, self._tag(mb, gchunk + 1, True))
                pending.append(r)
                if gather:
                    pending.append(em.collective(f"{prefix}.grad_allgather", CommType.ALL_GATHER, p2p_size, "tp", pending))
                    pending = []
            if kind == "B" and (mb, chunk) in act_load:
                if (mb, chunk) not in act_load_ids:
                    flush_copies()
                pending.append(act_load_ids[(mb, chunk)])
            steps = self.program(gchunk, direction)
            for step in steps:
                if isinstance(step, Marker):
                    gathers = zero3 and (direction == "fwd" or gather_bwd)
                    loads = weight_loads
                    if step.what == "start" and (gathers or loads):
                        # the layer's gather (and weight load), and those of the next
                        # zero3_prefetch layers of the pass, issued when the layer starts (FSDP:
                        # limit_all_gathers and BACKWARD_PRE prefetch; DeepSpeed: the prefetch
                        # bucket; ZeRO-Infinity fetches offloaded parameters the same way)
                        order = list(chunk_layers) if direction == "fwd" else list(reversed(chunk_layers))
                        i = order.index(step.layer)
                        for later in order[i : i + 1 + par.zero3_prefetch]:
                            if loads:
                                issue_load(direction, mb, later, chunk_layers)
                            if gathers:
                                issue_ag(direction, mb, later, chunk_layers)
                        pending.append(ag_ids[(direction, mb, step.layer)] if gathers else load_ids[(direction, mb, step.layer)])
                        if copies:
                            flush_copies()
                    elif step.what == "done" and direction == "bwd":
                        if zero3:
                            dp_collective(f"{prefix}.L{step.layer}.zero3_grad_reducescatter", CommType.REDUCE_SCATTER, int(layer_grad), [em.tail] if em.tail is not None else [])
                        elif overlap and mb == last_bwd[chunk]:
                            em.collective(f"L{step.layer}.grad_{'reducescatter' if par.zero else 'allreduce'}", grad_coll, int(layer_grad), "dp", [em.tail] if em.tail is not None else [], chained=False)
                        if (zero3 or overlap and mb == last_bwd[chunk]) and expert_grad and edp_size > 1:
                            em.collective(f"{prefix}.L{step.layer}.expert_grad_allreduce", grad_coll, int(expert_grad), "edp", [em.tail] if em.tail is not None else [], chained=False)
                    continue
                if isinstance(step, CompStep):
                    em.compute(f"{prefix}.{step.name}", step.ops, pending)
                    pending = []
                else:
                    if step.role == "tp" and not tp_on:
                        continue
                    if step.role in ("ep", "cp") and self.group_sizes.get(step.role, 1) <= 1:
                        continue
                    em.collective(f"{prefix}.{step.name}", step.comm_type, step.size, step.role, pending)
                    pending = []
            # hand the output on
            tail = [em.tail] if em.tail is not None else []
            if kind == "F" and (mb, chunk) in act_store:
                copies.append(("store", mb, chunk, int(kept * len(chunk_layers)), tail[0]))
            if kind == "F" and gchunk < self.n_global_chunks - 1:
                em.send(f"{prefix}.send_act", p2p_size, NEXT, self._tag(mb, gchunk, False), tail)
            if kind == "B" and gchunk > 0:
                em.send(f"{prefix}.send_grad", p2p_size, PREV, self._tag(mb, gchunk, True), tail)

        if copies:
            flush_copies()
        # -- after the last backward: embedding, data-parallel and expert gradient sync -------
        last_compute = em.tail
        dense, expert = self.stage_params(stage)
        grad_deps: list[int] = []
        if par.pp > 1 and self.spec.tied_embeddings and stage in (0, par.pp - 1):
            emb_bytes = int(self.spec.vocab * self.spec.hidden / par.tp * par.grad_bytes)
            grad_deps.append(em.collective("embedding_grad_allreduce", CommType.ALL_REDUCE, emb_bytes, "emb"))
        if dp_on and not zero3 and not overlap:
            grad_deps.append(em.collective(f"grad_{'reducescatter' if par.zero else 'allreduce'}", grad_coll, int(dense * par.grad_bytes), "dp"))
        elif dp_on and not zero3:
            rest = dense - self.stage_layer_counts[stage] * self.layer_params()  # embedding / head
            if rest > 0:
                grad_deps.append(em.collective(f"grad_{'reducescatter' if par.zero else 'allreduce'}.rest", grad_coll, int(rest * par.grad_bytes), "dp"))
        elif zero3:
            rest = dense - self.stage_layer_counts[stage] * self.layer_params()
            if rest > 0:
                grad_deps.append(dp_collective("zero3_grad_reducescatter.rest", CommType.REDUCE_SCATTER, int(rest * par.grad_bytes), [], chained=True))
        if expert and edp_size > 1 and not (zero3 or overlap):
            grad_deps.append(em.collective("expert_grad_allreduce", grad_coll, int(expert * par.grad_bytes), "edp"))
        shard = par.dp_cp if par.zero >= 1 else 1
        local = dense / shard + expert / (edp_size if par.zero >= 1 else 1)
        opt = Op("optimizer", "optimizer", 10.0 * local, OPTIMIZER_BYTES_PER_PARAM * local, (int(local),))
        if par.offload_optimizer:  # load the states beside the gradient sync, store them after the step
            states = int(par.optimizer_bytes * local)
            load = em.memory("optimizer_states_load", NodeType.MEM_LOAD_NODE, states, [last_compute] if last_compute is not None else [])
            opt_node = em.compute("optimizer_step", (opt,), [*grad_deps, load])
            em.memory("optimizer_states_store", NodeType.MEM_STORE_NODE, states, [opt_node])
        else:
            em.compute("optimizer_step", (opt,), grad_deps)
        if dp_on and par.zero in (1, 2):
            em.collective("param_allgather", CommType.ALL_GATHER, int(dense * par.param_bytes / par.dp_cp), "dp")
        return em.build()

    def _activation_offload(self, schedule: Sequence[tuple[str, int, int]]) -> tuple[set[tuple[int, int]], set[tuple[int, int]]]:
        """(micro-batch, chunk) pairs whose activations go to the tier after the forward and
        come back before the backward (``offload_activations``): those whose backward is not
        the stage's next pass (the last stage of 1F1B keeps everything: it runs each backward
        right after its forward)."""
        if not self.par.offload_activations:
            return set(), set()
        out: set[tuple[int, int]] = set()
        for index, (kind, mb, chunk) in enumerate(schedule):
            if kind != "F":
                continue
            after = schedule[index + 1] if index + 1 < len(schedule) else None
            if after != ("B", mb, chunk):
                out.add((mb, chunk))
        return out, out


def _relabel(step: Step, layer: int, prefix: str = "") -> Step:
    """Give a block step its layer label (``L7``), optionally under ``recompute``."""
    lab = f"L{layer}" if not prefix else f"L{layer}.{prefix}"
    if isinstance(step, CompStep):
        return CompStep(lab + step.name[1:], step.ops)
    if isinstance(step, CollStep):
        return CollStep(lab + step.name[1:], step.comm_type, step.size, step.role)
    return step
