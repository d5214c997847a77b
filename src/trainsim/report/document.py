"""A result document (``trainsim run --json``) as JSON text (report layer).

Objects are indented one space per level; a list of plain values (numbers, strings, lists of
them: the collectives' columns, a utilization series) stays on one line, so that a step's
hundreds of thousands of collectives take one line per field rather than one per value.
"""

from __future__ import annotations

import json
from typing import Any


def dumps(value: Any, level: int = 0) -> str:
    """``value`` as JSON; ``json.loads`` gives it back (NaN and infinities as ``json.dumps``)."""
    if isinstance(value, dict) and value:
        pad = " " * (level + 1)
        items = (f"{pad}{json.dumps(str(k))}: {dumps(v, level + 1)}" for k, v in value.items())
        return "{\n" + ",\n".join(items) + "\n" + " " * level + "}"
    if isinstance(value, list | tuple) and any(isinstance(v, dict) for v in value):
        pad = " " * (level + 1)
        return "[\n" + ",\n".join(pad + dumps(v, level + 1) for v in value) + "\n" + " " * level + "]"
    return json.dumps(value)
