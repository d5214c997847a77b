"""The system layer's run knobs and the system features trainsim refuses (config layer).

ASTRA-sim takes five knobs of its system layer on the command line, not in a file
(``--comm-scale``, ``--compute-scale``, ``--injection-scale``, ``--rendezvous-protocol``,
``--num-queues-per-dim``: ``Sys``'s constructor arguments). Here they are fields of
:class:`~trainsim.config.types.SystemSpec`, so that ``simulate(...)`` from Python and a native
platform file can set them too; :func:`with_knobs` sets them from the command line (each
checked, an error naming the flag). Their meaning and where each is applied:
docs/astra-compat.md.

:func:`check_system` refuses the features of a system description that trainsim does not
model, with one :class:`~trainsim.errors.ConfigError` naming the file, the key (ASTRA-sim's
spelling, or the native file's), the value and why, instead of dropping them silently.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

from trainsim.config.types import Platform, SystemSpec
from trainsim.errors import ConfigError


@dataclass(frozen=True, slots=True)
class _Knob:
    attr: str  # SystemSpec field
    flag: str  # ASTRA-sim's command-line flag
    integer: bool = False


KNOBS = (
    _Knob("comm_scale", "--comm-scale"),
    _Knob("compute_scale", "--compute-scale"),
    _Knob("injection_scale", "--injection-scale"),
    _Knob("queues_per_dim", "--num-queues-per-dim", integer=True),
)
"""The numeric knobs (``rendezvous`` is a switch), with ASTRA-sim's flag for each."""


def _knob_problem(knob: _Knob, value: Any) -> str | None:
    """Why ``value`` is not a valid setting of ``knob``, or None."""
    if knob.integer:
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            return "an integer >= 1 (dimension queues per network dimension)"
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value <= 0:
        return "a finite number > 0 (a scale factor; 1 leaves the run unchanged)"
    return None


def with_knobs(platform: Platform, **values: Any) -> Platform:
    """``platform`` with the given :class:`SystemSpec` knobs set (``comm_scale=2.0`` ...;
    None leaves a knob as it is). A bad value is a ConfigError naming ASTRA-sim's flag."""
    changes = {k: v for k, v in values.items() if v is not None}
    if not changes:
        return platform
    known = {k.attr: k for k in KNOBS}
    for attr, value in changes.items():
        if attr == "rendezvous":
            if not isinstance(value, bool):
                raise ConfigError(f"got {value!r}; expected true or false", field="--rendezvous-protocol")
            continue
        knob = known.get(attr)
        if knob is None:
            raise ConfigError(f"unknown system knob {attr!r}; expected one of {', '.join([*known, 'rendezvous'])}")
        problem = _knob_problem(knob, value)
        if problem:
            raise ConfigError(f"got {value!r}; expected {problem}", field=knob.flag)
    return replace(platform, system=replace(platform.system, **changes))


# (SystemSpec test, ASTRA-sim key, native key, the value as written, why it is refused, hint)
_REFUSED = (
    (
        lambda s: s.shared_bus.enabled,
        "model-shared-bus",
        "system.shared_bus.enabled",
        "ASTRA-sim's LogGP shared-bus model (model-shared-bus with L, o, g, G and "
        "local-reduction-delay) is not implemented",
        "with 0 every insertion costs endpoint-delay, as in ASTRA-sim without the shared bus",
    ),
    (
        lambda s: s.track_local_mem,
        "track-local-mem",
        "system.track_local_mem",
        "ASTRA-sim's local-memory tracker (a per-rank tensor trace and peak memory usage from "
        "each node's 'inputs' / 'outputs' attributes) is not implemented",
        "it changes no time: set it to 0 (trainsim run --trace writes a timeline of the run)",
    ),
)


def check_system(system: SystemSpec, *, file: str | None = None, names: str = "spec") -> None:
    """Refuse what trainsim does not model, and knobs out of range (module docstring).
    ``names``: how the message names the key: ``astra`` (the system JSON's keys), ``native``
    (the platform file's dotted fields) or ``spec`` (the :class:`SystemSpec` fields)."""
    for test, astra_key, native_key, why, hint in _REFUSED:
        if test(system):
            key, value, off = {
                "astra": (astra_key, "1", "0"),
                "native": (native_key, "true", "false"),
            }.get(names, (native_key.removeprefix("system."), "True", "False"))
            raise ConfigError(f"got {value}; {why}; expected {off}", file=file, field=key, hint=hint)
    for knob in KNOBS:
        value = getattr(system, knob.attr)
        problem = _knob_problem(knob, value)
        if problem:
            field = f"system.{knob.attr}" if names == "native" else knob.attr
            raise ConfigError(f"got {value!r}; expected {problem}", file=file, field=field)
