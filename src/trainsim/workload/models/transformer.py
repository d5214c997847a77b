"""Transformer language models from their shape: parameters, FLOPs, and the Hugging Face form
(DESIGN.md, workload layer: generators).

A :class:`TransformerSpec` is the shape of a decoder-only LLM, dense or mixture-of-experts:
``layers`` blocks of (norm, attention with ``heads`` query heads and ``kv_heads`` key/value
heads of ``head_dim``, norm, MLP of inner size ``ffn``, GELU or gated SwiGLU), a ``vocab``
embedding and an output head. Parameters are counted exactly from the shape; the
paper-formula FLOPs of Narayanan et al. (SC'21, §5.1, Appendix) are
:func:`megatron_flops`. Units: parameters and FLOPs are counts; bytes are bytes.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from trainsim.errors import ConfigError


@dataclass(frozen=True)
class TransformerSpec:
    """Shape of a decoder-only transformer (counts; ``seq`` in tokens)."""

    name: str
    layers: int
    hidden: int
    heads: int
    ffn: int
    vocab: int
    seq: int
    kv_heads: int = 0  # 0 = heads (multi-head attention)
    head_dim: int = 0  # 0 = hidden // heads
    gated_mlp: bool = False  # SwiGLU: gate, up and down matrices
    experts: int = 1  # > 1: mixture of experts in every MoE layer
    top_k: int = 1
    moe_ffn: int = 0  # expert FFN size; 0 = ffn
    tied_embeddings: bool = True
    learned_positions: bool = True  # GPT-style absolute position table (seq x hidden)
    norm: Literal["layernorm", "rmsnorm"] = "layernorm"
    bias: bool = True
    fused_attention: bool = False  # FlashAttention-style fused kernel (no s x s scores in HBM)
    extra: dict[str, Any] = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        for name in ("layers", "hidden", "heads", "ffn", "vocab", "seq", "experts", "top_k"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise ConfigError(f"{value!r} must be a positive integer", field=f"model.{name}")
        if self.kv_heads == 0:
            object.__setattr__(self, "kv_heads", self.heads)
        if self.head_dim == 0:
            if self.hidden % self.heads:
                raise ConfigError(
                    f"hidden {self.hidden} is not a multiple of heads {self.heads}; give head_dim",
                    field="model.head_dim",
                )
            object.__setattr__(self, "head_dim", self.hidden // self.heads)
        if self.moe_ffn == 0:
            object.__setattr__(self, "moe_ffn", self.ffn)
        if self.heads % self.kv_heads:
            raise ConfigError(f"heads {self.heads} is not a multiple of kv_heads {self.kv_heads}", field="model.kv_heads")
        if self.top_k > self.experts:
            raise ConfigError(f"top_k {self.top_k} exceeds experts {self.experts}", field="model.top_k")

    # -- derived sizes -------------------------------------------------------------------

    @property
    def is_moe(self) -> bool:
        return self.experts > 1

    @property
    def q_dim(self) -> int:
        """Width of the query projection (heads x head_dim)."""
        return self.heads * self.head_dim

    @property
    def kv_dim(self) -> int:
        return self.kv_heads * self.head_dim

    @property
    def mlp_matrices(self) -> int:
        return 3 if self.gated_mlp else 2

    def attention_params(self) -> int:
        h = self.hidden
        weights = h * (self.q_dim + 2 * self.kv_dim) + self.q_dim * h
        biases = (self.q_dim + 2 * self.kv_dim + h) if self.bias else 0
        return weights + biases

    def mlp_params(self, ffn: int | None = None) -> int:
        f = self.ffn if ffn is None else ffn
        weights = self.mlp_matrices * self.hidden * f
        biases = ((self.mlp_matrices - 1) * f + self.hidden) if self.bias else 0
        return weights + biases

    def norm_params(self) -> int:
        return self.hidden * (2 if self.norm == "layernorm" else 1)

    def expert_params_per_layer(self) -> int:
        """Parameters of all experts of one layer (0 for a dense model)."""
        return self.experts * self.mlp_params(self.moe_ffn) if self.is_moe else 0

    def dense_params_per_layer(self) -> int:
        """Parameters of one block outside the experts (attention, norms, router or dense MLP)."""
        mlp = self.hidden * self.experts if self.is_moe else self.mlp_params()
        return self.attention_params() + mlp + 2 * self.norm_params()

    def params_per_layer(self) -> int:
        return self.dense_params_per_layer() + self.expert_params_per_layer()

    def embedding_params(self) -> int:
        return self.vocab * self.hidden + (self.seq * self.hidden if self.learned_positions else 0)

    def head_params(self) -> int:
        """Final norm plus the output projection (0 when tied to the embedding)."""
        return self.norm_params() + (0 if self.tied_embeddings else self.vocab * self.hidden)

    def total_params(self) -> int:
        return self.layers * self.params_per_layer() + self.embedding_params() + self.head_params()

    def active_params(self) -> int:
        """Parameters touched per token (top_k experts instead of all)."""
        dense = self.total_params() - self.layers * self.expert_params_per_layer()
        return dense + self.layers * self.top_k * (self.mlp_params(self.moe_ffn) if self.is_moe else 0)

    def with_(self, **changes: Any) -> TransformerSpec:
        return replace(self, **changes)


def megatron_flops(spec: TransformerSpec, batch: int, *, recompute: bool = True) -> float:
    """FLOPs per iteration as Narayanan et al. (SC'21, §5.1 and Appendix) count them:
    ``F = 96 B s l h^2 (1 + s/(6h) + V/(16 l h))`` with full recomputation (4 passes of the
    forward GEMMs), ``72 B s l h^2 (1 + s/(6h) + V/(12 l h))`` without."""
    b, s, n, h, v = batch, spec.seq, spec.layers, spec.hidden, spec.vocab
    if recompute:
        return 96.0 * b * s * n * h * h * (1 + s / (6 * h) + v / (16 * n * h))
    return 72.0 * b * s * n * h * h * (1 + s / (6 * h) + v / (12 * n * h))


def model_flops_per_token(spec: TransformerSpec) -> float:
    """Training FLOPs per token without recomputation: 6 x active parameters plus attention
    (Kaplan et al. 2020, Table 1; Chowdhery et al. 2022, App. B: 6N + 12 l s h_attn)."""
    return 6.0 * spec.active_params() + 12.0 * spec.layers * spec.seq * spec.q_dim


_HF_KEYS = {
    "layers": ("num_hidden_layers", "n_layer", "num_layers"),
    "hidden": ("hidden_size", "n_embd", "d_model"),
    "heads": ("num_attention_heads", "n_head"),
    "vocab": ("vocab_size",),
}


def from_hf_config(config: dict[str, Any] | str | Path, *, seq: int | None = None, name: str | None = None) -> TransformerSpec:
    """A :class:`TransformerSpec` from a Hugging Face ``config.json`` (dict or path).

    Reads Llama/Mistral/Mixtral/Qwen-style keys (``hidden_size``, ``intermediate_size``,
    ``num_key_value_heads``, ``num_local_experts``, ``num_experts_per_tok``,
    ``tie_word_embeddings``) and GPT-2 style ones (``n_embd``, ``n_layer``, ``n_head``,
    ``n_inner``). ``seq`` defaults to ``max_position_embeddings`` (``n_positions``).
    """
    from trainsim.config.checks import want_int  # here: config.files imports YAML
    from trainsim.config.files import load_json_mapping

    where = ""
    if not isinstance(config, dict):
        where = str(config)
        config = load_json_mapping(config)

    def number(key: str) -> int:
        return want_int(config[key], where, key)

    def pick(key: str) -> int:
        for k in _HF_KEYS[key]:
            if config.get(k) is not None:
                return number(k)
        raise ConfigError(f"missing {' / '.join(_HF_KEYS[key])}", file=where, field=key)

    def optional(*keys: str, default: int) -> int:
        """The first of ``keys`` set to a non-zero value, else ``default``."""
        return next((number(k) for k in keys if config.get(k)), default)

    hidden = pick("hidden")
    model_type = str(config.get("model_type", ""))
    gpt2_like = model_type in ("gpt2", "gpt_neox", "gptj", "opt") or "n_embd" in config
    experts = optional("num_local_experts", "num_experts", default=1)
    try:  # the spec checks its shape (hidden / heads ...): say which file it came from
        return TransformerSpec(
            name=name or str(config.get("_name_or_path") or model_type or "hf-model"),
            layers=pick("layers"),
            hidden=hidden,
            heads=pick("heads"),
            kv_heads=optional("num_key_value_heads", default=0),
            head_dim=optional("head_dim", default=0),
            ffn=optional("intermediate_size", "n_inner", "ffn_dim", default=4 * hidden),
            vocab=pick("vocab"),
            seq=seq or optional("max_position_embeddings", "n_positions", default=2048),
            gated_mlp=not gpt2_like and str(config.get("hidden_act", "silu")) in ("silu", "swiglu"),
            experts=experts,
            top_k=optional("num_experts_per_tok", default=1) if experts > 1 else 1,
            moe_ffn=optional("moe_intermediate_size", default=0),
            tied_embeddings=bool(config.get("tie_word_embeddings", gpt2_like)),
            learned_positions=gpt2_like,
            norm="layernorm" if gpt2_like else "rmsnorm",
            bias=gpt2_like,
            fused_attention=not gpt2_like,
        )
    except ConfigError as exc:
        if not where:
            raise
        raise ConfigError(str(exc), file=where, hint=exc.hint) from None
