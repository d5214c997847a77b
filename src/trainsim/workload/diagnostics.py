"""Tolerated problems in workload files: counted by kind, reported once each (DESIGN.md,
workload layer).

Readers accept legacy and slightly broken files (chakra-format.md §6.5) and say so: every kind of
problem gives one message per file with its count, kept in ``WorkloadGraph.warnings`` and
emitted as a :class:`TraceWarning`, which the CLI shows. Library code never prints.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable


class TraceWarning(UserWarning):
    """A workload file was read despite a problem (legacy types, missing fields, dangling edges)."""


class WarningTally:
    """Counts problems by kind while one file is read.

    A kind is a message template with ``{n}`` for the count, e.g.
    ``"{n} node(s) lack comm_size; taken as 0 bytes"``.
    """

    def __init__(self) -> None:
        self._counts: dict[str, int] = {}

    def add(self, kind: str, count: int = 1) -> None:
        if count:
            self._counts[kind] = self._counts.get(kind, 0) + count

    def messages(self) -> list[str]:
        """One message per kind, in the order kinds were first seen."""
        return [kind.format(n=count) for kind, count in self._counts.items()]


def emit_trace_warnings(where: str, messages: Iterable[str]) -> None:
    """Emit each message as a :class:`TraceWarning` prefixed with ``where`` (a file name)."""
    for message in messages:
        warnings.warn(f"{where}: {message}", TraceWarning, stacklevel=3)
