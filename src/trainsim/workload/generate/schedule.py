"""Pipeline schedules: the order in which one stage runs forward and backward passes
(DESIGN.md, workload layer: generators).

A schedule is a list of ``(pass, micro_batch, chunk)`` with pass ``"F"`` or ``"B"`` and
``chunk`` the local model chunk (0 unless interleaved). The graph generator chains a stage's
passes in this order and connects stages with real SEND/RECV nodes, so warm-up, steady state,
cool-down and the bubbles come out of the simulation, not from a formula.

- GPipe (Huang et al. 2019): all forwards, then all backwards.
- 1F1B / PipeDream-Flush (Narayanan et al. SC'21 §2.2.1; Megatron-LM
  ``forward_backward_pipelining_without_interleaving``): stage ``s`` of ``p`` runs
  ``min(p - s - 1, m)`` warm-up forwards, then alternates one forward and one backward, then
  drains the remaining backwards.
- Interleaved 1F1B (SC'21 §2.2.2; ``forward_backward_pipelining_with_interleaving``): ``v``
  chunks per stage; virtual micro-batch ``k`` runs chunk ``(k // p) % v`` (backward:
  ``v - 1 -`` that) of micro-batch ``(k // (p v)) p + k % p``; warm-up ``2 (p - s - 1) +
  (v - 1) p`` (everything when ``m = p``).
"""

from __future__ import annotations

Step = tuple[str, int, int]


def gpipe(stage: int, stages: int, microbatches: int) -> list[Step]:
    return [("F", i, 0) for i in range(microbatches)] + [("B", i, 0) for i in range(microbatches)]


def one_f_one_b(stage: int, stages: int, microbatches: int) -> list[Step]:
    warmup = min(stages - stage - 1, microbatches)
    steps: list[Step] = [("F", i, 0) for i in range(warmup)]
    for i in range(microbatches - warmup):
        steps.append(("F", warmup + i, 0))
        steps.append(("B", i, 0))
    steps += [("B", i, 0) for i in range(microbatches - warmup, microbatches)]
    return steps


def interleaved(stage: int, stages: int, microbatches: int, chunks: int) -> list[Step]:
    p, v, m = stages, chunks, microbatches
    total = m * v

    def mb(k: int) -> int:
        return (k // (p * v)) * p + k % p

    def fwd(k: int) -> Step:
        return ("F", mb(k), (k // p) % v)

    def bwd(k: int) -> Step:
        return ("B", mb(k), v - 1 - (k // p) % v)

    warmup = total if m == p else min((p - stage - 1) * 2 + (v - 1) * p, total)
    steps = [fwd(k) for k in range(warmup)]
    for i in range(total - warmup):
        steps.append(fwd(warmup + i))
        steps.append(bwd(i))
    steps += [bwd(k) for k in range(total - warmup, total)]
    return steps


def stage_schedule(kind: str, stage: int, stages: int, microbatches: int, chunks: int = 1) -> list[Step]:
    """The pass order of ``stage`` (0-based) under schedule ``kind``."""
    if kind == "gpipe" or stages == 1 and chunks == 1 and kind != "interleaved":
        return gpipe(stage, stages, microbatches) if kind == "gpipe" else one_f_one_b(stage, stages, microbatches)
    if kind == "1f1b":
        return one_f_one_b(stage, stages, microbatches)
    if kind == "interleaved":
        return interleaved(stage, stages, microbatches, chunks)
    raise ValueError(f"unknown schedule {kind!r}")


def in_flight(kind: str, stage: int, stages: int, microbatches: int, chunks: int = 1) -> int:
    """Largest number of (micro-batch, chunk) forwards whose activations a stage holds at once:
    the warm-up forwards plus the one forward of the steady state (all of them under GPipe),
    in closed form (``tests/workload/generate/test_schedule_memory.py`` checks it against
    walking :func:`stage_schedule`)."""
    if kind == "gpipe":
        return microbatches
    if kind == "1f1b":
        return min(stages - stage, microbatches)
    if kind == "interleaved":
        total = microbatches * chunks
        warmup = total if microbatches == stages else min((stages - stage - 1) * 2 + (chunks - 1) * stages, total)
        return warmup + 1 if total > warmup else warmup
    raise ValueError(f"unknown schedule {kind!r}")


def in_flight_walked(kind: str, stage: int, stages: int, microbatches: int, chunks: int = 1) -> int:
    """:func:`in_flight` by walking the schedule (the definition the closed form must meet)."""
    live = peak = 0
    for step in stage_schedule(kind, stage, stages, microbatches, chunks):
        live += 1 if step[0] == "F" else -1
        peak = max(peak, live)
    return peak
