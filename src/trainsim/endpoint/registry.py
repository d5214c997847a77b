"""Endpoint models by name: the registry the platform file's ``endpoint:`` section chooses from
(endpoint layer; DESIGN.md: a hardware model is a module, a registry entry and its config
model, with no edit to ``system/``).

An entry is a factory ``(spec, platform, compat_astra) -> EndpointModel`` and the pydantic
model of its section (``endpoint.config.EndpointConfig``: ``extra="forbid"``, a ``model``
literal, ``to_spec``/``from_spec`` between the file's units and the frozen spec's SI ones).
The config model may be given as ``"module:Class"`` and is then imported when a platform file
is read or its schema written, so a run built in memory never loads pydantic. ``astra``
(``endpoint.astra``) is built in and is the default when a platform has no section; ``shared``
(the baseline endpoint as a resource), ``ace`` and ``ideal`` are built in too (docs/ace.md).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from trainsim.endpoint.astra import AstraEndpointSpec, build_astra_endpoint
from trainsim.endpoint.protocol import EndpointModel
from trainsim.errors import ConfigError

if TYPE_CHECKING:
    from trainsim.config.types import EndpointSpec, Platform
    from trainsim.endpoint.config import EndpointConfig

EndpointFactory = Callable[[Any, "Platform", bool], EndpointModel]
DEFAULT_ENDPOINT = "astra"


@dataclass(frozen=True)
class EndpointEntry:
    """One endpoint model: its name, factory and section model (module docstring). Either may
    be a ``"module:attr"`` path, imported on first use (the built-in models other than the
    default: a run that does not choose them does not import them)."""

    name: str
    factory: EndpointFactory | str
    config: type[EndpointConfig] | str

    def load_factory(self) -> EndpointFactory:
        """The factory, imported on first use when named by a string."""
        if isinstance(self.factory, str):
            module, _, attr = self.factory.partition(":")
            factory: EndpointFactory = getattr(importlib.import_module(module), attr)
            return factory
        return self.factory

    def config_model(self) -> type[EndpointConfig]:
        """The pydantic model of the section, imported on first use when named by a string."""
        if isinstance(self.config, str):
            module, _, attr = self.config.partition(":")
            cls: type[EndpointConfig] = getattr(importlib.import_module(module), attr)
            return cls
        return self.config


_ENDPOINTS: dict[str, EndpointEntry] = {}


def register_endpoint(
    name: str,
    factory: EndpointFactory | str,
    config: type[EndpointConfig] | str,
    *,
    replace: bool = False,
) -> EndpointEntry:
    """Add the endpoint model ``name`` (its config model's ``model`` literal is the same name).
    A name already taken is an error unless ``replace``."""
    if name in _ENDPOINTS and not replace:
        raise ConfigError(f"endpoint model {name!r} is already registered", field="endpoint.model")
    entry = _ENDPOINTS[name] = EndpointEntry(name, factory, config)
    return entry


def unregister_endpoint(name: str) -> None:
    """Remove ``name`` (a plug-in's, e.g. a test's); unknown names are ignored and the default
    (``astra``) stays."""
    if name != DEFAULT_ENDPOINT:
        _ENDPOINTS.pop(name, None)


def endpoint_names() -> tuple[str, ...]:
    """The registered models, in registration order (``astra`` first)."""
    return tuple(_ENDPOINTS)


def endpoint_entry(name: str) -> EndpointEntry:
    """The entry of ``name``; ConfigError naming the choices when there is none."""
    entry = _ENDPOINTS.get(name)
    if entry is None:
        raise ConfigError(
            f"unknown endpoint model {name!r}; expected one of {', '.join(_ENDPOINTS)}",
            field="endpoint.model",
        )
    return entry


def build_endpoint_model(
    spec: EndpointSpec | None, platform: Platform, compat_astra: bool
) -> EndpointModel:
    """The model ``spec`` chooses (``astra`` with its defaults when None), for ``platform``."""
    if spec is None:
        spec = AstraEndpointSpec()
    return endpoint_entry(spec.model).load_factory()(spec, platform, compat_astra)


register_endpoint(
    DEFAULT_ENDPOINT, build_astra_endpoint, "trainsim.endpoint.config:AstraEndpointConfig"
)
register_endpoint("shared", "trainsim.endpoint.shared:build_shared_endpoint", "trainsim.endpoint.config:SharedEndpointConfig")
register_endpoint("ace", "trainsim.endpoint.ace:build_ace_endpoint", "trainsim.endpoint.config:AceEndpointConfig")
register_endpoint("ideal", "trainsim.endpoint.ideal:build_ideal_endpoint", "trainsim.endpoint.config:IdealEndpointConfig")
