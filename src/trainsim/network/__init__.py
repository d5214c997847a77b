"""Network backends behind one protocol (DESIGN.md, network): ``protocol.NetworkBackend``
states what the system layer uses, ``protocol.Capabilities`` which of its fast paths are exact,
and ``registry`` maps a backend's name to its factory and config model. Analytical
(congestion-unaware) in ``analytical``; congestion-aware and flow-level backends beside it.
Names are imported on first use, so the command line can list backends cheaply."""

from __future__ import annotations

from typing import TYPE_CHECKING

from trainsim.lazyimport import lazy_exports

if TYPE_CHECKING:
    from trainsim.network.analytical import AnalyticalNetwork
    from trainsim.network.base import BackendBase
    from trainsim.network.protocol import (
        NO_SYMMETRY,
        ONE_LINK,
        PAIRWISE,
        Capabilities,
        NetworkBackend,
    )
    from trainsim.network.registry import (
        DEFAULT_BACKEND,
        backend_capabilities,
        backend_names,
        make_backend,
        register_backend,
        unregister_backend,
    )

_EXPORTS = {
    "AnalyticalNetwork": "analytical",
    "BackendBase": "base",
    "NO_SYMMETRY": "protocol",
    "ONE_LINK": "protocol",
    "PAIRWISE": "protocol",
    "Capabilities": "protocol",
    "NetworkBackend": "protocol",
    "DEFAULT_BACKEND": "registry",
    "backend_capabilities": "registry",
    "backend_names": "registry",
    "make_backend": "registry",
    "register_backend": "registry",
    "unregister_backend": "registry",
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
__all__ = [
    "DEFAULT_BACKEND",
    "NO_SYMMETRY",
    "ONE_LINK",
    "PAIRWISE",
    "AnalyticalNetwork",
    "BackendBase",
    "Capabilities",
    "NetworkBackend",
    "backend_capabilities",
    "backend_names",
    "make_backend",
    "register_backend",
    "unregister_backend",
]
