"""Budget checks made before the work: the one place every command asks "is this too big?"
(DESIGN.md, beside ``units`` and ``errors``: used by all layers; docs/limits.md lists the limits).

A command about to build rank graphs, write files, enumerate sweep combinations, allocate a
large array or start worker processes first estimates how much of it there will be and calls
:func:`check` with the estimate. Beyond the documented limit (:data:`LIMITS`) the estimate is
refused at once, as one :class:`BudgetError` line (exit code 2) that gives the estimate, the
limit and a way under, instead of minutes of work that end in a ``MemoryError``, a full disk or
a machine that swaps. A user who means it passes ``--force``: the CLI runs the command inside
:func:`forced`, and every check made below it lets the estimate through.

The checks are arithmetic on numbers the caller already has (no I/O, no import beyond the
standard library), so they cost nothing at start-up. Estimates are lower bounds where they can
only be guessed (the nodes of a graph not built yet), so a refusal is never wrong by more than
the estimate's slack.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from trainsim.errors import ConfigError

GIB = 1 << 30


@dataclass(frozen=True)
class Limit:
    """One documented limit: its value, the unit its estimates count and why it is where it is."""

    name: str
    value: int
    unit: str
    why: str


LIMITS: dict[str, Limit] = {
    limit.name: limit
    for limit in (
        Limit(
            "ranks",
            1 << 20,
            "ranks",
            "a simulated or generated machine of up to 2**20 (1,048,576) ranks",
        ),
        Limit(
            "rank_nodes",
            1_000_000_000,
            "graph nodes",
            "ranks x nodes per rank over every rank graph built in memory",
        ),
        Limit(
            "graph_nodes",
            2_000_000,
            "nodes",
            "nodes of one rank's graph (a generator makes about 10,000 a second)",
        ),
        Limit("files", 100_000, "files", "files one command writes"),
        Limit(
            "trace_events",
            5_000_000,
            "nodes",
            "nodes one Perfetto trace shows (about 750 B of memory each while written; a JSON trace of a GB does not load in the browser)",
        ),
        Limit("chunks", 100_000, "chunks", "chunks one collective is cut into (preferred-dataset-splits)"),
        Limit(
            "combinations",
            1_000_000,
            "combinations",
            "sweep combinations enumerated, counted before any is built",
        ),
        Limit("points", 200, "points", "optimizer runs of one budget range (--budgets COUNT; about 0.1 s each)"),
        Limit("memory", 8 * GIB, "bytes", "one allocation's estimated size (8 GiB)"),
        Limit(
            "decompressed",
            256 << 20,
            "bytes",
            "bytes one gzip-compressed Chakra file may expand to (256 MiB)",
        ),
    )
}
"""The limits, by name; docs/limits.md explains each (tests/test_budget.py keeps the two in step)."""

_FORCED: ContextVar[bool] = ContextVar("trainsim_budget_forced", default=False)


class BudgetError(ConfigError):
    """An estimate over a documented limit, refused before the work (exit code 2)."""


@contextmanager
def forced(force: bool = True) -> Iterator[None]:
    """Run the block with every budget check passing when ``force`` (the CLI's ``--force``)."""
    token = _FORCED.set(force or _FORCED.get())
    try:
        yield
    finally:
        _FORCED.reset(token)


def is_forced() -> bool:
    """True inside :func:`forced` (a user asked for the work whatever its size)."""
    return _FORCED.get()


def check(
    name: str,
    estimate: float,
    what: str,
    *,
    way_under: str,
    file: str | None = None,
    field: str | None = None,
) -> None:
    """Refuse ``estimate`` (in the unit of ``LIMITS[name]``) for ``what`` when over the limit,
    unless forced. ``way_under`` says how to ask for less (e.g. ``"use a smaller --dp"``)."""
    limit = LIMITS[name]
    if estimate <= limit.value or _FORCED.get():
        return
    raise BudgetError(
        f"{what}: estimated {_amount(estimate, limit.unit)}, over the limit of {_amount(limit.value, limit.unit)} "
        f"(docs/limits.md); {way_under}, or add --force if you mean it",
        file=file,
        field=field,
    )


def workers(asked: int | None, *, cores: int | None = None) -> tuple[int, str | None]:
    """Worker processes to start for ``asked`` (None: one per core) and a warning when the
    request was capped at the machine's cores (not capped when forced). Fewer than one is a
    :class:`ConfigError`."""
    cores = cores or os.cpu_count() or 1
    if asked is None:
        return cores, None
    if asked < 1:
        raise ConfigError(f"{asked} worker processes; expected at least 1", field="--jobs")
    if asked <= cores or _FORCED.get():
        return asked, None
    return (
        cores,
        f"--jobs {asked} is more than the {cores} cores here: starting {cores} (add --force to start {asked})",
    )


def _amount(value: float, unit: str) -> str:
    if unit == "bytes":
        for factor, suffix in ((1 << 40, "TiB"), (GIB, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")):
            if value >= factor:
                return f"{value / factor:,.1f} {suffix}"
        return f"{value:,.0f} B"
    if value >= 10**15:
        if isinstance(value, float):
            return f"{value:.3g} {unit}"
        if value >= 1e300:  # beyond a float (an int of hundreds of digits): its leading digits
            digits = str(int(value))
            return f"{digits[0]}.{digits[1:3]}e+{len(digits) - 1} {unit}"
        return f"{float(value):.3g} {unit}"
    return f"{value:,.0f} {unit}"
