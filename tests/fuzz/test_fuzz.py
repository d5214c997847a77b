"""The fuzz suite (issue 24): mutated real inputs through the CLI, in this process.

Oracle (tests/fuzz/cases.py): exit code 0, 2, 3 or 4, never a traceback, never past the time
bound, and an input made certainly wrong is never accepted. Seeds are fixed, so a run is
reproducible (derandomized); the default run takes a small budget per kind of input, the
``fuzz`` marker a larger one (``pytest -m fuzz tests/fuzz``); bench/fuzz.py runs thousands.

Failures whose signature is in :data:`KNOWN` are listed, not failed on (empty since both halves
of issue 24 were merged: every traceback fails the suite).
"""

import os
import tempfile
from pathlib import Path

import pytest

from tests.fuzz.cases import KINDS, make_case, run_case

DEFAULT = {"platform": 20, "astra": 40, "text": 30, "sweep": 30, "libra": 15, "result": 10, "chakra": 40, "options": 25}
"""Cases per kind in the default run (seeds 0..n-1)."""
LARGE = 150
"""Cases per kind under the ``fuzz`` marker (seeds from 1000)."""
BOUND_S = 20.0
"""A case past this is a hang (a bound far above any case's time on a loaded 2-core machine)."""

KNOWN: tuple[tuple[str, str], ...] = ()
"""(kind, part of the signature) of tracebacks tolerated while a fix is pending; none now."""


def _known(kind: str, signature: str) -> bool:
    return any(kind == k and part in signature for k, part in KNOWN)


def _run(kind: str, seeds: range) -> None:
    os.environ.setdefault("MPLBACKEND", "Agg")
    failures, known = [], []
    for seed in seeds:
        with tempfile.TemporaryDirectory() as folder:
            case = make_case(kind, seed, Path(folder))
            outcome = run_case(case, bound_s=BOUND_S)
        if outcome.verdict != "ok":
            line = f"{outcome.verdict}: {outcome.signature} <- {case.describe()} | {outcome.detail}"
            (known if outcome.verdict == "traceback" and _known(kind, outcome.signature) else failures).append(line)
    for line in known:
        print("known (issue 24, other branch):", line)
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_mutated_inputs_never_traceback_hang_or_pass_when_wrong(kind):
    _run(kind, range(DEFAULT[kind]))


@pytest.mark.fuzz
@pytest.mark.parametrize("kind", sorted(KINDS))
def test_more_mutated_inputs(kind):
    _run(kind, range(1000, 1000 + LARGE))
