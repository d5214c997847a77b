"""FLOP sums of generated graphs, for comparing a whole step with the model's formula."""

import numpy as np

from trainsim.enums import NodeType

# the GEMMs and attention products Megatron's FLOP formula counts (Narayanan et al. SC'21, App.)
MODEL_OPS = ("qkv", "attn_proj", "fc1", "fc2", "lm_head", "attn_scores", "attn_context", "flash_attn")


def model_flops(graph):
    """FLOPs of the graph's compute nodes that are model GEMMs / attention products
    (generate with granularity="op": one node per operator)."""
    total = 0.0
    comp = np.flatnonzero(graph.types == NodeType.COMP_NODE).tolist()
    for i in comp:
        name = graph.names[i]
        if any(f".{k}" in name for k in MODEL_OPS) and "optimizer" not in name:
            total += float(graph.num_ops[i])
    return total


def step_model_flops(workload):
    return sum(model_flops(g) for g in workload.graphs)
