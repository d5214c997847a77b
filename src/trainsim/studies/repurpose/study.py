"""The RePurpose study: every method, worker count and budget, averaged over seeds.

Place: ``trainsim.studies.repurpose``, the top of the package: it trains one MLP per seed
(:mod:`.data`), deploys it with every method (:mod:`.methods`) and summarizes. The CLI
(``trainsim repurpose``) and the docs' table call :func:`run_study`.

A seed fixes the train/test split and the MLP's initialization; calibration uses the training
split, accuracy the test split. With ``holdout`` > 0 the test split is not used at all: the
MLP is trained and calibrated on the rest of the training split and accuracy is measured on a
held-out ``holdout`` fraction of it (:func:`.data.validation_split`), for choosing settings
(:mod:`.validation`). Units: accuracy is a fraction in [0, 1]; communication is
activation transfers (scalars) per sample; ``tp_fraction`` is communication over direct
tensor-parallel communication of the same ``K`` (both including the output reduction).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from threadpoolctl import threadpool_limits

from trainsim.errors import ConfigError
from trainsim.studies.repurpose.comm import group_budget
from trainsim.studies.repurpose.data import load_split, patch_owners, train_mlp, validation_split
from trainsim.studies.repurpose.layer import SolverSettings
from trainsim.studies.repurpose.methods import BUDGETED_METHODS, METHODS, deploy
from trainsim.studies.repurpose.plan import Stage

DEFAULT_BUDGETS = (0.0, 0.01, 0.02, 0.05, 0.1, 0.2)


@dataclass(frozen=True)
class StudyConfig:
    """What to run: worker counts, budget fractions, seeds, methods, solver knobs."""

    workers: tuple[int, ...] = (2, 4, 8)
    budgets: tuple[float, ...] = DEFAULT_BUDGETS
    seeds: tuple[int, ...] = (0, 1, 2)
    methods: tuple[str, ...] = METHODS
    settings: SolverSettings = field(default_factory=SolverSettings)
    test_fraction: float = 0.3
    holdout: float = (
        0.0  # > 0: evaluate on this fraction of the training split, never the test split
    )

    def __post_init__(self) -> None:
        for name in ("workers", "budgets", "seeds", "methods"):
            if not getattr(self, name):
                raise ConfigError("empty: expected at least one value", field=name)
        for k in self.workers:
            patch_owners(k)  # ConfigError for a count that does not tile the image
        for f in self.budgets:
            group_budget(f, 1, 2)  # ConfigError outside [0, 1]
        for s in self.seeds:
            if not (isinstance(s, int) and 0 <= s < 2**32):
                raise ConfigError(f"{s!r}: expected an integer seed in [0, 2**32)", field="seeds")
        for m in self.methods:
            if m not in METHODS:
                raise ConfigError(f"{m!r}: expected one of {', '.join(METHODS)}", field="methods")
        if not (isinstance(self.holdout, int | float) and 0.0 <= self.holdout < 1.0):
            raise ConfigError(f"{self.holdout!r}: expected a fraction in [0, 1)", field="holdout")


@dataclass(frozen=True)
class Record:
    """One deployment's outcome (one seed)."""

    seed: int
    workers: int
    method: str
    budget: float | None
    accuracy: float
    agreement: float  # fraction of test samples predicted as the original model predicts them
    communication: int  # scalars per sample
    tp_fraction: float
    plain_l0: int
    stages: tuple[Stage, ...]

    def to_dict(self) -> dict:
        return {
            "seed": self.seed,
            "workers": self.workers,
            "method": self.method,
            "budget": self.budget,
            "accuracy": self.accuracy,
            "agreement": self.agreement,
            "communication": self.communication,
            "tp_fraction": self.tp_fraction,
            "plain_l0": self.plain_l0,
            "stages": [
                {
                    "name": s.name,
                    "transfers": s.transfers.tolist(),
                    "flops": s.flops.tolist(),
                    "weight_bytes": s.weight_bytes.tolist(),
                    "act_bytes": s.act_bytes.tolist(),
                }
                for s in self.stages
            ],
        }


@dataclass(frozen=True)
class SummaryRow:
    """Seed-averaged outcome of one (workers, method, budget)."""

    workers: int
    method: str
    budget: float | None
    seeds: int
    accuracy: float
    accuracy_std: float
    agreement: float
    communication: float
    tp_fraction: float
    plain_l0: float

    def to_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass(frozen=True)
class StudyResult:
    config: StudyConfig
    records: tuple[Record, ...]
    original_accuracy: dict[int, float]  # seed -> test accuracy of the trained MLP

    def summary(self) -> list[SummaryRow]:
        """Rows averaged over seeds, ordered by workers, then method order, then budget."""
        groups: dict[tuple[int, str, float | None], list[Record]] = {}
        for r in self.records:
            groups.setdefault((r.workers, r.method, r.budget), []).append(r)
        order = {m: i for i, m in enumerate(METHODS)}
        rows = []
        for (k, m, b), recs in sorted(
            groups.items(),
            key=lambda kv: (kv[0][0], order[kv[0][1]], -1.0 if kv[0][2] is None else kv[0][2]),
        ):
            acc = np.array([r.accuracy for r in recs])
            rows.append(
                SummaryRow(
                    k,
                    m,
                    b,
                    len(recs),
                    float(acc.mean()),
                    float(acc.std()),
                    float(np.mean([r.agreement for r in recs])),
                    float(np.mean([r.communication for r in recs])),
                    float(np.mean([r.tp_fraction for r in recs])),
                    float(np.mean([r.plain_l0 for r in recs])),
                )
            )
        return rows

    def mean_original_accuracy(self) -> float:
        return float(np.mean(list(self.original_accuracy.values())))

    def checks(self) -> list[dict]:
        """The issue's claims, evaluated on this study's numbers (never assumed)."""
        acc = {(r.workers, r.method, r.budget): r.accuracy for r in self.summary()}
        out = []
        for k in self.config.workers:
            for f in self.config.budgets:
                if f > 0.05:
                    continue
                keys = [(k, m, f) for m in ("repurpose", "refit_fixed", "naive")]
                if all(key in acc for key in keys):
                    a, b, c = (acc[key] for key in keys)
                    out.append(
                        {
                            "claim": f"K={k} budget={f:g}: repurpose >= refit_fixed >= naive",
                            "values": [a, b, c],
                            "holds": bool(a >= b >= c),
                        }
                    )
        if (4, "repurpose", 0.1) in acc:
            gap = self.mean_original_accuracy() - acc[(4, "repurpose", 0.1)]
            out.append(
                {
                    "claim": "K=4 budget=0.1: repurpose within 2 points of the original",
                    "values": [gap],
                    "holds": bool(gap <= 0.02),
                }
            )
        if (8, "repurpose", 0.0) in acc and (8, "naive", 0.0) in acc:
            a, c = acc[(8, "repurpose", 0.0)], acc[(8, "naive", 0.0)]
            out.append(
                {
                    "claim": "K=8 budget=0: repurpose far above naive (by >= 0.3)",
                    "values": [a, c],
                    "holds": bool(a - c >= 0.3),
                }
            )
        return out

    def to_dict(self) -> dict:
        cfg = self.config
        return {
            "config": {
                "workers": list(cfg.workers),
                "budgets": list(cfg.budgets),
                "seeds": list(cfg.seeds),
                "methods": list(cfg.methods),
                "rounds": cfg.settings.rounds,
                "iht_iters": cfg.settings.iht_iters,
                "ridge": cfg.settings.ridge,
                "test_fraction": cfg.test_fraction,
                "holdout": cfg.holdout,
            },
            "original_accuracy": {str(s): a for s, a in self.original_accuracy.items()},
            "summary": [r.to_dict() for r in self.summary()],
            "checks": self.checks(),
            "records": [r.to_dict() for r in self.records],
        }


def run_study(
    config: StudyConfig | None = None, progress: Callable[[str], None] | None = None
) -> StudyResult:
    """Run every (seed, workers, method, budget) of ``config``; ``progress`` gets a line per seed."""
    config = config or StudyConfig()
    # The matrices here are at most 129 x 129: threaded BLAS only adds spinning threads (and
    # on a loaded 2-core machine makes the study several times slower), so one thread.
    with threadpool_limits(limits=1, user_api="blas"):
        return _run(config, progress)


def _run(config: StudyConfig, progress: Callable[[str], None] | None) -> StudyResult:
    records: list[Record] = []
    original: dict[int, float] = {}
    for seed in config.seeds:
        split = load_split(seed, config.test_fraction)
        if config.holdout > 0:
            split = validation_split(split, seed, config.holdout)
        mlp = train_mlp(split, seed)
        original[seed] = mlp.accuracy(split.x_test, split.y_test)
        original_pred = np.argmax(mlp.logits(split.x_test), axis=1)
        if progress:
            progress(f"seed {seed}: trained MLP, test accuracy {original[seed]:.4f}")
        for k in config.workers:
            tp_comm = deploy("direct_tp", mlp, split.x_train, k).communication
            for method in config.methods:
                budgets: tuple[float | None, ...] = (
                    config.budgets if method in BUDGETED_METHODS else (None,)
                )
                for f in budgets:
                    d = deploy(method, mlp, split.x_train, k, f, config.settings)
                    pred = np.argmax(d.model.logits(split.x_test), axis=1)
                    records.append(
                        Record(
                            seed,
                            k,
                            method,
                            f,
                            float(np.mean(pred == split.y_test)),
                            float(np.mean(pred == original_pred)),
                            d.communication,
                            d.communication / tp_comm,
                            d.plain_l0,
                            d.stages,
                        )
                    )
    return StudyResult(config, tuple(records), original)


def markdown_table(result: StudyResult) -> str:
    """The seed-averaged table as Markdown (accuracy in percent)."""
    lines = [
        "| K | method | budget | accuracy % (mean ± std) | agrees with original % | communication (scalars/sample) | of direct TP | plain L0 |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in result.summary():
        budget = "-" if r.budget is None else f"{r.budget:g}"
        lines.append(
            f"| {r.workers} | {r.method} | {budget} | {100 * r.accuracy:.2f} ± {100 * r.accuracy_std:.2f} | {100 * r.agreement:.2f} | "
            f"{r.communication:.1f} | {100 * r.tp_fraction:.1f}% | {r.plain_l0:.0f} |"
        )
    return "\n".join(lines)
