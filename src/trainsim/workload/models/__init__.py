"""Model descriptions for workload generation: transformer shapes, per-operator costs, the zoo
(DESIGN.md, workload layer: generators)."""

from trainsim.workload.models.layered import LayeredModel, dlrm, gnmt, resnet
from trainsim.workload.models.transformer import TransformerSpec, from_hf_config, megatron_flops
from trainsim.workload.models.zoo import get_model, model_names

__all__ = [
    "LayeredModel",
    "TransformerSpec",
    "dlrm",
    "from_hf_config",
    "get_model",
    "gnmt",
    "megatron_flops",
    "model_names",
    "resnet",
]
