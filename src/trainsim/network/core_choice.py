"""Which compiled core a backend uses, from an environment variable (network layer; read by
``congestion_native`` and ``analytical_native``). Light: imported by the default backend."""

from __future__ import annotations

import os

from trainsim.errors import ConfigError


def core_choice(variable: str, choices: tuple[str, ...], hint: str) -> str:
    """``$variable`` lower-cased, one of ``choices`` (unset or empty: the first); any other
    value is a ConfigError naming it and the choices (never a silent default)."""
    value = os.environ.get(variable, "").strip().lower() or choices[0]
    if value not in choices:
        raise ConfigError(
            f"{variable}={os.environ[variable]!r} is not a choice; expected one of {', '.join(choices)}",
            hint=hint,
        )
    return value
