"""Python entry points: build a simulation from files or objects and run it.

``simulate(platform, graphs, ...)`` is the object-level call; :func:`run` accepts paths too
(ASTRA-sim's four files, or a native platform YAML) and returns the JSON-ready dict that
``trainsim run --json`` writes. Backends are named by ``network/registry.py`` (the built-in ones
as in reference-results/cases.json).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal

from trainsim.config.knobs import check_system
from trainsim.config.types import Platform
from trainsim.endpoint import EndpointModel
from trainsim.engine import EventQueue, collector_paused
from trainsim.errors import ConfigError, TrainsimError
from trainsim.network.protocol import NetworkBackend
from trainsim.network.registry import DEFAULT_BACKEND, backend_entry, make_backend
from trainsim.system.build import build_compute, build_endpoint, build_memory
from trainsim.system.executor import Executor, workload_log
from trainsim.system.modes import COMPAT_MODES
from trainsim.system.result import RunResult
from trainsim.system.symmetry.group import GroupSymmetryConflict
from trainsim.system.symmetry.whole_step import (
    SymmetryBroken,
    representative_graph,
    representative_run,
)
from trainsim.workload.graph import WorkloadGraph
from trainsim.workload.micro import ReplicatedGraphs, comm_scaled

# The default backend loads with the simulator (as when this module imported it by name), so
# that a run's first simulation does not pay for its import; the others load when chosen.
backend_entry(DEFAULT_BACKEND).load_factory()


def make_network(platform: Platform, queue: EventQueue, backend: str, *, compat_astra: bool) -> NetworkBackend:
    """The network backend called ``backend`` over the platform's network, with its options
    from the platform file's ``backends:`` section (``network/registry.py``)."""
    return make_backend(
        backend,
        platform.network,
        queue,
        compat_astra=compat_astra,
        options=platform.backend_options.get(backend),
    )


def _check_compat(compat: str) -> bool:
    if compat not in COMPAT_MODES:
        raise ConfigError(f"unknown compatibility mode {compat!r}; expected one of {', '.join(COMPAT_MODES)}", field="compat")
    return compat == "astra"


@collector_paused()  # engine.kernel.collector_paused: no garbage cycles to look for
def simulate(
    platform: Platform,
    graphs: Sequence[WorkloadGraph],
    *,
    backend: str = DEFAULT_BACKEND,
    compat: str | None = None,
    symmetry: bool | Literal["strict"] = True,
    progress: Callable[[float, int, int], None] | None = None,
    mirrors: dict[int, tuple[int, ...]] | None = None,
    fold: bool = True,
    mirror_ports: bool = False,
) -> RunResult:
    """Run one step of ``graphs`` (one per rank) on ``platform``.

    ``compat`` ``"astra"`` reproduces ASTRA-sim's arithmetic (whole-ns truncations, integer
    memory bandwidth, ...); ``"default"`` is exact. ``None`` takes the platform's own mode
    (``"astra"`` for ASTRA-sim's input files).

    ``symmetry`` (default on) lets equivalent ranks be simulated once: the whole step by one
    representative rank when every rank runs the same graph of compute and whole-machine
    collectives on a vertex-transitive network (``system/symmetry/whole_step.py``), else each
    symmetric collective by one representative (``system/symmetry/collective.py``); the result is the
    same as with ``symmetry=False``, which simulates every rank (the slow reference path),
    except where rank by rank breaks an order-dependent same-tick tie differently on each rank
    (``result.info["symmetric_ties"]`` counts them; the fast path then gives the symmetric,
    order-independent answer). ``symmetry="strict"`` runs those collectives rank by rank, so
    the result is always the rank-by-rank one. ``result.info["symmetry"]`` says which path ran,
    or why the whole-step one could not.

    ``mirrors`` (rank -> ranks) names ranks that behave exactly as another rank, up to renaming:
    their graphs are not run (pass empty ones), they issue their representative's collectives
    on groups holding them, and their results are left to the caller. The caller guarantees the
    equivalence (``system/symmetry/replica.py`` checks it for generated workloads); with
    ``mirror_ports`` a mirror joining a collective takes its representative's injection ports
    still busy then (``InjectionPorts.copy_busy``; for mirrors whose other collectives do not
    run at all, such as the replica slice's other replicas). Without
    ``mirrors``, ranks proved equivalent from their graphs alone (a workload read from files:
    ``system/symmetry/equivalence.py``) are folded that way, on the pairwise backend, unless
    ``fold`` is off or ``symmetry`` is (the result is the same either way)."""
    compat = compat or platform.compat
    compat_astra = _check_compat(compat)
    check_system(platform.system)
    graphs = comm_scaled(graphs, platform.system.comm_scale)
    npus = platform.network.npus
    if len(graphs) != npus:
        raise ConfigError(
            f"the workload has {len(graphs)} rank graphs but the network has {npus} NPUs",
            file=platform.network.source or None,
            field="npus_count",
        )
    how = "off"
    endpoint = build_endpoint(platform, compat_astra)
    if symmetry and not endpoint.time_invariant:
        # the endpoint shares each rank's HBM and units with its compute over time: every rank
        # runs on the one clock (no representative, no symmetric collective)
        symmetry = False
        how = "off (the endpoint model shares the rank's resources over time)"
    if symmetry and not mirrors:
        graph = representative_graph(platform, graphs, backend)
        blocker = graph if isinstance(graph, str) else ""
        if not isinstance(graph, str):
            try:
                result = representative_run(
                    platform,
                    graph,
                    lambda q: make_network(platform, q, backend, compat_astra=compat_astra),
                    compat_astra=compat_astra,
                    strict=symmetry == "strict",
                    progress=progress,
                )
            except (SymmetryBroken, TrainsimError) as exc:
                blocker = str(exc) or type(exc).__name__
            else:
                result.info.update({"backend": backend, "compat": compat, "npus": npus, "symmetry": "representative"})
                log_finish(result)
                return result
        how = f"per collective (whole step not symmetric: {blocker})"
        folded = None if not fold else _mirrored(platform, graphs, backend, compat_astra, symmetry, progress, endpoint, how)
        if folded is not None:
            folded.info.update({"backend": backend, "compat": compat, "npus": npus})
            log_finish(folded)
            return folded
    try:
        collectives, result = _run(platform, graphs, backend, compat_astra, symmetry, bool(symmetry), progress, mirrors, endpoint, mirror_ports)
    except GroupSymmetryConflict as exc:
        # a member overlapped two collectives: rerun without group symmetry (system/symmetry/group.py)
        how = f"{how}; group symmetry off ({exc})" if symmetry else how
        collectives, result = _run(platform, graphs, backend, compat_astra, symmetry, False, progress, mirrors, mirror_ports=mirror_ports)
    result.info.update({"backend": backend, "compat": compat, "npus": npus, "symmetry": how})
    if collectives is not None:
        result.info["symmetric_ties"] = collectives.symmetric_ties
        result.info["shift_replays"] = collectives.shift_replays
    log_finish(result)
    return result


def _mirrored(
    platform: Platform,
    graphs: Sequence[WorkloadGraph],
    backend: str,
    compat_astra: bool,
    symmetry: bool | Literal["strict"],
    progress: Callable[[float, int, int], None] | None,
    endpoint: EndpointModel,
    how: str,
) -> RunResult | None:
    """The step run by one rank of each class of equivalent ranks, when ranks can be proved
    equivalent from their graphs (``system/symmetry/equivalence.py``: workloads read from
    files), on a backend of the pairwise symmetry class; None otherwise."""
    from trainsim.network.protocol import PAIRWISE
    from trainsim.network.registry import backend_capabilities
    from trainsim.system.symmetry.equivalence import find_mirrors, world_result
    from trainsim.system.symmetry.partial import has_memory_nodes, why_not_partial

    if backend_capabilities(backend).symmetry != PAIRWISE:
        return None
    if why_not_partial(platform, memory_traffic=has_memory_nodes(graphs), compat_astra=compat_astra):
        return None
    mirrors = find_mirrors(platform, graphs, compat_astra=compat_astra)
    if not mirrors:
        return None
    from trainsim.workload.graph import GraphBuilder

    empty = GraphBuilder(source="mirror: runs as its representative").build()
    ran = list(graphs)
    for ms in mirrors.values():
        for m in ms:
            ran[m] = empty
    try:
        collectives, result = _run(platform, ran, backend, compat_astra, symmetry, True, progress, mirrors, endpoint)
    except GroupSymmetryConflict as exc:
        how = f"{how}; group symmetry off ({exc})"
        collectives, result = _run(platform, ran, backend, compat_astra, symmetry, False, progress, mirrors)
    folded = world_result(result, graphs, mirrors)
    folded.info["symmetry"] = f"{how}; equivalent ranks folded ({folded.info['ranks_simulated']} of {len(graphs)} ranks run)"
    folded.info["symmetric_ties"] = collectives.symmetric_ties
    folded.info["shift_replays"] = collectives.shift_replays
    return folded



def log_finish(result: RunResult) -> None:
    """Each rank's finish on the ``trainsim.workload`` logger (INFO), in ASTRA-sim's words
    (``Workload::report``): ``sys[N] finished, X cycles, exposed communication Y cycles.``, a
    cycle being 1 ns. Nothing is formatted unless a handler wants INFO records
    (``config.log_config``: ``--logging-folder`` / ``--logging-configuration``)."""
    log = workload_log("INFO")
    if log is None:
        return
    for r in result.ranks:
        finish = round(r.finish_s * 1e9)
        exposed = round(r.exposed_comm_s * 1e9)
        log.info("sys[%d] finished, %d cycles, exposed communication %d cycles.", r.rank, finish, exposed)


def _run(
    platform: Platform,
    graphs: Sequence[WorkloadGraph],
    backend: str,
    compat_astra: bool,
    symmetry: bool | Literal["strict"],
    group_symmetry: bool,
    progress: Callable[[float, int, int], None] | None,
    mirrors: dict[int, tuple[int, ...]] | None = None,
    endpoint: EndpointModel | None = None,
    mirror_ports: bool = False,
) -> tuple[Any, RunResult]:
    """One run; ``endpoint`` None: a new one of the platform's (a resource-sharing endpoint
    holds the run's state, so a rerun builds its own). Reruns the step with the core's queues
    in Python on a ``CoreQueuesConflict`` and without group replay on a
    ``GroupReplayConflict`` (``info["group_replay"]`` says why)."""
    from trainsim.system.collective_engine import CoreQueuesConflict  # loads with the runtime
    from trainsim.system.symmetry.group_replay import GroupReplayConflict

    fresh_endpoint = endpoint is None
    core_queues, group_replay, replay_off = True, True, ""
    while True:
        queue = EventQueue()
        network = make_network(platform, queue, backend, compat_astra=compat_astra)
        if fresh_endpoint:
            endpoint = build_endpoint(platform, compat_astra)
        collectives = _collective_runtime(platform, network, queue, compat_astra, symmetry, group_symmetry, mirrors, endpoint, mirror_ports, core_queues, group_replay)
        memory, compute = build_memory(platform, queue, compat_astra), build_compute(platform, compat_astra)
        executor = Executor(platform, graphs, network, queue, memory=memory, compute=compute, collectives=collectives, endpoint=endpoint)
        try:
            result = executor.run(progress)
        except CoreQueuesConflict:
            # a rank mixed collectives of rings with others: rerun with every queue in Python
            # (the core still runs ring phases one by one; collective_engine.Engine._work_to_core)
            assert core_queues, "a run without the core's queues cannot conflict"
            core_queues = False
            continue
        except GroupReplayConflict as exc:
            assert group_replay, "a run without group replay cannot conflict"
            group_replay, replay_off = False, f"off ({exc})"
            continue
        result.network_counters = network.counters()
        result.info["group_replays"] = collectives.group_replays
        if replay_off:
            result.info["group_replay"] = replay_off
        return collectives, result


def _collective_runtime(platform: Platform, network: NetworkBackend, queue: EventQueue, compat_astra: bool, symmetry: bool | Literal["strict"] = True, group_symmetry: bool = False, mirrors: dict[int, tuple[int, ...]] | None = None, endpoint: EndpointModel | None = None, mirror_ports: bool = False, core_queues: bool = True, group_replay: bool = False) -> Any:
    from trainsim.system.collective_runtime import CollectiveRuntime

    return CollectiveRuntime(platform, network, queue, compat_astra=compat_astra, symmetry=symmetry, group_symmetry=group_symmetry, mirrors=mirrors, mirror_ports=mirror_ports, endpoint=endpoint, core_queues=core_queues, group_replay=group_replay)


def load_inputs(
    platform: Platform | str | Path | None = None,
    workload: str | Path | Sequence[WorkloadGraph] | None = None,
    *,
    network: str | Path | None = None,
    system: str | Path | None = None,
    memory: str | Path | None = None,
    comm_groups: str | Path | None = None,
) -> tuple[Platform, Sequence[WorkloadGraph]]:
    """Resolve a platform (object, native YAML, or ASTRA-sim's files) and the rank graphs."""
    if isinstance(platform, Platform):
        plat = platform
    elif platform is not None:
        from trainsim.config.platform import load_platform

        ignored = [name for name, path in (("network", network), ("system", system), ("remote-memory", memory)) if path is not None]
        if ignored:
            raise ConfigError(
                f"a platform file and ASTRA-sim's {', '.join(ignored)} configuration were both given; expected one or the other",
                file=str(platform),
                hint="the platform file holds the network, system and memory; leave out the --*-configuration flags (--comm-group-configuration may stay)",
            )

        plat = load_platform(platform)
        if comm_groups is not None:
            from trainsim.config.astra import load_comm_groups

            plat = _with_groups(plat, load_comm_groups(comm_groups, npus=plat.network.npus))
    else:
        if network is None or system is None:
            raise ConfigError(
                "no platform given: pass a native platform file, or both the network and the system configuration",
                hint="trainsim run platform.yaml --workload PREFIX, or ASTRA-sim's --network-configuration/--system-configuration flags",
            )
        from trainsim.config.astra import load_astra_platform

        plat = load_astra_platform(network, system, memory, comm_groups)
    if workload is None:
        raise ConfigError("no workload given", hint="pass --workload PREFIX (rank files PREFIX.<rank>.et)")
    if isinstance(workload, (str, Path)):
        from trainsim.workload.chakra import read_workload

        return plat, read_workload(str(workload), plat.network.npus)
    return plat, (workload if isinstance(workload, ReplicatedGraphs) else list(workload))


def _with_groups(platform: Platform, groups: dict[str, tuple[int, ...]]) -> Platform:
    from dataclasses import replace

    return replace(platform, comm_groups={**platform.comm_groups, **groups})


def run(
    platform: Platform | str | Path | None = None,
    workload: str | Path | Sequence[WorkloadGraph] | None = None,
    *,
    network: str | Path | None = None,
    system: str | Path | None = None,
    memory: str | Path | None = None,
    comm_groups: str | Path | None = None,
    backend: str = DEFAULT_BACKEND,
    compat: str | None = None,
) -> dict[str, Any]:
    """Simulate and return ``{"makespan_s": .., "ranks": [{"rank", "finish_s", "compute_s",
    "comm_s", "exposed_comm_s", ...}, ...]}``."""
    plat, graphs = load_inputs(platform, workload, network=network, system=system, memory=memory, comm_groups=comm_groups)
    return simulate(plat, graphs, backend=backend, compat=compat).to_dict()
