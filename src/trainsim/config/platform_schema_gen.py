"""Writes ``platform_schema.py``, the table the fast path checks a platform file against
(config layer; docs/speed.md, "Start-up").

The table is read off pydantic's own compiled schema of ``PlatformModel``
(``__pydantic_core_schema__``: the strict types, bounds, defaults and validator functions
pydantic runs), so the models stay the one source of truth. Anything in that schema the fast
path does not implement (an alias, a validator with info, a non-strict model, a default pydantic
would validate, a validator outside ``platform_rules``) stops the generator with its place:
extend ``platform_fast.py`` and this file together. ``tests/config/test_platform_fast.py``
fails when the written table differs from what the models give now.

    python -m trainsim.config.platform_schema_gen      # rewrites src/trainsim/config/platform_schema.py
"""

from __future__ import annotations

import functools
import math
import pprint
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from trainsim.config import platform_rules
from trainsim.config.platform_models import PlatformModel

TARGET = Path(__file__).with_name("platform_schema.py")
_BOUNDS = ("ge", "gt", "le", "lt")
_KEYS = {  # what each core-schema type may hold; anything else is a construct not implemented
    "model": {"type", "cls", "config", "schema", "custom_init", "root_model", "ref", "metadata"},
    "model-fields": {"type", "fields", "computed_fields", "model_name"},
    "model-field": {"type", "schema", "metadata"},
    "default": {"type", "schema", "default", "default_factory", "default_factory_takes_data"},
    "nullable": {"type", "schema", "metadata"},
    "function-before": {"type", "function", "schema", "metadata"},
    "function-after": {"type", "function", "schema", "metadata", "ref"},  # ref: a model's, around it
    "literal": {"type", "expected", "metadata"},
    "int": {"type", "metadata", *_BOUNDS},
    "float": {"type", "metadata", "allow_inf_nan", *_BOUNDS},
    "bool": {"type", "metadata"},
    "str": {"type", "metadata"},
    "any": {"type", "metadata"},
    "list": {"type", "items_schema", "min_length", "max_length", "metadata"},
    "dict": {"type", "keys_schema", "values_schema", "metadata"},
}


class Unsupported(Exception):
    """A construct of the models the fast path does not implement (message: where and what)."""


class _Reader:
    def __init__(self) -> None:
        self.models: dict[str, tuple[tuple[str, ...], tuple[Any, ...]]] = {}

    def node(self, s: dict[str, Any], where: str) -> Any:
        kind = s["type"]
        extra = set(s) - _KEYS.get(kind, set())
        if kind not in _KEYS or extra:
            raise Unsupported(f"{where}: core schema {kind!r} {sorted(extra)}")
        if kind == "model":
            return ("model", self.model(s, where))
        if kind == "nullable":
            return ("nullable", self.node(s["schema"], where))
        if kind == "function-after" and _constraint(s["function"]) is not None:
            return (*_constraint(s["function"]), self.node(s["schema"], where))  # type: ignore[misc]
        if kind in ("function-before", "function-after"):
            return (kind.removeprefix("function-"), _rule(s["function"], where), self.node(s["schema"], where))
        if kind == "literal":
            values = tuple(s["expected"])
            if not all(type(v) is str for v in values):
                raise Unsupported(f"{where}: a literal of other than text {values!r}")
            return ("literal", values)
        if kind in ("int", "float"):
            return (kind, tuple((b, s[b]) for b in _BOUNDS if b in s))
        if kind == "list":
            return ("list", self.node(s["items_schema"], f"{where}[]"), s.get("min_length", 0), s.get("max_length"))
        if kind == "dict":
            return ("dict", self.node(s["keys_schema"], f"{where} key"), self.node(s["values_schema"], f"{where}{{}}"))
        if kind in ("bool", "str", "any"):
            return (kind,)
        raise Unsupported(f"{where}: core schema {kind!r} outside a model field")

    def model(self, s: dict[str, Any], where: str) -> str:
        cls: type[BaseModel] = s["cls"]
        config = s["config"]
        if config.get("extra_fields_behavior") != "forbid" or config.get("strict") is not True or s["custom_init"] or s["root_model"]:
            raise Unsupported(f"{where}: {cls.__name__} is not a strict model forbidding unknown keys")
        if set(config) - {"extra_fields_behavior", "strict", "title"}:
            raise Unsupported(f"{where}: {cls.__name__} config {sorted(config)}")
        name = cls.__name__
        if name in self.models:
            return name
        inner, before = s["schema"], []
        while inner["type"] == "function-before":
            if set(inner) - _KEYS["function-before"]:
                raise Unsupported(f"{where}: {name}'s validator {sorted(inner)}")
            before.append(_rule(inner["function"], name))
            inner = inner["schema"]
        if inner["type"] != "model-fields" or set(inner) - _KEYS["model-fields"] or inner["computed_fields"]:
            raise Unsupported(f"{where}: {name}'s fields {sorted(inner)}")
        self.models[name] = ((), ())  # a model reached again inside itself
        fields = tuple(self.field(fname, f, f"{name}.{fname}") for fname, f in inner["fields"].items())
        self.models[name] = (tuple(before), fields)
        return name

    def field(self, name: str, f: dict[str, Any], where: str) -> tuple[str, Any, str, Any]:
        if set(f) - _KEYS["model-field"]:
            raise Unsupported(f"{where}: field keys {sorted(f)}")
        s = f["schema"]
        if s["type"] != "default":
            return (name, self.node(s, where), "required", None)
        if set(s) - _KEYS["default"] or s.get("default_factory_takes_data"):
            raise Unsupported(f"{where}: default {sorted(s)}")
        schema = self.node(s["schema"], where)
        if "default_factory" in s:
            return (name, schema, "copy", _literal(s["default_factory"](), where))
        default = s["default"]
        if isinstance(default, BaseModel):
            # a model instance: the fast path builds it from no keys, as pydantic would
            if default != type(default)() or default.model_fields_set:
                raise Unsupported(f"{where}: a default model other than its own defaults")
            return (name, schema, "model", type(default).__name__)
        return (name, schema, "copy" if isinstance(default, list | dict) else "value", _literal(default, where))


_PYDANTIC_BOUNDS = {
    "greater_than_validator": "gt",
    "greater_than_or_equal_validator": "ge",
    "less_than_validator": "lt",
    "less_than_or_equal_validator": "le",
}


def _constraint(function: dict[str, Any]) -> tuple[Any, ...] | None:
    """A bound or finiteness check pydantic applies after a validator of the field's (it puts
    the field's own bounds there rather than in the type): ``("bound", op, limit)`` or
    ``("finite",)``; None for anything else."""
    f = function["function"]
    base = f.func if isinstance(f, functools.partial) else f
    if function["type"] != "no-info" or getattr(base, "__module__", "") != "pydantic._internal._validators":
        return None
    if base.__name__ == "forbid_inf_nan_check" and not isinstance(f, functools.partial):
        return ("finite",)
    op = _PYDANTIC_BOUNDS.get(base.__name__)
    if op is None or not isinstance(f, functools.partial) or f.args or set(f.keywords) != {op}:
        return None
    return ("bound", op, f.keywords[op])


def _rule(function: dict[str, Any], where: str) -> str:
    """The name in ``platform_rules`` of a validator pydantic calls with the value alone."""
    f = function["function"]
    name = str(getattr(f, "__name__", ""))
    if function["type"] != "no-info" or getattr(platform_rules, name, None) is not f:
        raise Unsupported(f"{where}: validator {f!r} is not a function of trainsim.config.platform_rules taking the value alone")
    return name


def _literal(value: Any, where: str) -> Any:
    """``value`` if ``repr`` writes it back exactly (the table is Python source)."""
    if value is None or type(value) in (bool, int, str):
        return value
    if type(value) is float and math.isfinite(value):
        return value
    if type(value) in (list, tuple):
        return type(value)(_literal(v, where) for v in value)
    if type(value) is dict:
        return {_literal(k, where): _literal(v, where) for k, v in value.items()}
    raise Unsupported(f"{where}: default {value!r}")


def render() -> str:
    """The text of ``platform_schema.py`` for the models as they are now."""
    reader = _Reader()
    root = reader.node(dict(PlatformModel.__pydantic_core_schema__), "PlatformModel")
    body = pprint.pformat(reader.models, width=100, sort_dicts=False)
    return (
        '"""The platform file\'s schema as the fast path reads it (config layer). Generated by\n'
        "``python -m trainsim.config.platform_schema_gen`` from pydantic's compiled schema of\n"
        "``platform_models.PlatformModel``: do not edit (tests/config/test_platform_fast.py checks it\n"
        "is current). A node is ``(kind, ...)`` as ``platform_fast.check`` reads it; a model is\n"
        "(its before-validators, its fields), a field (name, node, default kind, default).\n"
        '"""\n\n'
        "from typing import Any\n\n"
        f"ROOT: Any = {root!r}\n\n"
        f"MODELS: dict[str, Any] = {body}\n"
    )


def main() -> int:
    TARGET.write_text(render())
    print(f"wrote {TARGET}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
