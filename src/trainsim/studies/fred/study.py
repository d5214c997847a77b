"""The FRED study's tables (studies layer; docs/fred.md, ``trainsim study fred``).

Every number is measured on the fabrics of the platform files (``examples/fred/*.yaml`` by
default): flow programs on the in-network flow backend, steps priced by ``step.py``. The paper's
figures (arXiv 2406.19580) are printed beside them, never used.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from trainsim.collectives import wafer as W
from trainsim.config.platform import load_platform
from trainsim.errors import ConfigError
from trainsim.studies.fred.fabrics import WaferNet
from trainsim.studies.fred.placement import npu_of_rank
from trainsim.studies.fred.step import StepTime, step_time
from trainsim.studies.fred.workloads import PLACEMENT, WORKLOADS, Workload
from trainsim.topology.fabrics import build_graph
from trainsim.topology.wafer import WaferFabric

FABRICS = ("mesh", "fred_a", "fred_b", "fred_c", "fred_d")
PAPER_ALL_REDUCE_TBPS = {"mesh": 1.5, "fred_a": 1.85, "fred_c": 3.0, "fred_d": 3.0}
"""Effective per-NPU bandwidth of a wafer-wide all-reduce, TB/s (the issue's reading of the
paper; B and D: about half the bytes of A and C)."""
PAPER_GROUP_TBPS = {"mesh": 0.75, "fred": 3.0}
PAPER_IO_FRACTION = 0.65  # the mesh's I/O traffic, of the controllers' line rate


def examples_dir() -> Path:
    """``examples/fred`` of the source tree."""
    return Path(__file__).resolve().parents[4] / "examples" / "fred"


def load_nets(directory: Path | None = None, placement: str = "column") -> dict[str, WaferNet]:
    """A :class:`WaferNet` per platform file ``<directory>/<fabric>.yaml``."""
    directory = directory or examples_dir()
    nets = {}
    for name in FABRICS:
        path = directory / f"{name}.yaml"
        if not path.is_file():
            raise ConfigError(f"no platform file {path} (the FRED study reads {', '.join(f + '.yaml' for f in FABRICS)})")
        graph = build_graph(load_platform(path).network)
        if not isinstance(graph, WaferFabric):
            raise ConfigError("the platform's fabric is not a wafer (network.fabric.kind: wafer)", file=str(path))
        nets[name] = WaferNet(graph, name, npu_of_rank(graph.params, placement))
    return nets


@dataclass(frozen=True)
class CollectiveRow:
    fabric: str
    what: str
    bytes_per_npu: float
    time_us: float
    per_npu_gbps: float


def collective_rows(nets: dict[str, WaferNet], nbytes: float = 1e9) -> list[CollectiveRow]:
    """The wafer-wide 20-way all-reduce, and MP 2 x DP 5 x PP 2 groups (tensor-parallel groups
    all at once, data-parallel groups all at once; placement tensor, pipeline, data)."""
    rows = []
    npus = 20
    tp = [[r, r + 1] for r in range(0, npus, 2)]
    dp = [[r + 4 * k for k in range(5)] for r in range(4)]
    for name, net in nets.items():
        for what, groups, role in (("20-way all-reduce", [list(range(npus))], "dp"), ("MP 2 groups", tp, "tp"), ("DP 5 groups", dp, "dp")):
            sent, t, bw = net.effective_bw(groups, [role] * len(groups), W.ALL_REDUCE, nbytes)
            rows.append(CollectiveRow(name, what, sent, t / 1e3, bw))
    return rows


def io_rows(nets: dict[str, WaferNet]) -> dict[str, tuple[float, float]]:
    """Fraction of the controllers' line rate reached streaming weights every NPU needs, and
    weights sharded over the NPUs (each its own part)."""
    return {name: (net.io_efficiency(), net.io_efficiency(shared=False)) for name, net in nets.items()}


@dataclass(frozen=True)
class SpeedupRow:
    workload: str
    steps: dict[str, StepTime]
    paper: float

    @property
    def speedup(self) -> float:
        """FRED-D over the mesh."""
        return self.steps["mesh"].step_s / self.steps["fred_d"].step_s

    @property
    def within_20pct(self) -> bool:
        return abs(self.speedup / self.paper - 1) <= 0.2


def speedup_rows(nets: dict[str, WaferNet], workloads: Sequence[Workload] = WORKLOADS, *, device: str = "H100", order: str = PLACEMENT) -> list[SpeedupRow]:
    out = []
    for w in workloads:
        work = w.generate(device, order)
        steps = {name: step_time(work, w.parallelism, net, streaming=w.streaming, layers=w.layers) for name, net in nets.items()}
        out.append(SpeedupRow(w.name, steps, w.paper_speedup))
    return out
