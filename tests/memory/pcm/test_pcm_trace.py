"""Traces (memory/pcm/trace.py): text format, errors, open-loop generation, replay."""

from pathlib import Path

import numpy as np
import pytest

from trainsim.errors import ConfigError, TraceError
from trainsim.memory.pcm.config import PcmConfig, Scheme
from trainsim.memory.pcm.content import generate_kind
from trainsim.memory.pcm.run import Pool, run_trace
from trainsim.memory.pcm.trace import Trace, open_loop_trace, read_trace, write_trace


def test_text_round_trip_with_data(tmp_path: Path):
    data = generate_kind("small_int", 2, np.random.default_rng(0))
    tr = Trace(
        time_ns=np.array([0.0, 2.5, 7.0]),
        is_write=np.array([True, False, True]),
        line=np.array([3, 3, 9]),
        content=np.array([0, -1, 1]),
        data=data,
    )
    write_trace(tmp_path / "t.trace", tr)
    back = read_trace(tmp_path / "t.trace")
    for field in ("time_ns", "is_write", "line", "content", "data"):
        assert np.array_equal(getattr(back, field), getattr(tr, field)), field


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("0 R\n", "line 1: 2 fields"),
        ("x R 0\n", "line 1: time 'x'"),
        ("5 R 0\n1 R 0\n", "line 2: time 1.0 before the previous 5.0"),
        ("0 Q 0\n", "line 1: op 'Q', expected R or W"),
        ("0 R zz\n", "line 1: address 'zz'"),
        ("# c\n\n0 R 0 00\n", "line 3: data on a read"),
        ("0 W 0 abcd\n", "line 1: data 'abcd'...,? expected 128 hexadecimal digits"),
        ("# nothing\n", "no requests"),
        ("0 R 0\ninf W 64\n", "line 2: time 'inf', expected a finite number of ns >= 0"),
        ("-5 R 0\n", "line 1: time '-5', expected a finite number of ns >= 0"),
        ("0 R 0xffffffffffffffffffff\n", r"line 1: address 0xffffffffffffffffffff, expected an address in \[0, 2\*\*63\)"),
    ],
)
def test_malformed_traces_name_file_and_line(tmp_path: Path, text, match):
    path = tmp_path / "bad.trace"
    path.write_text(text)
    with pytest.raises(TraceError, match=match) as info:
        read_trace(path)
    assert str(path) in str(info.value)


def test_open_loop_rate_read_fraction_and_bursts():
    tr = open_loop_trace(40_000, rate_per_ns=0.01, read_fraction=0.7, seed=1)
    assert len(tr) / tr.time_ns[-1] == pytest.approx(0.01, rel=0.03)
    assert 1 - tr.is_write.mean() == pytest.approx(0.7, abs=0.01)
    assert np.all(np.diff(tr.time_ns) >= 0)
    bursty = open_loop_trace(40_000, rate_per_ns=0.01, burst_mean=8, burst_gap_ns=2.0, seed=1)
    gaps = np.diff(bursty.time_ns)
    assert np.mean(gaps == 2.0) == pytest.approx(7 / 8, abs=0.02)
    assert len(bursty) / bursty.time_ns[-1] == pytest.approx(0.01, rel=0.1)
    with pytest.raises(ConfigError, match="trace.read_fraction: got 2"):
        open_loop_trace(10, 0.01, read_fraction=2)


def test_replay_uses_the_data_a_trace_carries(tmp_path: Path):
    narrow = generate_kind("small_int", 50, np.random.default_rng(1))
    lines = [f"{10 * i} W {64 * i:#x} {narrow[i].tobytes().hex()}" for i in range(50)]
    lines += [f"{100_000 + 10 * i} R {64 * i:#x}" for i in range(50)]  # after the writes finished
    (tmp_path / "t.trace").write_text("\n".join(lines) + "\n")
    tr = read_trace(tmp_path / "t.trace")
    pool = Pool.of("text", 64)  # nothing in the pool qualifies: only the trace's data can
    res = run_trace(PcmConfig(), Scheme.TRI, pool, tr)
    assert res.relaxed_write_fraction == 1.0
    assert res.tri_read_fraction == 1.0  # each read finds the narrow line written before it
    assert run_trace(PcmConfig(), Scheme.BASE, pool, tr).relaxed_write_fraction == 0.0


def test_missing_or_folder_trace_is_a_trace_error(tmp_path: Path):
    with pytest.raises(TraceError, match="cannot read the trace: No such file"):
        read_trace(tmp_path / "none.trace")
    with pytest.raises(TraceError, match="cannot read the trace: Is a directory"):
        read_trace(tmp_path)
