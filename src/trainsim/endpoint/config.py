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

from pydantic import BaseModel, ConfigDict, Field

from trainsim.endpoint.astra import FAST_PATH_NS, AstraEndpointSpec


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
