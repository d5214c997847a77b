"""The console the commands print their tables and lines to (cli layer).

On a terminal, rich as usual, except that a table cell that does not fit wraps onto the next
line instead of being cut (rich's default writes ``sche…`` and ``+17.…``). Piped or redirected,
plain text: no colour or style codes, and no width limit, so that every number comes through
whole for ``grep`` and ``awk``.
"""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table

PIPED_WIDTH = 100_000  # characters: wider than any table a command prints


class _Console(Console):
    def print(self, *objects: Any, **kwargs: Any) -> None:
        for obj in objects:
            if isinstance(obj, Table):
                for column in obj.columns:
                    column.overflow = "fold"
        super().print(*objects, **kwargs)


def stdout_console() -> Console:
    """A console on standard output: rich on a terminal, plain unlimited-width text otherwise."""
    console = _Console()
    if console.is_terminal:
        return console
    return _Console(width=PIPED_WIDTH, no_color=True, highlight=False, emoji=False)
