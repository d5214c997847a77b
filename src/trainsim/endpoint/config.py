"""The pydantic models of the platform file's ``endpoint:`` section, one per endpoint model
(endpoint layer; imported only when a platform file is read or its JSON Schema written).

A section is ``{model: <name>, ...that model's parameters}``; :class:`EndpointConfig` is the
base every model's section extends: unknown keys and coercions are errors (``extra="forbid"``,
``strict``), ``model`` is the registry name as a literal (the schema's discriminator), and
``to_spec``/``from_spec`` convert between the file's units (named by suffix: ``_ns``,
``_gbps``) and the model's frozen spec in SI units (DESIGN.md, "Units").
"""

from __future__ import annotations

from abc import abstractmethod
from typing import Annotated, Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, model_validator

from trainsim.endpoint.ace import MIB, AceEndpointSpec
from trainsim.endpoint.astra import FAST_PATH_NS, AstraEndpointSpec
from trainsim.endpoint.ideal import IdealEndpointSpec
from trainsim.endpoint.shared import SharedEndpointSpec
from trainsim.units import GBPS

_Positive = Annotated[float, Field(gt=0, allow_inf_nan=False)]


class EndpointConfig(BaseModel):
    """Base of an endpoint model's section (module docstring)."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    model: str

    @abstractmethod
    def to_spec(self) -> Any:
        """The model's frozen spec, in SI units."""

    @classmethod
    @abstractmethod
    def from_spec(cls, spec: Any) -> Self:
        """The section that loads back to ``spec`` (the platform file's dumper)."""


class AstraEndpointConfig(EndpointConfig):
    """ASTRA-sim's endpoint: the system section's endpoint_delay_ns per insertion and three
    passes at its local_mem_bw_gbps per reduction; this section sets the Fast path only."""

    model: Literal["astra"]
    fast_path_ns: Annotated[float, Field(ge=0, allow_inf_nan=False)] = Field(
        default=FAST_PATH_NS,
        description="Delay of an insertion on a communicator group's Fast path, ns "
        "(ASTRA-sim's MemBus: 10)",
    )

    def to_spec(self) -> AstraEndpointSpec:
        return AstraEndpointSpec(fast_path_ns=self.fast_path_ns)

    @classmethod
    def from_spec(cls, spec: AstraEndpointSpec) -> Self:
        return cls(model="astra", fast_path_ns=spec.fast_path_ns)


class SharedEndpointConfig(EndpointConfig):
    """The baseline endpoint as a resource (``endpoint.shared``): collectives on the rank's
    compute units and HBM, competing with compute."""

    model: Literal["shared"]
    compute_units: Annotated[int, Field(ge=1)] = Field(
        default=80, description="Compute units of the rank (SMs)"
    )
    comm_units: Annotated[int, Field(ge=1)] = Field(
        default=8, description="Units collectives hold while in flight (NCCL-style channels)"
    )
    comm_hbm_gbps: _Positive = Field(
        default=450.0, description="Most HBM bandwidth collectives may use, GB/s"
    )
    unit_bandwidth_gbps: _Positive = Field(
        default=50.0, description="HBM bandwidth one unit moves, GB/s"
    )
    hbm_gbps: _Positive | None = Field(
        default=None,
        description="HBM bandwidth of the rank, GB/s (default: the system's local_mem_bw_gbps)",
    )

    @model_validator(mode="after")
    def _units_fit(self) -> Self:
        if self.comm_units >= self.compute_units:
            raise ValueError(
                f"comm_units {self.comm_units} must be below compute_units {self.compute_units} "
                "(compute needs at least one unit)"
            )
        return self

    def to_spec(self) -> SharedEndpointSpec:
        return SharedEndpointSpec(
            compute_units=self.compute_units,
            comm_units=self.comm_units,
            comm_hbm_bw=self.comm_hbm_gbps * GBPS,
            unit_bw=self.unit_bandwidth_gbps * GBPS,
            hbm_bw=None if self.hbm_gbps is None else self.hbm_gbps * GBPS,
        )

    @classmethod
    def from_spec(cls, spec: SharedEndpointSpec) -> Self:
        return cls(
            model="shared",
            compute_units=spec.compute_units,
            comm_units=spec.comm_units,
            comm_hbm_gbps=spec.comm_hbm_bw / GBPS,
            unit_bandwidth_gbps=spec.unit_bw / GBPS,
            hbm_gbps=None if spec.hbm_bw is None else spec.hbm_bw / GBPS,
        )


class AceEndpointConfig(EndpointConfig):
    """ACE (``endpoint.ace``): a collectives engine beside the NIC with its own SRAM, DMA and
    ALUs."""

    model: Literal["ace"]
    sram_mib: _Positive = Field(default=4.0, description="SRAM of the engine, MiB")
    dma_bandwidth_gbps: _Positive = Field(
        default=450.0, description="HBM bandwidth of the engine's DMA, GB/s"
    )
    alu_bandwidth_gbps: _Positive = Field(
        default=1000.0, description="Bytes the engine's ALUs reduce per second, GB/s"
    )
    pipeline_chunks: Annotated[int, Field(ge=1)] = Field(
        default=4,
        description="Chunks the engine holds at once (split: a chunk is at most sram / pipeline_chunks)",
    )
    oversize: Literal["split", "spill"] = Field(
        default="split",
        description="A chunk larger than its SRAM share: split into more chunks, or spill to HBM",
    )
    hbm_gbps: _Positive | None = Field(
        default=None,
        description="HBM bandwidth of the rank, GB/s (default: the system's local_mem_bw_gbps)",
    )

    def to_spec(self) -> AceEndpointSpec:
        return AceEndpointSpec(
            sram_bytes=int(self.sram_mib * MIB),
            dma_bw=self.dma_bandwidth_gbps * GBPS,
            alu_bw=self.alu_bandwidth_gbps * GBPS,
            pipeline_chunks=self.pipeline_chunks,
            oversize=self.oversize,
            hbm_bw=None if self.hbm_gbps is None else self.hbm_gbps * GBPS,
        )

    @classmethod
    def from_spec(cls, spec: AceEndpointSpec) -> Self:
        return cls(
            model="ace",
            sram_mib=spec.sram_bytes / MIB,
            dma_bandwidth_gbps=spec.dma_bw / GBPS,
            alu_bandwidth_gbps=spec.alu_bw / GBPS,
            pipeline_chunks=spec.pipeline_chunks,
            oversize=spec.oversize,
            hbm_gbps=None if spec.hbm_bw is None else spec.hbm_bw / GBPS,
        )


class IdealEndpointConfig(EndpointConfig):
    """The ideal endpoint (``endpoint.ideal``): collectives cost the rank nothing."""

    model: Literal["ideal"]

    def to_spec(self) -> IdealEndpointSpec:
        return IdealEndpointSpec()

    @classmethod
    def from_spec(cls, spec: IdealEndpointSpec) -> Self:
        return cls(model="ideal")
