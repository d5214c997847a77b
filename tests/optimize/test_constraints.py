"""Constraint strings, feasibility and the irreducible conflicting subset."""

import numpy as np
import pytest

from trainsim.errors import ConfigError, InfeasibleError
from trainsim.optimize.constraints import (
    ConstraintConflictError,
    find_feasible,
    parse_constraint,
    parse_constraints,
)


@pytest.mark.parametrize(
    ("text", "coeffs", "sense", "rhs"),
    [
        ("sum == 500", (1, 1, 1, 1), "==", 500),
        ("B0 == 500", (1, 0, 0, 0), "==", 500),
        ("B0 >= B1", (1, -1, 0, 0), ">=", 0),
        ("B2 + B3 == 200", (0, 0, 1, 1), "==", 200),
        ("2*B0 - B1 <= 1e2", (2, -1, 0, 0), "<=", 100),
        ("B[3] = 0.5 * total - 10", (-0.5, -0.5, -0.5, 0.5), "==", -10),
        ("bw1 + 3 >= B2", (0, 1, -1, 0), ">=", -3),
    ],
)
def test_parse(text, coeffs, sense, rhs):
    (c,) = parse_constraint(text, 4)
    assert c.coeffs == pytest.approx(coeffs) and c.sense == sense and c.rhs == pytest.approx(rhs)
    assert c.text == text


def test_chain_gives_one_constraint_per_comparison():
    a, b = parse_constraint("B0 >= B1 >= B2", 3)
    assert a.coeffs == (1, -1, 0) and b.coeffs == (0, 1, -1)
    assert a.text == "B0 >= B1" and b.text == "B1 >= B2"


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("B0 > 3", "strict"),
        ("B0 * B1 == 3", "not linear"),
        ("B5 == 3", "B5 names dimension 5"),
        ("B0 + 3", "no comparison"),
        ("B0 == B0", "no bandwidth"),
        ("B0 == 3 $", "cannot read"),
        ("B0 3 == 1", "expected"),
    ],
)
def test_parse_errors(text, match):
    with pytest.raises(ConfigError, match=match):
        parse_constraint(text, 3)


def test_feasible_point_satisfies_everything():
    cons = parse_constraints(["sum == 1000", "B0 == 500", "B0 >= B1 >= B2", "B2 + B3 == 200"], 4)
    x = find_feasible(cons, 4)
    assert all(c.holds(x) for c in cons) and np.all(x >= -1e-9)


def test_conflict_names_an_irreducible_subset():
    cons = parse_constraints(["sum == 500", "B3 <= 1000", "B0 >= 400", "B1 >= 200", "B2 >= B3"], 4)
    with pytest.raises(ConstraintConflictError) as info:
        find_feasible(cons, 4)
    # B2 and B3 cannot go negative to make room: non-negativity is part of the conflict
    assert sorted(info.value.conflicting) == [
        "B0 >= 400", "B1 >= 200", "B2 >= 0 (bandwidths are non-negative)",
        "B3 >= 0 (bandwidths are non-negative)", "sum == 500",
    ]
    assert isinstance(info.value, InfeasibleError)
    message = str(info.value)
    assert "'sum == 500'; 'B0 >= 400'; 'B1 >= 200' (with B2 >= 0, B3 >= 0" in message
    assert "B3 <= 1000" not in message and "B2 >= B3" not in message


def test_conflict_with_non_negativity():
    cons = parse_constraints(["B2 + B3 == 200", "B3 >= 300"], 4)
    with pytest.raises(ConstraintConflictError) as info:
        find_feasible(cons, 4)
    assert sorted(info.value.conflicting) == ["B2 + B3 == 200", "B2 >= 0 (bandwidths are non-negative)", "B3 >= 300"]
