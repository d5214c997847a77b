"""The analytical step estimate of the strategy search (DESIGN.md, optimize layer: strategy
search). Times in seconds, sizes in bytes.

Per strategy, in closed form from the generator's own programs (``TransformerGenerator``: the
per-layer forward, backward and recomputation steps with their TP collectives, the embedding
and head) priced by the same operator timer, and the collectives and sends priced by
:mod:`.comm` on the platform's per-dimension bandwidths:

- per micro-batch, a stage's forward ``F_s`` and backward ``B_s`` are its layers' compute plus
  their tensor-parallel collectives (blocking in the generated graph, so exposed in full),
  plus the embedding on stage 0 and the head on the last stage; under ZeRO-3 (one stream for
  the gathers and reduce-scatters, on the rank's one GPU communication slot) each layer waits
  for the next layer's weight all-gather (prefetched one layer ahead), its backward for the
  previous layer's gradient reduce-scatter too, beyond the compute before the layer's first TP
  collective (issued after them, it waits for the slot: with sequence parallelism only the
  layer norm hides them; without TP the whole layer's compute), and each chunk pass for its
  first gather and its backward's last reduce-scatter in full (nothing computes before them);
- a ring over part of the machine whose edges cost unevenly (a TP group spanning nodes, a
  data-parallel ring with several members per node) is priced per layer in its steady state,
  where the members have drifted apart and the slow edges' ports stay busy
  (:meth:`.comm.CommModel.ring_pass_s`), not from a common start;
- pipeline sends: each chunk a micro-batch crosses costs one message plus, with Megatron's
  scatter/gather (SC'21 §4.1), the receiver's TP all-gather, forward and backward: ``X = 2 v
  (send + all-gather)`` per micro-batch and stage;
- the pipeline: ``T_pipe = m max_s(F_s + B_s + X) + (sum_s(F_s + B_s + X) - max_s(...)) / v``:
  ``m`` micro-batches through the slowest stage plus the fill and drain of the others, shrunk
  by the ``v`` virtual stages of the interleaved schedule (Narayanan et al. SC'21 §2.2: bubble
  ``(p - 1) / v`` of a micro-batch's forward and backward; GPipe's bubble is the same,
  Huang et al. 2019);
- after its last backward, stage ``s`` (which ends ``s`` chunk-backwards before stage 0) runs
  the tied-embedding all-reduce, the data-parallel gradient all-reduce (ZeRO-1/2:
  reduce-scatter, the optimizer step on the shard, the parameter all-gather) and the optimizer
  step (a memory-bound kernel of 28 bytes per parameter); an offloaded optimizer's state load
  and store hold the GPU communication slot, so they add to the synchronization:
  ``T = max_s(T_pipe - s (B_s / v + send + all-gather) + tail_s)``.

The estimate's error against simulation is measured by the search on the candidates it
simulates and by ``tests/optimize/strategy/test_estimate.py``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from trainsim.config.types import Platform
from trainsim.enums import CommType
from trainsim.errors import ConfigError
from trainsim.memory.expansion import resolve_platform
from trainsim.optimize.strategy.comm import CommModel
from trainsim.workload.generate import Parallelism
from trainsim.workload.generate.memory import layer_activation_bytes, stage_params
from trainsim.workload.generate.schedule import in_flight
from trainsim.workload.generate.transformer_gen import (
    OPTIMIZER_BYTES_PER_PARAM,
    CollStep,
    CompStep,
    TransformerGenerator,
)
from trainsim.workload.models.transformer import TransformerSpec

AR, AG, RS = int(CommType.ALL_REDUCE), int(CommType.ALL_GATHER), int(CommType.REDUCE_SCATTER)


@dataclass(frozen=True)
class Pass:
    """One program of the generator for one micro-batch: compute seconds and its TP collectives."""

    compute_s: float
    collectives: tuple[tuple[int, int], ...]  # (comm type, bytes), on the TP group
    tp_s: float  # those collectives' seconds on the TP group of ranks 0 .. TP-1
    lead_s: float  # compute before the first TP collective (all of it when there is none)
    segments: tuple[tuple[float, float], ...] = ()  # (compute before, seconds) per TP collective
    tail_s: float = 0.0  # compute after the last TP collective


@dataclass(frozen=True)
class Blocks:
    """The passes of one (TP, SP, micro-batch, recomputation) choice."""

    layer_fwd: Pass
    layer_bwd: Pass  # recomputation included
    emb_fwd: Pass
    emb_bwd: Pass
    head_fwd: Pass
    head_bwd: Pass
    recompute_s: float  # recomputed compute per layer backward
    p2p_bytes: int
    p2p_gather: bool


@dataclass(frozen=True)
class Estimate:
    """The estimated step and where it goes (the busiest stage's view)."""

    step_s: float
    compute_s: float
    tp_s: float
    p2p_s: float
    bubble_s: float
    dp_s: float


class StepEstimator:
    """Estimates the step of dense-transformer strategies on one platform and device."""

    def __init__(
        self, spec: TransformerSpec, timer: object, platform: Platform, precision: str = "bf16"
    ) -> None:
        self.spec = spec
        self.timer = timer
        self.precision = precision
        self.comm = CommModel(resolve_platform(platform))  # a PCM-backed tier priced by its model
        self._blocks: dict[tuple[int, bool, int, str], Blocks] = {}
        self._op_s: dict[object, float] = {}
        self._tails: dict[tuple[int, ...], float] = {}

    def _op_time(self, op: object) -> float:
        t = self._op_s.get(op)
        if t is None:
            t = float(self.timer.op_time(op.kind, op.flops, op.nbytes, op.shape, self.precision))  # type: ignore[attr-defined]
            self._op_s[op] = t
        return t

    def _pass(self, steps: Sequence[object], tp: int) -> Pass:
        compute = 0.0
        since = 0.0  # compute since the last TP collective
        lead: float | None = None
        colls: list[tuple[int, int]] = []
        timed: list[tuple[float, int, int]] = []  # (compute before, comm type, bytes)
        for step in steps:
            if isinstance(step, CompStep):
                t = sum(self._op_time(op) for op in step.ops)
                compute += t
                since += t
            elif isinstance(step, CollStep) and step.role == "tp" and tp > 1:
                if lead is None:
                    lead = compute
                colls.append((step.comm_type, step.size))
                timed.append((since, step.comm_type, step.size))
                since = 0.0
        members = tuple(range(tp))
        if timed and self.comm.uneven_ring(members):
            # the members drift apart over the passes: the steady state (CommModel.ring_pass_s)
            tp_s = self.comm.ring_pass_s(tuple(timed), since, members) - compute
        else:
            tp_s = sum(self.comm.collective(t, size, members) for t, size in colls)
        segments = tuple((c, self.comm.collective(t, size, members)) for c, t, size in timed)
        return Pass(compute, tuple(colls), tp_s, compute if lead is None else lead, segments, since)

    def blocks(self, tp: int, sp: bool, micro_batch: int, recompute: str) -> Blocks:
        key = (tp, sp, micro_batch, recompute)
        hit = self._blocks.get(key)
        if hit is not None:
            return hit
        par = Parallelism(tp=tp, sp=sp, micro_batch=micro_batch, recompute=recompute)  # type: ignore[arg-type]
        gen = TransformerGenerator(self.spec, par, None)
        bwd_steps = ([*gen.block_recompute] if recompute == "full" else []) + [*gen.block_bwd]
        recompute_s = sum(
            self._op_time(op)
            for s in bwd_steps
            if isinstance(s, CompStep)
            for op in s.ops
            if op.name.startswith("recompute")
        )
        size, gather = gen.p2p_bytes()
        hit = Blocks(
            self._pass(gen.block_fwd, tp),
            self._pass(bwd_steps, tp),
            self._pass(gen.emb_fwd, tp),
            self._pass(gen.emb_bwd, tp),
            self._pass(gen.head_fwd, tp),
            self._pass(gen.head_bwd, tp),
            recompute_s,
            size,
            gather,
        )
        self._blocks[key] = hit
        return hit

    def _drifted_stall(self, p: Pass, colls: tuple[tuple[float, int, int], ...], dp_group: tuple[int, ...]) -> float:
        """Seconds a layer's pass waits for the ZeRO-3 collectives ``colls`` on an uneven DP
        ring in the steady state: they start with the layer, its first TP collective waits for
        them (only ``lead_s`` of its compute hides them, :func:`_slot_stall`), the rest of the
        layer follows."""
        rest = p.compute_s + p.tp_s - p.lead_s
        return max(0.0, self.comm.ring_pass_s(colls, rest, dp_group) - p.compute_s - p.tp_s)

    @staticmethod
    def _tp_s(p: Pass, members: tuple[int, ...]) -> float:
        return p.tp_s

    def estimate(self, par: Parallelism) -> Estimate:
        spec = self.spec
        tp, pp, dp, v, m = par.tp, par.pp, par.dp, par.virtual_stages, par.microbatches
        b = self.blocks(tp, par.sp, par.micro_batch, par.recompute)
        tp_group = tuple(range(tp))
        stride = tp * dp  # ranks between pipeline stages (order tp-cp-ep-dp-pp)
        layers = spec.layers // pp
        f_tp = self._tp_s(b.layer_fwd, tp_group)
        b_tp = self._tp_s(b.layer_bwd, tp_group)
        f_layer = b.layer_fwd.compute_s + f_tp
        b_layer = b.layer_bwd.compute_s + b_tp
        zero3 = par.zero >= 3 and dp > 1
        dp_group = tuple(d * tp for d in range(dp))
        layer_params = spec.dense_params_per_layer() / tp
        f_pass = b_pass = 0.0  # per chunk pass: the ZeRO-3 collectives no compute hides
        load = 0.0  # offload_params: one layer's weight load from the tier, on the copy engine
        if par.offload_params:
            copy = layer_params * par.param_bytes / (dp if zero3 else 1)
            load = self.tier_access_s(int(copy), par.world)
        if zero3 or load:
            ag_bytes, rs_bytes = int(layer_params * par.param_bytes / dp), int(layer_params * par.grad_bytes)
            ag = self.comm.collective(AG, ag_bytes, dp_group) if zero3 else 0.0
            rs = self.comm.collective(RS, rs_bytes, dp_group) if zero3 else 0.0
            ag_b = ag if par.reshard_after_forward or not zero3 else 0.0
            load_b = load if par.reshard_after_forward or not zero3 else 0.0
            # forward: the load, then the gather; backward: the load beside the previous
            # layer's reduce-scatter (two engines), then the gather (the DP stream)
            f_need = load + ag
            b_need = max(load_b, rs) + ag_b if ag_b else max(load_b, rs)
            if par.zero3_prefetch >= 1:
                # one stream: a layer's compute hides the next layer's gather (and in the
                # backward the previous layer's reduce-scatter) but a pass's first gather
                # and its backward's last reduce-scatter wait alone
                if zero3:
                    f_stall = _slot_stall(b.layer_fwd, ((load, ag),))
                    b_stall = _slot_stall(b.layer_bwd, ((0.0, rs), (load_b, ag_b)))
                else:  # weight loads alone: the copy engine, hidden by the layer's compute
                    f_stall = max(0.0, load - b.layer_fwd.compute_s)
                    b_stall = max(0.0, load_b - b.layer_bwd.compute_s)
                f_pass, b_pass = f_need - f_stall, b_need - b_stall
                if zero3 and not load and self.comm.uneven_ring(dp_group):
                    # a DP ring whose edges cost unevenly (members in and across nodes): its
                    # members drift apart over the layers (CommModel.ring_pass_s); a layer is
                    # its collectives, then the rest of the layer beyond what hid them
                    f_stall = self._drifted_stall(b.layer_fwd, ((0.0, AG, ag_bytes),), dp_group)
                    b_colls = ((0.0, RS, rs_bytes),) + (((0.0, AG, ag_bytes),) if ag_b else ())
                    b_stall = self._drifted_stall(b.layer_bwd, b_colls, dp_group)
            else:  # gathered when the layer starts, reduced before the next one's gather
                f_stall, b_stall = f_need, load_b + ag_b + rs
            f_layer += f_stall
            b_layer += b_stall
        send = gather = 0.0
        if pp > 1:
            send = self.comm.send_s(0, stride, b.p2p_bytes)
            gather = self.comm.collective(AG, b.p2p_bytes, tp_group) if b.p2p_gather else 0.0
        crossing = send + gather
        act_access = 0.0  # offload_activations: one chunk's store (or load) of saved activations
        if par.offload_activations:
            kept = layer_activation_bytes(spec, par)[0] * layers / v
            act_access = self.tier_access_s(int(kept), par.world)
        kind = par.schedule if pp > 1 or v > 1 else "1f1b"
        busy: list[float] = []
        compute: list[float] = []
        tp_exposed: list[float] = []
        for s in range(pp):
            f = layers * f_layer + v * f_pass
            bw = layers * b_layer + v * b_pass
            c = layers * (b.layer_fwd.compute_s + b.layer_bwd.compute_s)
            t = layers * (f_tp + b_tp)
            if s == 0:
                f += b.emb_fwd.compute_s + self._tp_s(b.emb_fwd, tp_group)
                bw += b.emb_bwd.compute_s + self._tp_s(b.emb_bwd, tp_group)
                c += b.emb_fwd.compute_s + b.emb_bwd.compute_s
                t += self._tp_s(b.emb_fwd, tp_group) + self._tp_s(b.emb_bwd, tp_group)
            if s == pp - 1:
                f += b.head_fwd.compute_s + self._tp_s(b.head_fwd, tp_group)
                bw += b.head_bwd.compute_s + self._tp_s(b.head_bwd, tp_group)
                c += b.head_fwd.compute_s + b.head_bwd.compute_s
                t += self._tp_s(b.head_fwd, tp_group) + self._tp_s(b.head_bwd, tp_group)
            x = 2 * v * crossing if pp > 1 else 0.0
            if act_access and in_flight(kind, s, pp, m, v) > 1:
                # per chunk: the load of the next backward runs during the forward before it,
                # the store of a forward during the backward after it, both on the copy engine
                # (behind the pass's weight loads, which take ``2 layers_c load`` of it)
                fc, bc = f / v, bw / v
                weights = 2 * layers / v * load
                x += v * max(0.0, act_access - fc, 2 * act_access + weights - fc - bc)
            busy.append(f + bw + x)
            compute.append(c)
            tp_exposed.append(t)
        slowest = max(range(pp), key=busy.__getitem__)
        pipe = m * busy[slowest] + (sum(busy) - busy[slowest]) / v
        step = 0.0
        tails: dict[int, float] = {}
        for s in sorted({0, pp - 1}):
            tail = self._tail(
                par, s, dp_group if s == 0 else tuple(r + s * stride for r in dp_group), s * stride
            )
            drain = s * (
                (busy[s] - 2 * v * crossing) / 2 / v + crossing
            )  # backward from stage s to 0
            tails[s] = tail
            step = max(step, pipe - drain + tail)
        return Estimate(
            step_s=step,
            compute_s=m * compute[slowest],
            tp_s=m * tp_exposed[slowest],
            p2p_s=m * 2 * v * crossing if pp > 1 else 0.0,
            bubble_s=pipe - m * busy[slowest],
            dp_s=step - pipe,
        )

    def _tail(
        self, par: Parallelism, stage: int, dp_group: tuple[int, ...], first_rank: int
    ) -> float:
        """Seconds from a stage's last backward to its end: gradient synchronization and the
        optimizer step (the generator's ``stage_template`` epilogue); cached per degrees."""
        key = (
            stage,
            par.tp,
            par.pp,
            par.dp,
            par.virtual_stages,
            par.zero,
            int(par.offload_optimizer),
        )
        hit = self._tails.get(key)
        if hit is None:
            hit = self._tails[key] = self._tail_s(par, stage, dp_group)
        return hit

    def _tail_s(self, par: Parallelism, stage: int, dp_group: tuple[int, ...]) -> float:
        spec, dp = self.spec, par.dp
        dense, _ = stage_params(spec, par, stage)
        sync = 0.0
        if par.pp > 1 and spec.tied_embeddings and stage in (0, par.pp - 1):
            emb = int(spec.vocab * spec.hidden / par.tp * par.grad_bytes)
            sync += self.comm.collective(AR, emb, (0, (par.pp - 1) * par.tp * dp))
        zero3 = par.zero >= 3 and dp > 1
        if dp > 1 and not zero3:
            kind = RS if par.zero else AR
            sync += self.comm.collective(kind, int(dense * par.grad_bytes), dp_group)
        elif zero3:
            rest = dense - spec.layers // par.chunks * par.virtual_stages * (
                spec.dense_params_per_layer() / par.tp
            )
            if rest > 0:
                sync += self.comm.collective(RS, int(rest * par.grad_bytes), dp_group)
        local = dense / (dp if par.zero >= 1 else 1)
        optimizer = float(
            self.timer.op_time(  # type: ignore[attr-defined]
                "optimizer",
                10.0 * local,
                OPTIMIZER_BYTES_PER_PARAM * local,
                (int(local),),
                self.precision,
            )  # type: ignore[attr-defined]
        )
        gather = (
            self.comm.collective(AG, int(dense * par.param_bytes / dp), dp_group)
            if dp > 1 and par.zero in (1, 2)
            else 0.0
        )
        if par.offload_optimizer:  # the load and store hold the GPU communication slot too
            access = self.tier_access_s(int(par.optimizer_bytes * local), par.world)
            return sync + access + optimizer + access + gather
        return sync + optimizer + gather

    def tier_access_s(self, nbytes: int, world: int) -> float:
        """One NPU's access of ``nbytes`` to the expanded-memory tier when every NPU makes the
        same access at once (``memory/remote.py``: ``latency + bytes / bandwidth`` each; a
        node's NPUs queue on one server per node, a pool's on one in all)."""
        mem = self.comm.platform.memory
        if mem.mode == "NO_MEMORY_EXPANSION" or mem.bandwidth <= 0:
            raise ConfigError(
                "offloading needs an expanded-memory tier: the platform's memory section has mode none",
                field="memory.mode",
            )
        one = mem.latency_ns * 1e-9 + nbytes / mem.bandwidth
        if mem.mode == "PER_NODE_MEMORY_EXPANSION":
            return one * min(mem.npus_per_node, world)
        if mem.mode == "MEMORY_POOL":
            return one * world
        return one


def _slot_stall(p: Pass, jobs: Sequence[tuple[float, float]]) -> float:
    """Seconds a layer's pass ``p`` waits for the ZeRO-3 collectives issued when it starts:
    ``jobs`` are (ready after the layer's start, seconds) in stream order (one at a time:
    the DP stream), e.g. a gather ready when its weight load from the tier ends.

    They and the layer's TP collectives share the rank's one communication slot
    (``system/rank.py``: a node holds it until it completes; the ready node of lowest id
    goes first, and the ZeRO-3 collectives were issued first): a job ready while the layer
    computes takes the slot, and the layer's next TP collective waits for it; a job ready
    while a TP collective runs waits for that one. With sequence parallelism the first TP
    collective follows only the layer norm, so little hides the gather. The next layer needs
    every job done (its gather is the last)."""
    t = 0.0  # when the layer's next compute segment starts
    free = 0.0  # when the slot (and the DP stream) frees
    j = 0
    for compute, coll in (*p.segments, (p.tail_s if p.segments else p.compute_s, -1.0)):
        ready = t + compute  # the next TP collective (or the layer's end)
        while j < len(jobs) and max(jobs[j][0], free, t) <= max(ready, free):
            free = max(jobs[j][0], free, t) + jobs[j][1]  # ready when the slot frees: first
            j += 1
        if coll < 0:
            for r, d in jobs[j:]:  # ready after the layer's compute: the next layer waits
                free = max(r, free) + d
            end = max(ready, free)
            return max(0.0, end - p.compute_s - sum(c for _, c in p.segments))
        t = max(ready, free) + coll
        free = t
    raise AssertionError("unreachable: the loop returns at the layer's end")
