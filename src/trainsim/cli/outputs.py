"""Checks of output paths (``--json``, ``--trace``, ``--out``, ...) made before a command's work.

A command that writes its result after minutes of simulation first checks that it can: the
path is not a folder, its folder exists, and a plot's name ends in a format matplotlib writes.
Each failure is one :class:`~trainsim.errors.ConfigError` naming the option, the path and what
was expected. Standard library only (the CLI's start-up imports no heavy library).
"""

from __future__ import annotations

import os
from collections.abc import Collection
from pathlib import Path

from trainsim.errors import ConfigError

PLOT_SUFFIXES = (".png", ".svg", ".pdf", ".jpg", ".jpeg", ".eps", ".ps", ".tif", ".tiff", ".webp")
"""Formats every matplotlib backend install writes (matplotlib picks the format by suffix)."""


def check_output_file(path: Path | str | None, option: str, *, suffixes: Collection[str] = ()) -> None:
    """``path`` (None or ``-`` for stdout: nothing to check) can be written as a file."""
    if path is None or str(path) == "-":
        return
    p = Path(path)
    if p.is_dir():
        raise ConfigError(f"{str(p)!r} is a folder; expected a file name", field=option)
    if suffixes and p.suffix.lower() not in suffixes:
        raise ConfigError(
            f"{str(p)!r}: expected a file name ending in {', '.join(suffixes)}", field=option
        )
    _check_folder(p.parent, option, str(p))


def check_output_dir(path: Path | str | None, option: str) -> None:
    """``path`` is a folder, or can be made one (its parent folders are made too)."""
    if path is None:
        return
    p = Path(path)
    if p.exists() and not p.is_dir():
        raise ConfigError(f"{str(p)!r} is a file; expected a folder (made if missing)", field=option)
    try:
        p.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"cannot make the folder {str(p)!r}: {exc.strerror}", field=option) from None
    _check_folder(p, option, str(p))


def check_output_prefix(prefix: str, option: str) -> None:
    """A prefix of files ``PREFIX.<n>.et``: it must end in a name, not in a folder separator."""
    if not Path(prefix).name or prefix.endswith(("/", os.sep)):
        raise ConfigError(
            f"{prefix!r} names a folder; expected a file prefix such as {os.path.join(prefix, 'wl')!r} "
            "(files PREFIX.<rank>.et)",
            field=option,
        )


def _check_folder(folder: Path, option: str, path: str) -> None:
    folder = folder if str(folder) else Path(".")
    if not folder.is_dir():
        what = "is not a folder" if folder.exists() else "does not exist"
        raise ConfigError(f"cannot write {path!r}: the folder {str(folder)!r} {what}", field=option)
    if not os.access(folder, os.W_OK | os.X_OK):
        raise ConfigError(f"cannot write {path!r}: the folder {str(folder)!r} is not writable", field=option)
