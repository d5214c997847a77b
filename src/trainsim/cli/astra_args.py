"""ASTRA-sim's boolean flags on the command line (cli layer; used by ``main``).

ASTRA-sim's option parser (cxxopts) lets a boolean flag stand alone (``--rendezvous-protocol``:
true) or take a value (``--rendezvous-protocol=false``); trainsim also takes the value as the
next word (``--rendezvous-protocol false``). Click options either always or never take a value,
so :func:`astra_argv` rewrites each such flag into its ``--flag=value`` form before parsing.
Values are read as cxxopts reads them (:func:`parse_bool`).
"""

from __future__ import annotations

import re

from trainsim.errors import ConfigError

BOOL_FLAGS = ("--rendezvous-protocol",)
"""ASTRA-sim's boolean flags that ``trainsim run`` accepts."""

_TRUE = re.compile(r"[tT](rue)?|1")
_FALSE = re.compile(r"[fF](alse)?|0")


def astra_argv(args: list[str]) -> list[str]:
    """``args`` with every bare boolean flag given its value: ``--flag`` -> ``--flag=true``,
    ``--flag false`` -> ``--flag=false`` (a following word that is a boolean is its value)."""
    out: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        if arg in BOOL_FLAGS:
            following = args[i + 1] if i + 1 < len(args) else None
            if following is not None and (_TRUE.fullmatch(following) or _FALSE.fullmatch(following)):
                out.append(f"{arg}={following}")
                i += 2
                continue
            out.append(f"{arg}=true")
        else:
            out.append(arg)
        i += 1
    return out


def parse_bool(text: str, flag: str) -> bool:
    """A boolean flag's value as cxxopts reads it: t, true, True, 1 or f, false, False, 0."""
    if _TRUE.fullmatch(text):
        return True
    if _FALSE.fullmatch(text):
        return False
    raise ConfigError(f"got {text!r}; expected true or false (or 1 / 0)", field=flag)
