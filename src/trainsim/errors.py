"""One exception hierarchy for the whole package (DESIGN.md, "Errors").

Library code raises these and never prints or exits; the CLI maps them to exit codes and one
clear line. Every message names the file, the field or node, the value and what was expected.
"""

from __future__ import annotations

from collections.abc import Iterable


class TrainsimError(Exception):
    """Base of every error trainsim raises on purpose."""

    hint: str | None = None

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        if hint is not None:
            self.hint = hint


class ConfigError(TrainsimError):
    """A bad input file or value: names the file, the dotted field path, the value, the expectation."""

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        field: str | None = None,
        hint: str | None = None,
    ) -> None:
        prefix = ""
        if file:
            prefix += f"{file}: "
        if field:
            prefix += f"{field}: "
        super().__init__(prefix + message, hint=hint)
        self.file = file
        self.field = field


class TraceError(TrainsimError):
    """A bad or unsupported workload: names the file, the rank and the node id."""

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        rank: int | None = None,
        node_id: int | None = None,
        hint: str | None = None,
    ) -> None:
        where = []
        if file:
            where.append(str(file))
        if rank is not None:
            where.append(f"rank {rank}")
        if node_id is not None:
            where.append(f"node {node_id}")
        prefix = (", ".join(where) + ": ") if where else ""
        super().__init__(prefix + message, hint=hint)
        self.file = file
        self.rank = rank
        self.node_id = node_id


class InfeasibleError(TrainsimError):
    """This configuration cannot run (out of memory, TP does not divide heads, ...).

    Optimizers and sweeps catch and count it; it is not a bug and not bad input.
    """


class DeadlockError(TrainsimError):
    """Nothing is runnable but nodes remain. ``blocked`` lists (rank, node_id, waits_for)."""

    def __init__(
        self, message: str, blocked: Iterable[tuple[int, int, str]] = (), *, limit: int = 10
    ) -> None:
        self.blocked = list(blocked)
        lines = [message]
        for rank, node_id, why in self.blocked[:limit]:
            lines.append(f"  rank {rank} node {node_id}: {why}")
        if len(self.blocked) > limit:
            lines.append(f"  ... and {len(self.blocked) - limit} more blocked nodes")
        super().__init__("\n".join(lines))


class LivelockError(DeadlockError):
    """Events keep running but the simulated clock does not advance: names the events that
    repeat and, where the component that schedules them reports it, its state (a network
    backend's flows)."""


class SolverError(TrainsimError):
    """A numerical solver could not certify its answer (an optimality gap above tolerance):
    reported as an error rather than returned as an optimum."""


class MissingExtraError(TrainsimError):
    """An optional dependency is not installed: names the extra of ``pyproject.toml`` that
    installs it (``pip install 'trainsim[sweep]'``)."""
