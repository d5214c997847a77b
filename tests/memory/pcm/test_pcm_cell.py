"""Cell and line write model (memory/pcm/cell.py)."""

import numpy as np
import pytest

from trainsim.errors import ConfigError
from trainsim.memory.pcm.cell import Spread, cell_levels, level_counts, line_write_time_ns
from trainsim.memory.pcm.config import CellConfig, ReadConfig, ReadMetric

NO_SPREAD = CellConfig(spread=False)


def line_with(cells: dict[int, int]) -> bytes:
    """A 64 B line whose cell ``i`` holds level ``cells[i]`` (others 00)."""
    bits = np.zeros(512, dtype=np.uint8)
    for i, level in cells.items():
        bits[2 * i], bits[2 * i + 1] = level >> 1, level & 1
    return np.packbits(bits).tobytes()


def test_all_zero_line_is_one_reset_pulse():
    assert line_write_time_ns(bytes(64), NO_SPREAD)[0] == 100.0


def test_one_01_cell_takes_seven_set_pulses():
    assert line_write_time_ns(line_with({17: 0b01}), NO_SPREAD)[0] == 1150.0


@pytest.mark.parametrize(("level", "ns"), [(0b10, 100 + 5 * 150), (0b11, 100 + 150), (0b00, 100)])
def test_each_level_alone(level, ns):
    assert line_write_time_ns(line_with({200: level}), NO_SPREAD)[0] == ns


def test_line_takes_its_slowest_cell():
    assert line_write_time_ns(line_with({0: 0b11, 1: 0b10, 2: 0b01}), NO_SPREAD)[0] == 1150.0
    assert line_write_time_ns(line_with({0: 0b11, 1: 0b10}), NO_SPREAD)[0] == 850.0


def test_cells_are_msb_first_pairs():
    line = bytes([0b01101100]) + bytes(63)
    assert cell_levels(np.frombuffer(line, dtype=np.uint8))[0, :4].tolist() == [
        0b01,
        0b10,
        0b11,
        0b00,
    ]
    assert level_counts(cell_levels(np.frombuffer(line, dtype=np.uint8)))[0].tolist() == [
        253,
        1,
        1,
        1,
    ]


def test_spread_distribution_is_clipped_rounded_normal():
    s = Spread.of(CellConfig())
    assert s.offsets.tolist() == [-2, -1, 0, 1, 2]
    pmf = np.diff(s.cdf, prepend=0.0)
    assert pmf.sum() == pytest.approx(1.0)
    assert pmf[2] == pytest.approx(0.3829, abs=1e-4)  # P(|z| < 0.5)
    assert pmf[0] == pytest.approx(pmf[4]) and pmf[4] == pytest.approx(
        0.0668, abs=1e-4
    )  # P(z >= 1.5)


def test_max_sampler_matches_explicit_per_cell_draws():
    """Inverting F**n gives the law of the maximum of n independent per-cell offsets."""
    cfg, rng = CellConfig(), np.random.default_rng(5)
    s = Spread.of(cfg)
    for n in (1, 3, 20):
        z = np.rint(np.clip(rng.normal(0, 1, (40_000, n)), -2, 2)).max(axis=1)
        drawn = s.max_offset(np.full(40_000, n), rng.random(40_000))
        for k in range(-2, 3):
            assert np.mean(drawn == k) == pytest.approx(np.mean(z == k), abs=0.01)
        assert s.expected_max_offset(np.array([n]))[0] == pytest.approx(z.mean(), abs=0.02)


def test_expected_max_grows_with_cells_and_spread_off_is_nominal():
    s = Spread.of(CellConfig())
    e = s.expected_max_offset(np.array([1, 2, 8, 64, 256]))
    assert np.all(np.diff(e) > 0) and e[0] == pytest.approx(0.0, abs=1e-12)
    rng = np.random.default_rng(0)
    random_lines = rng.integers(0, 256, (50, 64), dtype=np.uint8)
    assert set(line_write_time_ns(random_lines, NO_SPREAD, rng).tolist()) == {1150.0}
    assert set(line_write_time_ns(random_lines, CellConfig(), rng).tolist()) <= {
        850.0,
        1000.0,
        1150.0,
        1300.0,
        1450.0,
    }


def test_bad_cell_config_names_field_and_value():
    with pytest.raises(ConfigError, match=r"CellConfig.relaxed_iterations: got 9"):
        CellConfig(relaxed_iterations=9)
    with pytest.raises(ConfigError, match=r"CellConfig.set_ns: got -1"):
        CellConfig(set_ns=-1)
    with pytest.raises(ConfigError, match="multiple of 64"):
        line_write_time_ns(bytes(10))


def test_read_metric_accepts_its_name_and_rejects_others():
    assert ReadConfig(metric="R").metric is ReadMetric.R
    assert ReadConfig(metric="R").sense_ns(3) == 150.0 and ReadConfig().sense_ns(4) == 450.0
    with pytest.raises(ConfigError, match=r"ReadConfig.metric: got 'X', expected 'R' or 'M'"):
        ReadConfig(metric="X")
