"""Per-rank memory of a training step: weights, gradients, optimizer states, activations
(DESIGN.md, workload layer: generators). Bytes throughout.

Model states follow the ZeRO paper (Rajbhandari et al., SC'20, §3.1 and Fig. 1): with
``psi`` parameters on a rank and mixed-precision Adam, 2 psi (fp16 weights) + 2 psi (fp16
gradients) + K psi (K = 12: fp32 master weights, momentum, variance); ZeRO-1 (P_os) divides
the K psi by the data-parallel degree N_d, ZeRO-2 (P_os+g) also the gradients, ZeRO-3
(P_os+g+p) everything: (2 + 2 + K) psi / N_d.

Activations per layer per micro-batch follow Korthikanti et al. 2022 ("Reducing Activation
Recomputation in Large Transformer Models", §4, Table 2), generalized to grouped-query
attention, gated MLPs, fused attention and experts by counting the same saved tensors:
for GPT shapes they reduce to ``s b h (34 + 5 a s / h)`` without parallelism,
``s b h (10 + 24/t + 5 a s/(h t))`` with tensor parallelism ``t``, ``s b h/t (34 + 5 a s/h)``
with sequence parallelism, ``34 s b h / t`` with SP and selective recomputation, and
``2 s b h`` (``/t`` with SP) for the layer input kept by full recomputation.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from functools import lru_cache

from trainsim.workload.generate.parallel import Parallelism
from trainsim.workload.models.transformer import TransformerSpec


def zero_model_states(psi: float, dp: int, stage: int, *, weight_bytes: int = 2, grad_bytes: int = 2, k: int = 12) -> tuple[float, float, float]:
    """(weights, gradients, optimizer states) in bytes for ``psi`` parameters under ZeRO
    ``stage`` over ``dp`` data-parallel ranks (Rajbhandari et al. 2020, §3.1, Fig. 1)."""
    weights = weight_bytes * psi / (dp if stage >= 3 else 1)
    grads = grad_bytes * psi / (dp if stage >= 2 else 1)
    optim = k * psi / (dp if stage >= 1 else 1)
    return weights, grads, optim


@dataclass(frozen=True)
class ActivationTerms:
    """Saved activation bytes of one layer for one micro-batch, split by how TP/SP shard them."""

    replicated: float  # held whole by every TP rank without SP (norm in/out, dropout masks)
    sharded: float  # split over TP ranks (Q, K, V, GEMM inputs, MLP intermediates)
    scores: float  # attention score tensors (softmax out, dropout mask and output)
    layer_input: float  # the block input (what full recomputation keeps)


def activation_terms(spec: TransformerSpec, micro_batch: int, e: int = 2) -> ActivationTerms:
    """Korthikanti et al. 2022, §4.1, counted tensor by tensor for this shape (bytes, no TP)."""
    sbh = micro_batch * spec.seq * spec.hidden
    sb = micro_batch * spec.seq
    # norm inputs (2 x 2 bytes), norm outputs feeding QKV and FC1 (2 x 2), two dropout masks (1 + 1)
    replicated = 10.0 * sbh if e == 2 else (4 * e + 2) * sbh
    attn = e * sb * (spec.q_dim + 2 * spec.kv_dim) + e * sb * spec.q_dim  # Q, K, V; projection input
    if spec.is_moe:
        routed = sb * spec.top_k
        mats = 2 if spec.gated_mlp else 1
        mlp = e * routed * (spec.hidden + mats * spec.moe_ffn + spec.moe_ffn)
    else:
        mats = 2 if spec.gated_mlp else 1
        mlp = e * sb * (mats * spec.ffn + spec.ffn)  # activation input; FC2 input
    if spec.fused_attention:
        scores = 4.0 * micro_batch * spec.heads * spec.seq  # fp32 log-sum-exp per row
    else:
        scores = (2 * e + 1.0) * micro_batch * spec.heads * spec.seq * spec.seq
    return ActivationTerms(replicated, float(attn + mlp), scores, float(e * sbh))


def layer_activation_bytes(spec: TransformerSpec, par: Parallelism) -> tuple[float, float]:
    """(kept between forward and backward, working set of one layer's backward) per layer per
    micro-batch on one rank, under ``par``'s TP, SP and recomputation."""
    return _layer_activation_bytes(spec, par.micro_batch, par.act_bytes, par.tp, par.sp, par.recompute, par.cp)


@lru_cache(maxsize=4096)
def _layer_activation_bytes(spec: TransformerSpec, micro_batch: int, act_bytes: int, t: int, sp: bool, recompute: str, cp: int = 1) -> tuple[float, float]:
    terms = activation_terms(spec, micro_batch, act_bytes)
    if cp > 1:  # every saved tensor holds seq / cp tokens (scores: seq / cp query rows)
        c = float(cp)
        terms = ActivationTerms(terms.replicated / c, terms.sharded / c, terms.scores / c, terms.layer_input / c)
    replicated = terms.replicated / t if sp else terms.replicated
    full = replicated + terms.sharded / t + terms.scores / t
    if recompute == "full":
        kept = terms.layer_input / t if sp else terms.layer_input
        return kept, full
    if recompute == "selective":
        return replicated + terms.sharded / t, terms.scores / t
    return full, 0.0


def stage_params(spec: TransformerSpec, par: Parallelism, stage: int) -> tuple[float, float]:
    """(dense, expert) parameter counts held by one rank of pipeline ``stage``: its layers
    (TP-sharded; experts split over EP), the embedding on stage 0, the final norm and output
    layer on the last stage (with tied embeddings and PP > 1, the last stage's copy of the
    embedding)."""
    return _stage_params(spec, par.tp, par.pp, par.ep, par.stage_layers(spec.layers)[stage], stage)


@lru_cache(maxsize=4096)
def _stage_params(spec: TransformerSpec, tp: int, pp: int, ep: int, layers: int, stage: int) -> tuple[float, float]:
    dense = layers * (spec.dense_params_per_layer() / tp)
    if stage == 0:
        dense += spec.vocab * spec.hidden / tp + (spec.seq * spec.hidden if spec.learned_positions else 0)
    if stage == pp - 1:
        dense += spec.norm_params() + (0 if spec.tied_embeddings else spec.vocab * spec.hidden / tp)
        if pp > 1 and spec.tied_embeddings:
            dense += spec.vocab * spec.hidden / tp  # the tied copy of the embedding
    return dense, layers * (spec.expert_params_per_layer() / ep)


def stage_memory(spec: TransformerSpec, par: Parallelism, stage: int, *, capacity: float = 0.0, edp: int = 1) -> MemoryBreakdown:
    """Peak memory of one rank of ``stage`` (bytes): model states (ZeRO paper, §3.1) and
    activations of the micro-batches in flight (Korthikanti et al. 2022, §4.2.3); ``edp`` the
    size of the expert data-parallel group. Needs no generated graph, so a strategy search can
    check thousands of strategies with the generator's own numbers."""
    from trainsim.workload.generate.schedule import in_flight

    dense, expert = stage_params(spec, par, stage)
    w1, g1, o1 = zero_model_states(dense, par.dp_cp, par.zero, weight_bytes=par.param_bytes, grad_bytes=par.grad_bytes, k=par.optimizer_bytes)
    w2, g2, o2 = zero_model_states(expert, max(1, edp), par.zero, weight_bytes=par.param_bytes, grad_bytes=par.grad_bytes, k=par.optimizer_bytes)
    kept, work = layer_activation_bytes(spec, par)
    kind = par.schedule if par.pp > 1 or par.virtual_stages > 1 else "1f1b"
    live_chunks = in_flight(kind, stage, par.pp, par.microbatches, par.virtual_stages)
    # layers per chunk of this stage (the largest chunk when they differ: layers_per_chunk)
    chunks = par.chunk_layers(spec.layers)
    chunk_layers = max(len(chunks[c * par.pp + stage]) for c in range(par.virtual_stages))
    activations = kept * chunk_layers * live_chunks
    transient = work
    if stage == par.pp - 1:  # fp32 logits of the vocab-parallel cross-entropy (seq / cp tokens)
        transient += 4.0 * (par.micro_batch * spec.seq // par.cp) * spec.vocab / par.tp
    if par.zero >= 3:
        # gathered layers: the one computing and zero3_prefetch ahead; without resharding after
        # the forward (SHARD_GRAD_OP) every layer of the stage stays gathered until its backward
        gathered = par.zero3_prefetch + 1 if par.reshard_after_forward else par.stage_layers(spec.layers)[stage]
        transient += gathered * (spec.dense_params_per_layer() / par.tp) * par.param_bytes
    if par.cp > 1:  # the gathered keys and values of the whole sequence (Llama 3's all-gather CP)
        transient += 2 * par.micro_batch * spec.seq * spec.kv_dim / par.tp * par.act_bytes
    weights, optimizer = w1 + w2, o1 + o2
    off_w = off_a = 0.0
    if par.offload_params:  # the layers' weights live in the tier; loaded ones stay in HBM
        layers = par.stage_layers(spec.layers)[stage]
        layer_copy = spec.dense_params_per_layer() / par.tp * par.param_bytes / (par.dp_cp if par.zero >= 3 else 1)
        off_w = layers * layer_copy
        weights -= off_w - min(layers, par.zero3_prefetch + 1) * layer_copy
    if par.offload_activations and live_chunks > 1:
        # every chunk in flight may sit in the tier; HBM holds the one being built, the one
        # prefetched for the next backward and the one whose store is still running
        chunk = kept * chunk_layers
        off_a = live_chunks * chunk
        activations = min(live_chunks, 3) * chunk
    if par.offload_optimizer:
        optimizer, off_o = 0.0, optimizer
    else:
        off_o = 0.0
    return MemoryBreakdown(stage, dense + expert, weights, g1 + g2, optimizer, activations, transient, capacity, off_o + off_w + off_a, off_w, off_a)


def check_offload(memory: list[MemoryBreakdown], capacity_per_npu: float, tier: str = "the expanded-memory tier") -> None:
    """Raise :class:`InfeasibleError` when a rank's offloaded bytes exceed its share of the
    tier (``capacity_per_npu`` bytes; ``math.inf``: no limit)."""
    from trainsim.errors import InfeasibleError

    worst = max(memory, key=lambda m: m.offloaded)
    if worst.offloaded > capacity_per_npu:
        parts = [(worst.offloaded - worst.offloaded_weights - worst.offloaded_activations, "optimizer states"),
                 (worst.offloaded_weights, "weights"), (worst.offloaded_activations, "activations")]  # fmt: skip
        what = [f"{b / 1e9:.2f} GB of {name}" for b, name in parts if b > 0]
        detail = what[0] if len(what) == 1 else f"{worst.offloaded / 1e9:.2f} GB ({', '.join(what)})"
        raise InfeasibleError(
            f"pipeline stage {worst.stage} offloads {detail} per NPU "
            f"but {tier} holds {capacity_per_npu / 1e9:.2f} GB per NPU",
            hint="raise ZeRO's stage or the data-parallel degree (smaller shards), or give the tier more capacity",
        )


@dataclass
class MemoryBreakdown:
    """One rank's peak memory in bytes, and the device capacity it was checked against."""

    stage: int
    params: float  # parameter count held (before ZeRO-3 sharding)
    weights: float
    gradients: float
    optimizer: float
    activations: float
    transient: float  # working set on top of the saved activations (recompute, logits)
    capacity: float = 0.0
    offloaded: float = 0.0  # bytes kept in the expanded-memory tier (not in ``total``), all kinds
    offloaded_weights: float = 0.0  # of which layer weights (``offload_params``)
    offloaded_activations: float = 0.0  # of which saved activations (``offload_activations``)

    @property
    def total(self) -> float:
        return self.weights + self.gradients + self.optimizer + self.activations + self.transient

    def to_dict(self) -> dict[str, float]:
        return {**asdict(self), "total": self.total}
