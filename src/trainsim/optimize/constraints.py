"""Linear design constraints over per-dimension bandwidths, from strings, and their feasibility.

LIBRA states its constraints as gurobipy expressions over ``bw[d]`` (``total_bw_500gbps``:
``sum(bw) == 500``; ``multiple_constraints``: ``sum == 1000``, ``bw[0] == 500``,
``bw[0] >= bw[1] >= bw[2]``, ``bw[2] + bw[3] == 200``). Here they are strings:

    "sum == 500"   "B0 == 500"   "B0 >= B1"   "B2 + B3 == 200"   "2*B0 - B1 <= 100"
    "B1 >= B2 >= 10"  (a chain: one constraint per comparison)

Variables are ``B<d>`` (or ``B[d]``, ``BW<d>``), the GB/s (1e9 B/s) one NPU has on dimension
``d``; ``sum`` (or ``total``) is the sum over all dimensions. Operators ``==`` (``=``), ``<=``,
``>=``; strict inequalities are refused (they have no optimum). Every bandwidth is also
non-negative, an implicit constraint ``B<d> >= 0``.

:func:`find_feasible` checks the set with an LP (HiGHS through ``scipy.optimize.linprog``); when
no bandwidths satisfy all of them it raises :class:`ConstraintConflictError` naming an
irreducible infeasible subset, found by a deletion filter: drop each constraint in turn and keep
it dropped if the rest is still infeasible; what remains conflicts, and removing any one of its
members makes it feasible.

:func:`normalize` reduces a feasible set to an equivalent one the solver handles: the same
polytope with no equality that depends on the others (``sum == 500`` written twice, or also as
``B0 + B1 + B2 == 500``), no inequality the others imply (``sum <= 500`` beside ``sum == 500``)
and every inequality that always holds with equality (``sum <= 500`` with ``sum >= 500``) made
an equality. Redundant rows make the Jacobian of the active constraints singular, and SLSQP then
stops at its start (the equal split), so the set is reduced first (LP tests: an inequality is
implied when maximizing its left-hand side over the others stays within its right-hand side).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.optimize import linprog

from trainsim.errors import ConfigError, InfeasibleError

SENSES = ("==", "<=", ">=")
_IMPLICIT = "(bandwidths are non-negative)"
_TOKEN = re.compile(
    r"\s*(?:(?P<num>\d+(?:\.\d*)?(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)"
    r"|(?P<var>(?:BW|B)\s*\[\s*\d+\s*\]|(?:BW|B)\d+|sum|total)"
    r"|(?P<op>==|<=|>=|=|<|>|\+|-|\*))",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class LinearConstraint:
    """``coeffs @ B  sense  rhs`` with ``B`` in GB/s per NPU; ``text`` says where it came from."""

    coeffs: tuple[float, ...]
    sense: str  # "==", "<=" or ">="
    rhs: float
    text: str

    def activity(self, bandwidths: Sequence[float] | np.ndarray) -> float:
        return float(np.dot(self.coeffs, bandwidths))

    def violation(self, bandwidths: Sequence[float] | np.ndarray) -> float:
        """How far ``bandwidths`` are from satisfying it (0 when it holds), in its own units."""
        a = self.activity(bandwidths)
        if self.sense == "==":
            return abs(a - self.rhs)
        if self.sense == "<=":
            return max(0.0, a - self.rhs)
        return max(0.0, self.rhs - a)

    def holds(self, bandwidths: Sequence[float] | np.ndarray, rtol: float = 1e-7) -> bool:
        scale = max(1.0, abs(self.rhs), float(np.abs(self.coeffs) @ np.abs(np.asarray(bandwidths, float))))
        return self.violation(bandwidths) <= rtol * scale


class ConstraintConflictError(InfeasibleError):
    """No bandwidths satisfy every constraint; ``conflicting`` is an irreducible subset."""

    def __init__(self, conflicting: Sequence[str]) -> None:
        self.conflicting = list(conflicting)
        given = [c for c in self.conflicting if c.endswith(_IMPLICIT)]
        stated = [c for c in self.conflicting if not c.endswith(_IMPLICIT)]
        listed = "; ".join(repr(c) for c in stated)
        if given:
            listed += " (with " + ", ".join(c[: -len(_IMPLICIT)].strip() for c in given) + ", as bandwidths are non-negative)"
        super().__init__(
            f"the bandwidth constraints cannot all hold: these conflict, and dropping any one of "
            f"them resolves the conflict: {listed}",
            hint="change or drop one of the listed constraints",
        )


def _parse_side(tokens: list[tuple[str, str]], ndims: int, text: str) -> tuple[np.ndarray, float]:
    """A sum of terms ``[+|-] [number *] (variable | number)`` -> (coefficients, constant)."""
    coeffs = np.zeros(ndims)
    const = 0.0
    i = 0
    if not tokens:
        raise ConfigError(f"constraint {text!r}: an empty side", field="constraint")
    while i < len(tokens):
        sign = 1.0
        while i < len(tokens) and tokens[i] in (("op", "+"), ("op", "-")):
            sign = -sign if tokens[i][1] == "-" else sign
            i += 1
        factor, var = sign, None
        expect_factor = True
        while i < len(tokens) and expect_factor:
            kind, value = tokens[i]
            if kind == "num":
                factor *= float(value)
            elif kind == "var":
                if var is not None:
                    raise ConfigError(f"constraint {text!r}: a product of two bandwidths is not linear", field="constraint")
                var = value
            else:
                raise ConfigError(f"constraint {text!r}: unexpected {value!r}", field="constraint")
            i += 1
            expect_factor = i < len(tokens) and tokens[i] == ("op", "*")
            if expect_factor:
                i += 1
                if i == len(tokens):
                    raise ConfigError(f"constraint {text!r}: '*' at the end", field="constraint")
        if var is None:
            const += factor
        elif var.lower() in ("sum", "total"):
            coeffs += factor
        else:
            d = int(re.sub(r"\D", "", var))
            if d >= ndims:
                raise ConfigError(
                    f"constraint {text!r}: {var} names dimension {d}, but the network has {ndims} (B0..B{ndims - 1})",
                    field="constraint",
                )
            coeffs[d] += factor
        if i < len(tokens) and tokens[i] not in (("op", "+"), ("op", "-")):
            raise ConfigError(f"constraint {text!r}: expected '+' or '-' before {tokens[i][1]!r}", field="constraint")
    return coeffs, const


def parse_constraint(text: str, ndims: int) -> list[LinearConstraint]:
    """One string -> its linear constraints (a chain ``a >= b >= c`` gives two)."""
    pos, tokens = 0, []
    stripped = text.strip()
    while pos < len(stripped):
        m = _TOKEN.match(stripped, pos)
        if m is None or m.end() == pos:
            raise ConfigError(f"constraint {text!r}: cannot read {stripped[pos:]!r}", field="constraint",
                              hint="write e.g. 'sum == 500', 'B0 >= B1', 'B2 + B3 == 200'")
        kind = m.lastgroup or ""
        value = re.sub(r"\s", "", m.group(kind))
        tokens.append((kind, value))
        pos = m.end()
    sides: list[list[tuple[str, str]]] = [[]]
    ops: list[str] = []
    for kind, value in tokens:
        if kind == "op" and value in ("==", "=", "<=", ">=", "<", ">"):
            if value in ("<", ">"):
                raise ConfigError(f"constraint {text!r}: strict {value!r} has no optimum; use {value}=", field="constraint")
            ops.append("==" if value == "=" else value)
            sides.append([])
        else:
            sides[-1].append((kind, value))
    if not ops:
        raise ConfigError(f"constraint {text!r}: no comparison (==, <= or >=)", field="constraint")
    parsed = [_parse_side(side, ndims, text) for side in sides]
    out = []
    for k, sense in enumerate(ops):
        (lc, lk), (rc, rk) = parsed[k], parsed[k + 1]
        coeffs = lc - rc
        rhs = rk - lk
        if not (np.all(np.isfinite(coeffs)) and np.isfinite(rhs)):
            raise ConfigError(f"constraint {text!r}: a number beyond the float range; expected finite "
                              "coefficients and bounds (GB/s)", field="constraint")
        if not np.any(coeffs):
            raise ConfigError(f"constraint {text!r}: no bandwidth left after simplifying", field="constraint")
        piece = text if len(ops) == 1 else _chain_piece(sides[k], sense, sides[k + 1])
        out.append(LinearConstraint(tuple(float(c) for c in coeffs), sense, float(rhs), piece))
    return out


def _chain_piece(left: list[tuple[str, str]], sense: str, right: list[tuple[str, str]]) -> str:
    def show(side: list[tuple[str, str]]) -> str:
        return " ".join(v for _, v in side)

    return f"{show(left)} {sense} {show(right)}"


def parse_constraints(texts: Sequence[str | LinearConstraint], ndims: int) -> list[LinearConstraint]:
    out: list[LinearConstraint] = []
    for t in texts:
        out.extend([t] if isinstance(t, LinearConstraint) else parse_constraint(t, ndims))
    return out


def bound_constraints(bounds: Sequence[tuple[float | None, float | None]] | None, ndims: int) -> list[LinearConstraint]:
    """Per-dimension ``(lower, upper)`` GB/s as constraints (``None`` = no bound)."""
    if bounds is None:
        return []
    if len(bounds) != ndims:
        raise ConfigError(f"{len(bounds)} bounds for {ndims} dimensions", field="bounds")
    out = []
    for d, (lo, hi) in enumerate(bounds):
        unit = tuple(1.0 if k == d else 0.0 for k in range(ndims))
        if lo is not None:
            out.append(LinearConstraint(unit, ">=", float(lo), f"B{d} >= {lo:g}"))
        if hi is not None:
            out.append(LinearConstraint(unit, "<=", float(hi), f"B{d} <= {hi:g}"))
    return out


def nonnegativity(ndims: int) -> list[LinearConstraint]:
    return [
        LinearConstraint(tuple(1.0 if k == d else 0.0 for k in range(ndims)), ">=", 0.0, f"B{d} >= 0 {_IMPLICIT}")
        for d in range(ndims)
    ]


def as_matrices(constraints: Sequence[LinearConstraint], ndims: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(A_ub, b_ub, A_eq, b_eq)`` with every ``>=`` turned into ``<=``."""
    ub = [(np.array(c.coeffs) * (-1.0 if c.sense == ">=" else 1.0), c.rhs * (-1.0 if c.sense == ">=" else 1.0))
          for c in constraints if c.sense != "=="]
    eq = [(np.array(c.coeffs), c.rhs) for c in constraints if c.sense == "=="]

    def pack(rows: list[tuple[np.ndarray, float]]) -> tuple[np.ndarray, np.ndarray]:
        return np.array([r for r, _ in rows]).reshape(len(rows), ndims), np.array([b for _, b in rows], dtype=float)

    a_ub, b_ub = pack(ub)
    a_eq, b_eq = pack(eq)
    return a_ub, b_ub, a_eq, b_eq


def _lp_point(constraints: Sequence[LinearConstraint], ndims: int) -> np.ndarray | None:
    """A point satisfying ``constraints`` (bounds free), or None when there is none."""
    a_ub, b_ub, a_eq, b_eq = as_matrices(constraints, ndims)
    res = linprog(
        np.zeros(ndims),
        A_ub=a_ub if len(b_ub) else None, b_ub=b_ub if len(b_ub) else None,
        A_eq=a_eq if len(b_eq) else None, b_eq=b_eq if len(b_eq) else None,
        bounds=[(None, None)] * ndims, method="highs",
    )
    if res.status == 2:
        return None
    if res.status != 0:
        raise RuntimeError(f"LP feasibility check failed: {res.message}")
    return np.asarray(res.x, dtype=float)


def find_feasible(constraints: Sequence[LinearConstraint], ndims: int) -> np.ndarray:
    """A point satisfying ``constraints`` and ``B >= 0``; else :class:`ConstraintConflictError`."""
    every = list(constraints) + nonnegativity(ndims)
    point = _lp_point(every, ndims)
    if point is not None:
        return point
    keep = list(every)
    for c in every:
        trial = [k for k in keep if k is not c]
        if _lp_point(trial, ndims) is None:
            keep = trial
    raise ConstraintConflictError([c.text for c in keep])


@dataclass(frozen=True)
class NormalizedRow:
    """One row of the reduced set: ``coeffs @ B  sense  rhs``, from the caller's constraint ``index``."""

    coeffs: np.ndarray
    sense: str  # "==" or "<="
    rhs: float
    index: int


def _as_rows(constraints: Sequence[LinearConstraint]) -> list[NormalizedRow]:
    """Each constraint as ``==`` or ``<=``, scaled to a unit-norm row."""
    rows = []
    for i, c in enumerate(constraints):
        a = np.asarray(c.coeffs, dtype=float)
        b = float(c.rhs)
        if c.sense == ">=":
            a, b = -a, -b
        n = float(np.linalg.norm(a))
        rows.append(NormalizedRow(a / n, "==" if c.sense == "==" else "<=", b / n, i))
    return rows


def _max_activity(row: NormalizedRow, others: Sequence[NormalizedRow], ndims: int, sign: float) -> float | None:
    """``max sign * row @ B`` over ``others`` and ``B >= 0``; None when unbounded."""
    ub = [r for r in others if r.sense == "<="]
    eq = [r for r in others if r.sense == "=="]
    res = linprog(
        -sign * row.coeffs,
        A_ub=np.array([r.coeffs for r in ub]) if ub else None, b_ub=np.array([r.rhs for r in ub]) if ub else None,
        A_eq=np.array([r.coeffs for r in eq]) if eq else None, b_eq=np.array([r.rhs for r in eq]) if eq else None,
        bounds=[(0, None)] * ndims, method="highs",
    )
    if res.status == 3:
        return None
    if res.status != 0:
        raise RuntimeError(f"LP redundancy check failed: {res.message}")
    return float(-res.fun)


def normalize(constraints: Sequence[LinearConstraint], ndims: int, *, tol: float = 1e-9) -> list[NormalizedRow]:
    """An equivalent, irredundant set for a feasible ``constraints`` (see the module docstring).

    ``tol`` is relative to the largest right-hand side (rows are unit-norm).
    """
    rows = _as_rows(constraints)
    if not rows:
        return []
    atol = tol * max(1.0, max(abs(r.rhs) for r in rows))
    # inequalities that hold with equality at every feasible point become equalities
    out: list[NormalizedRow] = []
    for r in rows:
        if r.sense == "<=":
            others = [o for o in rows if o is not r]
            low = _max_activity(r, others, ndims, -1.0)  # -min(row @ B)
            if low is not None and -low >= r.rhs - atol:
                r = NormalizedRow(r.coeffs, "==", r.rhs, r.index)
        out.append(r)
    # equalities: keep those that raise the rank (the dropped ones are consistent: the set is feasible)
    kept: list[NormalizedRow] = []
    basis = np.zeros((0, ndims))
    for r in out:
        if r.sense != "==":
            continue
        trial = np.vstack([basis, r.coeffs])
        if np.linalg.matrix_rank(trial, tol=1e-9) > basis.shape[0]:
            basis = trial
            kept.append(r)
    # inequalities: drop each one the rest implies (the polytope stays the same at every step)
    ineq = [r for r in out if r.sense == "<="]
    for r in list(ineq):
        rest = kept + [o for o in ineq if o is not r]
        top = _max_activity(r, rest, ndims, 1.0)
        if top is not None and top <= r.rhs + atol:
            ineq.remove(r)
    return sorted(kept + ineq, key=lambda r: r.index)
