"""Per-rank operators of a transformer block: FLOPs, bytes moved, and where the block
communicates (DESIGN.md, workload layer: generators).

One block's forward is a list of :class:`Op` (compute) and :class:`Comm` (a collective in the
forward and/or the backward pass) in program order, already sharded for one rank:
tensor parallelism splits heads and the FFN (Megatron-LM, Shoeybi et al. 2019, §3: column- then
row-parallel GEMMs, ``f``/``g`` conjugate operators), sequence parallelism splits the norm and
dropout regions along the sequence (Korthikanti et al. 2022, §4.2.2: ``g`` = reduce-scatter /
all-gather), expert parallelism dispatches tokens with all-to-all (Lepikhin et al. 2020, GShard).

FLOPs count multiply-adds as 2. An embedding lookup counts one operation per element it
writes (the forward gathers rows; the backward adds each row of the output gradient into the
table's gradient), so it has a small but real intensity and a roofline of it is memory-bound,
as it should be. ASTRA-sim's roofline computes 0 / 0 on a node with ``num_ops`` 0. Bytes are
HBM traffic of the kernel: operands read plus result written, at ``act_bytes`` per activation
element (2 for bf16/fp16) and the same for weights.
Backward ops are derived by :meth:`Op.backward`: a GEMM's data and weight gradients are 2x its
forward FLOPs (Narayanan et al. SC'21, Appendix: "backward pass ... twice the forward"), fused
attention backward 2.5x (Dao 2023, FlashAttention-2 §3.1.2: 5 matmuls vs 2), memory-bound kinds
move about 1.5-2x the bytes (they read the saved input and the output gradient, write the input
gradient).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from trainsim.enums import CommType
from trainsim.workload.models.transformer import TransformerSpec

# (flops factor, bytes factor) of the backward pass relative to the forward, per op kind
_BWD = {
    "gemm": (2.0, 2.0),
    "attention": (2.0, 2.0),
    "flash_attention": (2.5, 2.0),
    "softmax": (1.0, 1.5),
    "norm": (1.0, 2.0),
    "elementwise": (1.0, 1.5),
    "embedding": (1.0, 2.0),
}


@dataclass(frozen=True, slots=True)
class Op:
    """One kernel on one rank: ``flops`` FLOP, ``nbytes`` bytes of HBM traffic.

    ``shape`` is (m, n, k) for GEMMs (the size term of the timer and the key of measured-time
    overrides), element counts otherwise. ``core`` marks the attention core that selective
    recomputation recomputes (Korthikanti et al. 2022, §5).
    """

    name: str
    kind: str
    flops: float
    nbytes: float
    shape: tuple[int, ...] = ()
    core: bool = False

    def backward(self) -> Op:
        ff, bf = _BWD.get(self.kind, (2.0, 2.0))
        return replace(self, name=self.name + ".bwd", flops=self.flops * ff, nbytes=self.nbytes * bf)

    def scaled(self, factor: float) -> Op:
        return replace(self, flops=self.flops * factor, nbytes=self.nbytes * factor)


@dataclass(frozen=True, slots=True)
class Comm:
    """A collective at one point of the forward program, and its mirror in the backward.

    ``group`` is a role (``tp``, ``ep``, ``dp``, ``edp``, ``emb``); ``fwd``/``bwd`` are
    :class:`CommType` values or ``None``; sizes are Chakra ``comm_size`` bytes (the whole buffer,
    except all-gather: the per-rank input).
    """

    name: str
    group: str
    fwd: int | None = None
    fwd_size: int = 0
    bwd: int | None = None
    bwd_size: int = 0


Item = Op | Comm


@dataclass(frozen=True)
class Shard:
    """How one rank holds a micro-batch: ``micro_batch`` sequences of ``seq`` tokens, tensor
    parallel degree ``tp`` (sequence parallel if ``sp``), expert parallel degree ``ep``,
    context parallel degree ``cp`` (each rank holds ``seq / cp`` tokens of every sequence)."""

    micro_batch: int
    seq: int
    tp: int = 1
    sp: bool = False
    ep: int = 1
    act_bytes: int = 2
    cp: int = 1

    @property
    def local_seq(self) -> int:
        """Tokens of each sequence on this rank (``seq / cp``)."""
        return self.seq // self.cp

    @property
    def tokens(self) -> int:
        return self.micro_batch * self.local_seq

    @property
    def sp_tokens(self) -> int:
        """Tokens in the norm/dropout regions of one rank (split along the sequence with SP)."""
        return self.tokens // self.tp if self.sp else self.tokens


def _gemm(name: str, m: int, n: int, k: int, e: int) -> Op:
    """C[m, n] = A[m, k] B[k, n]."""
    return Op(name, "gemm", 2.0 * m * n * k, float(e * (m * k + k * n + m * n)), (m, n, k))


def _tp_entry(name: str, sh: Shard, width: int) -> list[Item]:
    """Entry of a column-parallel region: Megatron's ``f`` (identity forward, all-reduce of
    the input gradient backward) or, with SP, ``g-bar`` (all-gather forward, reduce-scatter
    backward) plus the backward re-gather of the saved input for the weight gradient."""
    if sh.tp == 1:
        return []
    full = sh.tokens * width * sh.act_bytes
    if sh.sp:
        return [Comm(name, "tp", CommType.ALL_GATHER, full // sh.tp, CommType.REDUCE_SCATTER, full)]
    return [Comm(name, "tp", None, 0, CommType.ALL_REDUCE, full)]


def _tp_exit(name: str, sh: Shard, width: int) -> list[Item]:
    """Exit of a row-parallel region: ``g`` (all-reduce forward, identity backward) or, with
    SP, reduce-scatter forward and all-gather backward."""
    if sh.tp == 1:
        return []
    full = sh.tokens * width * sh.act_bytes
    if sh.sp:
        return [Comm(name, "tp", CommType.REDUCE_SCATTER, full, CommType.ALL_GATHER, full // sh.tp)]
    return [Comm(name, "tp", CommType.ALL_REDUCE, full, None, 0)]


def _sp_regather(name: str, sh: Shard, width: int) -> list[Item]:
    """SP backward re-gather of a column-parallel GEMM's input for its weight gradient
    (Korthikanti et al. 2022, §4.2.2), placed just before that GEMM's backward."""
    if sh.tp == 1 or not sh.sp:
        return []
    return [Comm(name, "tp", None, 0, CommType.ALL_GATHER, sh.tokens * width * sh.act_bytes // sh.tp)]


def _norm(name: str, spec: TransformerSpec, tokens: int, e: int) -> Op:
    n = tokens * spec.hidden
    return Op(name, "norm", 8.0 * n, float(2 * n * e), (n,))


def _residual(name: str, spec: TransformerSpec, tokens: int, e: int) -> Op:
    """Fused bias-dropout-add: read x and residual, write y and a 1-byte dropout mask."""
    n = tokens * spec.hidden
    return Op(name, "elementwise", 3.0 * n, float(n * (3 * e + 1)), (n,))


def attention_ops(spec: TransformerSpec, sh: Shard) -> list[Op]:
    """The attention core of one rank (``heads/tp`` heads): scores, softmax, dropout, context;
    or one fused kernel when ``spec.fused_attention`` (causal: half the score tiles).

    With context parallelism the rank's ``seq / cp`` queries attend to all ``seq`` keys and
    values (gathered, :func:`block_items`); under a causal mask Megatron gives each rank two of
    ``2 cp`` sequence chunks, ``i`` and ``2 cp - 1 - i``, so every rank does ``1 / cp`` of the
    masked work (``get_batch_on_this_cp_rank``, megatron/training/utils.py)."""
    b, s, d, e = sh.micro_batch, sh.seq, spec.head_dim, sh.act_bytes
    q = sh.local_seq
    heads = spec.heads // sh.tp
    kv = spec.kv_heads // sh.tp  # TP divides the key/value heads (Parallelism.check_transformer)
    t = sh.tokens
    kv_tokens = b * s  # keys and values of the whole sequence (gathered over CP)
    q_bytes = float(e * t * d * heads)
    kv_bytes = float(e * kv_tokens * d * 2 * kv)
    if spec.fused_attention:
        flops = 4.0 * b * heads * q * s * d * 0.5
        return [Op("flash_attn", "flash_attention", flops, q_bytes + kv_bytes + e * t * heads * d, (b * heads, q, d), core=True)]
    scores = b * heads * q * s
    return [
        Op("attn_scores", "attention", 2.0 * scores * d, float(e * (t * d * heads + kv_tokens * d * kv + scores)), (q, s, d), core=True),
        Op("softmax", "softmax", 5.0 * scores, float(2 * e * scores), (scores,), core=True),
        Op("attn_dropout", "elementwise", float(scores), float(scores * (2 * e + 1)), (scores,), core=True),
        Op("attn_context", "attention", 2.0 * scores * d, float(e * (scores + kv_tokens * d * kv + t * d * heads)), (q, d, s), core=True),
    ]


def cp_exchange(spec: TransformerSpec, sh: Shard) -> list[Item]:
    """Context parallelism's key/value exchange in one attention layer, all-gather based as in
    Llama 3 (Dubey et al. 2024, §3.3.2: "we first all-gather the key (K) and value (V) tensors,
    and then compute attention output for the local query (Q) tensor chunk"; Transformer Engine
    ``cp_comm_type="all_gather"``): forward, an all-gather over the CP group of this rank's K
    and V (``2 x tokens x kv_heads/tp x head_dim`` elements); backward, a reduce-scatter of
    their gradients (the whole ``cp`` times larger buffer)."""
    if sh.cp == 1:
        return []
    local = 2 * sh.tokens * (spec.kv_dim // sh.tp) * sh.act_bytes
    return [Comm("cp_kv", "cp", CommType.ALL_GATHER, local, CommType.REDUCE_SCATTER, local * sh.cp)]


def block_items(spec: TransformerSpec, sh: Shard) -> list[Item]:
    """One transformer block's forward on one rank, with its TP/SP/EP collectives."""
    e, h, t, tp = sh.act_bytes, spec.hidden, sh.tokens, sh.tp
    tsp = sh.sp_tokens
    items: list[Item] = [_norm("ln1", spec, tsp, e)]
    items += _tp_entry("attn_in", sh, h)
    items.append(_gemm("qkv", t, (spec.q_dim + 2 * spec.kv_dim) // tp, h, e))
    items += _sp_regather("qkv_regather", sh, h)
    items += cp_exchange(spec, sh)
    items += attention_ops(spec, sh)
    items.append(_gemm("attn_proj", t, h, spec.q_dim // tp, e))
    items += _tp_exit("attn_out", sh, h)
    items.append(_residual("attn_residual", spec, tsp, e))
    items.append(_norm("ln2", spec, tsp, e))
    if spec.is_moe:
        items += moe_items(spec, sh)
    else:
        f = spec.ffn // tp
        items += _tp_entry("mlp_in", sh, h)
        items.append(_gemm("fc1", t, f * (2 if spec.gated_mlp else 1), h, e))
        items += _sp_regather("fc1_regather", sh, h)
        act_elems = t * f
        act_bytes = act_elems * e * (3 if spec.gated_mlp else 2)
        items.append(Op("swiglu" if spec.gated_mlp else "gelu", "elementwise", 8.0 * act_elems, float(act_bytes), (act_elems,)))
        items.append(_gemm("fc2", t, h, f, e))
        items += _tp_exit("mlp_out", sh, h)
    items.append(_residual("mlp_residual", spec, tsp, e))
    return items


def moe_items(spec: TransformerSpec, sh: Shard) -> list[Item]:
    """Mixture-of-experts MLP on one rank: router, all-to-all dispatch over the EP group,
    the local experts on ``tokens x top_k`` routed tokens (balanced routing), all-to-all combine.

    Experts are not tensor-parallel (expert TP = 1); with TP the tokens are sequence-split
    (Megatron-Core requires SP for MoE with TP), so each rank routes ``tokens / tp`` tokens.
    """
    e, h = sh.act_bytes, spec.hidden
    tokens = sh.tokens // sh.tp
    routed = tokens * spec.top_k
    f = spec.moe_ffn
    buf = routed * h * e
    items: list[Item] = [
        _gemm("router", tokens, spec.experts, h, e),
        Comm("moe_dispatch", "ep", CommType.ALL_TO_ALL, buf, CommType.ALL_TO_ALL, buf),
    ]
    local_experts = max(1, spec.experts // sh.ep)
    per_expert = max(1, routed // local_experts)
    fc1 = _gemm("expert_fc1", routed, f * (2 if spec.gated_mlp else 1), h, e)
    items.append(replace(fc1, shape=(per_expert, f * (2 if spec.gated_mlp else 1), h)))
    act = routed * f
    items.append(Op("expert_act", "elementwise", 8.0 * act, float(act * e * (3 if spec.gated_mlp else 2)), (act,)))
    fc2 = _gemm("expert_fc2", routed, h, f, e)
    items.append(replace(fc2, shape=(per_expert, h, f)))
    items.append(Comm("moe_combine", "ep", CommType.ALL_TO_ALL, buf, CommType.ALL_TO_ALL, buf))
    return items


def embedding_items(spec: TransformerSpec, sh: Shard) -> list[Item]:
    """Vocab-parallel embedding lookup (Megatron: each TP rank holds ``vocab/tp`` rows and the
    partial outputs are all-reduced, or reduce-scattered with SP), position add and dropout."""
    e, h, t = sh.act_bytes, spec.hidden, sh.tokens
    items: list[Item] = [Op("embedding", "embedding", float(t * h), float(t * h * e * 2 + t * 8), (t, h))]
    items += _tp_exit("embedding_out", sh, h)
    n = sh.sp_tokens * h
    items.append(Op("embedding_dropout", "elementwise", float(n), float(n * (2 * e + 1) + (n * e if spec.learned_positions else 0)), (n,)))
    return items


def head_items(spec: TransformerSpec, sh: Shard) -> list[Item]:
    """Final norm, vocab-parallel output GEMM and cross-entropy (Megatron's
    ``vocab_parallel_cross_entropy``: fp32 logits, 3 all-reduces of ``tokens`` fp32 values over
    TP: max, sum of exponentials, target logit)."""
    e, h, t, tp = sh.act_bytes, spec.hidden, sh.tokens, sh.tp
    items: list[Item] = [_norm("final_norm", spec, sh.sp_tokens, e)]
    items += _tp_entry("head_in", sh, h)
    v = -(-spec.vocab // tp)
    items.append(_gemm("lm_head", t, v, h, e))
    items += _sp_regather("head_regather", sh, h)
    n = t * v
    items.append(Op("cross_entropy", "elementwise", 5.0 * n, float(n * (e + 4 + 4)), (n,)))
    if tp > 1:
        items += [Comm(f"ce_reduce{i}", "tp", CommType.ALL_REDUCE, t * 4, None, 0) for i in range(3)]
    return items
