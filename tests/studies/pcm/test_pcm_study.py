"""PCM studies (studies/pcm/study.py): the must-show properties of issue 11, on the model."""

import json
from dataclasses import asdict
from pathlib import Path

import numpy as np
import pytest

from trainsim.errors import ConfigError
from trainsim.memory.pcm.config import PcmConfig, Scheme
from trainsim.memory.pcm.run import Pool, RunResult
from trainsim.memory.pcm.trilevel import profile_lines
from trainsim.studies.pcm import study

SMALL = PcmConfig().replace(**{"core.instructions": 60_000})
POOL = Pool.of()
GOLDEN = Path(__file__).parent / "golden_headline.json"
# issue 11's organization and discipline, kept as options (docs/pcm.md)
ISSUE11 = {"memory.banks": 16, "memory.scheduler": "read-first", "memory.burst_ns": 5.0}


def same_timing(a: RunResult, b: RunResult) -> bool:
    da, db = asdict(a), asdict(b)
    da.pop("scheme"), db.pop("scheme")
    return da == db


def test_headline_under_the_documented_defaults_matches_docs():
    """The numbers docs/pcm.md states (regenerate the JSON when a default changes)."""
    comp = study.compare()
    golden = json.loads(GOLDEN.read_text())
    for scheme in ("tri", "tri+fpc"):
        for what in ("read", "write"):
            assert comp.reduction(scheme, what) == pytest.approx(
                golden[f"{scheme}_{what}_reduction"], abs=1e-3
            )
        assert comp.ipc_gain(scheme) == pytest.approx(golden[f"{scheme}_ipc_gain"], abs=1e-3)
        # FPC is at least as good as plain tri on both latencies
    for what in ("read", "write"):
        assert comp.reduction("tri+fpc", what) >= comp.reduction("tri", what) > 0


def test_same_input_same_result():
    a, b = study.compare(SMALL, POOL), study.compare(SMALL, POOL)
    assert all(asdict(a.results[k]) == asdict(b.results[k]) for k in a.results)


def test_zero_content_gains_nothing():
    comp = study.compare(SMALL, Pool.of("zeros", 64))
    for s in ("tri", "tri+fpc"):
        assert same_timing(comp.results[s], comp.results["base"])
        assert comp.results[s].relaxed_write_fraction == 0.0


@pytest.mark.parametrize("changes", [{"spare.spare_bits": 0}, {"spare.faults": 6}])
def test_no_room_means_every_write_falls_back(changes):
    comp = study.compare(SMALL.replace(**changes), POOL, (Scheme.TRI, Scheme.TRI_FPC))
    for s in ("tri", "tri+fpc"):
        assert comp.results[s].relaxed_write_fraction == 0.0
        assert same_timing(comp.results[s], comp.results["base"])


def test_spare_sweep_is_monotone():
    pts = study.spare_sweep(SMALL, POOL, (0, 16, 32, 61, 96, 128))
    for s in ("tri", "tri+fpc"):
        tri = [p.tri_line_fraction[s] for p in pts]
        write = [p.expected_write_ns[s] for p in pts]
        sim = [p.comparison.reduction(s, "write") for p in pts]
        assert tri == sorted(tri) and write == sorted(write, reverse=True)
        assert all(
            b >= a - 0.03 for a, b in zip(sim, sim[1:], strict=False)
        )  # simulated: up to noise
        assert sim[0] == 0.0 and sim[-1] > 0.3


def test_aging_takes_the_gain_to_zero():
    pts = study.aging_sweep(SMALL, POOL, (0, 2, 4, 6))
    for s in ("tri", "tri+fpc"):
        fractions = [p.tri_line_fraction[s] for p in pts]
        assert fractions == sorted(fractions, reverse=True)
        assert fractions[0] > 0.3 and fractions[-1] == 0.0
        assert pts[-1].comparison.reduction(s, "write") == 0.0
        assert pts[-1].comparison.reduction(s, "read") == 0.0


def test_calibration_picks_the_documented_relaxed_count():
    cal = study.calibrate(PcmConfig(), POOL)
    assert cal.chosen == PcmConfig().cell.relaxed_iterations
    # one pulse on the merged level gains most (the simulated figures carry queueing noise)
    assert max(cal.reductions, key=cal.reductions.__getitem__) == 1


@pytest.mark.parametrize("target", [2.0, -0.5, float("nan"), 0.0])
def test_calibration_target_outside_0_1_is_refused(target):
    with pytest.raises(
        ConfigError, match=r"--target: got .*, expected a write-latency reduction in \(0, 1\)"
    ):
        study.calibrate(PcmConfig(), POOL, target)


def test_ipc_band_covers_the_grid():
    # issue 11's 16 banks: the cores are latency-bound there, so a larger ROB must help (with
    # NVMain's 2 banks the memory is saturated and the ROB does not matter)
    band = study.ipc_band(SMALL.replace(**ISSUE11, **{"core.instructions": 30_000}), POOL)
    assert [(m, r) for m, r, _ in band.rows] == [
        (5, 128),
        (5, 192),
        (10, 128),
        (10, 192),
        (20, 128),
        (20, 192),
    ]
    lo, hi = band.band("tri+fpc")
    assert 0 < lo <= hi
    base = {(m, r): ipc["base"] for m, r, ipc in band.rows}
    assert base[(5, 128)] > base[(10, 128)] > base[(20, 128)]
    assert base[(10, 192)] > base[(10, 128)]


def test_open_loop_load_sweep():
    pts = study.load_sweep(SMALL, POOL, (0.3, 0.8), requests=6000)
    lat = [p.comparison.results["base"].read_latency_ns for p in pts]
    assert lat[0] < lat[1]
    util = [p.comparison.results["base"].bank_utilization for p in pts]
    assert util[0] == pytest.approx(0.3, abs=0.05) and util[1] == pytest.approx(0.8, abs=0.08)
    assert all(p.comparison.reduction("tri+fpc", "write") > 0 for p in pts)


def test_mix_sweep_content_decides():
    pts = {p.value: p for p in study.mix_sweep(SMALL, ("small_int", "text"), pool_size=512)}
    assert pts["small_int"].tri_line_fraction["tri"] == 1.0
    assert pts["text"].tri_line_fraction["tri+fpc"] == 0.0
    assert np.isclose(pts["text"].comparison.reduction("tri", "write"), 0.0)


def test_diagnosis_splits_the_reductions_and_reads_the_papers_figures():
    comp = study.compare(SMALL, POOL)
    d = study.diagnose(SMALL, POOL, comp)
    assert d.sensing_reduction == pytest.approx(1 - 250 / 450)
    assert 0.55 < d.qualified_write_reduction < 0.7  # 1,450 ns -> 550 ns for most lines
    assert d.enumerative_tri_lines <= d.intermediate_lines
    for s in ("tri", "tri+fpc"):
        g = d.schemes[s]
        assert g.read_from_sensing + g.read_from_waiting == pytest.approx(comp.reduction(s, "read"))
        assert g.write_from_service + g.write_from_waiting == pytest.approx(
            comp.reduction(s, "write")
        )
        assert g.tri_lines == pytest.approx(profile_lines(POOL.lines, s, SMALL).tri.mean())
    # the paper's read and IPC figures imply the same memory-stall share for both variants
    assert d.schemes["tri"].paper_stall_share == pytest.approx(0.371, abs=1e-3)
    assert d.schemes["tri+fpc"].paper_stall_share == pytest.approx(0.362, abs=1e-3)
    assert d.model_stall_share > 0.9  # our cores are memory-bound


def test_issue_11_setup_is_still_an_option():
    """16 banks, per-bank reads-first queues, 5 ns bursts: issue 11's published figures."""
    comp = study.compare(PcmConfig().replace(**ISSUE11))
    got = [round(comp.reduction(s, w), 3) for s in ("tri", "tri+fpc") for w in ("write", "read")]
    assert got == [0.274, 0.179, 0.423, 0.313]


def test_qualified_pool_sets_the_share_and_keeps_the_lines():
    cfg = PcmConfig()
    for q in (0.0, 0.5, 1.0):
        p = study.qualified_pool(cfg, POOL, q, size=1000)
        assert profile_lines(p.lines, Scheme.TRI, cfg).tri.mean() == pytest.approx(q)
        own = {bytes(row) for row in POOL.lines}
        assert all(bytes(row) in own for row in p.lines)
    with pytest.raises(ConfigError, match="fraction: got 1.5"):
        study.qualified_pool(cfg, POOL, 1.5)
    with pytest.raises(ConfigError, match="no qualifying lines"):
        study.qualified_pool(cfg, Pool.of("text", 64), 0.5)


def test_conditions_grid_and_its_bands():
    pts = study.conditions(
        SMALL, POOL, banks=(2,), loads=(None, 0.5), qualifying=(None, 1.0), requests=3000
    )
    assert [(p.banks, p.load) for p in pts] == [(2, None), (2, 0.5)] * 2
    assert pts[0].qualifying == pytest.approx(0.343, abs=0.01) and pts[2].qualifying == 1.0
    # more qualifying lines, larger reductions; all lines qualifying puts tri in both bands
    for a, b in ((pts[0], pts[2]), (pts[1], pts[3])):
        assert b.reductions("tri")[0] > a.reductions("tri")[0] + 0.2
    assert pts[2].in_bands("tri") and not pts[0].in_bands("tri")
