"""Workload generators: a model and a parallelization strategy -> per-rank graphs,
communicator groups and per-rank memory (DESIGN.md, workload layer: generators)."""

from trainsim.workload.generate.api import GeneratedWorkload, generate, transformer_memory
from trainsim.workload.generate.memory import MemoryBreakdown, zero_model_states
from trainsim.workload.generate.parallel import Parallelism
from trainsim.workload.generate.timer import OpTimer

__all__ = [
    "GeneratedWorkload",
    "MemoryBreakdown",
    "OpTimer",
    "Parallelism",
    "generate",
    "transformer_memory",
    "zero_model_states",
]
