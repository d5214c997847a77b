"""The convex core of the bandwidth optimizer: minimize LIBRA's step time over a polytope.

Problem (LIBRA, arXiv 2109.11762, its QP formulation; astra-sim/libra ``src/model/model.py``):

    minimize   T(B) = C + sum_g W_g * max_{d : K_gd > 0} K_gd / B_d
    subject to A_ub B <= b_ub,  A_eq B = b_eq,  B >= 0

``B_d`` in GB/s per NPU, ``C`` seconds of compute, each group ``g`` a set of communications
with the same normalized per-dimension traffic ``K_g`` (max entry 1) and ``W_g`` seconds x GB/s
of weight (bytes / 1e9, summed over the group and the workloads' weights). A non-pipelined
communication contributes one single-dimension group per dimension (a sum instead of a max).

Why this method. ``K / B_d`` is convex for ``B_d > 0``; max and sum keep convexity, so ``T`` is
convex over the polytope and every local minimum is global. LIBRA hands the equivalent
bilinear model (``bw * bw_inv == 1``) to Gurobi's non-convex QP mode; here it is solved exactly
with open solvers in three steps:

1. *Start* (HiGHS LP): the point maximizing the smallest bandwidth of the dimensions that carry
   traffic. If that smallest bandwidth is 0, the constraints force a loaded dimension to zero
   bandwidth and the time is infinite (:class:`~trainsim.errors.InfeasibleError`); if an LP
   maximizing one loaded dimension is unbounded, the time has no minimum (``ConfigError``).
2. *Solve* (SLSQP, ``scipy.optimize.minimize``) on the smooth epigraph form: variables ``B`` and
   ``t_g``, minimize ``sum_g W_g t_g`` subject to ``t_g >= K_gd / B_d`` and the linear
   constraints, with analytic gradients and every variable scaled to order 1.
3. *Certify* (HiGHS LP, Kelley's cutting planes): replacing each ``K/B_d`` by its tangents at
   a few points gives a polyhedral relaxation whose LP optimum is a lower bound on ``T``; with
   tangents at the true optimum the LP has the same KKT point, so the bound meets the SLSQP
   value. If the gap is above tolerance, the LP solution adds tangents (and is itself a feasible
   point, an upper bound) until ``(upper - lower) / upper <= rtol``. The result carries that
   certified gap, and the LP's dual values give each constraint's shadow price
   (seconds per GB/s of its right-hand side).

Dimensions that carry no traffic do not change ``T``; they get the least bandwidth the
constraints allow (an LP with the loaded dimensions held at their optimum), the cheapest of the
optimal allocations.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import OptimizeResult, linprog, minimize

from trainsim.errors import ConfigError, InfeasibleError


@dataclass
class Polytope:
    """``A_ub B <= b_ub``, ``A_eq B = b_eq``, ``B >= 0``; row ``i`` of each came from
    ``ub_rows[i]`` / ``eq_rows[i]`` (indices into the caller's constraint list)."""

    a_ub: np.ndarray
    b_ub: np.ndarray
    a_eq: np.ndarray
    b_eq: np.ndarray
    ub_rows: list[int] = field(default_factory=list)
    eq_rows: list[int] = field(default_factory=list)

    @property
    def ndims(self) -> int:
        return int(self.a_ub.shape[1] if self.a_ub.size else self.a_eq.shape[1])

    def with_equality(self, row: np.ndarray, rhs: float, tag: int = -1) -> Polytope:
        """Add ``row @ B == rhs``; unchanged when the equalities already fix ``row @ B`` (a
        dependent row would make SLSQP's constraint Jacobian singular); the caller picks
        ``rhs`` inside the range the polytope allows, so the dropped row holds."""
        if len(self.b_eq):
            rank = np.linalg.matrix_rank(self.a_eq)
            if np.linalg.matrix_rank(np.vstack([self.a_eq, row[None, :]])) == rank:
                return self
        return Polytope(
            self.a_ub, self.b_ub,
            np.vstack([self.a_eq, row[None, :]]), np.append(self.b_eq, rhs),
            self.ub_rows, [*self.eq_rows, tag],
        )

    def linprog(self, c: np.ndarray, extra_ub: tuple[np.ndarray, np.ndarray] | None = None,
                bounds: list[tuple[float | None, float | None]] | None = None) -> OptimizeResult:
        """HiGHS over the polytope in ``B`` (plus extra columns when ``c`` is longer)."""
        n = len(c)
        pad = n - self.ndims

        def widen(a: np.ndarray) -> np.ndarray:
            return np.hstack([a, np.zeros((a.shape[0], pad))]) if pad else a

        a_ub, b_ub = widen(self.a_ub), self.b_ub
        if extra_ub is not None:
            a_ub, b_ub = np.vstack([a_ub, extra_ub[0]]), np.concatenate([b_ub, extra_ub[1]])
        return linprog(
            c,
            A_ub=a_ub if len(b_ub) else None, b_ub=b_ub if len(b_ub) else None,
            A_eq=widen(self.a_eq) if len(self.b_eq) else None, b_eq=self.b_eq if len(self.b_eq) else None,
            bounds=bounds if bounds is not None else [(0, None)] * n, method="highs",
        )


@dataclass
class ConvexSolution:
    bandwidths: np.ndarray  # GB/s
    time_s: float  # T at ``bandwidths`` (an upper bound on the optimum)
    lower_bound_s: float  # certified lower bound on the optimum
    ub_marginals: np.ndarray  # d T / d b_ub, seconds per unit of each inequality's rhs
    eq_marginals: np.ndarray  # d T / d b_eq
    iterations: int

    @property
    def gap(self) -> float:
        return max(0.0, (self.time_s - self.lower_bound_s) / self.time_s) if self.time_s > 0 else 0.0


def evaluate(k: np.ndarray, w: np.ndarray, c: float, b: np.ndarray) -> float:
    """``T(B)`` in seconds (inf when a loaded dimension has no bandwidth)."""
    if k.shape[0] == 0:
        return c
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(k > 0, k / np.where(b > 0, b, 0.0)[None, :], 0.0)
    ratio = np.where((k > 0) & (b[None, :] <= 0), np.inf, ratio)
    return float(c + w @ ratio.max(axis=1))


def _start(poly: Polytope, loaded: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Interior-ish start and per-dimension maxima (for scaling); raises when the time has no
    finite minimum."""
    d = poly.ndims
    bmax = np.zeros(d)
    for j in range(d):
        if not loaded[j]:
            continue
        c = np.zeros(d)
        c[j] = -1.0
        res = poly.linprog(c)
        if res.status == 3:
            raise ConfigError(
                f"the constraints do not bound B{j}, so the step time can be lowered without end",
                field="constraint", hint=f"add a budget such as 'sum == 500' or an upper bound on B{j}",
            )
        if res.status != 0:
            raise RuntimeError(f"LP failed: {res.message}")
        bmax[j] = -res.fun
        if bmax[j] <= 0:
            raise InfeasibleError(
                f"the constraints force B{j} to 0 but the workload moves data on dimension {j}, "
                "so the step would never finish",
                hint=f"allow B{j} > 0",
            )
    # maximize s subject to B_j >= s for loaded j
    c = np.zeros(d + 1)
    c[-1] = -1.0
    rows = np.zeros((int(loaded.sum()), d + 1))
    for r, j in enumerate(np.flatnonzero(loaded).tolist()):
        rows[r, j], rows[r, -1] = -1.0, 1.0
    res = poly.linprog(c, (rows, np.zeros(len(rows))), [(0, None)] * d + [(0, float(bmax.max()))])
    if res.status != 0 or res.x[-1] <= 0:
        raise InfeasibleError("the constraints leave no allocation with every loaded dimension above 0 GB/s")
    return np.asarray(res.x[:d], dtype=float), bmax


def solve_perf(k: np.ndarray, w: np.ndarray, c: float, poly: Polytope, *, rtol: float = 1e-9,
               max_rounds: int = 60) -> ConvexSolution:
    """Minimize ``T(B)`` over ``poly`` (see the module docstring)."""
    ndims = poly.ndims
    g_count = k.shape[0]
    loaded = np.asarray((k > 0).any(axis=0) if g_count else np.zeros(ndims, dtype=bool), dtype=bool)
    if not loaded.any():
        point = poly.linprog(np.ones(ndims))
        if point.status != 0:
            raise RuntimeError(f"LP failed: {point.message}")
        b = np.asarray(point.x, dtype=float)
        return ConvexSolution(b, c, c, np.zeros(len(poly.b_ub)), np.zeros(len(poly.b_eq)), 0)

    b0, bmax = _start(poly, loaded)
    scale = float(bmax.max())  # B = scale * x
    pairs = np.argwhere(k > 0)  # (g, d) pairs with traffic
    t0 = np.array([np.max(k[g][k[g] > 0] / b0[k[g] > 0]) for g in range(g_count)])
    weight = w * t0  # objective coefficient of the scaled t (seconds)
    norm = float(weight.sum())
    kk = k[pairs[:, 0], pairs[:, 1]] / (scale * t0[pairs[:, 0]])  # t~_g >= kk / x_d

    def row_scaled(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        a = a * scale
        n = np.maximum(np.linalg.norm(a, axis=1), 1e-300) if len(a) else np.ones(0)
        return (a / n[:, None], b / n) if len(a) else (a, b)

    aub, bub = row_scaled(poly.a_ub, poly.b_ub)
    aeq, beq = row_scaled(poly.a_eq, poly.b_eq)
    n_var = ndims + g_count
    floor = 1e-9

    def objective(z: np.ndarray) -> float:
        return float(weight @ z[ndims:]) / norm

    def objective_grad(z: np.ndarray) -> np.ndarray:
        g = np.zeros(n_var)
        g[ndims:] = weight / norm
        return g

    def epi(z: np.ndarray) -> np.ndarray:
        x = np.maximum(z[pairs[:, 1]], floor)
        return z[ndims + pairs[:, 0]] - kk / x

    def epi_jac(z: np.ndarray) -> np.ndarray:
        jac = np.zeros((len(pairs), n_var))
        x = np.maximum(z[pairs[:, 1]], floor)
        rows = np.arange(len(pairs))
        jac[rows, ndims + pairs[:, 0]] = 1.0
        jac[rows, pairs[:, 1]] = kk / x**2
        return jac

    cons = [{"type": "ineq", "fun": epi, "jac": epi_jac}]
    if len(bub):
        a_full = np.hstack([aub, np.zeros((len(bub), g_count))])
        cons.append({"type": "ineq", "fun": lambda z: bub - a_full @ z, "jac": lambda z: -a_full})
    if len(beq):
        e_full = np.hstack([aeq, np.zeros((len(beq), g_count))])
        cons.append({"type": "eq", "fun": lambda z: e_full @ z - beq, "jac": lambda z: e_full})
    bounds = [(floor if loaded[j] else 0.0, None) for j in range(ndims)] + [(0.0, None)] * g_count

    def slsqp(x_start: np.ndarray) -> np.ndarray:
        z0 = np.concatenate([x_start, np.zeros(g_count)])
        z0[ndims:] = [np.max(k[g][k[g] > 0] / (scale * np.maximum(x_start[k[g] > 0], floor))) / t0[g] for g in range(g_count)]
        res = minimize(objective, z0, jac=objective_grad, constraints=cons, bounds=bounds, method="SLSQP",
                       options={"maxiter": 500, "ftol": 1e-15})
        return np.asarray(res.x[:ndims], dtype=float)

    def clean(x: np.ndarray) -> np.ndarray:
        return np.maximum(x, 0.0)

    best_x = b0 / scale
    best_t = evaluate(k, w, c, b0)
    x = clean(slsqp(best_x))
    t = evaluate(k, w, c, x * scale)
    if t < best_t and _feasible(poly, x * scale):
        best_x, best_t = x, t

    # Kelley's cutting planes on the scaled problem: cut at x0 for (g, d):
    #   t~_g >= 2 kk/x0 - kk x / x0^2
    cut_points = [b0 / scale, best_x]
    cut_a: list[np.ndarray] = []
    cut_b: list[float] = []

    def add_cuts(x0: np.ndarray) -> None:
        for p, (g, dd) in enumerate(pairs):
            if x0[dd] <= floor:
                continue
            row = np.zeros(n_var)
            row[ndims + g] = -1.0
            row[dd] = -kk[p] / x0[dd] ** 2
            cut_a.append(row)
            cut_b.append(-2.0 * kk[p] / x0[dd])

    for p0 in cut_points:
        add_cuts(p0)
    lower = -np.inf
    ub_marg = np.zeros(len(bub))
    eq_marg = np.zeros(len(beq))
    rounds = 0
    obj = np.concatenate([np.zeros(ndims), weight])
    lp_bounds: list[tuple[float | None, float | None]] = [(0.0, None)] * n_var
    for rounds in range(1, max_rounds + 1):  # noqa: B007 - the count is reported
        a_all = np.vstack([np.hstack([aub, np.zeros((len(bub), g_count))]), np.array(cut_a)]) if len(bub) else np.array(cut_a)
        b_all = np.concatenate([bub, cut_b]) if len(bub) else np.array(cut_b)
        res = linprog(obj, A_ub=a_all, b_ub=b_all,
                      A_eq=np.hstack([aeq, np.zeros((len(beq), g_count))]) if len(beq) else None,
                      b_eq=beq if len(beq) else None, bounds=lp_bounds, method="highs")
        if res.status != 0:
            raise RuntimeError(f"certificate LP failed: {res.message}")
        lower = max(lower, c + float(res.fun))
        ub_marg = np.asarray(res.ineqlin.marginals[: len(bub)], dtype=float) if len(bub) else ub_marg
        eq_marg = np.asarray(res.eqlin.marginals, dtype=float) if len(beq) else eq_marg
        x_lp = clean(np.asarray(res.x[:ndims], dtype=float))
        t_lp = evaluate(k, w, c, x_lp * scale)
        if t_lp < best_t:
            best_x, best_t = x_lp, t_lp
        if best_t - lower <= rtol * best_t:
            break
        add_cuts(x_lp)
        if rounds % 10 == 0:  # polish from the best point found so far and from the LP's
            for start in (best_x, x_lp):
                x = clean(slsqp(start))
                t = evaluate(k, w, c, x * scale)
                if t < best_t and _feasible(poly, x * scale):
                    best_x, best_t = x, t
            add_cuts(best_x)
    b = best_x * scale
    # the row scaling: rhs_scaled = rhs / n, so dT/d rhs = marginal / n
    n_ub = np.linalg.norm(poly.a_ub * scale, axis=1) if len(poly.b_ub) else np.ones(0)
    n_eq = np.linalg.norm(poly.a_eq * scale, axis=1) if len(poly.b_eq) else np.ones(0)
    b = _least_unloaded(poly, b, loaded)
    return ConvexSolution(b, evaluate(k, w, c, b), min(lower, best_t), ub_marg / np.maximum(n_ub, 1e-300),
                          eq_marg / np.maximum(n_eq, 1e-300), rounds)


def _feasible(poly: Polytope, b: np.ndarray, rtol: float = 1e-7) -> bool:
    scale = max(1.0, float(np.abs(b).max()))
    ok_ub = not len(poly.b_ub) or bool(np.all(poly.a_ub @ b - poly.b_ub <= rtol * scale * (1 + np.abs(poly.b_ub))))
    ok_eq = not len(poly.b_eq) or bool(np.all(np.abs(poly.a_eq @ b - poly.b_eq) <= rtol * scale * (1 + np.abs(poly.b_eq))))
    return ok_ub and ok_eq and bool(np.all(b >= -rtol * scale))


def _least_unloaded(poly: Polytope, b: np.ndarray, loaded: np.ndarray) -> np.ndarray:
    """Hold the loaded dimensions (within a hair) and give the others the least bandwidth."""
    if loaded.all():
        return b
    tol = 1e-10 * max(1.0, float(b.max()))
    bounds: list[tuple[float | None, float | None]] = [
        (max(0.0, b[j] - tol), b[j] + tol) if loaded[j] else (0.0, None) for j in range(len(b))
    ]
    res = poly.linprog((~loaded).astype(float), bounds=bounds)
    if res.status != 0:
        return b
    return np.asarray(res.x, dtype=float)
