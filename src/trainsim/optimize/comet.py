"""The COMET study (Kundu, Rashidi et al., "COMET: A Comprehensive Cluster Design Methodology
for Distributed Deep Learning Training", 2022): for each cluster of a grid, the fastest way to
train a model on it, found by the strategy search (optimize layer, DESIGN.md: a search over
clusters built on the strategy search; docs/comet.md).

A cluster (:class:`Cluster`) is nodes x NPUs per node, the NPU's compute (dense bf16 TFLOP/s)
and HBM (capacity, bandwidth), an optional expanded-memory tier per NPU (latency, bandwidth,
capacity per node, backed by DRAM or PCM), and the intra- and inter-node bandwidth per NPU.
:func:`cluster_platform` writes it as a platform document (two Switch dimensions: the node's
switch and the inter-node fabric; the NPU as a device of the file, on the A100's efficiency
profile). :func:`run_study` searches every cluster with ``optimize.strategy.search`` (estimates:
a 1,024-NPU Transformer-1T step is too large to simulate per cluster), offloading optimizer
states, weights and activations to the tier where the cluster has one, and stores one row per
cluster in a sweep store (``sweep/store.py``): the best strategy, its step and memory, or
``infeasible`` with the closest miss. A study run again on the same store recomputes nothing it
finds there. Times in seconds, bandwidths in GB/s (1e9 B/s), capacities in GB (1e9 B).
"""

from __future__ import annotations

import hashlib
import json
import tempfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field, replace
from itertools import product
from pathlib import Path
from typing import Any

import yaml

from trainsim.errors import ConfigError
from trainsim.optimize.strategy.search import ResultStore, RunItems, SearchInputs, search
from trainsim.optimize.strategy.space import SearchSpace

DEVICE = "NPU"
"""The name of each cluster's NPU in its platform document (``devices:``)."""


@dataclass(frozen=True)
class Cluster:
    """One cluster configuration (module docstring). ``expansion_gbps`` 0: no tier."""

    nodes: int = 128
    npus_per_node: int = 8
    tflops: float = 312.0
    hbm_gb: float = 80.0
    hbm_tbps: float = 2.0
    intra_gbps: float = 300.0
    inter_gbps: float = 25.0
    expansion_gbps: float = 0.0
    expansion_latency_ns: float = 250.0
    expansion_gb_per_node: float = 512.0
    expansion_technology: str = "dram"
    pcm: tuple[tuple[str, Any], ...] = ()

    @property
    def npus(self) -> int:
        return self.nodes * self.npus_per_node

    @property
    def name(self) -> str:
        tier = "none" if not self.has_tier else (
            f"{self.expansion_gbps:g}GBps" if self.expansion_technology == "dram" else "pcm"
        )
        return (f"{self.nodes}x{self.npus_per_node}-{self.tflops:g}TF-hbm{self.hbm_gb:g}GB@{self.hbm_tbps:g}TBps"
                f"-in{self.intra_gbps:g}-out{self.inter_gbps:g}-exp{tier}")  # fmt: skip

    @property
    def has_tier(self) -> bool:
        return self.expansion_gbps > 0 or self.expansion_technology == "pcm"

    def axes(self) -> dict[str, Any]:
        """The cluster as a sweep row's parameters."""
        out = asdict(self)
        out["pcm"] = dict(self.pcm)
        out["npus"] = self.npus
        return out


def cluster_platform(c: Cluster) -> dict[str, Any]:
    """The platform document of cluster ``c`` (module docstring)."""
    doc: dict[str, Any] = {
        "network": {
            "dims": [
                {"topology": "Switch", "size": c.npus_per_node, "bandwidth_gbps": c.intra_gbps, "latency_ns": 700},
                {"topology": "Switch", "size": c.nodes, "bandwidth_gbps": c.inter_gbps, "latency_ns": 2000},
            ]
        },
        "system": {"local_mem_bw_gbps": c.hbm_tbps * 1000},
        "devices": {
            DEVICE: {
                "base": "A100",
                "peak_tflops": {"bf16": c.tflops, "fp16": c.tflops},
                "hbm_bandwidth_gbps": c.hbm_tbps * 1000,
                "hbm_capacity_gb": c.hbm_gb,
            }
        },
    }
    if c.has_tier:
        # per NPU: each NPU's accesses see the tier's bandwidth per NPU; the node's capacity
        # is shared equally by its NPUs
        memory: dict[str, Any] = {"mode": "per_npu", "npus_per_node": c.npus_per_node, "nodes": c.nodes,
                                  "capacity_gb": c.expansion_gb_per_node / c.npus_per_node}  # fmt: skip
        if c.expansion_technology == "pcm":
            memory.update(technology="pcm", pcm=dict(c.pcm))
        else:
            memory.update(latency_ns=c.expansion_latency_ns, bandwidth_gbps=c.expansion_gbps)
        doc["memory"] = memory
    return doc


def grid(**axes: Sequence[Any]) -> list[Cluster]:
    """Every combination of the given :class:`Cluster` fields' values (the others default)."""
    names = list(axes)
    return [replace(Cluster(), **dict(zip(names, values, strict=True))) for values in product(*(axes[n] for n in names))]


DEFAULT_GRID = {"hbm_gb": (40.0, 80.0), "expansion_gbps": (0.0, 64.0), "inter_gbps": (12.5, 100.0)}
"""The default study: 8 clusters of the issue's COMET platform (128 x 8 NPUs of 312 TFLOP/s,
2 TB/s HBM, 300 GB/s in a node): HBM 40 / 80 GB, without and with a 64 GB/s tier, 12.5 and
100 GB/s between nodes."""

FULL_GRID = {
    "hbm_gb": (40.0, 80.0),
    "expansion_gbps": (0.0, 32.0, 64.0, 128.0),
    "inter_gbps": (12.5, 25.0, 50.0, 100.0),
    "npus_per_node": (8, 16),
}
"""64 clusters: HBM x tier bandwidth x inter-node bandwidth x NPUs per node (nodes = 1,024 /
NPUs per node)."""

STUDY_SPACE = SearchSpace(
    tp=(1, 2, 4, 8, 16),
    pp=(1, 2, 4, 8, 16, 32, 64),
    micro_batch=(1, 2, 4),
    zero=(0,),
    recompute=("none", "selective", "full"),
    sp=(True,),
    schedules=("1f1b",),
)
"""The study's default strategy space (``--space 3d``): model parallelism as Megatron-LM
splits it (TP x PP with SP, 1F1B; TP within a node, :attr:`StudyInputs.tp_within_node`) x data
parallelism, without ZeRO, micro-batch 1-4, every recomputation, and every offload where a
tier exists (the search's default then). ``replace(STUDY_SPACE, zero=(0, 1, 2, 3))``
(``--zero 0,1,2,3``) adds ZeRO. Narrower than the search's default so that a cluster takes
seconds (docs/comet.md)."""

COMET_2D_SPACE = replace(STUDY_SPACE, tp=None, pp=(1,))
"""COMET's own two-dimensional space (``--space comet-2d``): "MPx_DPy", model parallelism x
data parallelism with no pipeline dimension, as ASTRA-sim 1.0's ``HYBRID_TRANSFORMER`` workloads
that COMET ran have it (its artifact's Transformer input has ``model_parallel_NPU_group: 128``
on 16-NPU packages: the MP group spans nodes; docs/comet.md). MP is tensor parallelism with SP
of any degree that divides the NPU count (``tp=None``: every divisor, crossing nodes; use it
with ``tp_within_node=False``), PP 1; micro-batch, recomputation, ZeRO and offload as in
:data:`STUDY_SPACE` (no activation offload: the search offloads activations only with PP > 1)."""

SPACES: dict[str, tuple[SearchSpace, bool]] = {"3d": (STUDY_SPACE, True), "comet-2d": (COMET_2D_SPACE, False)}
"""The study's spaces by name (``--space``): the search space and ``tp_within_node``."""


@dataclass(frozen=True)
class StudyInputs:
    """The job every cluster trains, and the strategies searched. ``tp_within_node``: TP
    degrees above the NPUs per node are left out (Megatron-LM keeps tensor parallelism inside
    a node, Narayanan et al. SC'21 §3.3); False lets a TP group span nodes (COMET's 2-D space,
    :data:`COMET_2D_SPACE`: its rings' messages between nodes are priced on both dimensions,
    the inter-node bandwidth limiting, docs/architecture.md "The network seam")."""

    model: str = "transformer-1t"
    global_batch: int = 1536
    seq: int | None = None
    space: SearchSpace = field(default=STUDY_SPACE)
    tp_within_node: bool = True
    top_k: int = 0
    """Best strategies per cluster simulated to measure the estimate's error (0: estimates
    only; a 1,024-NPU Transformer-1T step is minutes per simulation)."""
    max_every_rank: int = 64
    """Simulate strategies that need every rank (ZeRO-3, offload) only up to this many NPUs."""

    @classmethod
    def named(cls, space: str, zero: tuple[int, ...] = (0,), **kwargs: Any) -> StudyInputs:
        """Inputs for one of :data:`SPACES` by name, with the ZeRO stages ``zero``."""
        if space not in SPACES:
            raise ConfigError(f"--space {space!r}: expected one of {', '.join(SPACES)}", field="space")
        search_space, within = SPACES[space]
        return cls(space=replace(search_space, zero=zero), tp_within_node=within, **kwargs)

    def space_for(self, c: Cluster) -> SearchSpace:
        if not self.tp_within_node:
            return self.space
        tps = tuple(t for t in (self.space.tp or (1, 2, 4, 8, 16, 32, 64)) if t <= c.npus_per_node)
        return replace(self.space, tp=tps or (1,))


def cluster_key(inputs: StudyInputs, c: Cluster) -> str:
    """Stable hash of one cluster's study inputs (the store's row key)."""
    text = json.dumps({"model": inputs.model, "batch": inputs.global_batch, "seq": inputs.seq,
                       "space": asdict(inputs.space_for(c)), "platform": cluster_platform(c), "top_k": inputs.top_k,
                       "max_every_rank": inputs.max_every_rank}, sort_keys=True, default=str)  # fmt: skip
    return hashlib.sha256(text.encode()).hexdigest()[:32]


STRATEGY_KEYS = ("tp", "pp", "dp", "micro_batch", "schedule", "sp", "zero", "recompute",
                 "offload_optimizer", "offload_params", "offload_activations")  # fmt: skip


def study_cluster(inputs: StudyInputs, c: Cluster, workdir: Path, run: RunItems | None = None, jobs: int = 1) -> dict[str, Any]:
    """Search cluster ``c`` (simulating its best ``inputs.top_k`` with ``run``, the sweep
    runner); the store row (status ``ok`` with the best strategy by estimate, or
    ``infeasible`` with the closest rejection)."""
    path = workdir / f"{c.name}.yaml"
    path.write_text(yaml.safe_dump(cluster_platform(c), sort_keys=False))
    result = search(SearchInputs(inputs.model, c.npus, inputs.global_batch, str(path), DEVICE, inputs.seq),
                    space=inputs.space_for(c), top_k=inputs.top_k if run is not None else 0, run=run, jobs=jobs,
                    max_every_rank=inputs.max_every_rank)  # fmt: skip
    base = {"key": cluster_key(inputs, c), "params": c.axes(),
            "inputs": {"model": inputs.model, "global_batch": inputs.global_batch, "platform": cluster_platform(c)}}  # fmt: skip
    counts = {"enumerated": result.enumerated, "valid": result.valid, "fit": len(result.rows),
              "estimate_wall_s": result.wall_s.get("estimate", 0.0)}  # fmt: skip
    if not result.rows:
        closest = min(result.rejections.items(), key=lambda kv: kv[1].least_gb, default=None)
        reason = "no strategy fits" + (f": {closest[0]} (closest: {closest[1].example})" if closest else "")
        return {**base, "status": "infeasible", "metrics": counts, "error": reason, "wall_s": 0.0}
    best = result.rows[0]
    par = best.parallelism
    mem = best.memory
    strategy = {k: getattr(par, k) for k in STRATEGY_KEYS}
    metrics = {
        **counts,
        "step_s": best.estimate.step_s,
        "compute_s": best.estimate.compute_s,
        "tp_s": best.estimate.tp_s,
        "bubble_s": best.estimate.bubble_s,
        "dp_s": best.estimate.dp_s,
        "memory_per_gpu_bytes": mem.total,
        "offloaded_bytes": mem.offloaded,
        "offloaded_rows": sum(1 for r in result.rows if r.parallelism.offloads),
        "best_without_offload_s": next((r.estimate.step_s for r in result.rows if not r.parallelism.offloads), None),
        **{f"best_{k}": v for k, v in strategy.items()},
        "simulated": len(result.simulated),
        "max_abs_estimate_error": result.max_abs_error(),
        "best_simulated_s": best.simulated_s,
        "best_estimate_error": best.error,
        "by_split": by_split(result.rows),
    }
    return {**base, "status": "ok", "metrics": metrics, "error": None, "wall_s": result.wall_s.get("estimate", 0.0)}


def split_name(tp: int, pp: int, dp: int) -> str:
    """A fixed model x data-parallel split as COMET names its strategies (MP = TP x PP)."""
    return f"TP{tp}_PP{pp}_DP{dp}"


def by_split(rows: Sequence[Any]) -> dict[str, float]:
    """Per TP x PP x DP split, the best estimated step among the fitting strategies of that
    split (``rows``: the search's :class:`Row` s; micro-batch, recomputation and offload
    chosen per split): the cluster's steps with the parallelization held fixed."""
    out: dict[str, float] = {}
    for r in rows:
        name = split_name(r.parallelism.tp, r.parallelism.pp, r.parallelism.dp)
        out[name] = min(out.get(name, float("inf")), r.estimate.step_s)
    return out


def split_spread(rows: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
    """Spreads over clusters x fixed splits (rows as :func:`run_study` returns them; clusters
    stored before ``by_split`` existed are left out): ``all``: slowest / fastest step over every
    (cluster, split) that fits, with both ends; ``fixed``: the largest slowest / fastest of one
    split across the clusters where it fits (and the split), i.e. clusters compared with the
    parallelization held fixed. None when no row has ``by_split``."""
    cells = [(cluster_of(r).name, split, s) for r in rows if r["status"] == "ok" for split, s in (r.get("by_split") or {}).items()]
    if not cells:
        return None
    slow, fast = max(cells, key=lambda c: c[2]), min(cells, key=lambda c: c[2])
    per: dict[str, list[float]] = {}
    for _, split, s in cells:
        per.setdefault(split, []).append(s)
    fixed_split, steps = max(per.items(), key=lambda kv: max(kv[1]) / min(kv[1]))
    return {"all": slow[2] / fast[2], "slowest": slow, "fastest": fast, "cells": len(cells),
            "fixed": max(steps) / min(steps), "fixed_split": fixed_split, "fixed_clusters": len(steps)}  # fmt: skip


def run_study(
    clusters: Iterable[Cluster],
    store: ResultStore,
    inputs: StudyInputs | None = None,
    *,
    progress: Callable[[str], None] | None = None,
    run: RunItems | None = None,
    jobs: int = 1,
) -> list[dict[str, Any]]:
    """Search every cluster not already in ``store`` (a ``sweep.store.SweepStore``, handed in:
    ``optimize`` may not import ``sweep``); returns every cluster's row (stored or new), in
    the order given."""
    inputs = inputs or StudyInputs()
    say = progress or (lambda _msg: None)
    clusters = list(clusters)
    keys = [cluster_key(inputs, c) for c in clusters]
    done = {r["key"] for r in store.rows(keys)}
    store.set_meta("comet_study", {"model": inputs.model, "global_batch": inputs.global_batch, "seq": inputs.seq})
    with tempfile.TemporaryDirectory(prefix="trainsim-comet-") as tmp:
        for i, (c, key) in enumerate(zip(clusters, keys, strict=True)):
            if key in done:
                say(f"[{i + 1}/{len(clusters)}] {c.name}: in the store")
                continue
            row = study_cluster(inputs, c, Path(tmp), run, jobs)
            store.add([row])
            done.add(key)
            m = row["metrics"]
            say(f"[{i + 1}/{len(clusters)}] {c.name}: " + (f"{m['step_s']:.2f} s" if row["status"] == "ok" else row["error"]))
    stored = {r["key"]: r for r in store.rows(keys)}
    return [stored[k] for k in keys]


def expansion_gains(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per cluster with a tier, its best step against the same cluster without one (rows as
    :func:`run_study` returns them): ``gain`` = step without / step with (None where the
    cluster with the tier is infeasible; ``inf`` where only it fits)."""
    plain = {_twin(cluster_of(r)): r for r in rows if not cluster_of(r).has_tier}
    out = []
    for r in rows:
        c = cluster_of(r)
        base = plain.get(_twin(c)) if c.has_tier else None
        if base is None:
            continue
        with_s = r.get("step_s") if r["status"] == "ok" else None
        without_s = base.get("step_s") if base["status"] == "ok" else None
        gain = None if with_s is None else (float("inf") if without_s is None else without_s / with_s)
        out.append({"cluster": c, "with_s": with_s, "without_s": without_s, "gain": gain})
    return out


def _twin(c: Cluster) -> Cluster:
    """``c`` without its tier."""
    return replace(c, expansion_gbps=0.0, expansion_technology="dram", pcm=(), expansion_latency_ns=Cluster.expansion_latency_ns,
                   expansion_gb_per_node=Cluster.expansion_gb_per_node)  # fmt: skip


def cluster_of(row: dict[str, Any]) -> Cluster:
    """The :class:`Cluster` of a stored row (params flattened, as ``SweepStore.rows`` gives)."""
    known = Cluster.__dataclass_fields__
    fields = {k: v for k, v in row.items() if k in known}
    fields["pcm"] = tuple(sorted((fields.get("pcm") or {}).items()))
    return Cluster(**fields)


def plot_frontier(rows: Sequence[dict[str, Any]], path: str | Path) -> Path:
    """Two panels: each cluster's best step against the inter-node bandwidth (one line per HBM
    capacity, tier and NPUs per node; infeasible clusters marked on the axis), and the gain
    from the tier against the same cluster without one. Writes ``path`` (PNG)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax, bx) = plt.subplots(1, 2, figsize=(12, 4.8))
    lines: dict[tuple[Any, ...], list[tuple[float, float | None]]] = {}
    for r in rows:
        c = cluster_of(r)
        tier = "no tier" if not c.has_tier else (f"tier {c.expansion_gbps:g} GB/s" if c.expansion_technology == "dram" else "PCM tier")
        label = (f"HBM {c.hbm_gb:g} GB, {tier}" + (f", {c.npus_per_node}/node" if c.npus_per_node != 8 else "")
                 + (f", {c.tflops:g} TF" if c.tflops != Cluster.tflops else ""))  # fmt: skip
        lines.setdefault((label,), []).append((c.inter_gbps, r.get("step_s") if r["status"] == "ok" else None))
    markers = "os^vD<>ph*"
    for i, ((label,), pts) in enumerate(sorted(lines.items())):
        pts.sort()
        ok = [(x, y) for x, y in pts if y is not None]
        if ok:
            ax.plot([x for x, _ in ok], [y for _, y in ok], marker=markers[i % len(markers)], label=label)
        bad = [x for x, y in pts if y is None]
        if bad:
            ax.scatter(bad, [ax.get_ylim()[0]] * len(bad), marker="x", color="red")
    _bandwidth_axis(ax, sorted({cluster_of(r).inter_gbps for r in rows}))
    ax.set_xlabel("inter-node bandwidth per NPU (GB/s)")
    ax.set_ylabel("best step (s, estimate)")
    ax.set_title("best strategy per cluster (x: no strategy fits)")
    ax.legend(fontsize=7)
    gains: dict[str, list[tuple[float, float]]] = {}
    for g in expansion_gains(rows):
        c = g["cluster"]
        if g["gain"] is None or g["gain"] == float("inf"):
            continue
        tier = f"tier {c.expansion_gbps:g} GB/s" if c.expansion_technology == "dram" else "PCM tier"
        key = f"HBM {c.hbm_gb:g} GB, {tier}" + (f", {c.npus_per_node}/node" if c.npus_per_node != 8 else "")
        gains.setdefault(key, []).append((c.inter_gbps, g["gain"]))
    for i, (key, gpts) in enumerate(sorted(gains.items())):
        gpts.sort()
        bx.plot([x for x, _ in gpts], [y for _, y in gpts], marker=markers[i % len(markers)], label=key)
    bx.axhline(1.0, color="grey", lw=0.8)
    _bandwidth_axis(bx, sorted({cluster_of(r).inter_gbps for r in rows}))
    bx.set_xlabel("inter-node bandwidth per NPU (GB/s)")
    bx.set_ylabel("step without tier / step with tier")
    bx.set_title("gain from memory expansion")
    if gains:
        bx.legend(fontsize=7)
    fig.tight_layout()
    out = Path(path)
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


def _bandwidth_axis(ax: Any, ticks: list[float]) -> None:
    """A log x axis ticked at the grid's bandwidths, in plain numbers."""
    from matplotlib.ticker import NullFormatter

    ax.set_xscale("log")
    ax.set_xticks(ticks, [f"{t:g}" for t in ticks])
    ax.xaxis.set_minor_formatter(NullFormatter())
