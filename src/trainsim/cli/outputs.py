"""Checks of output paths (``--json``, ``--trace``, ``--out``, ...) made before a command's work.

A command that writes its result after minutes of simulation first checks that it can: the
path is not a folder, its folder exists and is writable, its file system is not full, a device
named as the output takes a byte (``/dev/full`` does not; ``/dev/null`` and terminals are not
probed), and a plot's name ends in a format matplotlib writes.
Each failure is one :class:`~trainsim.errors.ConfigError` naming the option, the path and what
was expected. Standard library only (the CLI's start-up imports no heavy library).
"""

from __future__ import annotations

import os
import stat
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
    if _is_device(p):
        _probe_device(p, option)
        return
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
    folder = Path(prefix).parent
    while str(folder) not in ("", ".") and not folder.exists():  # the command makes the rest
        folder = folder.parent
    _check_folder(folder, option, prefix)


def _check_folder(folder: Path, option: str, path: str) -> None:
    folder = folder if str(folder) else Path(".")
    if not folder.is_dir():
        what = "is not a folder" if folder.exists() else "does not exist"
        raise ConfigError(f"cannot write {path!r}: the folder {str(folder)!r} {what}", field=option)
    if not os.access(folder, os.W_OK | os.X_OK):
        raise ConfigError(f"cannot write {path!r}: the folder {str(folder)!r} is not writable", field=option)
    try:
        full = os.statvfs(folder).f_bfree == 0
    except (OSError, AttributeError):  # not knowable here (Windows): no check
        full = False
    if full:
        raise ConfigError(f"cannot write {path!r}: the file system of {str(folder)!r} is full", field=option)


def _is_device(path: Path) -> bool:
    """A character device other than ``/dev/null`` (``/dev/full``, ``/dev/stdout`` on a tty)."""
    try:
        return stat.S_ISCHR(path.stat().st_mode) and not path.samefile(os.devnull)
    except OSError:
        return False


def _probe_device(path: Path, option: str) -> None:
    """Write one newline to a device named as an output, unless it is a terminal."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
    except OSError as exc:
        raise ConfigError(f"cannot write {str(path)!r}: {exc.strerror}", field=option) from None
    try:
        if not os.isatty(fd):
            os.write(fd, b"\n")
    except OSError as exc:
        raise ConfigError(f"cannot write {str(path)!r}: {exc.strerror}", field=option) from None
    finally:
        os.close(fd)
