"""Formatting of durations: ``precise_time`` keeps every digit down to the nanosecond."""

from hypothesis import given
from hypothesis import strategies as st

from trainsim.units import precise_time

_SCALE_NS = {"s": 10**9, "ms": 10**6, "us": 10**3, "ns": 1}


def _back_to_ns(text: str) -> int:
    """``'117.780 us'`` -> 117780, read as a decimal (no float on the way back)."""
    number, unit = text.split()
    whole, _, fraction = number.partition(".")
    digits = len(fraction)
    return (int(whole) * 10**digits + int(fraction or 0)) * _SCALE_NS[unit] // 10**digits


def test_examples():
    assert precise_time(117780e-9) == "117.780 us"
    assert precise_time(7.321456789) == "7.321456789 s"
    assert precise_time(512e-9) == "512 ns"
    assert precise_time(0.0) == "0 s"
    assert precise_time(117780.5e-9) == "117.7805 us"  # not whole ns: 10 significant digits


@given(st.integers(min_value=1, max_value=10**15))
def test_whole_nanoseconds_come_back_exactly(ns):
    assert _back_to_ns(precise_time(ns * 1e-9)) == ns
