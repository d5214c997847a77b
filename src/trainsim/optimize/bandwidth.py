"""LIBRA bandwidth optimization: how many GB/s each network dimension should get.

Source: LIBRA (Won, Rashidi et al., arXiv 2109.11762; astra-sim/libra). Inputs are one or more
workloads (:class:`~trainsim.optimize.traffic.WorkloadTraffic`, each with a weight), linear
constraints over the per-NPU bandwidths ``B_d`` in GB/s (1e9 B/s; LIBRA's bytes per ns, the same
number), optional per-dimension bounds and LIBRA's cost model. Objectives, as LIBRA's
``SolverObjective``:

- ``perf``: minimize ``T(B) = sum_w weight_w * T_w(B)``, each ``T_w`` the workload's step time
  (:mod:`~trainsim.optimize.traffic`). Convex; solved and certified by
  :func:`trainsim.optimize.solver.solve_perf`.
- ``perf_per_cost``: minimize ``T(B) * cost(B)`` (LIBRA minimizes ``e2e_time * network_cost``;
  its constant ``/1e10`` does not move the optimum). Not convex, but ``cost = c @ B`` is linear
  (:mod:`~trainsim.optimize.cost`), so with ``v(K) = min {T(B) : B feasible, c @ B = K}`` the
  problem is ``min_K K v(K)`` over ``[K_min, K_max]`` (the LP range of the cost). ``v`` is the
  value function of a convex program in its right-hand side, hence convex in ``K``. A 1-D
  branch and bound finds the global minimum: the secant of two neighbouring samples, extended,
  is a lower bound of a convex ``v`` outside its chord, and ``v >= min T``; the minimum of
  ``K x`` (the largest such bound) over each interval bounds ``K v(K)`` there; intervals whose
  bound is above the best sample are discarded, the others bisected, until the certified
  relative gap is below ``rtol``.

The result gives the optimum, the equal split of the same total bandwidth as a baseline (its
time, cost and whether it meets the constraints), the speed-up, and every constraint's activity,
slack, whether it binds and its shadow price (seconds of weighted step time per unit of its
right-hand side, from the certificate LP).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from trainsim.errors import ConfigError, InfeasibleError, SolverError
from trainsim.optimize.constraints import (
    LinearConstraint,
    as_matrices,
    bound_constraints,
    find_feasible,
    normalize,
    parse_constraints,
)
from trainsim.optimize.libra_inputs import LibraNetwork
from trainsim.optimize.solver import ConvexSolution, Polytope, evaluate, solve_perf
from trainsim.optimize.traffic import GBPS, WorkloadTraffic

OBJECTIVES = ("perf", "perf_per_cost")


@dataclass(frozen=True)
class ConstraintStatus:
    text: str
    activity: float  # left-hand side at the optimum (GB/s units of the constraint)
    rhs: float
    sense: str
    slack: float  # >= 0; 0 for equalities
    holds: bool
    binding: bool
    marginal_s: float | None  # d (weighted step time) / d rhs, s per unit; 0 when slack, None when not computed


@dataclass
class BandwidthResult:
    """The optimum and its baseline. Times in seconds, bandwidths in GB/s per NPU, cost in $."""

    objective: str
    dims: list[str]
    bandwidths_gbps: np.ndarray
    time_s: float  # weighted sum of the workloads' step times at the optimum
    workload_times_s: dict[str, float]
    equal_bandwidths_gbps: np.ndarray
    equal_time_s: float
    equal_workload_times_s: dict[str, float]
    equal_feasible: bool
    cost: float | None
    equal_cost: float | None
    constraints: list[ConstraintStatus]
    gap: float  # certified relative optimality gap of the objective
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def speedup(self) -> float:
        """Equal-split time over optimum time (weighted step times)."""
        return self.equal_time_s / self.time_s

    @property
    def binding(self) -> list[ConstraintStatus]:
        return [c for c in self.constraints if c.binding]

    @property
    def time_cost_product(self) -> float | None:
        """``T * cost`` in seconds x dollars (what ``perf_per_cost`` minimizes)."""
        return None if self.cost is None else self.time_s * self.cost

    def to_dict(self) -> dict[str, Any]:
        return {
            "objective": self.objective,
            "dims": self.dims,
            "bandwidths_gbps": [float(b) for b in self.bandwidths_gbps],
            "time_s": self.time_s,
            "workload_times_s": self.workload_times_s,
            "cost": self.cost,
            "equal_split": {
                "bandwidths_gbps": [float(b) for b in self.equal_bandwidths_gbps],
                "time_s": self.equal_time_s,
                "workload_times_s": self.equal_workload_times_s,
                "cost": self.equal_cost,
                "meets_constraints": self.equal_feasible,
            },
            "speedup": self.speedup,
            "gap": self.gap,
            "constraints": [c.__dict__ for c in self.constraints],
            "info": self.info,
        }


@dataclass
class BandwidthProblem:
    """Everything the optimizer needs; :func:`optimize_bandwidth` builds it from arguments."""

    network: LibraNetwork
    workloads: list[tuple[WorkloadTraffic, float]]
    constraints: list[LinearConstraint]
    cost_coeffs: np.ndarray | None = None  # $ per GB/s of each B_d
    _polytope: Polytope | None = field(default=None, init=False, repr=False)

    @property
    def ndims(self) -> int:
        return self.network.ndims

    def terms(self) -> tuple[np.ndarray, np.ndarray, float]:
        """``(K, W, C)`` of :mod:`~trainsim.optimize.solver`: normalized traffic groups, their
        weights (bytes / 1e9, weighted) and the weighted compute seconds."""
        groups: dict[tuple[float, ...], float] = {}
        compute = 0.0
        for traffic, weight in self.workloads:
            compute += weight * traffic.compute_s
            rows = traffic.bytes_per_dim
            if not traffic.pipelined:  # a sum over dimensions: one group per (row, dim)
                rows = np.concatenate([np.diag(r) for r in rows]) if len(rows) else rows
            for row in rows:
                peak = float(row.max())
                if peak <= 0:
                    continue
                key = tuple(np.round(row / peak, 12))
                groups[key] = groups.get(key, 0.0) + weight * peak / GBPS
        k = np.array(list(groups), dtype=float).reshape(len(groups), self.ndims)
        return k, np.array(list(groups.values()), dtype=float), compute

    def time_s(self, bandwidths: np.ndarray) -> float:
        return float(sum(w * t.time_s(bandwidths) for t, w in self.workloads))

    def cost(self, bandwidths: np.ndarray) -> float | None:
        return None if self.cost_coeffs is None else float(self.cost_coeffs @ bandwidths)

    def polytope(self) -> Polytope:
        """The constraints' polytope, reduced (:func:`~trainsim.optimize.constraints.normalize`):
        the rows name the constraints they came from; a dropped one gets no shadow price."""
        if self._polytope is None:
            rows = normalize(self.constraints, self.ndims)
            reduced = [
                self.constraints[r.index] if (r.sense == "==") == (self.constraints[r.index].sense == "==")
                else replace(self.constraints[r.index], sense="==")
                for r in rows
            ]
            a_ub, b_ub, a_eq, b_eq = as_matrices(reduced, self.ndims)
            self._polytope = Polytope(
                a_ub, b_ub, a_eq, b_eq,
                [r.index for r, c in zip(rows, reduced, strict=True) if c.sense != "=="],
                [r.index for r, c in zip(rows, reduced, strict=True) if c.sense == "=="],
            )
        return self._polytope


def optimize_bandwidth(
    network: LibraNetwork,
    workloads: Sequence[WorkloadTraffic | tuple[WorkloadTraffic, float]],
    constraints: Sequence[str | LinearConstraint],
    *,
    objective: str = "perf",
    cost_coeffs: Sequence[float] | np.ndarray | None = None,
    bounds: Sequence[tuple[float | None, float | None]] | None = None,
    rtol: float = 1e-9,
    gap_tolerance: float = 1e-6,
) -> BandwidthResult:
    """Optimal per-dimension bandwidths (GB/s per NPU) for ``workloads`` on ``network``.

    ``constraints`` are strings such as ``"sum == 500"`` (see
    :mod:`~trainsim.optimize.constraints`); ``bounds`` are per-dimension ``(lower, upper)``;
    ``cost_coeffs`` are $ per GB/s per dimension (:func:`~trainsim.optimize.cost.cost_coefficients`),
    needed by ``perf_per_cost`` and for the costs in the result. A result whose certified
    optimality gap is above ``gap_tolerance`` is not returned: :class:`~trainsim.errors.SolverError`.
    """
    if objective not in OBJECTIVES:
        raise ConfigError(f"unknown objective {objective!r}; expected one of {', '.join(OBJECTIVES)}", field="objective")
    pairs = [(w, 1.0) if isinstance(w, WorkloadTraffic) else (w[0], float(w[1])) for w in workloads]
    if not pairs:
        raise ConfigError("no workload to optimize for", field="workload")
    for traffic, weight in pairs:
        if traffic.ndims != network.ndims:
            raise ConfigError(f"workload {traffic.name!r} has {traffic.ndims} dimensions, the network {network.ndims}", field="workload")
        if not 0 < weight < np.inf:
            raise ConfigError(f"workload {traffic.name!r}: weight {weight} must be positive and finite", field="weight")
    parsed = parse_constraints(constraints, network.ndims) + bound_constraints(bounds, network.ndims)
    coeffs = None if cost_coeffs is None else np.asarray(cost_coeffs, dtype=float)
    if coeffs is not None and coeffs.shape != (network.ndims,):
        raise ConfigError(f"{coeffs.shape[0]} cost coefficients for {network.ndims} dimensions", field="cost")
    problem = BandwidthProblem(network, pairs, parsed, coeffs)
    find_feasible(parsed, network.ndims)  # a clear error naming the conflicting constraints
    if objective == "perf":
        sol = solve_perf(*problem.terms(), problem.polytope(), rtol=rtol)
        result = _result(problem, objective, sol.bandwidths, sol.gap, sol, {"certificate_rounds": sol.iterations})
    elif coeffs is None:
        raise ConfigError("the perf_per_cost objective needs a cost model", field="cost", hint="pass --cost")
    else:
        result = _perf_per_cost(problem, rtol=max(rtol, 1e-7))
    if not result.gap <= gap_tolerance:
        raise SolverError(
            f"the {objective} optimum is not certified: the relative gap between the best allocation found "
            f"({', '.join(f'{b:.4g}' for b in result.bandwidths_gbps)} GB/s, step {result.time_s:.6g} s) and the "
            f"proven lower bound is {result.gap:.3g}, above the tolerance {gap_tolerance:g}",
            hint="simplify the constraints (drop near-duplicates, rescale very large or small numbers)",
        )
    return result


def _perf_per_cost(problem: BandwidthProblem, rtol: float) -> BandwidthResult:
    assert problem.cost_coeffs is not None
    poly = problem.polytope()
    k, w, c = problem.terms()
    cc = problem.cost_coeffs
    lo, hi = poly.linprog(cc), poly.linprog(-cc)
    if hi.status == 3:
        raise ConfigError("the constraints do not bound the network cost", field="constraint", hint="add a budget such as 'sum == 500'")
    if lo.status != 0 or hi.status != 0:
        raise RuntimeError(f"cost range LP failed: {lo.message} / {hi.message}")
    k_min, k_max = float(lo.fun), float(-hi.fun)
    t_min = solve_perf(k, w, c, poly).lower_bound_s  # v(K) >= min T for every K
    samples: dict[float, tuple[float, np.ndarray | None, ConvexSolution | None]] = {}

    def sample(kv: float) -> float:
        if kv not in samples:
            try:
                sol = solve_perf(k, w, c, poly.with_equality(cc, kv))
                samples[kv] = (sol.time_s, sol.bandwidths, sol)
            except InfeasibleError:
                samples[kv] = (np.inf, None, None)
        return samples[kv][0]

    if k_max - k_min <= 1e-9 * max(1.0, abs(k_max)):
        sample(k_max)
        evals, gap = 1, 0.0
    else:
        for kv in np.linspace(k_min, k_max, 17):
            sample(float(kv))
        evals, gap = 0, np.inf
        for evals in range(1, 400):  # noqa: B007 - reported
            ks = sorted(samples)
            vs = [samples[x][0] for x in ks]
            best = min(x * v for x, v in zip(ks, vs, strict=True))
            bounds = [_interval_bound(ks, vs, i, t_min) for i in range(len(ks) - 1)]
            worst = int(np.argmin(bounds))
            gap = (best - bounds[worst]) / best if np.isfinite(best) and best > 0 else np.inf
            if gap <= rtol:
                break
            sample(0.5 * (ks[worst] + ks[worst + 1]))
    kbest = min(samples, key=lambda x: x * samples[x][0])
    _, bw, sol = samples[kbest]
    if bw is None or sol is None:
        raise InfeasibleError("no allocation with every loaded dimension above 0 GB/s")
    return _result(problem, "perf_per_cost", bw, max(0.0, float(gap)), sol,
                   {"samples": len(samples), "rounds": evals, "cost_range": [k_min, k_max], "min_time_s": t_min},
                   with_marginals=False)


def _interval_bound(ks: list[float], vs: list[float], i: int, t_min: float) -> float:
    """A lower bound of ``K v(K)`` on ``[ks[i], ks[i+1]]`` for a convex ``v`` (see the module
    docstring): ``K`` times the largest of ``t_min`` and the outer secants."""
    a, b = ks[i], ks[i + 1]
    lines = [(0.0, t_min)]  # (slope, intercept)
    for j0, j1 in ((i - 1, i), (i + 1, i + 2)):
        if j0 >= 0 and j1 < len(ks) and np.isfinite(vs[j0]) and np.isfinite(vs[j1]):
            slope = (vs[j1] - vs[j0]) / (ks[j1] - ks[j0])
            lines.append((slope, vs[j0] - slope * ks[j0]))
    cands = {a, b}
    for s, q in lines:  # vertex of K (s K + q)
        if s != 0 and a < -q / (2 * s) < b:
            cands.add(-q / (2 * s))
    for x in range(len(lines)):
        for y in range(x + 1, len(lines)):
            (s1, q1), (s2, q2) = lines[x], lines[y]
            if s1 != s2 and a < (q2 - q1) / (s1 - s2) < b:
                cands.add((q2 - q1) / (s1 - s2))
    return min(kv * max(s * kv + q for s, q in lines) for kv in cands)


def _result(problem: BandwidthProblem, objective: str, bw: np.ndarray, gap: float, sol: ConvexSolution,
            info: dict[str, Any], *, with_marginals: bool = True) -> BandwidthResult:
    n = problem.ndims
    equal = np.full(n, float(bw.sum()) / n)
    k, w, c = problem.terms()
    margin: dict[int, float] = {}
    if with_marginals:
        poly = problem.polytope()
        for r, idx in enumerate(poly.ub_rows):
            sign = -1.0 if problem.constraints[idx].sense == ">=" else 1.0
            margin[idx] = sign * float(sol.ub_marginals[r])
        for r, idx in enumerate(poly.eq_rows):
            margin[idx] = float(sol.eq_marginals[r])
    statuses = []
    for i, con in enumerate(problem.constraints):
        act = con.activity(bw)
        slack = 0.0 if con.sense == "==" else (con.rhs - act if con.sense == "<=" else act - con.rhs)
        scale = max(1.0, abs(con.rhs), float(np.abs(con.coeffs) @ np.abs(bw)))
        binding = con.sense == "==" or abs(slack) <= 1e-7 * scale
        statuses.append(ConstraintStatus(con.text, act, con.rhs, con.sense, max(0.0, slack) if con.sense != "==" else 0.0,
                                         con.holds(bw), binding, (margin.get(i, 0.0) if binding else 0.0) if with_marginals else None))
    names = [f"dim{d} {kind} x{size}" for d, (kind, size) in enumerate(zip(problem.network.kinds, problem.network.sizes, strict=True))]
    time = problem.time_s(bw)
    info = {**info, "model_time_s": evaluate(k, w, c, bw)}
    return BandwidthResult(
        objective=objective,
        dims=names,
        bandwidths_gbps=bw,
        time_s=time,
        workload_times_s={t.name: t.time_s(bw) for t, _ in problem.workloads},
        equal_bandwidths_gbps=equal,
        equal_time_s=problem.time_s(equal),
        equal_workload_times_s={t.name: t.time_s(equal) for t, _ in problem.workloads},
        equal_feasible=all(con.holds(equal) for con in problem.constraints),
        cost=problem.cost(bw),
        equal_cost=problem.cost(equal),
        constraints=statuses,
        gap=gap,
        info=info,
    )
