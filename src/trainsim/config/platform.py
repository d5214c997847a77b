"""trainsim's native platform file (YAML): load, dump, JSON Schema (config layer).

One file says what ASTRA-sim's four inputs say, in SI-suffixed names; the models and their
units are in :mod:`trainsim.config.platform_models`. For example::

    network:
      dims:
        - {topology: Ring, size: 8, bandwidth_gbps: 50, latency_ns: 500}
    system: {endpoint_delay_ns: 10, preferred_dataset_splits: 4,
             collective_optimization: localBWAware, local_mem_bw_gbps: 1600, all_reduce: [ring]}
    memory: {mode: none}
    comm_groups: {"1": [0, 1, 2, 3]}
    compat: default
    endpoint: {model: astra}     # optional; the model's own keys follow ``model``

``bandwidth_gbps`` is decimal GB/s (1e9 B/s, DESIGN.md "Units"); with ``compat: astra`` the
network's ``bandwidth_gbps`` is ASTRA-sim's GB/s (2**30 B/s), so an ASTRA-sim network YAML's
numbers can be copied unchanged, and runs reproduce ASTRA-sim's arithmetic. Validation errors
become :class:`PlatformValidationError` (a ConfigError): its message is the first problem with
the file, the dotted field, the value, what was expected and the YAML line; ``problems`` holds
one ConfigError per problem. The ``endpoint`` section is checked by the pydantic model of the
endpoint model it names (``trainsim.endpoint.registry``), with the same messages.

pydantic is imported only for a file the fast path (``platform_fast.py``, the models' own
schema without pydantic) does not vouch for: a valid file is read without it, a wrong one gets
pydantic's findings as before (docs/speed.md, "Start-up").
"""

from __future__ import annotations

import math
import types
from pathlib import Path
from typing import TYPE_CHECKING, Any, get_args, get_origin

import yaml

from trainsim.config import platform_fast
from trainsim.config.astra import cross_check, parse_comm_groups
from trainsim.config.checks import did_you_mean, show
from trainsim.config.clos import ClosParams, ClosTier
from trainsim.config.files import load_yaml_mapping, read_text, yaml_line
from trainsim.config.knobs import check_system
from trainsim.config.platform_rules import MEMORY_MODES
from trainsim.config.types import (
    CollectiveImpl,
    DimSpec,
    EndpointSpec,
    FabricSpec,
    NcclSpec,
    NetworkSpec,
    Platform,
    RemoteMemorySpec,
    SharedBusSpec,
    SystemSpec,
)
from trainsim.config.wafer import GB_S, WaferParams
from trainsim.endpoint.registry import endpoint_entry, endpoint_names
from trainsim.errors import ConfigError
from trainsim.units import ASTRA_GBPS, GBPS, TFLOPS

if TYPE_CHECKING:
    from pydantic import BaseModel

    from trainsim.config.platform_fast import Section
    from trainsim.config.platform_models import DeviceModel, FabricModel, PlatformModel, WaferModel


class PlatformValidationError(ConfigError):
    """Every problem pydantic found in a native platform file; reads as the first one.

    ``problems`` holds one ConfigError per problem, each naming the file and its field."""

    def __init__(self, file: str, problems: list[tuple[str | None, str]]) -> None:
        field, detail = problems[0]
        if len(problems) > 1:
            others = ", ".join(f or "(top level)" for f, _ in problems[1:4])
            detail += (
                f" (+{len(problems) - 1} more: {others}{', ...' if len(problems) > 4 else ''})"
            )
        super().__init__(detail, file=file, field=field)
        self.problems = tuple(ConfigError(d, file=file, field=f) for f, d in problems)


def _dotted(loc: tuple[str | int, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _model_at(loc: tuple[str | int, ...], root: type[BaseModel]) -> type[BaseModel] | None:
    from pydantic import BaseModel

    model = root
    for part in loc:
        if isinstance(part, int):
            continue
        info = model.model_fields.get(part)
        if info is None:
            return None
        ann = info.annotation
        while get_origin(ann) is list or isinstance(ann, types.UnionType):
            # list[X] -> X; X | None -> X (an optional section, such as a clos fabric's tiers)
            args = [a for a in get_args(ann) if a is not type(None)]
            ann = args[0] if len(args) == 1 else None
        if not (isinstance(ann, type) and issubclass(ann, BaseModel)):
            return None
        model = ann
    return model


def _problem(
    err: Any, text: str | None, root: type[BaseModel], at: tuple[str, ...] = ()
) -> tuple[str | None, str]:
    """(dotted field, detail) of one pydantic error of ``root``, the model of the section at
    ``at`` in the file."""
    inner = tuple(p for p in err["loc"] if p != "[key]")
    loc = at + inner
    msg: str = err["msg"].removeprefix("Value error, ")
    if err["type"] == "missing":
        detail = "missing; expected this key"
    elif err["type"] == "extra_forbidden":
        parent = _model_at(inner[:-1], root)
        fields = list(parent.model_fields) if parent else []
        known = ", ".join(fields) or "the documented keys"
        detail = f"unknown key {loc[-1]!r}; expected one of {known}{did_you_mean(loc[-1], fields)}"
    elif isinstance(err.get("input"), dict):
        detail = msg
    else:
        detail = f"got {show(err['input'])}; {msg[:1].lower()}{msg[1:]}"
    line = yaml_line(text, loc) if text is not None else None
    if line is not None:
        detail += f" (line {line})"
    return _dotted(loc) or None, detail


def parse_platform(data: dict[str, Any], file: str, *, text: str | None = None) -> Platform:
    """Validate an already-parsed native platform mapping; ``text`` (the YAML) adds lines."""
    problems: list[tuple[str | None, str]] = []
    model: PlatformModel | Section | None = None
    try:
        model = platform_fast.validate(data)
    except platform_fast.Declined:
        from pydantic import ValidationError

        from trainsim.config.platform_models import PlatformModel

        try:
            model = PlatformModel.model_validate(data)
        except ValidationError as exc:
            # an unknown key first: a misspelt key is also a missing one, and its "did you mean" says both
            errors = sorted(exc.errors(), key=lambda e: e["type"] != "extra_forbidden")
            problems = [_problem(e, text, PlatformModel) for e in errors]
    section = data.get("endpoint") if isinstance(data, dict) else None
    endpoint = _endpoint(section, text, problems) if isinstance(section, dict) else None
    if model is None or problems:
        raise PlatformValidationError(file, problems)
    return _to_platform(model, file, endpoint)


def _endpoint(
    section: dict[str, Any], text: str | None, problems: list[tuple[str | None, str]]
) -> EndpointSpec | None:
    """The spec of the ``endpoint`` section, validated by its model's config model; problems
    are appended to ``problems``."""
    name = section.get("model")
    names = endpoint_names()
    if not isinstance(name, str) or name not in names:
        got = "missing" if name is None else f"got {show(name)}"
        line = yaml_line(text, ("endpoint", "model")) if text is not None else None
        where = f" (line {line})" if line is not None else ""
        problems.append(("endpoint.model", f"{got}; expected an endpoint model, one of {', '.join(names)}{where}"))
        return None
    config = endpoint_entry(name).config_model()
    from pydantic import ValidationError

    try:
        spec: EndpointSpec = config.model_validate(section).to_spec()
    except ValidationError as exc:
        problems.extend(_problem(e, text, config, ("endpoint",)) for e in exc.errors())
        return None
    return spec


def load_platform(path: str | Path) -> Platform:
    """Read and validate a native platform YAML into a :class:`Platform`."""
    return parse_platform(load_yaml_mapping(path), str(path), text=read_text(path))


def _to_platform(m: PlatformModel | Section, file: str, endpoint: EndpointSpec | None) -> Platform:
    """The Platform of a validated file (the pydantic model, or the fast path's Section that
    reads the same)."""
    link_unit = ASTRA_GBPS if m.compat == "astra" else GBPS
    fabric = _fabric(m.network.fabric, file, math.prod(d.size for d in m.network.dims))
    network = NetworkSpec(
        dims=tuple(
            DimSpec(d.topology, d.size, d.bandwidth_gbps * link_unit, d.latency_ns)
            for d in m.network.dims
        ) or _derived_dims(fabric),
        source=file,
        fabric=fabric,
    )
    s = m.system
    system = SystemSpec(
        scheduling_policy=s.scheduling_policy,
        endpoint_delay_ns=s.endpoint_delay_ns,
        active_chunks_per_dimension=s.active_chunks_per_dimension,
        preferred_dataset_splits=s.preferred_dataset_splits,
        collective_optimization=s.collective_optimization,
        local_mem_bw=s.local_mem_bw_gbps * GBPS,
        implementations=CollectiveImpl(
            all_reduce=tuple(s.all_reduce),
            all_gather=tuple(s.all_gather),
            reduce_scatter=tuple(s.reduce_scatter),
            all_to_all=tuple(s.all_to_all),
            custom={str(k): v for k, v in s.custom_collectives.items()},
            per_node_custom=s.per_node_custom_implementation,
        ),
        collective_span=s.collective_span,
        inter_dimension_scheduling=s.inter_dimension_scheduling,
        intra_dimension_scheduling=s.intra_dimension_scheduling,
        broadcast=s.broadcast,
        roofline_enabled=s.roofline_enabled,
        peak_perf=s.peak_perf_tflops * TFLOPS,
        boost_mode=s.boost_mode,
        trace_enabled=s.trace_enabled,
        replay_only=s.replay_only,
        track_local_mem=s.track_local_mem,
        local_mem_trace_filename=s.local_mem_trace_filename,
        shared_bus=SharedBusSpec(**s.shared_bus.model_dump()),
        comm_scale=s.comm_scale,
        compute_scale=s.compute_scale,
        injection_scale=s.injection_scale,
        rendezvous=s.rendezvous,
        queues_per_dim=s.queues_per_dim,
        collective_tuner=s.collective_tuner,
        nccl=_nccl_spec(s.nccl),
        source=file,
    )
    check_system(system, file=file, names="native")
    mem = m.memory
    memory = RemoteMemorySpec(
        mode=MEMORY_MODES[mem.mode],  # type: ignore[arg-type]
        latency_ns=mem.latency_ns,
        bandwidth=mem.bandwidth_gbps * GBPS,
        npus_per_node=mem.npus_per_node,
        nodes=mem.nodes,
        source=file,
        capacity=math.inf if mem.capacity_gb is None else mem.capacity_gb * 1e9,
        technology=mem.technology,
        pcm=tuple(sorted((mem.pcm or platform_fast.defaults("PcmTierModel")).model_dump().items())) if mem.technology == "pcm" else (),
    )
    groups = parse_comm_groups(dict(m.comm_groups), file, npus=network.npus, prefix="comm_groups.")
    platform = Platform(
        network,
        system,
        memory,
        groups,
        compat=m.compat,
        endpoint=endpoint,
        backend_options=_backend_options(m.backends, file),
        devices=_devices(m.devices, file),
    )
    cross_check(platform, native=True)
    return platform


def _devices(models: dict[str, DeviceModel], file: str) -> dict[str, Any]:
    """The file's devices as ``DeviceSpec`` (SI units), each from its base device if it names one."""
    from dataclasses import replace

    from trainsim.compute.devices import DeviceSpec, Efficiency, get_device

    out: dict[str, Any] = {}
    for name, d in models.items():
        base = None
        if d.base is not None:
            try:
                base = get_device(d.base)
            except ConfigError as exc:
                raise ConfigError(str(exc), file=file, field=f"devices.{name}.base") from None
        peaks = dict(base.peak_flops) if base else {}
        peaks.update({k: v * TFLOPS for k, v in (d.peak_tflops or {}).items()})
        eff = base.efficiency if base else Efficiency()
        if d.efficiency is not None:
            eff = replace(eff, **{k: v for k, v in d.efficiency.model_dump().items() if v is not None})
        out[name] = DeviceSpec(
            name=name,
            peak_flops=peaks,
            hbm_bandwidth=d.hbm_bandwidth_gbps * GBPS if d.hbm_bandwidth_gbps is not None else base.hbm_bandwidth,  # type: ignore[union-attr]
            hbm_capacity=d.hbm_capacity_gb * 1e9 if d.hbm_capacity_gb is not None else base.hbm_capacity,  # type: ignore[union-attr]
            vendor=d.vendor or (base.vendor if base else ""),
            efficiency=eff,
        )
    return out


def _devices_dict(devices: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {
        name: {
            "vendor": spec.vendor,
            "peak_tflops": {k: _in_unit(v, TFLOPS) for k, v in spec.peak_flops.items()},
            "hbm_bandwidth_gbps": _in_unit(spec.hbm_bandwidth, GBPS),
            "hbm_capacity_gb": spec.hbm_capacity / 1e9,
            "efficiency": {k: float(v) for k, v in vars(spec.efficiency).items()},
        }
        for name, spec in devices.items()
    }


def _backend_options(sections: dict[str, dict[str, Any]], file: str) -> dict[str, Any]:
    """Each backend's section validated by that backend's own model (``network/registry``)."""
    if not sections:
        return {}
    from trainsim.network.registry import validate_options

    return {name: validate_options(name, raw, file=file) for name, raw in sections.items()}


def _derived_dims(fabric: FabricSpec | None) -> tuple[DimSpec, ...]:
    """A clos fabric's equivalent dims (``config/clos.py``); the model has checked that a
    network without dims has one."""
    assert fabric is not None and fabric.clos is not None
    return fabric.clos.dims()


def _clos(f: FabricModel) -> ClosParams | None:
    if f.tiers is None:
        return None
    tiers = []
    bandwidth = 0.0
    for t in f.tiers:
        bandwidth = t.bandwidth_gbps * GBPS if t.bandwidth_gbps is not None else bandwidth
        tiers.append(ClosTier(t.size, bandwidth, t.latency_ns, t.oversubscription, t.rail, t.switches))
    return ClosParams(tuple(tiers))


def _fabric(f: FabricModel | None, file: str, npus: int = 0) -> FabricSpec | None:
    if f is None:
        return None
    wafer = _wafer_params(f.wafer, npus) if f.wafer is not None else None
    problem = wafer.problem() if wafer is not None else None
    if problem is not None:
        raise ConfigError(problem, file=file, field="network.fabric.wafer")
    graph_file = f.file
    if graph_file and not Path(graph_file).is_absolute() and file and not file.startswith("<"):
        graph_file = str(Path(file).parent / graph_file)
    return FabricSpec(
        kind=f.kind,
        hosts_per_leaf=f.hosts_per_leaf,
        spines=f.spines,
        oversubscription=f.oversubscription,
        bandwidth=f.bandwidth_gbps * GBPS,
        latency_ns=f.latency_ns,
        uplink_latency_ns=f.uplink_latency_ns,
        file=graph_file,
        wafer=wafer,
        clos=_clos(f),
    )


def _wafer_params(w: WaferModel, npus: int) -> WaferParams:
    return WaferParams(
        w.kind, npus=npus, cols=w.cols, per_l1=w.per_l1, planes=w.planes,
        npu_link_bw=w.npu_link_gbps * GB_S, npu_l2_bw=w.npu_l2_gbps * GB_S,
        io_controllers=w.io_controllers, io_bw=w.io_gbps * GB_S, in_network=w.in_network,
        latency_ns=w.latency_ns, placement=w.placement,
    )


def _nccl_spec(n: Any) -> NcclSpec:
    """``system.nccl`` (``NcclModel``) in SI units."""
    return NcclSpec(
        arch=n.arch,
        channels=n.channels,
        nvlink_fraction=n.nvlink_fraction,
        efficiency=n.efficiency,
        nvls=n.nvls,
        nvls_reduce_bw=None if n.nvls_reduce_gbps is None else n.nvls_reduce_gbps * GBPS,
        collnet=n.collnet,
        net_overhead_us=n.net_overhead_us,
        algorithms=tuple(n.algorithms),
        protocols=tuple(n.protocols),
    )


def _fabric_dict(f: FabricSpec) -> dict[str, Any]:
    out: dict[str, Any] = {"kind": f.kind, "latency_ns": f.latency_ns}
    if f.kind == "wafer" and f.wafer is not None:
        w = f.wafer
        out["wafer"] = {
            "kind": w.kind, "cols": w.cols, "per_l1": w.per_l1, "planes": w.planes, "npu_link_gbps": w.npu_link_bw / GBPS,
            "npu_l2_gbps": w.npu_l2_bw / GBPS, "io_controllers": w.io_controllers, "io_gbps": w.io_bw / GBPS,
            "in_network": w.in_network, "latency_ns": w.latency_ns, "placement": w.placement,
        }
    elif f.kind == "clos" and f.clos is not None:
        del out["latency_ns"]  # a clos fabric's latencies are per tier
        out["tiers"] = [
            {"size": t.size, "bandwidth_gbps": _in_unit(t.bandwidth, GBPS), "latency_ns": t.latency_ns,
             "oversubscription": t.oversubscription, "rail": t.rail, "switches": t.switches}
            for t in f.clos.tiers
        ]
    elif f.kind == "leaf_spine":
        out.update(hosts_per_leaf=f.hosts_per_leaf, spines=f.spines, oversubscription=f.oversubscription, bandwidth_gbps=_in_unit(f.bandwidth, GBPS))
    else:
        out["file"] = f.file
    return out


def _derived(network: NetworkSpec) -> bool:
    """Whether ``network``'s dims are those its clos fabric derives (then left out of a dump)."""
    clos = network.fabric.clos if network.fabric is not None else None
    return clos is not None and network.dims == clos.dims()


def _in_unit(value: float, unit: float) -> float:
    """``value / unit``, moved by up to 4 ulps so that multiplying back gives ``value`` exactly
    when some neighbour does (the loader multiplies by ``unit``)."""
    x = value / unit
    up = down = x
    for _ in range(5):
        for cand in (up, down):
            if cand * unit == value:
                return cand
        up, down = math.nextafter(up, math.inf), math.nextafter(down, -math.inf)
    return x


def platform_to_dict(p: Platform) -> dict[str, Any]:
    """The native-file mapping for ``p`` (every field written out)."""
    link_unit = ASTRA_GBPS if p.compat == "astra" else GBPS
    s, mem = p.system, p.memory
    impl = s.implementations
    mode = {v: k for k, v in MEMORY_MODES.items()}[mem.mode]
    return {
        "compat": p.compat,
        "network": {
            "dims": [
                {
                    "topology": d.kind,
                    "size": d.size,
                    "bandwidth_gbps": _in_unit(d.bandwidth, link_unit),
                    "latency_ns": d.latency_ns,
                }
                for d in p.network.dims
                if not _derived(p.network)  # a clos fabric's own dims are written as its tiers
            ],
            **({"fabric": _fabric_dict(p.network.fabric)} if p.network.fabric else {}),
        },
        "system": {
            "scheduling_policy": s.scheduling_policy,
            "endpoint_delay_ns": s.endpoint_delay_ns,
            "active_chunks_per_dimension": s.active_chunks_per_dimension,
            "preferred_dataset_splits": s.preferred_dataset_splits,
            "collective_optimization": s.collective_optimization,
            "local_mem_bw_gbps": _in_unit(s.local_mem_bw, GBPS),
            "all_reduce": list(impl.all_reduce),
            "all_gather": list(impl.all_gather),
            "reduce_scatter": list(impl.reduce_scatter),
            "all_to_all": list(impl.all_to_all),
            "collective_span": s.collective_span,
            "custom_collectives": dict(impl.custom),
            "per_node_custom_implementation": impl.per_node_custom,
            "inter_dimension_scheduling": s.inter_dimension_scheduling,
            "intra_dimension_scheduling": s.intra_dimension_scheduling,
            "broadcast": s.broadcast,
            "roofline_enabled": s.roofline_enabled,
            "peak_perf_tflops": _in_unit(s.peak_perf, TFLOPS),
            "boost_mode": s.boost_mode,
            "trace_enabled": s.trace_enabled,
            "replay_only": s.replay_only,
            "track_local_mem": s.track_local_mem,
            "local_mem_trace_filename": s.local_mem_trace_filename,
            "shared_bus": {
                "enabled": s.shared_bus.enabled,
                "latency_ns": s.shared_bus.latency_ns,
                "overhead_ns": s.shared_bus.overhead_ns,
                "gap_ns": s.shared_bus.gap_ns,
                "gap_per_byte_ns": s.shared_bus.gap_per_byte_ns,
                "local_reduction_delay_ns": s.shared_bus.local_reduction_delay_ns,
            },
            "comm_scale": s.comm_scale,
            "compute_scale": s.compute_scale,
            "injection_scale": s.injection_scale,
            "rendezvous": s.rendezvous,
            "queues_per_dim": s.queues_per_dim,
            **(_nccl_dict(s) if s.collective_tuner else {}),
        },
        "memory": {
            "mode": mode,
            "latency_ns": mem.latency_ns,
            "bandwidth_gbps": _in_unit(mem.bandwidth, GBPS),
            "nodes": mem.nodes,
            "npus_per_node": mem.npus_per_node,
            **({"capacity_gb": mem.capacity / 1e9} if math.isfinite(mem.capacity) else {}),
        },
        "comm_groups": {gid: list(members) for gid, members in p.comm_groups.items()},
        **({"endpoint": _endpoint_dict(p.endpoint)} if p.endpoint is not None else {}),
        **({"backends": _backends_dict(p.backend_options)} if p.backend_options else {}),
        **({"devices": _devices_dict(p.devices)} if p.devices else {}),
    }


def _endpoint_dict(spec: EndpointSpec) -> dict[str, Any]:
    section: dict[str, Any] = endpoint_entry(spec.model).config_model().from_spec(spec).model_dump(mode="json")
    return section


def _backends_dict(options: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {name: ({} if opts is None else opts.model_dump(mode="json")) for name, opts in options.items()}


def dump_platform(platform: Platform) -> str:
    """The native YAML for ``platform``, every field written out.

    :func:`load_platform` reads it back to an equal object whenever the bandwidths came from a
    file. A bandwidth set in code (an optimizer's) may come back one ulp away: the file says
    GB/s, and not every float in B/s is some float in GB/s times 1e9."""
    unit = "ASTRA-sim GB/s (2**30 B/s)" if platform.compat == "astra" else "GB/s (1e9 B/s)"
    header = (
        f"# trainsim platform; network bandwidth_gbps in {unit}, other *_gbps in GB/s (1e9 B/s)\n"
    )
    body = yaml.safe_dump(platform_to_dict(platform), sort_keys=False, default_flow_style=None)
    return header + body


def platform_json_schema() -> dict[str, Any]:
    """JSON Schema (draft 2020-12) of the native platform file, for editors. The ``endpoint``
    section is one of the registered endpoint models' sections, told apart by ``model``."""
    from trainsim.config.platform_models import PlatformModel

    schema = PlatformModel.model_json_schema()
    defs = schema.setdefault("$defs", {})
    choices = []
    for name in endpoint_names():
        config = endpoint_entry(name).config_model()
        sub = config.model_json_schema(ref_template="#/$defs/{model}")
        defs.update(sub.pop("$defs", {}))
        defs[config.__name__] = sub
        choices.append({"$ref": f"#/$defs/{config.__name__}"})
    prop = schema["properties"]["endpoint"]
    prop["anyOf"] = [{"oneOf": choices}, {"type": "null"}]
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "trainsim platform"
    return schema


def _nccl_dict(s: SystemSpec) -> dict[str, Any]:
    """``system.collective_tuner`` and ``system.nccl`` as the platform file writes them."""
    n = s.nccl
    return {
        "collective_tuner": s.collective_tuner,
        "nccl": {
            "arch": n.arch,
            "channels": n.channels,
            "nvlink_fraction": n.nvlink_fraction,
            "efficiency": n.efficiency,
            "nvls": n.nvls,
            "nvls_reduce_gbps": None if n.nvls_reduce_bw is None else _in_unit(n.nvls_reduce_bw, GBPS),
            "collnet": n.collnet,
            "net_overhead_us": n.net_overhead_us,
            "algorithms": list(n.algorithms),
            "protocols": list(n.protocols),
        },
    }
