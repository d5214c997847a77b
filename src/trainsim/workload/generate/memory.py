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
    terms = activation_terms(spec, par.micro_batch, par.act_bytes)
    if par.cp > 1:  # every saved tensor holds seq / cp tokens (scores: seq / cp query rows)
        c = float(par.cp)
        terms = ActivationTerms(terms.replicated / c, terms.sharded / c, terms.scores / c, terms.layer_input / c)
    t = par.tp
    replicated = terms.replicated / t if par.sp else terms.replicated
    full = replicated + terms.sharded / t + terms.scores / t
    if par.recompute == "full":
        kept = terms.layer_input / t if par.sp else terms.layer_input
        return kept, full
    if par.recompute == "selective":
        return replicated + terms.sharded / t, terms.scores / t
    return full, 0.0


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

    @property
    def total(self) -> float:
        return self.weights + self.gradients + self.optimizer + self.activations + self.transient

    def to_dict(self) -> dict[str, float]:
        return {**asdict(self), "total": self.total}
