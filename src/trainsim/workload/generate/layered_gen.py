"""Data-parallel graphs of the non-LLM models (ResNet, GNMT) and DLRM's hybrid parallelism
(DESIGN.md, workload layer: generators).

Each rank runs ``micro_batch`` samples per micro-batch: the forward layers in order, the
backward layers in reverse, and after the last micro-batch's backward of a layer an all-reduce
of that layer's gradients, overlapped with the remaining backward (ASTRA-sim's DATA mode,
chakra-format.md §5.1). DLRM (Naumov et al. 2019, §3 and Fig. 4): tables sharded over all
ranks, forward all-to-all of the pooled embeddings after the lookup (the bottom MLP runs
meanwhile), backward all-to-all of their gradients, MLP gradients all-reduced. Bytes, seconds.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from trainsim.enums import CommType
from trainsim.errors import ConfigError, InfeasibleError
from trainsim.units import GB
from trainsim.workload.generate.emitter import Emitter
from trainsim.workload.generate.groups import dims_spanned
from trainsim.workload.generate.memory import MemoryBreakdown, zero_model_states
from trainsim.workload.generate.parallel import Parallelism
from trainsim.workload.models.layered import Layer, LayeredModel
from trainsim.workload.models.ops import Op

if TYPE_CHECKING:
    from trainsim.workload.generate.api import GeneratedWorkload


def _layer_op(layer: Layer, batch: int, e: int) -> Op:
    m = layer.m_per_sample * batch
    return Op(layer.name, layer.kind, layer.flops * batch, float(e * (layer.act_elems * batch + layer.params)), (m, layer.n, layer.k))


class LayeredGenerator:
    def __init__(self, model: LayeredModel, par: Parallelism, timer: object | None) -> None:
        if par.tp > 1 or par.pp > 1 or par.ep > 1:
            raise ConfigError(f"{model.name} is generated with data parallelism only (tp=pp=ep=1), got tp={par.tp} pp={par.pp} ep={par.ep}", field="parallelism")
        if par.zero >= 3:
            raise ConfigError(f"ZeRO-3/FSDP is generated for transformers only, not {model.name}", field="zero")
        self.model = model
        self.par = par
        self.timer = timer

    def generate(self, network_sizes: Sequence[int] | None, *, check_memory: bool = True) -> GeneratedWorkload:
        from trainsim.workload.generate.api import GeneratedWorkload

        model, par = self.model, self.par
        e = model.elem_bytes
        b = par.micro_batch
        em = Emitter(f"generated:{model.name}", self.timer, par.precision)
        fwd_ops = [_layer_op(x, b, e) for x in model.layers]
        m = par.microbatches
        emb = model.embeddings
        world = par.world
        coll = CommType.REDUCE_SCATTER if par.zero >= 1 else CommType.ALL_REDUCE
        reduce_deps: list[int] = []
        for mb in range(m):
            a2a_fwd = None
            if emb is not None:
                local_tables = -(-emb.tables // world)
                elements = local_tables * b * world * emb.pooling * emb.dim  # rows gathered and summed
                lookup = Op("embedding_lookup", "embedding", float(elements), float(elements * emb.elem_bytes * 2), (local_tables * b * world,))
                em.compute(f"mb{mb}.embedding_lookup", (lookup,))
                if world > 1:
                    a2a_fwd = em.collective(f"mb{mb}.embedding_alltoall.fwd", CommType.ALL_TO_ALL, emb.tables * b * emb.dim * emb.elem_bytes, "", chained=False)
                em.tail = None
            for i, op in enumerate(fwd_ops):
                deps = [a2a_fwd] if (emb is not None and i == model.bottom_layers and a2a_fwd is not None) else []
                em.compute(f"mb{mb}.{op.name}.fwd", (op,), deps)
            for i in reversed(range(len(fwd_ops))):
                op = fwd_ops[i]
                nid = em.compute(f"mb{mb}.{op.name}.bwd", (op.backward(),))
                if emb is not None and i == model.bottom_layers and world > 1:
                    em.collective(f"mb{mb}.embedding_alltoall.bwd", CommType.ALL_TO_ALL, emb.tables * b * emb.dim * emb.elem_bytes, "", [nid], chained=False)
                layer = model.layers[i]
                if mb == m - 1 and world > 1 and layer.params > 0 and layer.name.find("embedding") < 0:
                    reduce_deps.append(em.collective(f"{layer.name}.grad_allreduce", coll, layer.params * par.grad_bytes, "", [nid], chained=False))
        dense_params = sum(x.params for x in model.layers if "embedding" not in x.name)
        sparse_params = sum(x.params for x in model.layers if "embedding" in x.name)
        local = dense_params / (par.dp if par.zero >= 1 else 1) + sparse_params
        em.compute("optimizer_step", (Op("optimizer", "optimizer", 10.0 * local, 28.0 * local, (int(local),)),), reduce_deps)
        if par.zero in (1, 2) and world > 1:
            em.collective("param_allgather", CommType.ALL_GATHER, int(dense_params * par.param_bytes / par.dp), "")
        template = em.build()
        dims = {}
        if network_sizes:
            dims = {"": dims_spanned(range(world), network_sizes)}
        graphs = [template.specialize(r, {}, r, r, dims) if r == 0 else None for r in range(1)]
        shared = graphs[0]
        assert shared is not None
        memory = [self.memory()]
        if check_memory and self.timer is not None:
            cap = float(getattr(self.timer, "memory_capacity", 0.0))
            if memory[0].total > cap:
                raise InfeasibleError(f"{model.name} needs {memory[0].total / GB:.1f} GB per rank but {getattr(self.timer, 'name', 'the device')} has {cap / GB:.1f} GB")
        info = {
            "model": model.name,
            "params": model.total_params(),
            "world": world,
            "microbatches": m,
            "nodes_per_stage": [len(template.graph)],
            "compute_s_per_stage": [template.compute_s],
            "device": getattr(self.timer, "name", None),
        }
        # every rank runs the same graph (all collectives span all ranks): one object, shared
        return GeneratedWorkload([shared] * world, {}, {}, memory, info, [0] * world)

    def memory(self) -> MemoryBreakdown:
        model, par = self.model, self.par
        emb = model.embeddings
        dense = sum(x.params for x in model.layers)
        w, g, o = zero_model_states(dense, par.dp, par.zero, weight_bytes=par.param_bytes, grad_bytes=par.grad_bytes, k=par.optimizer_bytes)
        if emb is not None:
            table = emb.tables * emb.rows * emb.dim * emb.elem_bytes / par.world
            w += table
            g += table
        acts = sum(x.act_elems for x in model.layers) * par.micro_batch * model.elem_bytes
        return MemoryBreakdown(0, float(dense), w, g, o, acts, 0.0, float(getattr(self.timer, "memory_capacity", 0.0) or 0.0))
