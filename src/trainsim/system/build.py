"""Where a run's hardware models are built from its platform: the endpoint, memory and compute
models behind their seams (system layer; DESIGN.md: hardware models are plug-ins).

Every place that runs a simulation gets its models here - ``api.simulate`` (through the
collective runtime for the endpoint), the representative run, and the tests - so a model added
to a registry or a platform field reaches every path at once:

- :func:`build_endpoint`: the model the platform's ``endpoint`` section chooses
  (``trainsim.endpoint.registry``; ASTRA-sim's when there is none), for the collective engine;
- :func:`build_memory`: the platform's remote memory tier (``memory.RemoteMemory``), on the
  run's event queue, for the executor's load and store nodes;
- :func:`build_compute`: replay, or the roofline when the system section enables it
  (``compute.model``), scaled by ``compute_scale``, for the executor's compute nodes.

``compat_astra``: ASTRA-sim's arithmetic (whole-ns truncations, integer bytes/ns memory
bandwidth). Times in ns, bandwidths in B/s.
"""

from __future__ import annotations

from trainsim.compute import ComputeModel, ReplayCompute, RooflineCompute, ScaledCompute
from trainsim.config.types import Platform
from trainsim.endpoint import EndpointModel, build_endpoint_model
from trainsim.engine import EventQueue
from trainsim.memory import MemoryModel, RemoteMemory
from trainsim.memory.expansion import resolve_memory


def build_endpoint(platform: Platform, compat_astra: bool) -> EndpointModel:
    """The endpoint model of ``platform`` (its ``endpoint`` spec, or ASTRA-sim's)."""
    return build_endpoint_model(platform.endpoint, platform, compat_astra)


def build_memory(platform: Platform, queue: EventQueue, compat_astra: bool) -> MemoryModel:
    """The remote / pooled memory of ``platform``, timed on ``queue``: a DRAM-backed tier as the
    file gives it, a PCM-backed one with the PCM model's numbers (``memory.expansion``)."""
    return RemoteMemory(resolve_memory(platform.memory), queue, compat_astra=compat_astra)


def build_compute(platform: Platform, compat_astra: bool) -> ComputeModel:
    """Roofline compute when the system section enables it (and ``replay_only`` is off: then
    every node replays its recorded duration, as in ASTRA-sim), else replayed durations; times
    x the system's ``compute_scale`` when it is not 1."""
    system = platform.system
    model: ComputeModel
    if system.roofline_enabled and not system.replay_only:
        model = RooflineCompute(system.peak_perf, system.local_mem_bw, compat_astra=compat_astra)
    else:
        model = ReplayCompute(compat_astra=compat_astra)
    if system.compute_scale != 1.0:
        model = ScaledCompute(model, system.compute_scale, compat_astra=compat_astra)
    return model
