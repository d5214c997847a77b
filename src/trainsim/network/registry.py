"""Network backends by name: factory, declared capabilities and config model (DESIGN.md,
network layer; the registry behind ``--backend`` and a platform file's ``backends:`` section).

Adding a backend is a module with its class and one :func:`register_backend` call (for the
built-in ones, an entry in :data:`_BUILTIN` below); nothing in ``system/`` changes: the system
layer builds a backend through :func:`make_backend` and reads its :class:`Capabilities`.

A backend's own parameters (a packet backend's MTU, buffers, congestion-control knobs) are a
section of the native platform file, ``backends: {NAME: {...}}``, validated by the backend's
pydantic model (``extra="forbid"``); the validated object reaches the factory as ``options``.
Backends without parameters take none, and a section for them is refused.

This module stays light (no numpy, no pydantic at import): the command line lists the names
from it, and built-in backends are imported when first chosen.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from trainsim.errors import ConfigError
from trainsim.network.protocol import NO_SYMMETRY, ONE_LINK, PAIRWISE, Capabilities

if TYPE_CHECKING:
    from trainsim.config.types import NetworkSpec
    from trainsim.engine import EventQueue
    from trainsim.network.protocol import NetworkBackend

BackendFactory = Callable[..., "NetworkBackend"]
"""``factory(spec, queue, *, compat_astra, options) -> backend``; ``options`` is the validated
config object of the backend's platform-file section (its model's defaults when absent), or
None for a backend without a config model."""


@dataclass(frozen=True, slots=True)
class BackendEntry:
    """One registered backend. ``factory`` and ``options_model`` are ``"module:attr"`` paths
    (imported on first use) or the objects themselves."""

    name: str
    factory: BackendFactory | str
    capabilities: Capabilities
    summary: str = ""
    options_model: Any = None  # a pydantic model class, its "module:attr" path, or None

    def load_factory(self) -> BackendFactory:
        return _resolve(self.factory)  # type: ignore[no-any-return]

    def load_options_model(self) -> Any:
        return None if self.options_model is None else _resolve(self.options_model)


def _resolve(ref: Any) -> Any:
    if not isinstance(ref, str):
        return ref
    module, _, attr = ref.partition(":")
    return getattr(importlib.import_module(module), attr)


_BUILTIN = (
    BackendEntry(
        "congestion_unaware",
        "trainsim.network.analytical_native:make_congestion_unaware",
        Capabilities(symmetry=PAIRWISE, whole_ns_compat=True, in_switch=True),
        "hops x latency + bytes / bandwidth per message (ASTRA-sim's analytical backend)",
    ),
    BackendEntry(
        "congestion_aware",
        "trainsim.network.congestion_native:make_congestion_aware",
        Capabilities(symmetry=ONE_LINK, whole_ns_compat=True),
        "FIFO links, store and forward (ASTRA-sim's congestion-aware backend)",
    ),
    BackendEntry(
        "flow",
        "trainsim.network.flow:FlowNetwork",
        Capabilities(symmetry=ONE_LINK),
        "concurrent flows share links by max-min fairness",
    ),
    BackendEntry(
        "in_network_flow",
        "trainsim.network.in_network:InNetworkFlow",
        Capabilities(symmetry=ONE_LINK, in_network=True),
        "the flow backend plus reduction / multicast trees streamed through switches (FRED)",
    ),
    BackendEntry(
        "packet",
        "trainsim.network.packet.backend:PacketNetwork",
        Capabilities(symmetry=NO_SYMMETRY),
        "RoCE packets: shared-buffer switches, PFC, ECN, DCQCN / DCTCP / TIMELY / HPCC",
        "trainsim.network.packet.config:PacketOptions",
    ),
)
_REGISTRY: dict[str, BackendEntry] = {entry.name: entry for entry in _BUILTIN}
DEFAULT_BACKEND = _BUILTIN[0].name
"""The backend a run uses unless told otherwise (ASTRA-sim's analytical one)."""


def register_backend(
    name: str,
    factory: BackendFactory | str,
    capabilities: Capabilities,
    *,
    summary: str = "",
    options_model: Any = None,
    replace: bool = False,
) -> BackendEntry:
    """Make ``name`` a backend that ``--backend`` / ``simulate(backend=...)`` accept."""
    if not name or not name.replace("_", "").isalnum():
        raise ValueError(f"backend name {name!r}: expected letters, digits and underscores")
    if name in _REGISTRY and not replace:
        raise ValueError(f"a network backend named {name!r} is already registered")
    entry = BackendEntry(name, factory, capabilities, summary, options_model)
    _REGISTRY[name] = entry
    return entry


def unregister_backend(name: str) -> None:
    """Remove a backend registered by :func:`register_backend` (built-in ones stay)."""
    if any(entry.name == name for entry in _BUILTIN):
        raise ValueError(f"{name!r} is a built-in network backend")
    _REGISTRY.pop(name, None)


def backend_names() -> tuple[str, ...]:
    """Every registered backend, built-in ones first."""
    return tuple(_REGISTRY)


def backend_entry(name: str, *, field: str = "backend", file: str | None = None) -> BackendEntry:
    """The entry called ``name``, or a ConfigError naming the choices."""
    entry = _REGISTRY.get(name)
    if entry is None:
        raise ConfigError(
            f"unknown network backend {name!r}; expected one of {', '.join(_REGISTRY)}",
            file=file,
            field=field,
        )
    return entry


def backend_capabilities(name: str) -> Capabilities:
    """The declared capabilities of backend ``name`` (without building it)."""
    return backend_entry(name).capabilities


def validate_options(name: str, raw: Any, *, file: str | None = None) -> Any:
    """The validated options of backend ``name`` from its platform-file section ``raw``."""
    entry = backend_entry(name, field=f"backends.{name}", file=file)
    model = entry.load_options_model()
    if model is None:
        if raw:
            raise ConfigError(
                f"network backend {name!r} has no parameters, but its section sets {sorted(raw)}",
                file=file,
                field=f"backends.{name}",
                hint="remove the section",
            )
        return None
    from pydantic import ValidationError

    try:
        return model.model_validate(raw or {})
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"])
        field = f"backends.{name}" + (f".{where}" if where else "")
        value = err.get("input")
        raise ConfigError(
            f"{err['msg']} (got {value!r})", file=file, field=field
        ) from None


def make_backend(
    name: str,
    spec: NetworkSpec,
    queue: EventQueue,
    *,
    compat_astra: bool,
    options: Any = None,
) -> NetworkBackend:
    """Build backend ``name`` over ``spec`` on ``queue``. ``options``: its validated section
    (:func:`validate_options`); None takes the model's defaults."""
    entry = backend_entry(name)
    if options is None and entry.options_model is not None:
        options = validate_options(name, {})
    backend = entry.load_factory()(spec, queue, compat_astra=compat_astra, options=options)
    if backend.capabilities != entry.capabilities:
        raise ValueError(
            f"network backend {name!r} was registered with {entry.capabilities} "
            f"but its instances declare {backend.capabilities}"
        )
    return backend
