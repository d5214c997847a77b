"""Reading input files into plain Python values, with errors that say where (config layer).

The loaders of :mod:`trainsim.config.astra` and :mod:`trainsim.config.platform` read their
files through here: a missing or unreadable file, a JSON or YAML syntax error (with its line and
column), a duplicate key (which both json and PyYAML would silently resolve to the last value)
and a top level that is not a mapping all become one :class:`~trainsim.errors.ConfigError`.

YAML is read with the safe loader plus YAML 1.2 floats, so ``1e9`` is a number as it is for
yaml-cpp (ASTRA-sim's reader), not the string PyYAML's YAML 1.1 rules make of it. Every YAML
input goes through this one loader, which refuses (docs/limits.md) nesting deeper than
:data:`MAX_YAML_DEPTH` levels (PyYAML composes recursively: a file nested 100,000 deep would
end in a RecursionError) and aliases that expand the document past :data:`MAX_ALIAS_FACTOR`
times its written size (a "billion laughs" file of a few hundred bytes that stands for
gigabytes once a sweep copies it or an error message prints it). JSON nested too deep for
Python's parser is a ConfigError too.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import yaml

from trainsim.errors import ConfigError


def read_text(path: str | Path) -> str:
    """The text of ``path``; a missing, unreadable or non-UTF-8 file is a ConfigError."""
    p = Path(path)
    try:
        return p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError("file not found", file=str(p)) from None
    except IsADirectoryError:
        raise ConfigError("is a directory, expected a file", file=str(p)) from None
    except OSError as exc:
        raise ConfigError(f"cannot read the file: {exc.strerror}", file=str(p)) from None
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"not UTF-8 text ({exc.reason} at byte {exc.start})", file=str(p)
        ) from None


def _pairs_without_duplicates(file: str) -> Any:
    def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in pairs:
            if key in out:
                raise ConfigError(
                    f"duplicate key {key!r}; expected each key once",
                    file=file,
                    field=key,
                )
            out[key] = value
        return out

    return hook


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


MAX_YAML_DEPTH = 100
"""Deepest nesting of mappings and lists a YAML input may have (docs/limits.md)."""
MAX_ALIAS_FACTOR = 10
"""An input's nodes once its aliases are expanded, at most this many times the nodes written
(plus :data:`ALIAS_ALLOWANCE`): anchors that share a few blocks pass, alias bombs do not."""
ALIAS_ALLOWANCE = 1000
_DEEP_FLOW = re.compile(r"[\[{](?:\s*[\[{]){" + str(MAX_YAML_DEPTH) + "}")


def load_json_mapping(path: str | Path) -> dict[str, Any]:
    """Parse a JSON file whose top level must be an object."""
    file = str(path)
    text = read_text(path)
    try:
        data = json.loads(
            text,
            object_pairs_hook=_pairs_without_duplicates(file),
            parse_constant=_reject_constant,
        )
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}", file=file
        ) from None
    except ValueError as exc:  # NaN / Infinity
        raise ConfigError(f"invalid JSON: {exc}", file=file) from None
    except RecursionError:
        raise ConfigError("invalid JSON: nested too deep for the parser", file=file) from None
    return _top_mapping(data, file, "a JSON object")


class _StrictLoader(yaml.SafeLoader):
    """Safe loader that rejects duplicate keys, nesting deeper than :data:`MAX_YAML_DEPTH` and
    alias expansion past :data:`MAX_ALIAS_FACTOR`, and reads YAML 1.2 floats such as ``1e9``."""

    _depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        self._depth += 1
        try:
            if self._depth > MAX_YAML_DEPTH:
                raise yaml.composer.ComposerError(
                    None,
                    None,
                    f"nested deeper than {MAX_YAML_DEPTH} levels (docs/limits.md)",
                    self.peek_event().start_mark,
                )
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def get_single_data(self) -> Any:
        node = self.get_single_node()
        if node is None:
            return None
        _check_alias_expansion(node)
        return self.construct_document(node)


def _check_alias_expansion(root: yaml.Node) -> None:
    """Refuse a document whose aliases expand it past :data:`MAX_ALIAS_FACTOR` times the
    nodes written: counts the tree's nodes over the composed graph, each distinct node once
    (no recursion, no expansion)."""
    size: dict[int, int] = {}
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        if id(node) in size:
            continue
        kids = _children(node)
        if children_done or not kids:
            size[id(node)] = 1 + sum(size[id(k)] for k in kids)
            continue
        stack.append((node, True))
        stack.extend((k, False) for k in kids if id(k) not in size)
    written, expanded = len(size), size[id(root)]
    if expanded > MAX_ALIAS_FACTOR * written + ALIAS_ALLOWANCE:
        raise yaml.composer.ComposerError(
            None,
            None,
            f"aliases expand {written:,} nodes into {expanded:,}, more than {MAX_ALIAS_FACTOR} times (docs/limits.md)",
            root.start_mark,
        )


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    return []


_FLOAT_12 = re.compile(
    r"""^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+]?[0-9]+)?
    |[-+]?(?:[0-9][0-9_]*)(?:[eE][-+]?[0-9]+)
    |\.[0-9_]+(?:[eE][-+]?[0-9]+)?
    |[-+]?\.(?:inf|Inf|INF)
    |\.(?:nan|NaN|NAN))$""",
    re.X,
)
_StrictLoader.add_implicit_resolver("tag:yaml.org,2002:float", _FLOAT_12, list("-+0123456789."))


def _construct_mapping(loader: _StrictLoader, node: yaml.MappingNode) -> dict[Any, Any]:
    loader.flatten_mapping(node)
    out: dict[Any, Any] = {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        try:
            duplicate = key in out
        except TypeError:
            raise yaml.constructor.ConstructorError(
                None, None, "a mapping key must be a plain value", key_node.start_mark
            ) from None
        if duplicate:
            raise yaml.constructor.ConstructorError(
                None, None, f"duplicate key {key!r}; expected each key once", key_node.start_mark
            )
        out[key] = loader.construct_object(value_node, deep=True)
    return out


_StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def load_yaml_mapping(path: str | Path) -> dict[Any, Any]:
    """Parse a YAML file whose top level must be a mapping."""
    return load_yaml_text(read_text(path), str(path))


def load_yaml_text(text: str, file: str) -> dict[Any, Any]:
    """Parse YAML text (from ``file``, for messages) whose top level must be a mapping."""
    deep = _DEEP_FLOW.search(text)
    if deep:  # before the scanner, which looks ahead a thousand characters per open bracket
        line = text.count("\n", 0, deep.start()) + 1
        raise ConfigError(
            f"invalid YAML at line {line}: nested deeper than {MAX_YAML_DEPTH} levels (docs/limits.md)",
            file=file,
        )
    try:
        data = yaml.load(text, Loader=_StrictLoader)  # noqa: S506 - a SafeLoader subclass
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        what = exc.problem or exc.context or "syntax error"
        raise ConfigError(f"invalid YAML{where}: {what}", file=file) from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"invalid YAML: {exc}", file=file) from None
    return _top_mapping(data, file, "a YAML mapping")


def _top_mapping(data: Any, file: str, expected: str) -> dict[Any, Any]:
    if data is None:
        raise ConfigError(f"the file is empty; expected {expected}", file=file)
    if not isinstance(data, dict):
        raise ConfigError(f"the top level is {type_name(data)}; expected {expected}", file=file)
    return data


_TYPE_NAMES = (
    (bool, "a boolean"),  # before int: bool is an int in Python
    (int, "an integer"),
    (float, "a number"),
    (str, "a string"),
    (list, "a list"),
    (dict, "a mapping"),
)


def type_name(value: Any) -> str:
    """A reader's name for the JSON/YAML type of ``value`` (``a list``, ``a string`` ...)."""
    if value is None:
        return "null"
    return next((name for t, name in _TYPE_NAMES if isinstance(value, t)), type(value).__name__)


def yaml_line(text: str, loc: tuple[str | int, ...]) -> int | None:
    """The 1-based line of the node at ``loc`` (mapping keys and list indexes) in a YAML text,
    or of its nearest ancestor that exists; None if the text does not compose."""
    try:
        node = yaml.compose(text, Loader=_StrictLoader)  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError:
        return None
    line = None
    for part in loc:
        if node is None:
            break
        line = node.start_mark.line + 1
        child = None
        if isinstance(node, yaml.MappingNode):
            for key_node, value_node in node.value:
                if isinstance(key_node, yaml.ScalarNode) and key_node.value == str(part):
                    child, line = value_node, key_node.start_mark.line + 1
                    break
        elif (
            isinstance(node, yaml.SequenceNode)
            and isinstance(part, int)
            and 0 <= part < len(node.value)
        ):
            child = node.value[part]
            line = child.start_mark.line + 1
        node = child
    return line
