"""The parallelization strategy of a generated workload, validated against a model
(DESIGN.md, workload layer: generators).

:class:`Parallelism` holds the degrees (``tp``, ``pp``, ``dp``, ``ep``), sequence
parallelism, ZeRO stage / FSDP, activation recomputation, micro-batching, the pipeline
schedule and the rank order of the communicator groups. :meth:`Parallelism.check` raises
:class:`ConfigError` for values that make no sense and :class:`InfeasibleError` for a strategy
this model cannot run (e.g. ``TP=3 does not divide 32 heads``). Sizes in bytes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from trainsim.errors import ConfigError, InfeasibleError

Recompute = Literal["none", "selective", "full"]
Schedule = Literal["gpipe", "1f1b", "interleaved"]
DEFAULT_ORDER = "tp-cp-ep-dp-pp"  # Megatron-LM's default RankGenerator order
_ORDER_TOKENS = ("tp", "cp", "ep", "dp", "pp")


@dataclass(frozen=True)
class Parallelism:
    """How one training step is split over ``tp x pp x dp`` ranks.

    ``micro_batch`` sequences per micro-batch; ``global_batch`` sequences per step (default
    ``micro_batch x dp``: one micro-batch per pipeline, no accumulation); each pipeline runs
    ``global_batch / (micro_batch x dp)`` micro-batches. ``zero`` is the ZeRO stage
    (Rajbhandari et al. 2020): 1 shards optimizer states, 2 also gradients, 3 also parameters;
    ``fsdp`` is PyTorch FSDP FULL_SHARD, generated as ZeRO-3. ``virtual_stages`` model chunks
    per rank for the interleaved schedule (Narayanan et al. SC'21 §2.2.2).

    Layers per pipeline stage (:meth:`stage_layers`): an even split by default;
    ``first_stage_layers`` / ``last_stage_layers`` give the first and last stage their own
    count and split the rest evenly over the middle stages (Megatron-Core's
    ``--decoder-first-pipeline-num-layers`` / ``--decoder-last-pipeline-num-layers``; Llama 3
    405B: 126 layers on 16 stages as 7 + 14 x 8 + 7, Dubey et al. 2024 §3.3.2);
    ``layers_per_stage`` lists every stage's count. With interleaving each stage's layers are
    split evenly over its ``virtual_stages`` chunks, or ``layers_per_chunk`` lists every global
    chunk's count (``pp x virtual_stages`` of them, chunk ``c`` of stage ``s`` at ``c x pp + s``:
    e.g. only the first and the last chunk one layer short).

    ``cp`` is the context-parallel degree (Megatron-LM ``--context-parallel-size``): each
    sequence is split over ``cp`` ranks, which exchange keys and values in every attention
    layer; gradients are reduced over the ``dp x cp`` ranks holding the same weights.

    ``offload_optimizer`` keeps the optimizer states (the ``optimizer_bytes`` per parameter of
    the rank's shard) in the platform's expanded-memory tier instead of HBM: the optimizer
    step loads them (overlapping the gradient synchronization) and stores them back (ZeRO-Offload,
    Ren et al. 2021, with the tier in place of host memory).
    ``offload_params`` keeps the transformer layers' weights (the rank's copy: its ZeRO-3 shard
    under ZeRO-3) in the tier and loads each layer before its forward and its backward, on
    every micro-batch, prefetched ``zero3_prefetch`` layers ahead (ZeRO-Infinity's parameter
    offload, Rajbhandari et al. SC'21 §5); ``offload_activations`` stores a chunk's saved
    activations after its forward and loads them back before its backward, prefetched one
    pass ahead, for every micro-batch whose backward is not the stage's next pass (Megatron's
    activation offloading, with the tier in place of host memory). Both run on the rank's copy
    engine (``is_cpu_op`` memory nodes: beside compute and collectives, one at a time).
    """

    tp: int = 1
    pp: int = 1
    dp: int = 1
    ep: int = 1
    sp: bool = False
    zero: int = 0
    fsdp: bool = False
    recompute: Recompute = "none"
    micro_batch: int = 1
    global_batch: int = 0
    schedule: Schedule = "1f1b"
    virtual_stages: int = 1
    order: str = DEFAULT_ORDER
    overlap_grad_reduce: bool = False
    offload_optimizer: bool = False  # optimizer states in the expanded-memory tier (ZeRO-Offload style, on the device)
    offload_params: bool = False  # layer weights in the tier, loaded per layer and pass (ZeRO-Infinity style)
    offload_activations: bool = False  # saved activations stored after the forward, loaded before the backward
    pp_scatter_gather: bool = True  # Megatron SC'21 §4.1: split p2p tensors over TP, all-gather after
    param_bytes: int = 2  # bf16/fp16 parameters
    grad_bytes: int = 2  # gradients as reduced over DP
    optimizer_bytes: int = 12  # K of the ZeRO paper: fp32 master weights, momentum, variance
    act_bytes: int = 2
    precision: str = "bf16"
    granularity: Literal["block", "op"] = "block"
    layers_per_stage: tuple[int, ...] = ()  # () = even split (or first/last stage counts below)
    layers_per_chunk: tuple[int, ...] = ()  # interleaved: every global chunk's layers
    first_stage_layers: int = 0  # 0 = as the other stages
    last_stage_layers: int = 0
    cp: int = 1
    zero3_prefetch: int = 1  # ZeRO-3/FSDP: layers gathered ahead of the one computing
    reshard_after_forward: bool = True  # FSDP FULL_SHARD; False = SHARD_GRAD_OP (no backward re-gather)

    def __post_init__(self) -> None:
        for name in ("tp", "pp", "dp", "ep", "cp", "micro_batch", "virtual_stages", "param_bytes", "grad_bytes", "act_bytes"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ConfigError(f"{value!r} must be a positive integer", field=name)
        if self.global_batch < 0:
            raise ConfigError(f"{self.global_batch!r} must be >= 0 (0 = micro_batch x dp)", field="global_batch")
        if not isinstance(self.zero3_prefetch, int) or isinstance(self.zero3_prefetch, bool) or self.zero3_prefetch < 0:
            raise ConfigError(f"{self.zero3_prefetch!r} must be an integer >= 0 (layers gathered ahead)", field="zero3_prefetch")
        if self.zero not in (0, 1, 2, 3):
            raise ConfigError(f"ZeRO stage {self.zero!r} unknown; expected 0, 1, 2 or 3", field="zero")
        if self.fsdp and self.zero not in (0, 3):
            raise ConfigError(f"fsdp shards like ZeRO-3; zero={self.zero} conflicts", field="zero")
        if self.fsdp:
            object.__setattr__(self, "zero", 3)
        if self.recompute not in ("none", "selective", "full"):
            raise ConfigError(f"{self.recompute!r}; expected none, selective or full", field="recompute")
        if self.schedule not in ("gpipe", "1f1b", "interleaved"):
            raise ConfigError(f"{self.schedule!r}; expected gpipe, 1f1b or interleaved", field="schedule")
        if self.schedule != "interleaved" and self.virtual_stages != 1:
            raise ConfigError(f"virtual_stages={self.virtual_stages} needs schedule 'interleaved'", field="virtual_stages")
        self._check_stage_layers()
        if self.granularity not in ("block", "op"):
            raise ConfigError(f"{self.granularity!r}; expected block or op", field="granularity")
        tokens = [t.strip() for t in self.order.split("-")]
        if len(set(tokens)) != len(tokens) or not set(tokens) <= set(_ORDER_TOKENS) or not {"tp", "dp", "pp"} <= set(tokens):
            raise ConfigError(
                f"{self.order!r} must be a '-'-separated permutation of tp, dp, pp (and optionally cp, ep)",
                field="order",
            )
        if self.global_batch == 0:
            object.__setattr__(self, "global_batch", self.micro_batch * self.dp)
        if self.dp % self.ep:
            raise InfeasibleError(f"EP={self.ep} does not divide DP={self.dp} (experts are sharded within the data-parallel group)")
        per_step = self.micro_batch * self.dp
        if self.global_batch % per_step:
            raise ConfigError(
                f"global batch {self.global_batch} is not a multiple of micro-batch x DP = {self.micro_batch} x {self.dp}",
                field="global_batch",
            )

    def _check_stage_layers(self) -> None:
        for name in ("first_stage_layers", "last_stage_layers"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ConfigError(f"{value!r} must be an integer >= 0 (0 = as the other stages)", field=name)
        per_stage = tuple(self.layers_per_stage)
        object.__setattr__(self, "layers_per_stage", per_stage)
        per_chunk = tuple(self.layers_per_chunk)
        object.__setattr__(self, "layers_per_chunk", per_chunk)
        if per_chunk:
            if per_stage or self.first_stage_layers or self.last_stage_layers:
                raise ConfigError("give layers_per_chunk alone (not with layers_per_stage or first/last_stage_layers)", field="layers_per_chunk")
            if len(per_chunk) != self.chunks or any(not isinstance(n, int) or isinstance(n, bool) or n < 1 for n in per_chunk):
                raise ConfigError(f"{list(per_chunk)} must list {self.chunks} positive integers (one per model chunk: PP x virtual stages)", field="layers_per_chunk")
            return
        if not per_stage:
            if (self.first_stage_layers or self.last_stage_layers) and self.pp < 2:
                raise ConfigError("first/last stage layers need PP >= 2", field="first_stage_layers")
            return
        if self.first_stage_layers or self.last_stage_layers:
            raise ConfigError("give either layers_per_stage or first/last_stage_layers, not both", field="layers_per_stage")
        if len(per_stage) != self.pp or any(not isinstance(n, int) or isinstance(n, bool) or n < 1 for n in per_stage):
            raise ConfigError(f"{list(per_stage)} must list {self.pp} positive integers (one per pipeline stage)", field="layers_per_stage")

    @property
    def offloads(self) -> bool:
        """Whether anything lives in the expanded-memory tier (optimizer, weights, activations)."""
        return self.offload_optimizer or self.offload_params or self.offload_activations

    @property
    def world(self) -> int:
        return self.tp * self.cp * self.pp * self.dp

    @property
    def dp_cp(self) -> int:
        """Ranks holding the same weights, over which gradients are reduced (and ZeRO shards):
        data-parallel x context-parallel (Megatron-LM's ``dp-cp`` group)."""
        return self.dp * self.cp

    def stage_layers(self, layers: int) -> tuple[int, ...]:
        """Layers on each pipeline stage (raises :class:`InfeasibleError` for a split that does
        not add up to ``layers`` or does not divide into ``virtual_stages`` chunks)."""
        p, v = self.pp, self.virtual_stages
        if self.layers_per_chunk:
            if sum(self.layers_per_chunk) != layers:
                raise InfeasibleError(f"layers_per_chunk {list(self.layers_per_chunk)} adds up to {sum(self.layers_per_chunk)}, not the model's {layers} layers")
            return tuple(sum(self.layers_per_chunk[c * p + s] for c in range(v)) for s in range(p))
        if self.layers_per_stage:
            split = self.layers_per_stage
            if sum(split) != layers:
                raise InfeasibleError(f"layers_per_stage {list(split)} adds up to {sum(split)}, not the model's {layers} layers")
        elif self.first_stage_layers or self.last_stage_layers:
            first = self.first_stage_layers
            last = self.last_stage_layers
            middle_stages = p - (1 if first else 0) - (1 if last else 0)
            rest = layers - first - last
            if rest < 0 or (middle_stages == 0 and rest) or (middle_stages and (rest <= 0 or rest % middle_stages)):
                raise InfeasibleError(
                    f"{layers} layers minus first {first} and last {last} stage layers leave {rest}, "
                    f"which {middle_stages} middle stages cannot share evenly"
                )
            each = rest // middle_stages if middle_stages else 0
            split = tuple([first or each] + [each] * (p - 2) + [last or each]) if p > 1 else (layers,)
        else:
            if layers % self.chunks:
                what = f"PP={p}" + (f" x {v} virtual stages" if v > 1 else "")
                raise InfeasibleError(
                    f"{what} does not divide {layers} layers",
                    hint="give the first/last stage fewer layers (first_stage_layers, last_stage_layers) or list layers_per_stage",
                )
            split = (layers // p,) * p
        if v > 1 and any(n % v for n in split):
            raise InfeasibleError(f"{v} virtual stages do not divide the stage layer counts {list(split)}")
        return split

    def chunk_layers(self, layers: int) -> list[range]:
        """The layers of every global model chunk ``c x pp + stage`` (chunk ``c`` of ``stage``),
        in model order (Megatron's interleaved assignment: chunk 0 of every stage, then chunk 1...)."""
        split = self.stage_layers(layers)
        v = self.virtual_stages
        out: list[range] = []
        start = 0
        if self.layers_per_chunk:
            for n in self.layers_per_chunk:
                out.append(range(start, start + n))
                start += n
            return out
        for _chunk in range(v):
            for stage in range(self.pp):
                n = split[stage] // v
                out.append(range(start, start + n))
                start += n
        return out

    @property
    def microbatches(self) -> int:
        """Micro-batches per pipeline per step (gradient-accumulation steps)."""
        return self.global_batch // (self.micro_batch * self.dp)

    @property
    def order_tokens(self) -> tuple[str, ...]:
        """The order as a full permutation, innermost first; cp and ep inserted before dp when
        absent (Megatron: ep is the innermost part of the data-parallel dimension)."""
        tokens = [t.strip() for t in self.order.split("-")]
        for extra in ("cp", "ep"):
            if extra not in tokens:
                tokens.insert(tokens.index("dp"), extra)
        return tuple(tokens)

    @property
    def chunks(self) -> int:
        """Model chunks per pipeline: pp x virtual_stages."""
        return self.pp * self.virtual_stages

    def check_transformer(self, heads: int, kv_heads: int, ffn: int, layers: int, experts: int, seq: int = 0) -> None:
        """Raise :class:`InfeasibleError` if this model cannot be split this way."""
        if heads % self.tp:
            raise InfeasibleError(f"TP={self.tp} does not divide {heads} heads")
        if kv_heads % self.tp:
            # Megatron-Core shards key/value heads (query groups) over TP and requires them to
            # divide: attention.py, num_query_groups_per_partition = divide(num_query_groups, tp)
            raise InfeasibleError(f"TP={self.tp} does not divide {kv_heads} key/value heads (Megatron shards query groups over TP)")
        if ffn % self.tp:
            raise InfeasibleError(f"TP={self.tp} does not divide the FFN size {ffn}")
        self.stage_layers(layers)
        if self.cp > 1:
            if seq % (2 * self.cp):
                raise InfeasibleError(f"CP={self.cp} needs the sequence ({seq}) to split into 2 x CP equal chunks (Megatron's causal load balancing)")
            if experts > 1:
                raise ConfigError("context parallelism with mixture-of-experts is not modelled", field="cp")
        if experts > 1:
            if experts % self.ep:
                raise InfeasibleError(f"EP={self.ep} does not divide {experts} experts")
            if self.tp > 1 and not self.sp:
                raise ConfigError("mixture-of-experts with TP > 1 needs sequence parallelism (as Megatron-Core)", field="sp")
        elif self.ep > 1:
            raise ConfigError(f"EP={self.ep} given for a dense model", field="ep")
        if self.schedule == "interleaved" and self.pp > 1 and self.microbatches % self.pp:
            raise InfeasibleError(
                f"the interleaved schedule needs the micro-batch count ({self.microbatches}) to be a multiple of PP={self.pp}"
            )
