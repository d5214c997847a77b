"""The sweep file (YAML), validated like every other input, and its expansion into
combinations.

A combination is a fully resolved *inputs document*::

    {"platform": <native platform mapping>, "workload": <workload mapping>,
     "backend": "congestion_unaware", "compat": "default"}

Axes set fields of that document by dotted path (``platform.system.preferred_dataset_splits``,
``platform.network.dims[0].bandwidth_gbps``, ``workload.collective.size_bytes``). Axes multiply;
a ``zip`` axis moves several fields together; ``filter`` is an expression over the axis names
that keeps a combination when true. A combination's key is the SHA-256 of its canonical JSON,
so the same inputs always have the same key, whatever the file they came from.
"""

from __future__ import annotations

import ast
import copy
import hashlib
import itertools
import json
import math
import operator
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from trainsim import budget
from trainsim.errors import ConfigError

DOCUMENT_KEYS = ("platform", "workload", "backend", "compat")
"""The top-level keys of a combination's inputs document (module docstring): an axis path
starts with one of them."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class RangeSpec(_Strict):
    start: float
    stop: float
    step: float = 1.0
    inclusive: bool = True

    def count(self) -> int:
        """How many values :meth:`values` gives, by arithmetic (nothing enumerated); a range
        that is empty or endless is a ValueError."""
        if not (math.isfinite(self.start) and math.isfinite(self.stop) and math.isfinite(self.step)):
            raise ValueError(f"range from {self.start} to {self.stop} by {self.step}: expected finite numbers")
        if self.step == 0 or (self.stop - self.start) * self.step < 0:
            raise ValueError(f"range from {self.start} to {self.stop} by {self.step} is empty or endless")
        steps = (self.stop - self.start) / self.step
        return int(steps) + 1 if self.inclusive or not float(steps).is_integer() else max(0, int(steps))

    def values(self) -> list[float | int]:
        count = self.count()
        limit = budget.LIMITS["combinations"].value
        if count > limit and not budget.is_forced():
            raise ValueError(f"range has {count:,} values, over the limit of {limit:,} (docs/limits.md); use a larger step, or --force")
        out: list[float | int] = []
        v = self.start
        while (v <= self.stop + 1e-12 * abs(self.stop)) if self.inclusive else (v < self.stop):
            out.append(int(v) if float(v).is_integer() and float(self.step).is_integer() else v)
            v += self.step
        return out


class Axis(_Strict):
    field: str = Field(description="dotted path into the inputs document, e.g. platform.system.preferred_dataset_splits")
    name: str | None = Field(None, description="short name used in filters and tables (default: the last path part)")
    values: list[Any] | None = None
    range: RangeSpec | None = None

    @model_validator(mode="after")
    def _one_source(self) -> Axis:
        top = self.field.split(".", 1)[0].split("[", 1)[0]
        if top not in DOCUMENT_KEYS:
            raise ValueError(
                f"field {self.field!r} starts with {top!r}, which is not part of the inputs document; "
                f"expected a path under one of {', '.join(DOCUMENT_KEYS)}"
            )
        if (self.values is None) == (self.range is None):
            raise ValueError("give exactly one of 'values' and 'range'")
        if self.values is not None and not self.values:
            raise ValueError("'values' is empty")
        parse_path(self.field)
        return self

    @property
    def label(self) -> str:
        return self.name or re.sub(r"\[\d+\]", "", self.field.rsplit(".", 1)[-1])

    def points(self) -> list[Any]:
        return list(self.values) if self.values is not None else self.range.values()  # type: ignore[union-attr]

    def count(self) -> int:
        """How many points the axis has, without enumerating a range."""
        return len(self.values) if self.values is not None else self.range.count()  # type: ignore[union-attr]


class ZipAxis(_Strict):
    zip: list[Axis]

    @model_validator(mode="after")
    def _same_lengths(self) -> ZipAxis:
        lengths = {len(a.points()) for a in self.zip}
        if len(lengths) > 1:
            raise ValueError(f"zipped axes have different lengths {sorted(lengths)}")
        return self


class BaseSpec(_Strict):
    platform: str | dict[str, Any] = Field(description="native platform YAML path (relative to the sweep file) or an inline mapping")
    workload: dict[str, Any] = Field(description="workload mapping: {collective: {...}}, {data_parallel: {...}} or {chakra: PREFIX}")
    backend: str = "congestion_unaware"
    compat: str | None = None


class SweepSpec(_Strict):
    base: BaseSpec
    axes: list[Axis | ZipAxis] = Field(default_factory=list)
    filter: str | None = None
    metrics: list[str] = Field(default_factory=lambda: ["makespan_s"])
    source: str = ""

    def axis_list(self) -> list[list[Axis]]:
        """Each product factor as the list of axes that move together."""
        return [a.zip if isinstance(a, ZipAxis) else [a] for a in self.axes]

    def count(self) -> int:
        """Combinations before the filter: the product of the factors' lengths (a zip counts
        once), by arithmetic; nothing is enumerated."""
        total = 1
        for group in self.axis_list():
            total *= group[0].count()
        return total

    def base_document(self) -> dict[str, Any]:
        platform = self.base.platform
        if isinstance(platform, str):
            path = Path(self.source).parent / platform if self.source else Path(platform)
            from trainsim.config.files import load_yaml_mapping

            platform = load_yaml_mapping(path)
        workload = copy.deepcopy(self.base.workload)
        if "chakra" in workload and self.source and not Path(workload["chakra"]).is_absolute():
            workload["chakra"] = str(Path(self.source).parent / workload["chakra"])
        return {"platform": platform, "workload": workload, "backend": self.base.backend, "compat": self.base.compat}

    def combinations(self) -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
        """Yield ``(axis values by name, resolved inputs document)`` for every kept combination."""
        base = self.base_document()
        groups = self.axis_list()
        factors = [list(zip(*(a.points() for a in group), strict=True)) for group in groups]
        check = compile_filter(self.filter, [a.label for g in groups for a in g], self.source) if self.filter else None
        for choice in itertools.product(*factors):
            params = {a.label: v for group, values in zip(groups, choice, strict=True) for a, v in zip(group, values, strict=True)}
            if check is not None and not check(params):
                continue  # the filter first: a combination it drops is never built
            doc = copy.deepcopy(base)
            for group, values in zip(groups, choice, strict=True):
                for axis, value in zip(group, values, strict=True):
                    set_path(doc, axis.field, value, self.source)
            yield params, doc


def combination_key(document: dict[str, Any]) -> str:
    """Stable hash of a fully resolved inputs document."""
    text = json.dumps(document, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def load_sweep(path: str | Path) -> SweepSpec:
    """Read and validate a sweep file; errors name the file and the dotted field."""
    from trainsim.config.files import load_yaml_mapping

    data = load_yaml_mapping(path)
    try:
        spec = SweepSpec.model_validate({**data, "source": str(path)})
    except ValidationError as exc:
        first = exc.errors()[0]
        # pydantic names a model validator or a union member in the location: not a field
        loc = ".".join(str(p) for p in first["loc"] if not re.search(r"^function-|\[.*\(", str(p)))
        msg = first["msg"].removeprefix("Value error, ")
        raise ConfigError(f"{msg} (got {first.get('input')!r})", file=str(path), field=loc) from None
    try:
        combinations = spec.count()
    except ValueError as exc:
        raise ConfigError(str(exc), file=str(path), field="axes") from None
    sizes = " x ".join(f"{group[0].count():,}" for group in spec.axis_list())
    budget.check("combinations", combinations, f"{sizes} axis values", way_under="use fewer axes or values", file=str(path), field="axes")
    try:
        for group in spec.axis_list():
            for axis in group:
                axis.points()
    except ValueError as exc:
        raise ConfigError(str(exc), file=str(path), field="axes") from None
    _check_names(spec, str(path))
    return spec


def _check_names(spec: SweepSpec, file: str) -> None:
    """Names the runner would only meet in every combination: metrics, backend, compat and the
    base workload's kind and keys (an axis may still supply a key the base leaves out)."""
    from trainsim.sweep.evaluate import METRICS, check_workload
    from trainsim.system.modes import COMPAT_MODES, backend_names

    for i, metric in enumerate(spec.metrics):
        if metric not in METRICS:
            raise ConfigError(f"unknown metric {metric!r}; expected one of {', '.join(METRICS)}", file=file, field=f"metrics[{i}]")
    if spec.base.backend not in backend_names():
        raise ConfigError(f"unknown network backend {spec.base.backend!r}; expected one of {', '.join(backend_names())}", file=file, field="base.backend")
    if spec.base.compat is not None and spec.base.compat not in COMPAT_MODES:
        raise ConfigError(f"unknown compatibility mode {spec.base.compat!r}; expected one of {', '.join(COMPAT_MODES)}", file=file, field="base.compat")
    check_workload(spec.base.workload, complete=False, file=file, at="base.workload")


# -- dotted paths ----------------------------------------------------------------------------

_PART = re.compile(r"([A-Za-z_][\w-]*)((?:\[\d+\])*)")


def parse_path(path: str) -> list[str | int]:
    """``"a.b[2].c"`` -> ``["a", "b", 2, "c"]``."""
    parts: list[str | int] = []
    for piece in path.split("."):
        m = _PART.fullmatch(piece)
        if not m:
            raise ValueError(f"bad field path {path!r} at {piece!r}")
        parts.append(m.group(1))
        parts.extend(int(i) for i in re.findall(r"\[(\d+)\]", m.group(2)))
    return parts


def set_path(doc: dict[str, Any], path: str, value: Any, source: str = "") -> None:
    """Set ``doc[path] = value``; missing mappings are created, list indexes must exist."""
    parts = parse_path(path)
    node: Any = doc
    for i, part in enumerate(parts[:-1]):
        nxt = parts[i + 1]
        if isinstance(part, int):
            if not isinstance(node, list) or part >= len(node):
                raise ConfigError(f"index [{part}] does not exist", file=source or None, field=path)
            node = node[part]
        else:
            if not isinstance(node, dict):
                raise ConfigError(f"{part!r} is not inside a mapping", file=source or None, field=path)
            node = node.setdefault(part, [] if isinstance(nxt, int) else {})
    last = parts[-1]
    if isinstance(last, int):
        if not isinstance(node, list) or last >= len(node):
            raise ConfigError(f"index [{last}] does not exist", file=source or None, field=path)
        node[last] = value
    else:
        node[last] = value


# -- filter expressions ----------------------------------------------------------------------

_OPS: dict[type, Any] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow,
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
    ast.Gt: operator.gt, ast.GtE: operator.ge, ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b,
    ast.USub: operator.neg, ast.Not: operator.not_,
}


FILTER_MAX_CHARS = 2_000
"""Longest filter expression (characters)."""
FILTER_MAX_NODES = 500
"""Most syntax nodes in a filter (a 3,000-term sum is refused before it is evaluated)."""
FILTER_MAX_DEPTH = 40
"""Deepest nesting of a filter's syntax tree."""
FILTER_MAX_POW = 4_096
"""``a ** b`` only while the result has at most this many bits (``|b| <= 4096`` for floats)."""
FILTER_MAX_ITEMS = 10_000
"""Longest string or list a filter may build (``'a' * n``, ``[x] * n``, ``a + b``)."""


def _depth(node: ast.AST) -> int:
    """Nesting depth, without recursion (the parser accepts deeper trees than Python's stack)."""
    deepest, stack = 0, [(node, 1)]
    while stack:
        n, d = stack.pop()
        deepest = max(deepest, d)
        stack.extend((c, d + 1) for c in ast.iter_child_nodes(n))
    return deepest


def _bounded_pow(a: Any, b: Any) -> Any:
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        if isinstance(a, int) and isinstance(b, int) and b > 0:
            bits = max(1, abs(a).bit_length()) * b
            if abs(a) > 1 and bits > FILTER_MAX_POW:
                raise OverflowError(f"{a} ** {b} has about {bits:,} bits; the limit is {FILTER_MAX_POW:,}")
        elif abs(b) > FILTER_MAX_POW:
            raise OverflowError(f"an exponent of {b} is above {FILTER_MAX_POW:,}")
    return operator.pow(a, b)


def _sized(result: Any) -> Any:
    if isinstance(result, (str, list, bytes)) and len(result) > FILTER_MAX_ITEMS:
        raise OverflowError(f"a value of {len(result):,} items; the limit is {FILTER_MAX_ITEMS:,}")
    return result


def _bounded_mul(a: Any, b: Any) -> Any:
    for seq, n in ((a, b), (b, a)):
        if isinstance(seq, (str, list, bytes)) and isinstance(n, int) and len(seq) * max(0, n) > FILTER_MAX_ITEMS:
            raise OverflowError(f"a value of {len(seq) * n:,} items; the limit is {FILTER_MAX_ITEMS:,}")
    return operator.mul(a, b)


_BOUNDED: dict[type, Any] = {
    **_OPS,
    ast.Pow: _bounded_pow,
    ast.Mult: _bounded_mul,
    ast.Add: lambda a, b: _sized(operator.add(a, b)),
}

_RUNTIME_ERRORS = (TypeError, ValueError, ArithmeticError, KeyError, IndexError, RecursionError, MemoryError)


def compile_filter(text: str, names: list[str], source: str) -> Any:
    """A safe, bounded evaluator for ``filter``: names, numbers, strings, lists, arithmetic,
    comparisons, ``and``/``or``/``not``. Anything else is a :class:`ConfigError`, and so is an
    expression beyond the size limits above or one that fails on a combination (comparing a
    string with a number, ``% 0``, a power or a repetition too large): the error names the
    expression, the values it failed on and why."""
    where = {"file": source or None, "field": "filter"}
    if len(text) > FILTER_MAX_CHARS:
        raise ConfigError(f"filter of {len(text):,} characters; the limit is {FILTER_MAX_CHARS:,}", **where)
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError as exc:
        raise ConfigError(f"filter {text!r} is not an expression: {exc.msg}", **where) from None
    except (RecursionError, MemoryError, ValueError):
        raise ConfigError(f"filter {text[:80]!r}... is nested too deeply to read", **where) from None
    count = sum(1 for _ in ast.walk(tree))
    if count > FILTER_MAX_NODES or _depth(tree) > FILTER_MAX_DEPTH:
        raise ConfigError(
            f"filter {text[:80]!r}{'...' if len(text) > 80 else ''} is too large ({count:,} terms, nesting "
            f"{_depth(tree)}); the limits are {FILTER_MAX_NODES} terms and nesting {FILTER_MAX_DEPTH}",
            **where,
        )

    def ev(node: ast.AST, env: dict[str, Any]) -> Any:
        if isinstance(node, ast.Expression):
            return ev(node.body, env)
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            return env[node.id]
        if isinstance(node, (ast.List, ast.Tuple)):
            return [ev(e, env) for e in node.elts]
        if isinstance(node, ast.BinOp) and type(node.op) in _BOUNDED:
            return _BOUNDED[type(node.op)](ev(node.left, env), ev(node.right, env))
        if isinstance(node, ast.UnaryOp) and type(node.op) in _BOUNDED:
            return _BOUNDED[type(node.op)](ev(node.operand, env))
        if isinstance(node, ast.BoolOp):
            vals = (ev(v, env) for v in node.values)
            return all(vals) if isinstance(node.op, ast.And) else any(vals)
        if isinstance(node, ast.Compare):
            left = ev(node.left, env)
            for op, comp in zip(node.ops, node.comparators, strict=True):
                right = ev(comp, env)
                if type(op) not in _BOUNDED or not _BOUNDED[type(op)](left, right):
                    return False
                left = right
            return True
        raise ConfigError(f"filter may not use {type(node).__name__} ({ast.unparse(node)!r})", **where)

    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id not in names:
            raise ConfigError(f"filter names {node.id!r}, which is not an axis (axes: {', '.join(names)})", **where)
        if not isinstance(node, (ast.Expression, ast.Constant, ast.Name, ast.List, ast.Tuple, ast.BinOp, ast.UnaryOp,
                                 ast.BoolOp, ast.Compare, ast.operator, ast.unaryop, ast.boolop, ast.cmpop, ast.expr_context)):
            raise ConfigError(f"filter may not use {type(node).__name__} ({ast.unparse(node)!r})", **where)

    def check(env: dict[str, Any]) -> bool:
        try:
            return bool(ev(tree, env))
        except _RUNTIME_ERRORS as exc:
            values = ", ".join(f"{k}={v!r}" for k, v in env.items() if k in text)
            raise ConfigError(f"filter {text!r} fails where {values}: {type(exc).__name__}: {exc}", **where) from None

    return check
