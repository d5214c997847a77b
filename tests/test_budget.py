"""trainsim.budget: the limits, their documentation, --force and the worker cap."""

import re
from pathlib import Path

import pytest

from trainsim import budget
from trainsim.budget import LIMITS, BudgetError, check, forced, workers

DOC = Path(__file__).resolve().parents[1] / "docs" / "limits.md"


def test_every_limit_is_documented_with_its_value():
    text = DOC.read_text()
    rows = dict(re.findall(r"^\| `(\w+)` \| ([^|]+) \|", text, flags=re.M))
    assert set(rows) == set(LIMITS)
    for name, limit in LIMITS.items():
        shown = rows[name]
        if limit.unit == "bytes":
            assert f"{limit.value >> 20:,} MiB" in shown or f"{limit.value >> 30} GiB" in shown, name
        else:
            assert f"{limit.value:,}" in shown, name


def test_a_refusal_gives_the_estimate_the_limit_and_a_way_under():
    with pytest.raises(BudgetError) as info:
        check("files", 360_000, "--out writes 360,000 rank files", way_under="use a smaller --dp", field="--out")
    message = str(info.value)
    assert "360,000 files" in message and "100,000 files" in message
    assert "use a smaller --dp" in message and "--force" in message and "\n" not in message


def test_under_the_limit_and_forced_pass():
    check("files", LIMITS["files"].value, "x", way_under="y")
    with forced():
        check("files", 10**12, "x", way_under="y")
        assert budget.is_forced()
    assert not budget.is_forced()
    with forced(False), pytest.raises(BudgetError):
        check("files", 10**12, "x", way_under="y")


def test_memory_is_shown_in_binary_units():
    with pytest.raises(BudgetError, match=r"estimated 44\.7 GiB, over the limit of 8\.0 GiB"):
        check("memory", 8.0 * 6e9, "a graph", way_under="less")


def test_workers_are_capped_by_the_cores_unless_forced():
    assert workers(None, cores=2) == (2, None)
    assert workers(2, cores=2) == (2, None)
    n, warning = workers(64, cores=2)
    assert n == 2 and "--jobs 64" in warning and "2 cores" in warning
    with forced():
        assert workers(64, cores=2) == (64, None)
    with pytest.raises(BudgetError.__mro__[1], match="at least 1"):
        workers(0, cores=2)


def test_an_estimate_too_large_for_a_float_is_still_one_line():
    """Found by the fuzz suite: a platform of a thousand dimensions has 2**1000 NPUs."""
    with pytest.raises(BudgetError, match=r"estimated 1\.07e\+301 ranks, over the limit of 1,048,576 ranks"):
        check("ranks", 2**1000, "a network", way_under="use smaller dimensions")
    with pytest.raises(BudgetError, match=r"estimated 1e\+18 combinations"):
        check("combinations", 10**18, "axes", way_under="fewer")
