"""Package attributes imported on first use (PEP 562), so that importing one light module of a
package does not pay for its heavy siblings (protobuf for the Chakra reader, numpy, ...).

A package's ``__init__`` lists its public names under ``if TYPE_CHECKING:`` for type checkers
and hands the same map to :func:`lazy_exports` for the interpreter.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any


def lazy_exports(
    package: str, exports: dict[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package``: ``exports`` maps a public name to the
    submodule (relative to ``package``) that defines it."""

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(f"{package}.{module}"), name)

    def __dir__() -> list[str]:
        return sorted(exports)

    return __getattr__, __dir__
