"""Endpoint models: what a collective costs the rank that runs it - endpoint delay, reductions,
and (ACE) the HBM bandwidth and compute units it borrows (DESIGN.md, "Layers"; a layer beside
``memory`` and ``compute``, below ``system``). ``protocol`` is the seam the collective engine
calls, ``astra`` ASTRA-sim's model (the default), ``shared`` the baseline whose collectives
share the rank's HBM and units with compute, ``ace`` ACE's engine beside the NIC, ``ideal`` the
free endpoint (docs/ace.md), ``resource`` their pipes, ``registry`` the models a platform file
chooses from by name, ``config`` their sections' pydantic models. Times in ns, sizes in bytes."""

from trainsim.endpoint.astra import FAST_PATH_NS, AstraEndpoint, AstraEndpointSpec
from trainsim.endpoint.protocol import EndpointModel
from trainsim.endpoint.registry import (
    DEFAULT_ENDPOINT,
    EndpointEntry,
    build_endpoint_model,
    endpoint_entry,
    endpoint_names,
    register_endpoint,
    unregister_endpoint,
)

__all__ = [
    "DEFAULT_ENDPOINT",
    "FAST_PATH_NS",
    "AstraEndpoint",
    "AstraEndpointSpec",
    "EndpointEntry",
    "EndpointModel",
    "build_endpoint_model",
    "endpoint_entry",
    "endpoint_names",
    "register_endpoint",
    "unregister_endpoint",
]
