"""The sweep store: one SQLite file, one row per combination keyed by the hash of its inputs.

Rows are committed as their results arrive (WAL journal), so a sweep killed at any moment
keeps every finished combination, and a re-run skips them; the primary key makes a
combination impossible to count twice. ``status`` is ``ok``, ``infeasible`` (the
configuration cannot run; ``error`` holds the reason) or ``error`` (bad inputs).
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from trainsim.errors import ConfigError

SCHEMA = """
CREATE TABLE IF NOT EXISTS results (
    key TEXT PRIMARY KEY,
    params TEXT NOT NULL,
    status TEXT NOT NULL,
    metrics TEXT NOT NULL,
    error TEXT,
    inputs TEXT NOT NULL,
    wall_s REAL,
    finished_at REAL
);
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT);
"""


class SweepStore:
    """Append-only result store backed by SQLite."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        try:
            self.db = sqlite3.connect(self.path, timeout=30)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=NORMAL")
            self.db.executescript(SCHEMA)
        except sqlite3.DatabaseError as exc:
            raise ConfigError(f"cannot open the sweep store: {exc}", file=str(path)) from None

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> SweepStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def done_keys(self) -> set[str]:
        return {row[0] for row in self.db.execute("SELECT key FROM results")}

    def add(self, rows: Iterable[dict[str, Any]]) -> int:
        """Insert finished combinations (ignoring keys already there); returns rows added."""
        return self._write("INSERT OR IGNORE", rows)

    def replace(self, rows: Iterable[dict[str, Any]]) -> int:
        """Insert combinations, replacing rows of the same key (a strategy search's estimated
        row once the strategy is simulated); returns rows written."""
        return self._write("INSERT OR REPLACE", rows)

    def _write(self, verb: str, rows: Iterable[dict[str, Any]]) -> int:
        now = time.time()
        cur = self.db.executemany(
            f"{verb} INTO results(key, params, status, metrics, error, inputs, wall_s, finished_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (
                    r["key"],
                    json.dumps(r["params"], sort_keys=True),
                    r["status"],
                    json.dumps(r.get("metrics", {}), sort_keys=True),
                    r.get("error"),
                    json.dumps(r["inputs"], sort_keys=True, default=str),
                    r.get("wall_s"),
                    now,
                )
                for r in rows
            ],
        )
        self.db.commit()
        return cur.rowcount

    def set_meta(self, name: str, value: Any) -> None:
        self.db.execute("INSERT OR REPLACE INTO meta(name, value) VALUES (?, ?)", (name, json.dumps(value)))
        self.db.commit()

    def get_meta(self, name: str) -> Any:
        """What :meth:`set_meta` stored under ``name``; None if nothing was."""
        row = self.db.execute("SELECT value FROM meta WHERE name = ?", (name,)).fetchone()
        return None if row is None else self._json(row[0], f"meta {name!r}", object)

    def rows(self, keys: Iterable[str] | None = None) -> list[dict[str, Any]]:
        """Every row (or those of ``keys``) as one mapping, params and metrics flattened; a row
        whose JSON columns are not JSON mappings (a store edited or damaged by hand) is a
        :class:`ConfigError` naming the file, the row and column."""
        query = "SELECT key, params, status, metrics, error, wall_s FROM results"
        wanted = None if keys is None else list(keys)
        if wanted is not None:
            query += f" WHERE key IN ({','.join('?' * len(wanted))})"
        out = []
        rows = self.db.execute(query + " ORDER BY finished_at, key", wanted or ())
        for number, (key, params, status, metrics, error, wall_s) in enumerate(rows, start=1):
            where = f"row {number} (key {str(key)[:32]!r})"
            out.append(
                {"key": key, "status": status, "error": error, "wall_s": wall_s,
                 **self._json(params, f"{where}, column params", dict), **self._json(metrics, f"{where}, column metrics", dict)}
            )
        return out

    def _json(self, text: Any, where: str, kind: type) -> Any:
        try:
            value = json.loads(text)
        except (TypeError, ValueError, RecursionError) as exc:
            raise ConfigError(f"{where} is not JSON ({exc}): {str(text)[:60]!r}", file=str(self.path),
                              hint="the store was damaged or edited; delete that row or re-run the sweep into a new store") from None
        if not isinstance(value, kind):
            raise ConfigError(f"{where} is {type(value).__name__} JSON; expected a mapping", file=str(self.path),
                              hint="the store was damaged or edited; delete that row or re-run the sweep into a new store")
        return value

    def count(self) -> int:
        return int(self.db.execute("SELECT COUNT(*) FROM results").fetchone()[0])


def open_existing(path: str | Path) -> SweepStore:
    """A store written by a sweep; any other file is refused, never turned into a store."""
    p = Path(path)
    if not p.is_file():
        what = "is a folder, not a sweep store" if p.is_dir() else "no such sweep store"
        raise ConfigError(what, file=str(path), hint="run `trainsim sweep SPEC.yaml --store PATH` first")
    try:
        with sqlite3.connect(f"{p.resolve().as_uri()}?mode=ro", uri=True) as db:
            tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    except sqlite3.DatabaseError as exc:
        raise ConfigError(f"cannot open the sweep store: {exc}", file=str(path)) from None
    if "results" not in tables:
        raise ConfigError("not a sweep store (an SQLite file without a results table, or an empty file)", file=str(path))
    return SweepStore(path)
