"""A valid platform file read without pydantic (config layer; docs/speed.md, "Start-up").

``check`` walks the table ``platform_schema.py`` (generated from pydantic's compiled schema of
the models) over the parsed YAML, calling the same ``platform_rules`` functions pydantic calls.
It vouches only for what it is sure pydantic accepts with the same values: exact ``int``,
``float``, ``bool``, ``str``, ``list`` and ``dict`` (strict mode), finite numbers, keys the
model has. Anything else (a wrong type or value, an unknown key, a rule that fails, an ``inf``)
raises :class:`Declined`, and ``platform.py`` hands the file to pydantic, which accepts it or
writes the user's message as before. Importing pydantic costs a platform file's run about as much
as the whole floor of the process (numpy); a valid file no longer pays it.
"""

from __future__ import annotations

import copy
import math
from typing import Any

from trainsim.config import platform_rules
from trainsim.config.platform_schema import MODELS, ROOT


class Declined(Exception):
    """The fast path cannot vouch for this value: pydantic decides."""


class Section:
    """A validated model's values, read as the pydantic model reads: its fields as attributes,
    ``model_fields_set`` (the keys the file gave) and ``model_dump()``."""

    __slots__ = ("model_name", "values", "model_fields_set")

    def __init__(self, model_name: str, values: dict[str, Any], fields_set: frozenset[str]) -> None:
        self.model_name = model_name
        self.values = values
        self.model_fields_set = fields_set

    def __getattr__(self, name: str) -> Any:
        values = object.__getattribute__(self, "values")  # unset (a copy being built): no recursion
        try:
            return values[name]
        except KeyError:
            raise AttributeError(f"{self.model_name} has no field {name!r}") from None

    def model_dump(self) -> dict[str, Any]:
        return {k: _dumped(v) for k, v in self.values.items()}

    def __repr__(self) -> str:
        return f"{self.model_name}({', '.join(f'{k}={v!r}' for k, v in self.values.items())})"


def _dumped(value: Any) -> Any:
    if isinstance(value, Section):
        return value.model_dump()
    if type(value) is list:
        return [_dumped(v) for v in value]
    if type(value) is dict:
        return {k: _dumped(v) for k, v in value.items()}
    return value


def _model(name: str, data: Any) -> Section:
    if type(data) is not dict:
        raise Declined(name)
    before, fields = MODELS[name]
    for rule in before:
        data = _call(rule, data)
        if type(data) is not dict:
            raise Declined(name)
    given = frozenset(data)
    if not given <= _FIELD_NAMES[name]:
        raise Declined(name)  # an unknown key (or one that is not text)
    values: dict[str, Any] = {}
    for field, node, default_kind, default in fields:
        if field in data:
            values[field] = check(node, data[field])
        elif default_kind == "required":
            raise Declined(f"{name}.{field}")
        elif default_kind == "model":
            values[field] = _model(default, {})
        else:
            values[field] = copy.deepcopy(default) if default_kind == "copy" else default
    return Section(name, values, given)


def _call(rule: str, value: Any) -> Any:
    try:
        return getattr(platform_rules, rule)(value)
    except Exception as exc:  # the rule refuses: pydantic words it
        raise Declined(rule) from exc


_BOUND = {
    "ge": lambda v, limit: v >= limit,
    "gt": lambda v, limit: v > limit,
    "le": lambda v, limit: v <= limit,
    "lt": lambda v, limit: v < limit,
}


def _number(kind: str, value: Any) -> Any:
    t = type(value)
    if kind == "int":
        if t is not int:
            raise Declined("int")
        return value
    if t is float:
        if not math.isfinite(value):
            raise Declined("float")
        return value
    if t is int:  # strict float takes an int, as float() rounds it
        try:
            return float(value)
        except OverflowError:
            raise Declined("float") from None
    raise Declined("float")


def check(node: tuple[Any, ...], value: Any) -> Any:
    """``value`` validated by ``node`` (a table node), as pydantic would give it; Declined when
    the fast path cannot vouch for it."""
    kind = node[0]
    if kind in ("int", "float"):
        value = _number(kind, value)
        for op, limit in node[1]:
            if not _BOUND[op](value, limit):
                raise Declined(op)
        return value
    if kind == "model":
        return _model(node[1], value)
    if kind == "str":
        if type(value) is not str:
            raise Declined(kind)
        return value
    if kind == "bool":
        if type(value) is not bool:
            raise Declined(kind)
        return value
    if kind == "literal":
        if type(value) is not str or value not in node[1]:
            raise Declined(kind)
        return value
    if kind == "list":
        if type(value) is not list or len(value) < node[2] or (node[3] is not None and len(value) > node[3]):
            raise Declined(kind)
        return [check(node[1], v) for v in value]
    if kind == "dict":
        if type(value) is not dict:
            raise Declined(kind)
        return {check(node[1], k): check(node[2], v) for k, v in value.items()}
    if kind == "nullable":
        return None if value is None else check(node[1], value)
    if kind == "before":
        return check(node[2], _call(node[1], value))
    if kind == "after":
        return _call(node[1], check(node[2], value))
    if kind == "bound":
        value = check(node[3], value)
        if not _BOUND[node[1]](value, node[2]):
            raise Declined(node[1])
        return value
    if kind == "finite":
        value = check(node[1], value)
        if not math.isfinite(value):
            raise Declined(kind)
        return value
    if kind == "any":
        return value
    raise AssertionError(f"platform_schema.py has a node {kind!r} this module does not know")


def validate(data: Any) -> Section:
    """The whole file (the parsed YAML mapping) as a ``PlatformModel``-like Section."""
    section: Section = check(ROOT, data)
    return section


def defaults(model_name: str) -> Section:
    """A model's defaults (the model built from no keys), e.g. ``PcmTierModel``'s."""
    return _model(model_name, {})


_FIELD_NAMES = {name: frozenset(f[0] for f in fields) for name, (_, fields) in MODELS.items()}
