"""Value checks for hand-parsed input files (config layer; used by :mod:`trainsim.config.astra`).

Each check returns the value converted to its Python type or raises one
:class:`~trainsim.errors.ConfigError` naming the file, the dotted field, the value found and
what was expected. Booleans are never numbers here: JSON ``true`` is not ``1``.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Collection, Mapping
from typing import Any

from trainsim.config.files import type_name
from trainsim.errors import ConfigError


def show(value: Any) -> str:
    """The value as the message shows it: ``'ring'``, ``8``, ``[1, 2]``, ``a mapping``."""
    if isinstance(value, dict):
        return "a mapping"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def fail(file: str, field: str, value: Any, expected: str, hint: str | None = None) -> ConfigError:
    """The error for ``value`` at ``field``: ``got <value>; expected <expected>``."""
    return ConfigError(f"got {show(value)}; expected {expected}", file=file, field=field, hint=hint)


def closest(word: Any, choices: Collection[str], *, cutoff: float = 0.6) -> str | None:
    """The choice closest to ``word`` (difflib's ratio at least ``cutoff``), or None."""
    near = difflib.get_close_matches(str(word), list(choices), n=1, cutoff=cutoff)
    return near[0] if near else None


def did_you_mean(word: Any, choices: Collection[str]) -> str:
    """`` (did you mean 'x'?)`` naming the choice closest to a misspelt ``word``, or ``""``."""
    near = closest(word, choices)
    return f" (did you mean {near!r}?)" if near else ""


def check_keys(
    data: Mapping[Any, Any],
    allowed: Collection[str],
    file: str,
    *,
    prefix: str = "",
    hint: str | None = None,
) -> None:
    """Every key of ``data`` must be one of ``allowed`` (an unknown key is never ignored)."""
    known = ", ".join(sorted(allowed))
    for key in data:
        if isinstance(key, str) and key in allowed:
            continue
        if len(allowed) <= 8:
            expected, listing = f"one of {known}", None
        else:
            expected, listing = f"one of the {len(allowed)} known keys", f"known keys: {known}"
        raise ConfigError(
            f"unknown key {key!r}; expected {expected}{did_you_mean(key, allowed)}",
            file=file,
            field=f"{prefix}{key}",
            hint="; ".join(h for h in (hint, listing) if h) or None,
        )


def want_int(value: Any, file: str, field: str, *, minimum: int | None = None, maximum: int | None = None) -> int:
    """An integer (not a bool, not ``8.0``), at least ``minimum`` and at most ``maximum`` when given."""
    if maximum is not None:
        expected = f"an integer <= {maximum}" if minimum is None else f"an integer in {minimum} .. {maximum}"
    else:
        expected = "an integer" if minimum is None else f"an integer >= {minimum}"
    if isinstance(value, bool) or not isinstance(value, int):
        raise fail(file, field, value, f"{expected}, not {type_name(value)}")
    if (minimum is not None and value < minimum) or (maximum is not None and value > maximum):
        raise fail(file, field, value, expected)
    return value


def want_number(
    value: Any, file: str, field: str, *, minimum: float | None = None, positive: bool = False
) -> float:
    """A finite number (int or float, not a bool); ``positive``: > 0; ``minimum``: >= it."""
    if positive:
        expected = "a number > 0"
    elif minimum is not None:
        expected = f"a number >= {minimum:g}"
    else:
        expected = "a number"
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise fail(file, field, value, f"{expected}, not {type_name(value)}")
    number = float(value)
    if not math.isfinite(number):
        raise fail(file, field, value, f"a finite {expected.removeprefix('a ')}")
    if (positive and number <= 0) or (minimum is not None and number < minimum):
        raise fail(file, field, value, expected)
    return number


def want_str(value: Any, file: str, field: str) -> str:
    """A non-empty string."""
    if not isinstance(value, str) or not value:
        raise fail(file, field, value, "a non-empty string")
    return value


def want_choice(value: Any, file: str, field: str, choices: Collection[str]) -> str:
    """One of ``choices``, spelled exactly (ASTRA-sim compares case-sensitively)."""
    if isinstance(value, str) and value in choices:
        return value
    listed = ", ".join(repr(c) for c in choices)
    hint = None
    if isinstance(value, str):
        near = closest(value, choices, cutoff=0.5)
        hint = f"did you mean {near!r}?" if near else None
    raise fail(file, field, value, f"one of {listed}", hint=hint)


def want_list(value: Any, file: str, field: str) -> list[Any]:
    """A non-empty list."""
    if not isinstance(value, list):
        raise fail(file, field, value, f"a list, not {type_name(value)}")
    if not value:
        raise fail(file, field, value, "a non-empty list")
    return value


def want_flag(value: Any, file: str, field: str) -> bool:
    """ASTRA-sim's 0/1 switches. It tests ``value != 0`` on the JSON value, and a JSON
    ``false`` differs from 0 there (it would switch the feature on), so booleans are refused."""
    if isinstance(value, bool):
        raise fail(
            file,
            field,
            value,
            "0 or 1",
            hint="ASTRA-sim compares this key with the number 0, so a JSON boolean (even false) "
            "turns it on; write 0 or 1",
        )
    if value not in (0, 1) or not isinstance(value, int):
        raise fail(file, field, value, "0 or 1")
    return bool(value)
