"""The closed-form micro-batches in flight (``schedule.in_flight``) against walking the
schedule, and the graph-free memory model (``memory.stage_memory``) against the generator's."""

import pytest

from trainsim.compute import OperatorTimer
from trainsim.workload.generate import Parallelism, generate
from trainsim.workload.generate.memory import stage_memory
from trainsim.workload.generate.schedule import in_flight, in_flight_walked

from .conftest import toy


@pytest.mark.parametrize("kind", ["gpipe", "1f1b", "interleaved"])
def test_in_flight_closed_form_equals_the_walked_schedule(kind):
    checked = 0
    for stages in (1, 2, 3, 4, 8):
        for m in (1, 2, 3, 4, 5, 8, 12, 16):
            for v in (1, 2, 3) if kind == "interleaved" else (1,):
                if kind == "interleaved" and m % stages:
                    continue
                for stage in range(stages):
                    assert in_flight(kind, stage, stages, m, v) == in_flight_walked(
                        kind, stage, stages, m, v
                    ), (stages, m, v, stage)
                    checked += 1
    assert checked > 40


CASES = [
    Parallelism(tp=2, pp=2, dp=2, micro_batch=1, global_batch=8, recompute="full"),
    Parallelism(
        tp=4, pp=1, dp=2, sp=True, micro_batch=2, global_batch=8, recompute="selective", zero=1
    ),
    Parallelism(
        tp=1,
        pp=4,
        dp=2,
        micro_batch=1,
        global_batch=16,
        schedule="interleaved",
        virtual_stages=2,
        zero=2,
    ),
    Parallelism(tp=2, pp=2, dp=2, micro_batch=1, global_batch=4, schedule="gpipe", zero=3),
    Parallelism(tp=1, pp=2, dp=4, micro_batch=2, global_batch=16, fsdp=True, recompute="full"),
]


@pytest.mark.parametrize(
    "par", CASES, ids=lambda p: f"tp{p.tp}pp{p.pp}dp{p.dp}z{p.zero}{p.schedule}"
)
def test_stage_memory_is_the_generators_memory_exactly(par):
    spec = toy(layers=8, tied_embeddings=par.pp % 2 == 0)
    timer = OperatorTimer("A100")
    w = generate(spec, par, timer)
    for stage in range(par.pp):
        assert stage_memory(spec, par, stage, capacity=timer.memory_capacity) == w.memory[stage]
