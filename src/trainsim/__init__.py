"""trainsim: simulate and optimize distributed deep-learning training platforms.

The package follows the layer map in DESIGN.md (shared/DESIGN.md): engine -> topology ->
network -> collectives/memory/compute/workload -> system -> optimize/sweep/report -> cli.
The public Python entry point is :func:`trainsim.run`.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"


def run(*args: Any, **kwargs: Any) -> dict[str, Any]:
    """Simulate a workload on a platform; see :func:`trainsim.system.api.run`."""
    from trainsim.system.api import run as _run

    return _run(*args, **kwargs)


__all__ = ["run", "__version__"]
