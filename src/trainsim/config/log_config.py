"""ASTRA-sim's ``--logging-configuration`` and ``--logging-folder`` on Python's logging (config
layer; the CLI calls :func:`configure_logging`, library code only logs).

ASTRA-sim 518bd51 (``LoggerFactory::init``, ``common/Logging.cc``) reads the configuration file
with spdlog_setup (TOML: ``[[sink]]``, ``[[logger]]``, ``[[pattern]]``, ``global_pattern``,
``[global_thread_pool]`` / ``[[thread_pool]]``), then adds its default sinks to every logger:
the console at info, and in the log folder (default ``log``, created if missing) ``log.log``
(debug and above) and ``err.log`` (errors), each rotating at 10 MiB over 10 files; finally it
sets one pattern, ``[%Y-%m-%dT%T%z] [%L] <%n>: %v``, on every logger, which replaces the
patterns the file chose. Loggers it creates on demand log everything (level trace); loggers the
file declares default to info.

Here, spdlog logger ``name`` is Python logger ``trainsim.<name>`` (``::`` -> ``.``); trainsim
logs each rank's finish on ``trainsim.workload`` (ASTRA-sim's ``sys[N] finished, ...`` line)
and, with the system file's ``trace-enabled``, every node issued and finished. Mapped:

- sinks (files are opened when first written): ``stdout_sink_*`` / ``color_stdout_sink_*`` (standard output), ``stderr_*`` and
  ``color_stderr_*`` (standard error), ``basic_file_sink_*`` (``filename``, ``truncate``),
  ``rotating_file_sink_*`` (``base_filename``, ``max_size`` such as ``"10M"``, ``max_files``;
  Python names the rotated files ``name.1``, ``name.2``, ... where spdlog writes
  ``name.1.ext``), ``null_sink_*``; ``level`` and ``create_parent_dir`` on any;
- loggers: ``name``, ``sinks``, ``level``; ``flush_level`` (Python's handlers flush every
  record), ``type = "async"`` with its ``thread_pool`` / ``overflow_policy`` (records are
  written synchronously, in the same order) and the thread-pool tables are accepted;
- patterns are checked (a logger naming an unknown pattern is an error, as in spdlog_setup)
  and then, as in ASTRA-sim, every record is written with ASTRA-sim's pattern;
- refused, with the file, the entry and why: ``daily_file_sink_*`` (date-stamped file names
  Python's logging does not produce), ``syslog_sink_*`` and ``msvc_sink_*`` (no such sink
  here), an unknown sink type, key or level.

Unlike ASTRA-sim, no log folder is created unless ``--logging-folder`` is given, and nothing is
added to the console (the CLI prints its own summary).
"""

from __future__ import annotations

import logging
import logging.handlers
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trainsim.config.checks import check_keys, fail, want_choice, want_int, want_str
from trainsim.errors import ConfigError

TRACE = 5
"""spdlog's ``trace`` level, below DEBUG."""
OFF = logging.CRITICAL + 10
LEVELS = {
    "trace": TRACE,
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "warn": logging.WARNING,
    "err": logging.ERROR,
    "critical": logging.CRITICAL,
    "off": OFF,
}
ROOT = "trainsim"
ASTRA_PATTERN = "[%Y-%m-%dT%T%z] [%L] <%n>: %v"
"""The pattern ASTRA-sim sets on every logger (``LoggerFactory::init_default_components``)."""
_ROTATE_BYTES = 10 * 1024 * 1024
_ROTATE_FILES = 10
_SHORT = {TRACE: "T", logging.DEBUG: "D", logging.INFO: "I", logging.WARNING: "W", logging.ERROR: "E", logging.CRITICAL: "C"}
_MAX_SIZE = re.compile(r"^\s*(\d+)\s*(T|G|M|K|)(:?B|)\s*$", re.IGNORECASE)
_SIZE_UNIT = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}

_TOP_KEYS = ("sink", "logger", "pattern", "global_pattern", "global_thread_pool", "thread_pool")
_SINK_COMMON = ("name", "type", "level", "create_parent_dir")
_LOGGER_KEYS = ("name", "sinks", "level", "flush_level", "pattern", "type", "thread_pool", "overflow_policy")
_REFUSED_SINKS = {
    "daily_file_sink": "a daily-rotating file with date-stamped names, which Python's logging does not write",
    "syslog_sink": "the system log, which trainsim does not write to",
    "msvc_sink": "the Windows debugger output, which trainsim does not write to",
}


class AstraFormatter(logging.Formatter):
    """Renders ASTRA-sim's pattern ``[%Y-%m-%dT%T%z] [%L] <%n>: %v``: local time with its UTC
    offset, the level's initial, the spdlog logger name, the message."""

    def format(self, record: logging.LogRecord) -> str:
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(record.created))
        level = _SHORT.get(record.levelno, record.levelname[:1])
        return f"[{stamp}] [{level}] <{astra_name(record.name)}>: {record.getMessage()}"


def astra_name(python_name: str) -> str:
    """``trainsim.workload`` -> ``workload`` (spdlog's logger name)."""
    return python_name.removeprefix(ROOT + ".").replace(".", "::")


@dataclass
class LogSetup:
    """The handlers and levels :func:`configure_logging` set; :meth:`close` undoes them."""

    handlers: list[tuple[logging.Logger, logging.Handler]] = field(default_factory=list)
    levels: dict[str, int] = field(default_factory=dict)  # logger name -> level before
    files: list[Path] = field(default_factory=list)

    def set_level(self, logger: logging.Logger, level: int) -> None:
        self.levels.setdefault(logger.name, logger.level)
        logger.setLevel(level)

    def close(self) -> None:
        for logger, handler in self.handlers:
            logger.removeHandler(handler)
            handler.close()
        for name, level in self.levels.items():
            logging.getLogger(name).setLevel(level)
        self.handlers.clear()
        self.levels.clear()

    def __enter__(self) -> LogSetup:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def configure_logging(config: str | Path | None = None, folder: str | Path | None = None) -> LogSetup:
    """Set up trainsim's loggers as ASTRA-sim's flags would (module docstring). ``config``: an
    spdlog_setup TOML file (``--logging-configuration``; ASTRA-sim's ``empty`` means none);
    ``folder``: where ``log.log`` and ``err.log`` go (``--logging-folder``). Bad input is one
    ConfigError naming the file and the entry; nothing is changed then."""
    logging.addLevelName(TRACE, "TRACE")
    formatter = AstraFormatter()
    planned: list[tuple[str, logging.Handler]] = []  # (logger name, handler)
    levels: dict[str, int] = {}
    if config is not None and str(config) != "empty":
        for name, handler, level in _from_file(Path(config)):
            planned.append((name, handler))
            levels[name] = level
    if folder is not None:
        path = Path(folder)
        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ConfigError(f"cannot create the log folder: {exc.strerror or exc}", field="--logging-folder", file=str(path)) from None
        for file, level in (("log.log", logging.DEBUG), ("err.log", logging.ERROR)):
            target = path / file
            try:
                handler = logging.handlers.RotatingFileHandler(target, maxBytes=_ROTATE_BYTES, backupCount=_ROTATE_FILES, encoding="utf-8")
            except OSError as exc:
                for _name, made in planned:
                    made.close()
                raise ConfigError(f"cannot open the log file: {exc.strerror or exc}", file=str(target), field="--logging-folder") from None
            handler.setLevel(level)
            planned.append((ROOT, handler))
    setup = LogSetup()
    if not planned and not levels:
        return setup
    setup.set_level(logging.getLogger(ROOT), TRACE)  # loggers made on demand log everything
    for name, level in levels.items():
        setup.set_level(logging.getLogger(name), level)
    for name, handler in planned:
        handler.setFormatter(formatter)
        logger = logging.getLogger(name)
        logger.addHandler(handler)
        setup.handlers.append((logger, handler))
        if isinstance(handler, logging.FileHandler):
            setup.files.append(Path(handler.baseFilename))
    return setup


def _from_file(path: Path) -> list[tuple[str, logging.Handler, int]]:
    """(Python logger name, handler or None, level) per sink of each ``[[logger]]``."""
    import tomllib

    file = str(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError("no such file", file=file, field="--logging-configuration") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read the file: {exc}", file=file) from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"not valid TOML (spdlog_setup's format): {exc}", file=file) from None
    check_keys(data, _TOP_KEYS, file, hint="keys are spdlog_setup's: [[sink]], [[logger]], [[pattern]], global_pattern")
    patterns = {}
    for i, entry in enumerate(_tables(data, "pattern", file)):
        check_keys(entry, ("name", "value"), file, prefix=f"pattern[{i}].")
        patterns[want_str(entry.get("name"), file, f"pattern[{i}].name")] = want_str(entry.get("value"), file, f"pattern[{i}].value")
    if "global_pattern" in data:
        want_str(data["global_pattern"], file, "global_pattern")
    sinks = {}
    for i, entry in enumerate(_tables(data, "sink", file)):
        name = want_str(entry.get("name"), file, f"sink[{i}].name")
        sinks[name] = _sink(entry, file, f"sink[{i}]")
    loggers = _tables(data, "logger", file)
    if not loggers:
        raise ConfigError("no [[logger]] entries; expected at least one (spdlog_setup requires it)", file=file, field="logger")
    out: list[tuple[str, logging.Handler, int]] = []
    for i, entry in enumerate(loggers):
        where = f"logger[{i}]"
        check_keys(entry, _LOGGER_KEYS, file, prefix=f"{where}.")
        name = want_str(entry.get("name"), file, f"{where}.name")
        level = _level(entry.get("level", "info"), file, f"{where}.level")
        if "flush_level" in entry:
            _level(entry["flush_level"], file, f"{where}.flush_level")
        if "type" in entry:
            want_choice(entry["type"], file, f"{where}.type", ("sync", "async"))
        if "pattern" in entry and entry["pattern"] not in patterns:
            raise fail(file, f"{where}.pattern", entry["pattern"], f"the name of a [[pattern]] ({', '.join(patterns) or 'none defined'})")
        names = entry.get("sinks")
        if not isinstance(names, list) or not names:
            raise fail(file, f"{where}.sinks", names, "a non-empty list of sink names")
        python_name = f"{ROOT}.{name.replace('::', '.')}"
        for j, sink in enumerate(names):
            if sink not in sinks:
                raise fail(file, f"{where}.sinks[{j}]", sink, f"the name of a [[sink]] ({', '.join(sinks) or 'none defined'})")
            out.append((python_name, sinks[sink], level))
    return out


def _tables(data: dict[str, Any], key: str, file: str) -> list[dict[str, Any]]:
    value = data.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise fail(file, key, value, f"an array of tables ([[{key}]])")
    return value


def _level(value: Any, file: str, field_name: str) -> int:
    return LEVELS[want_choice(value, file, field_name, tuple(LEVELS))]


def _sink(entry: dict[str, Any], file: str, where: str) -> logging.Handler:
    """The handler for one ``[[sink]]`` (module docstring)."""
    kind = want_str(entry.get("type"), file, f"{where}.type")
    base = kind.removesuffix("_st").removesuffix("_mt")
    if base in _REFUSED_SINKS and kind != base:
        raise ConfigError(f"got {kind!r}: {_REFUSED_SINKS[base]}; expected a stdout, stderr, basic_file, rotating_file or null sink", file=file, field=f"{where}.type")
    extra: tuple[str, ...] = ()
    if base == "basic_file_sink":
        extra = ("filename", "truncate")
    elif base == "rotating_file_sink":
        extra = ("base_filename", "max_size", "max_files")
    check_keys(entry, (*_SINK_COMMON, *extra), file, prefix=f"{where}.")
    handler: logging.Handler
    if base in ("stdout_sink", "color_stdout_sink"):
        handler = logging.StreamHandler(sys.stdout)
    elif base in ("stderr_sink", "color_stderr_sink"):
        handler = logging.StreamHandler(sys.stderr)
    elif base == "null_sink":
        handler = logging.NullHandler()
    elif base == "basic_file_sink":
        target = _target(entry, "filename", file, where)
        truncate = entry.get("truncate", False)
        if not isinstance(truncate, bool):
            raise fail(file, f"{where}.truncate", truncate, "true or false")
        handler = logging.FileHandler(target, mode="w" if truncate else "a", encoding="utf-8", delay=True)
    elif base == "rotating_file_sink":
        target = _target(entry, "base_filename", file, where)
        size = _max_size(entry.get("max_size"), file, f"{where}.max_size")
        count = want_int(entry.get("max_files"), file, f"{where}.max_files", minimum=0)
        handler = logging.handlers.RotatingFileHandler(target, maxBytes=size, backupCount=count, encoding="utf-8", delay=True)
    else:
        raise ConfigError(
            f"unknown sink type {kind!r}; expected stdout_sink, stderr_sink, color_stdout_sink, color_stderr_sink, "
            "basic_file_sink, rotating_file_sink or null_sink, each with _st or _mt",
            file=file,
            field=f"{where}.type",
        )
    if "level" in entry:
        handler.setLevel(_level(entry["level"], file, f"{where}.level"))
    return handler


def _target(entry: dict[str, Any], key: str, file: str, where: str) -> Path:
    target = Path(want_str(entry.get(key), file, f"{where}.{key}"))
    make_parent = entry.get("create_parent_dir", False)
    if not isinstance(make_parent, bool):
        raise fail(file, f"{where}.create_parent_dir", make_parent, "true or false")
    if make_parent:
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ConfigError(f"cannot create {target.parent}: {exc.strerror or exc}", file=file, field=f"{where}.{key}") from None
    return target


def _max_size(value: Any, file: str, field_name: str) -> int:
    """spdlog_setup's ``max_size``: a number of bytes with an optional K, M, G or T (x 1024)."""
    match = _MAX_SIZE.match(value) if isinstance(value, str) else None
    if match is None:
        raise fail(file, field_name, value, 'a size string such as "10M" (bytes, or K, M, G, T: powers of 1024)')
    return int(match.group(1)) * _SIZE_UNIT[match.group(2).upper()]
