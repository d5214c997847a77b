"""The RoCE study's experiments and table (studies layer; docs/roce.md, "Study";
``trainsim study roce``).

Each experiment runs on the packet backend (``network/packet``) under every scheme of the
platform's ``backends.packet`` section with ``cc`` replaced, and is compared with PFC only
(``cc: none``, always run). Experiments, sizes per NPU:

- ``allreduce``: a two-level ring all-reduce (a ring inside each rack, then across racks);
- ``alltoall``: a two-level direct all-to-all (inside the rack, then across);
- ``alltoall_naive``: a flat direct all-to-all over one dimension of every NPU (each sends to
  all others at once, across the oversubscribed core);
- ``incast``: every NPU but 0 sends one message of the size to NPU 0 at once;
- ``resnet50`` / ``dlrm``: one data-parallel training step of the model zoo's model, generated
  for the A100 (``workload/generate``, roofline operator timer), sizes not used.

Rows go into a result store (``sweep.store.SweepStore``, handed in: ``studies`` may not import
``sweep``) as each finishes, keyed by the platform file's text, the experiment, size and
scheme; a re-run skips the rows already there. The engine is not in the key: both engines give
the same times and counters (tests/network/packet/test_backend.py). Times in microseconds.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from trainsim.config.platform import load_platform
from trainsim.config.types import DimSpec, Platform
from trainsim.engine import EventQueue
from trainsim.errors import ConfigError
from trainsim.network.registry import make_backend
from trainsim.system.api import simulate
from trainsim.workload.micro import collective_workload

SCHEMES = ("none", "dcqcn", "dctcp", "timely", "hpcc")
EXPERIMENTS = ("allreduce", "alltoall", "alltoall_naive", "incast", "resnet50", "dlrm")
MODEL_EXPERIMENTS = ("resnet50", "dlrm")
TITLES = {
    "allreduce": "all-reduce, two-level ring",
    "alltoall": "all-to-all, two-level direct",
    "alltoall_naive": "all-to-all, naive direct",
    "incast": "incast N-1 -> 1",
    "resnet50": "ResNet-50 step",
    "dlrm": "DLRM step",
}
MODELS = {"resnet50": "resnet50", "dlrm": "dlrm"}
"""Experiment name -> model zoo name."""
STUDY_VERSION = 1
"""Part of every row key: raise it when an experiment's definition changes."""


class RowStore(Protocol):
    """What the study needs of a result store (``trainsim.sweep.store.SweepStore``)."""

    def add(self, rows: Iterable[dict[str, Any]]) -> int: ...
    def rows(self, keys: Iterable[str] | None = None) -> list[dict[str, Any]]: ...
    def set_meta(self, name: str, value: Any) -> None: ...


def examples_dir() -> Path:
    """``examples/roce`` of the source tree."""
    return Path(__file__).resolve().parents[4] / "examples" / "roce"


def platform_path(platform: str | Path) -> Path:
    """``32`` / ``128`` (the fabrics of ``examples/roce``) or a platform file."""
    text = str(platform)
    if text in ("32", "128"):
        return examples_dir() / f"platform_{text}.yaml"
    path = Path(text)
    if not path.is_file():
        raise ConfigError(f"{text!r}: expected 32, 128 or a platform file", field="platform",
                          hint="the file must exist and have a backends.packet section")  # fmt: skip
    return path


def load_study_platform(path: Path) -> Platform:
    """The platform at ``path``, refused unless it configures the packet backend."""
    platform = load_platform(path)
    if "packet" not in platform.backend_options:
        raise ConfigError("no backends.packet section: the RoCE study runs on the packet backend", file=str(path),
                          field="backends.packet", hint="see examples/roce/platform_32.yaml")  # fmt: skip
    return platform


def parse_names(text: str, allowed: Sequence[str], option: str) -> tuple[str, ...]:
    """Comma-separated names, each one of ``allowed`` (``all``: every one)."""
    if text.strip() == "all":
        return tuple(allowed)
    names = tuple(dict.fromkeys(n.strip() for n in text.split(",") if n.strip()))
    bad = [n for n in names if n not in allowed]
    if bad or not names:
        raise ConfigError(f"{text!r}: expected comma-separated names from {', '.join(allowed)} (or all)", field=option)
    return names


def parse_sizes(text: str) -> tuple[float, ...]:
    """Comma-separated sizes per NPU in MiB, each > 0."""
    try:
        sizes = tuple(float(v) for v in text.split(",") if v.strip())
    except ValueError:
        sizes = ()
    if not sizes or any(not s > 0 or s > 4096 for s in sizes):
        raise ConfigError(f"{text!r}: expected comma-separated sizes per NPU in MiB, each in (0, 4096], e.g. 1,8",
                          field="size-mib")  # fmt: skip
    return sizes


@dataclass(frozen=True)
class Case:
    """One row: an experiment at a size (MiB per NPU; None for the models) under a scheme."""

    experiment: str
    size_mib: float | None
    scheme: str


def cases(experiments: Sequence[str], sizes_mib: Sequence[float], schemes: Sequence[str]) -> list[Case]:
    """Every row to run, PFC only first in each group (added when not asked for)."""
    order = ("none", *(s for s in schemes if s != "none"))
    out = []
    for e in experiments:
        for size in (None,) if e in MODEL_EXPERIMENTS else sizes_mib:
            out += [Case(e, size, s) for s in order]
    return out


def row_key(platform_text: str, case: Case) -> str:
    """Stable hash of a row's inputs (the store's key)."""
    text = json.dumps({"version": STUDY_VERSION, "platform": platform_text, **dataclasses.asdict(case)}, sort_keys=True)
    return "roce-" + hashlib.sha256(text.encode()).hexdigest()[:32]


def with_options(platform: Platform, **changes: Any) -> Platform:
    """``platform`` with fields of its ``backends.packet`` section replaced."""
    opts = platform.backend_options["packet"].model_copy(update=changes)
    return dataclasses.replace(platform, backend_options={**platform.backend_options, "packet": opts})


def flat(platform: Platform) -> Platform:
    """The same fabric seen as one flat dimension (naive, topology-unaware collectives)."""
    d0 = platform.network.dims[0]
    dim = DimSpec(kind="Switch", size=platform.network.npus, bandwidth=d0.bandwidth, latency_ns=d0.latency_ns)
    network = dataclasses.replace(platform.network, dims=(dim,))
    impl = platform.system.implementations
    impl = dataclasses.replace(impl, all_to_all=impl.all_to_all[:1], all_reduce=impl.all_reduce[:1])
    return dataclasses.replace(platform, network=network, system=dataclasses.replace(platform.system, implementations=impl))


def _summary(time_us: float, counters: dict[str, Any]) -> dict[str, Any]:
    return {
        "time_us": time_us,
        "pause_us": counters["total_pause_ns"] / 1e3,
        "ecn_marks": int(counters["ecn_marks"]),
        "drops": int(counters["drops"]),
        "packets": int(counters["packets_sent"]),
    }


def _collective(platform: Platform, collective: str, size: int) -> dict[str, Any]:
    result = simulate(platform, collective_workload(platform.network.npus, collective, size), backend="packet")
    assert result.network_counters is not None
    return _summary(result.makespan_s * 1e6, result.network_counters)


def _incast(platform: Platform, size: int) -> dict[str, Any]:
    queue = EventQueue()
    net: Any = make_backend("packet", platform.network, queue, compat_astra=False, options=platform.backend_options["packet"])
    done: list[float] = []
    for src in range(1, platform.network.npus):
        net.send(src, 0, size, lambda _: done.append(queue.now))
    queue.run()
    return _summary(max(done) / 1e3, net.counters())


def _model(platform: Platform, name: str) -> dict[str, Any]:
    """One data-parallel training step of a zoo model over every NPU."""
    from trainsim.compute import OperatorTimer, get_device
    from trainsim.workload.generate.api import generate
    from trainsim.workload.generate.parallel import Parallelism
    from trainsim.workload.models.zoo import get_model

    model = get_model(name)
    par = Parallelism(dp=platform.network.npus, micro_batch=model.default_batch)  # type: ignore[union-attr]
    sizes = [d.size for d in platform.network.dims]
    graphs = generate(model, par, OperatorTimer(get_device("A100", {})), network_sizes=sizes).graphs
    result = simulate(platform, graphs, backend="packet")
    assert result.network_counters is not None
    row = _summary(result.makespan_s * 1e6, result.network_counters)
    row["exposed_comm_us"] = max(r.exposed_comm_s for r in result.ranks) * 1e6
    row["compute_us"] = max(r.compute_s for r in result.ranks) * 1e6
    return row


def run_case(platform: Platform, case: Case, engine: str = "auto") -> dict[str, Any]:
    """The metrics of one row (time, pauses, ECN marks, drops, packets, CPU seconds)."""
    p = with_options(platform, cc=case.scheme, engine=engine)
    size = 0 if case.size_mib is None else int(case.size_mib * 2**20)
    cpu = time.process_time()
    if case.experiment == "allreduce":
        row = _collective(p, "all_reduce", size)
    elif case.experiment == "alltoall":
        row = _collective(p, "all_to_all", size)
    elif case.experiment == "alltoall_naive":
        row = _collective(flat(p), "all_to_all", size)
    elif case.experiment == "incast":
        row = _incast(p, size)
    else:
        row = _model(p, MODELS[case.experiment])
    row["cpu_s"] = time.process_time() - cpu
    return row


def run_study(
    path: Path,
    wanted: Sequence[Case],
    store: RowStore,
    *,
    engine: str = "auto",
    progress: Callable[[str], None] | None = None,
) -> list[dict[str, Any]]:
    """Run every case of ``wanted`` not already in ``store`` on the platform file ``path``,
    adding each row as it finishes; returns every wanted row (stored or new) in order, each
    with ``vs_pfc_only`` (its time over PFC only's in its group) and, for the models,
    ``exposed_vs_pfc_only``."""
    say = progress or (lambda _msg: None)
    text = path.read_text()
    platform = load_study_platform(path)
    keys = [row_key(text, c) for c in wanted]
    done = {r["key"] for r in store.rows(keys)}
    store.set_meta("roce_study", {"platform": str(path), "version": STUDY_VERSION})
    for i, (case, key) in enumerate(zip(wanted, keys, strict=True)):
        where = f"[{i + 1}/{len(wanted)}] {case.experiment}" + ("" if case.size_mib is None else f" {case.size_mib:g} MiB") + f" {case.scheme}"
        if key in done:
            say(f"{where}: in the store")
            continue
        metrics = run_case(platform, case, engine)
        store.add([{"key": key, "params": dataclasses.asdict(case), "status": "ok", "metrics": metrics, "error": None,
                    "inputs": {"platform": str(path)}, "wall_s": metrics["cpu_s"]}])  # fmt: skip
        done.add(key)
        say(f"{where}: {metrics['time_us']:.1f} us")
    stored = {r["key"]: r for r in store.rows(keys)}
    return with_ratios([stored[k] for k in keys])


def with_ratios(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each row with its time (and exposed communication) over PFC only's of its group."""
    base = {(r["experiment"], r["size_mib"]): r for r in rows if r["scheme"] == "none"}
    out = []
    for r in rows:
        pfc = base[(r["experiment"], r["size_mib"])]
        extra = {"vs_pfc_only": r["time_us"] / pfc["time_us"]}
        if "exposed_comm_us" in r:
            extra["exposed_vs_pfc_only"] = r["exposed_comm_us"] / pfc["exposed_comm_us"] if pfc["exposed_comm_us"] else 1.0
        out.append({**r, **extra})
    return out


COLUMNS = ("experiment", "size_mib", "scheme", "time_us", "vs_pfc_only", "pause_us", "ecn_marks", "drops", "packets",
           "exposed_comm_us", "exposed_vs_pfc_only", "compute_us", "cpu_s")  # fmt: skip
"""The CSV / JSON columns of a row, in order (the models' columns empty for the others)."""


def table_rows(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows reduced to :data:`COLUMNS` (None where a column does not apply)."""
    return [{c: r.get(c) for c in COLUMNS} for r in rows]
