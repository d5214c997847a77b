"""The standard Chakra node attributes: how each is read tolerantly and written strictly
(DESIGN.md, workload layer; chakra-format.md §1.5 and §6).

Each :class:`AttrSpec` names one attribute the simulator models, its :class:`Attr` presence bit,
the ``AttributeProto`` oneof member ASTRA-sim's tools write (the only one our writer uses), the
members a reader accepts (any integer, bool or float case for numbers; ``bool_list`` or an
integer list for ``involved_dim``) and the value range that fits both the graph's array and the
written type. Units: ``num_ops`` FLOP; ``tensor_size`` and ``comm_size`` bytes.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from trainsim.workload.graph import Attr

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
INT64_MAX = 2**63 - 1
INT16_MAX = 2**15 - 1

INTEGER_CASES = frozenset(
    f"{prefix}_val"
    for prefix in (
        "int32", "int64", "uint32", "uint64", "sint32", "sint64",
        "fixed32", "fixed64", "sfixed32", "sfixed64", "bool",
    )
)  # fmt: skip
FLOAT_CASES = frozenset({"double_val", "float_val"})
NUMBER_CASES = INTEGER_CASES | FLOAT_CASES
INTEGER_LIST_CASES = frozenset(case.replace("_val", "_list") for case in INTEGER_CASES)


class UnusableValue(ValueError):
    """An attribute value that does not fit the model (out of range, not integral, not finite).

    Its message names the kind of problem, not the value, so that readers can count by kind."""


def _as_flag(value: Any) -> bool:
    return bool(value)


def _integer_in(low: int, high: int) -> Callable[[Any], int]:
    def convert(value: Any) -> int:
        if isinstance(value, float) and not value.is_integer():
            raise UnusableValue("not a whole number")
        number = int(value)
        if not low <= number <= high:
            raise UnusableValue(f"outside {low}..{high}")
        return number

    return convert


def _as_flops(value: Any) -> float:
    number = float(value)
    if not (math.isfinite(number) and 0 <= number <= INT64_MAX):
        raise UnusableValue(f"not a FLOP count in 0..{INT64_MAX}")
    return number


def _flops_as_integer(value: Any) -> int:
    return int(round(_as_flops(value)))


def _as_group_name(value: Any) -> str:
    return value if isinstance(value, str) else str(int(value))


def _as_dims(values: Any) -> tuple[bool, ...]:
    return tuple(bool(v) for v in values)


@dataclass(frozen=True)
class AttrSpec:
    """One standard attribute: ``name`` is both its name in files and its GraphBuilder keyword."""

    name: str
    bit: Attr
    case: str
    accepts: frozenset[str]
    convert: Callable[[Any], Any]
    encode: Callable[[Any], Any] | None = None
    """Graph value -> value of the written member; ``convert`` when None."""

    def read(self, attribute: Any) -> tuple[Any, str | None]:
        """``(graph value, oneof member)`` of an ``AttributeProto``; raises
        :class:`UnusableValue` when the member is not accepted or the value does not fit."""
        case = attribute.WhichOneof("value")
        if case not in self.accepts:
            raise UnusableValue(f"given as {case or 'no value'}")
        raw = getattr(attribute, case)
        return self.convert(raw.values if case.endswith("_list") else raw), case

    def write(self, attribute: Any, value: Any) -> None:
        """Fill an empty ``AttributeProto`` with ``value`` in this attribute's strict type;
        raises :class:`UnusableValue` if the value does not fit that type."""
        attribute.name = self.name
        wire_value = (self.encode or self.convert)(value)
        if self.case == "bool_list":
            attribute.bool_list.values.extend(wire_value)
        else:
            setattr(attribute, self.case, wire_value)


STANDARD_ATTRS: tuple[AttrSpec, ...] = (
    AttrSpec("is_cpu_op", Attr.IS_CPU_OP, "bool_val", NUMBER_CASES, _as_flag),
    AttrSpec("num_ops", Attr.NUM_OPS, "int64_val", NUMBER_CASES, _as_flops, _flops_as_integer),
    AttrSpec(
        "tensor_size", Attr.TENSOR_SIZE, "uint64_val", NUMBER_CASES, _integer_in(0, INT64_MAX)
    ),
    AttrSpec("comm_type", Attr.COMM_TYPE, "int64_val", NUMBER_CASES, _integer_in(0, INT16_MAX)),
    AttrSpec(
        "comm_priority",
        Attr.COMM_PRIORITY,
        "int32_val",
        NUMBER_CASES,
        _integer_in(INT32_MIN, INT32_MAX),
    ),
    AttrSpec("comm_size", Attr.COMM_SIZE, "int64_val", NUMBER_CASES, _integer_in(0, INT64_MAX)),
    AttrSpec("comm_src", Attr.COMM_SRC, "int32_val", NUMBER_CASES, _integer_in(0, INT32_MAX)),
    AttrSpec("comm_dst", Attr.COMM_DST, "int32_val", NUMBER_CASES, _integer_in(0, INT32_MAX)),
    AttrSpec("comm_tag", Attr.COMM_TAG, "int32_val", NUMBER_CASES, _integer_in(0, INT32_MAX)),
    AttrSpec(
        "pg_name",
        Attr.PG_NAME,
        "string_val",
        (INTEGER_CASES - {"bool_val"}) | {"string_val"},
        _as_group_name,
    ),
    AttrSpec("involved_dim", Attr.INVOLVED_DIM, "bool_list", INTEGER_LIST_CASES, _as_dims),
)
"""In the order a writer emits them (the order of chakra's own generator and ASTRA-sim's examples)."""

SPEC_BY_NAME = {spec.name: spec for spec in STANDARD_ATTRS}
