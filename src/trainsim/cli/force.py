"""``--force`` for the commands whose work is checked against the limits of ``trainsim.budget``
(cli layer; docs/limits.md): the command runs inside :func:`trainsim.budget.forced` when the
option is set, so every budget check made below it lets its estimate through.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

import typer

F = TypeVar("F", bound=Callable[..., Any])

FORCE_HELP = "Go past the size limits of docs/limits.md (ranks, graph nodes, files, combinations, memory, workers)."


def force_option() -> Any:
    """The ``--force`` option (declare it as ``force: bool = force_option()``)."""
    return typer.Option(False, "--force", help=FORCE_HELP)


def honours_force(command: F) -> F:
    """Decorate a command that declares ``force`` so that its body runs forced when it is set."""

    @functools.wraps(command)
    def run(*args: Any, **kwargs: Any) -> Any:
        from trainsim.budget import forced

        with forced(bool(kwargs.get("force", False))):
            return command(*args, **kwargs)

    return run  # type: ignore[return-value]
