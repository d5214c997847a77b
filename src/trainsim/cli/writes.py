"""Writing a command's outputs: an operating-system error (a full disk, ``/dev/full``, a folder
made read-only during the run) becomes one :class:`~trainsim.errors.ConfigError` naming the
option and the file, even where Python's error carries no file name (a failed ``write`` or
``close`` has none). Part of ``cli/``, the only layer that writes a command's result files;
standard library only.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from trainsim.errors import ConfigError


@contextmanager
def output_errors(path: Path | str, option: str) -> Iterator[None]:
    """Turn an ``OSError`` raised inside the block into a ConfigError naming ``path``."""
    try:
        yield
    except OSError as exc:
        where = exc.filename if exc.filename not in (None, "") else path
        raise ConfigError(
            f"cannot write {str(where)!r}: {exc.strerror or exc}", field=option
        ) from None


def write_output(path: Path | str, text: str, option: str) -> None:
    """``path`` gets ``text`` (UTF-8); a write error is one line naming the option and file."""
    with output_errors(path, option):
        Path(path).write_text(text, encoding="utf-8")
