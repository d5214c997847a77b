"""Optional dependencies, installed by the extras of ``pyproject.toml`` (used by all layers).

pandas is needed to read sweep results back (``trainsim sweep show`` / ``plot``, DataFrames for
notebooks): extra ``sweep``; scikit-learn by the RePurpose study (``trainsim repurpose``): extra
``repurpose``. ``make test`` installs both. :func:`require` imports one or raises
:class:`~trainsim.errors.MissingExtraError`, one line naming the extra.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from trainsim.errors import MissingExtraError

EXTRAS = {"pandas": ("pandas", "sweep"), "sklearn": ("scikit-learn", "repurpose")}
"""Top-level module -> (distribution name, extra that installs it)."""


def require(module: str, purpose: str) -> ModuleType:
    """``module`` imported, or one clear error: ``<purpose> needs <package>, which is not
    installed``, with the ``pip install`` line of its extra."""
    try:
        return importlib.import_module(module)
    except ImportError:
        package, extra = EXTRAS[module.split(".")[0]]
        raise MissingExtraError(
            f"{purpose} needs {package}, which is not installed: pip install 'trainsim[{extra}]'",
            hint=f"from a checkout, `pip install -e '.[{extra}]'`; `make test` installs every extra",
        ) from None
