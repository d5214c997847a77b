"""Named models that ship with trainsim (DESIGN.md, workload layer: generators).

Transformer shapes come from the papers and model cards cited per entry; the non-LLM models
(ResNet, GNMT, DLRM) are in :mod:`trainsim.workload.models.layered`. :func:`get_model` also
accepts a path to a Hugging Face ``config.json``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from trainsim.errors import ConfigError
from trainsim.workload.models.layered import LayeredModel, dlrm, gnmt, resnet
from trainsim.workload.models.transformer import TransformerSpec, from_hf_config


def _gpt(name: str, layers: int, hidden: int, heads: int, *, vocab: int = 51200, seq: int = 2048) -> TransformerSpec:
    """GPT-2/3 style: learned positions, LayerNorm, GELU MLP of 4h, tied embeddings, biases."""
    return TransformerSpec(name, layers=layers, hidden=hidden, heads=heads, ffn=4 * hidden, vocab=vocab, seq=seq)


def _llama(name: str, layers: int, hidden: int, heads: int, kv: int, ffn: int, *, vocab: int = 128256, seq: int = 8192, experts: int = 1, top_k: int = 1) -> TransformerSpec:
    """Llama style: RoPE, RMSNorm, SwiGLU, grouped-query attention, no biases, untied head."""
    return TransformerSpec(
        name,
        layers=layers,
        hidden=hidden,
        heads=heads,
        kv_heads=kv,
        ffn=ffn,
        vocab=vocab,
        seq=seq,
        gated_mlp=True,
        tied_embeddings=False,
        learned_positions=False,
        norm="rmsnorm",
        bias=False,
        fused_attention=True,
        experts=experts,
        top_k=top_k,
    )


# Megatron-LM SC'21 (Narayanan et al.), Table 1: (params label, heads, hidden, layers)
MEGATRON_TABLE1 = {
    "1.7b": (24, 2304, 24),
    "3.6b": (32, 3072, 30),
    "7.5b": (32, 4096, 36),
    "18b": (48, 6144, 40),
    "39b": (64, 8192, 48),
    "76b": (80, 10240, 60),
    "145b": (96, 12288, 80),
    "310b": (128, 16384, 96),
    "530b": (128, 20480, 105),
    "1t": (160, 25600, 128),
}

TRANSFORMERS: dict[str, Callable[[], TransformerSpec]] = {
    # Brown et al. 2020, Table 2.1: 96 layers, d_model 12288, 96 heads, context 2048.
    "gpt3-175b": lambda: _gpt("gpt3-175b", 96, 12288, 96, vocab=50257),
    # Turing-NLG (Microsoft, 2020), as used by Themis/ACE: 78 layers, hidden 4256, 28 heads.
    "transformer-17b": lambda: _gpt("transformer-17b", 78, 4256, 28, vocab=50257, seq=1024),
    # The 1T model of Megatron-LM SC'21 Table 1 (also Themis' Transformer-1T).
    "transformer-1t": lambda: _gpt("transformer-1t", 128, 25600, 160),
    # Llama 3 model card / Dubey et al. 2024, Table 3.
    "llama3-8b": lambda: _llama("llama3-8b", 32, 4096, 32, 8, 14336),
    "llama3-70b": lambda: _llama("llama3-70b", 80, 8192, 64, 8, 28672),
    "llama3-405b": lambda: _llama("llama3-405b", 126, 16384, 128, 8, 53248),
    # BigScience BLOOM (Le Scao et al. 2022; bigscience-workshop/bigscience train/tr11-176B-ml
    # README and slurm script): 70 layers, hidden 14336, 112 heads, seq 2048, GELU MLP of 4h,
    # tied embeddings, vocabulary padded to 250,880, ALiBi (no position table).
    "bloom-176b": lambda: TransformerSpec(
        "bloom-176b", layers=70, hidden=14336, heads=112, ffn=4 * 14336, vocab=250880, seq=2048, learned_positions=False
    ),
    # Megatron-Turing NLG 530B (Smith et al. 2022, arXiv:2201.11990): 105 layers, hidden 20480,
    # 128 heads, seq 2048; GPT-2 vocabulary padded to 51,200 as Megatron does (the shape of Table 1's 530B row).
    "mt-nlg-530b": lambda: _gpt("mt-nlg-530b", 105, 20480, 128),
    # Jiang et al. 2024 (Mixtral of Experts), Table 1: 8 experts, top-2, 32k vocab.
    "mixtral-8x7b": lambda: _llama("mixtral-8x7b", 32, 4096, 32, 8, 14336, vocab=32000, seq=4096, experts=8, top_k=2),
}


def _megatron(label: str) -> Callable[[], TransformerSpec]:
    heads, hidden, layers = MEGATRON_TABLE1[label]
    return lambda: _gpt(f"megatron-{label}", layers, hidden, heads)


for _label in MEGATRON_TABLE1:
    TRANSFORMERS[f"megatron-{_label}"] = _megatron(_label)

LAYERED: dict[str, Callable[[], LayeredModel]] = {
    "resnet50": lambda: resnet(50),
    "resnet152": lambda: resnet(152),
    "gnmt": gnmt,
    "dlrm": dlrm,
}


def model_names() -> list[str]:
    return sorted(TRANSFORMERS) + sorted(LAYERED)


def get_model(name: str | Path, *, seq: int | None = None) -> TransformerSpec | LayeredModel:
    """A zoo model by name (case-insensitive), or a transformer from a ``config.json`` path."""
    text = str(name)
    key = text.lower().replace("_", "-")
    if key in TRANSFORMERS:
        spec = TRANSFORMERS[key]()
        return spec.with_(seq=seq) if seq else spec
    if key.replace("-", "") in LAYERED:
        return LAYERED[key.replace("-", "")]()
    path = Path(text)
    if path.suffix == ".json" or path.is_file():
        return from_hf_config(path, seq=seq)  # a missing file or a folder: its ConfigError
    raise ConfigError(f"unknown model {text!r}; known: {', '.join(model_names())}, or a Hugging Face config.json path", field="model")
