"""The strategies the search enumerates (DESIGN.md, optimize layer: strategy search).

Every combination of the generator's knobs for a dense transformer on ``gpus`` GPUs with the
global batch fixed: TP and PP over the divisors of the GPU count (DP the rest), the pipeline
schedule (1F1B, GPipe, interleaved 1F1B with every virtual-stage count that divides the layers
of a stage), the micro-batch over the divisors of the per-replica batch, ZeRO stage 0-3
(FSDP FULL_SHARD is generated as ZeRO-3, so it is not a separate choice), sequence
parallelism (with TP > 1), recomputation (none, selective, full), and offload of optimizer
states, layer weights and saved activations (activations only with PP > 1: a single stage runs
each backward right after its forward, so nothing would leave HBM) to the platform's
expanded-memory tier when it has one. The generator has no context parallelism for the
search to use (its ``cp`` is not searched); overlapped gradient
reduction is searched only when asked (``overlap=True``): the replica slice cannot simulate it
(every rank runs).

A combination the model cannot run is rejected with the generator's own reason (its
:class:`InfeasibleError` message, e.g. ``TP=64 does not divide 96 heads``); choices that are
the same strategy (ZeRO stage with DP 1, SP with TP 1, a schedule with PP 1) are not
enumerated twice.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import product

from trainsim.errors import ConfigError, InfeasibleError
from trainsim.workload.generate import Parallelism
from trainsim.workload.models.transformer import TransformerSpec

RECOMPUTE = ("none", "selective", "full")


def divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


@dataclass(frozen=True)
class SearchSpace:
    """Which values each knob may take; None: every valid value."""

    tp: tuple[int, ...] | None = None
    pp: tuple[int, ...] | None = None
    micro_batch: tuple[int, ...] | None = None
    zero: tuple[int, ...] = (0, 1, 2, 3)
    recompute: tuple[str, ...] = RECOMPUTE
    sp: tuple[bool, ...] = (False, True)
    schedules: tuple[str, ...] = ("1f1b", "gpipe", "interleaved")
    overlap: tuple[bool, ...] = (False,)
    offload: tuple[bool, ...] | None = None
    """Optimizer states in the expanded-memory tier (``Parallelism.offload_optimizer``); None:
    both when the platform has a tier (its ``memory`` section), else off (:func:`~.search.search`)."""
    offload_params: tuple[bool, ...] | None = None
    """Layer weights in the tier (``Parallelism.offload_params``); None: as ``offload``."""
    offload_activations: tuple[bool, ...] | None = None
    """Saved activations in the tier (``Parallelism.offload_activations``, PP > 1); None: as ``offload``."""

    def __post_init__(self) -> None:
        for z in self.zero:
            if z not in (0, 1, 2, 3):
                raise ConfigError(f"ZeRO stage {z!r}; expected 0, 1, 2 or 3", field="zero")
        for r in self.recompute:
            if r not in RECOMPUTE:
                raise ConfigError(
                    f"{r!r}; expected one of {', '.join(RECOMPUTE)}", field="recompute"
                )
        for s in self.schedules:
            if s not in ("1f1b", "gpipe", "interleaved"):
                raise ConfigError(f"{s!r}; expected 1f1b, gpipe or interleaved", field="schedule")


@dataclass(frozen=True)
class Candidate:
    """One enumerated combination: its strategy, or the reason the model cannot run it."""

    params: dict[str, object]
    parallelism: Parallelism | None
    reason: str = ""
    reason_class: str = ""


def _reason_class(message: str) -> str:
    """A rejection message without the strategy's own values, so that equal causes count
    together (``TP=64 does not divide 96 heads`` -> ``TP does not divide 96 heads``)."""
    return re.sub(r" \(\d+\)", "", re.sub(r"=\d+", "", message))


def enumerate_strategies(
    spec: TransformerSpec, gpus: int, global_batch: int, space: SearchSpace | None = None
) -> Iterator[Candidate]:
    """Every combination of ``space`` on ``gpus`` GPUs (TP x PP x DP = gpus) at ``global_batch``."""
    space = space or SearchSpace()
    if spec.is_moe:
        raise ConfigError(
            f"{spec.name} is a mixture-of-experts model; the strategy search covers dense transformers",
            field="model",
        )
    for tp in space.tp or divisors(gpus):
        if gpus % tp:
            continue
        for pp in space.pp or divisors(gpus // tp):
            if (gpus // tp) % pp:
                continue
            dp = gpus // (tp * pp)
            scheds: list[tuple[str, int]] = [("1f1b", 1)]
            if pp > 1:
                scheds = [(s, 1) for s in space.schedules if s != "interleaved"]
                if "interleaved" in space.schedules and spec.layers % pp == 0:
                    scheds += [("interleaved", v) for v in divisors(spec.layers // pp) if v > 1]
                if not scheds:
                    scheds = [("1f1b", 1)]
            per_replica = global_batch // dp if global_batch % dp == 0 else 0
            mbs = [
                mb
                for mb in (space.micro_batch or divisors(per_replica))
                if per_replica and per_replica % mb == 0
            ]
            for sched, v in scheds:
                for mb in mbs or [0]:
                    # the model's own checks, once per level: they do not depend on the knobs below
                    probe = _candidate(
                        spec, tp, pp, dp, mb, global_batch, sched, v, False, 0, "none", False, False
                    )
                    for sp, zero, rc in product(
                        space.sp if tp > 1 else (False,),
                        space.zero if dp > 1 else (0,),
                        space.recompute,
                    ):
                        for overlap, offload, off_w, off_a in product(
                            space.overlap if dp > 1 and zero < 3 else (False,),
                            space.offload or (False,),
                            space.offload_params or (False,),
                            space.offload_activations if pp > 1 and space.offload_activations else (False,),
                        ):
                            if probe.parallelism is None:
                                params = {**probe.params, "sp": sp, "zero": zero, "recompute": rc}
                                yield Candidate(params, None, probe.reason, probe.reason_class)
                            else:
                                yield _candidate(
                                    spec,
                                    tp,
                                    pp,
                                    dp,
                                    mb,
                                    global_batch,
                                    sched,
                                    v,
                                    sp,
                                    zero,
                                    rc,
                                    overlap,
                                    offload,
                                    off_w,
                                    off_a,
                                )


def _candidate(
    spec: TransformerSpec, tp: int, pp: int, dp: int, mb: int, batch: int, sched: str, v: int,
    sp: bool, zero: int, rc: str, overlap: bool, offload: bool, off_w: bool = False, off_a: bool = False,
) -> Candidate:  # fmt: skip
    params: dict[str, object] = {
        "tp": tp, "pp": pp, "dp": dp, "micro_batch": mb, "schedule": sched, "virtual_stages": v,
        "sp": sp, "zero": zero, "recompute": rc,
    }  # fmt: skip
    if overlap:
        params["overlap_grad_reduce"] = True
    if offload:
        params["offload_optimizer"] = True
    if off_w:
        params["offload_params"] = True
    if off_a:
        params["offload_activations"] = True
    if mb == 0:
        message = f"DP={dp} does not divide the global batch {batch}"
        return Candidate(params, None, message, _reason_class(message))
    try:
        par = Parallelism(
            tp=tp, pp=pp, dp=dp, micro_batch=mb, global_batch=batch, schedule=sched,  # type: ignore[arg-type]
            virtual_stages=v, sp=sp, zero=zero, recompute=rc, overlap_grad_reduce=overlap,  # type: ignore[arg-type]
            offload_optimizer=offload, offload_params=off_w, offload_activations=off_a,
        )  # fmt: skip
        par.check_transformer(spec.heads, spec.kv_heads, spec.ffn, spec.layers, spec.experts)
    except (InfeasibleError, ConfigError) as exc:
        message = str(exc).split(" (hint")[0]
        return Candidate(params, None, message, _reason_class(message))
    return Candidate(params, par)
