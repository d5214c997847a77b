"""Where a run's hardware models are built from its platform (system layer; DESIGN.md:
hardware models are plug-ins).

Every place that runs a simulation gets its models here - the collective runtime and the
tests - so a model added to a registry or a platform field reaches every path at once:

- :func:`build_endpoint`: the model the platform's ``endpoint`` section chooses
  (``trainsim.endpoint.registry``; ASTRA-sim's when there is none), for the collective engine.

``compat_astra``: ASTRA-sim's arithmetic (whole-ns truncations). Times in ns.
"""

from __future__ import annotations

from trainsim.config.types import Platform
from trainsim.endpoint import EndpointModel, build_endpoint_model


def build_endpoint(platform: Platform, compat_astra: bool) -> EndpointModel:
    """The endpoint model of ``platform`` (its ``endpoint`` spec, or ASTRA-sim's)."""
    return build_endpoint_model(platform.endpoint, platform, compat_astra)

