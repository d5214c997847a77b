"""One collective over a range of sizes, reported as nccl-tests reports it (system layer, beside
``api``; the ``trainsim collective`` command prints it).

Each size is one simulation of a single collective on every rank of the platform
(``workload.micro.collective_workload``), so that users can put the model next to what they
measured with nccl-tests on the same machine. The columns follow nccl-tests'
``doc/PERFORMANCE.md``:

- ``size``: the buffer nccl-tests names by ``-b``/``-e``: the all-gather's *output* (every
  rank's piece), the input of the others. A Chakra all-gather's ``comm_size`` is the piece each
  rank contributes (astra-sim-semantics.md, output size n x D), so it runs ``size / n`` bytes;
- ``algbw = size / time``;
- ``busbw = algbw x factor``, the factor making it comparable to the link rate whatever the rank
  count n: all-reduce 2(n-1)/n; all-gather, reduce-scatter and all-to-all (n-1)/n; broadcast
  and reduce 1.

Sizes in bytes, times in seconds, bandwidths in B/s.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from trainsim.config.types import Platform
from trainsim.enums import CommType
from trainsim.errors import ConfigError
from trainsim.system.api import simulate
from trainsim.workload.micro import collective_workload, comm_type_named

_BUS_FACTOR = {
    CommType.ALL_REDUCE: lambda n: 2 * (n - 1) / n,
    CommType.ALL_GATHER: lambda n: (n - 1) / n,
    CommType.REDUCE_SCATTER: lambda n: (n - 1) / n,
    CommType.ALL_TO_ALL: lambda n: (n - 1) / n,
    CommType.BROADCAST: lambda n: 1.0,
    CommType.REDUCE: lambda n: 1.0,
}


@dataclass(frozen=True, slots=True)
class CollectivePoint:
    """One size of the sweep: ``size`` (B, nccl-tests' meaning), the simulated ``time_s`` and
    the two bandwidths (B/s)."""

    size: int
    time_s: float
    algbw: float
    busbw: float
    algorithm: str = ""
    """What rank 0 ran, per logical dimension (``nccl:ring/LL128`` under the NCCL tuner)."""


def bus_factor(comm_type: CommType, ranks: int) -> float:
    """nccl-tests' bus-bandwidth factor of ``comm_type`` on ``ranks`` ranks (module docstring)."""
    return _BUS_FACTOR[comm_type](ranks)


def collective_sweep(
    platform: Platform,
    collective: str,
    sizes: Sequence[int],
    *,
    backend: str,
    compat: str | None = None,
    progress: Callable[[float, int, int], None] | None = None,
) -> list[CollectivePoint]:
    """``collective`` (``all_reduce``, ``all_gather``, ...) of each of ``sizes`` on every rank
    of ``platform``, simulated alone (module docstring). ``progress(simulated_ns, nodes_done,
    nodes_total)`` hears of each size's simulation as ``simulate`` tells it."""
    comm_type = comm_type_named(collective)
    if comm_type not in _BUS_FACTOR:
        raise ConfigError(
            f"{collective!r} has no nccl-tests bandwidth; expected one of "
            f"{', '.join(c.name.lower() for c in _BUS_FACTOR)}",
            field="collective",
        )
    n = platform.network.npus
    factor = bus_factor(comm_type, n)
    points = []
    for size in sizes:
        per_rank = size // n if comm_type == CommType.ALL_GATHER else size
        if per_rank <= 0:
            raise ConfigError(
                f"size {size} B is below one byte per rank on {n} ranks; expected at least {n} B",
                field="sizes",
            )
        result = simulate(platform, collective_workload(n, comm_type, per_rank), backend=backend, compat=compat, progress=progress)
        time_s = result.makespan_s
        algbw = size / time_s if time_s > 0 else float("inf")
        records = result.collectives
        algorithm = ",".join(a for a in records[0].algorithms if a) if len(records) else ""
        points.append(CollectivePoint(size, time_s, algbw, algbw * factor, algorithm))
    return points
