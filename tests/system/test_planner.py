"""The collective planner on its own, with no runtime (issue 15): layouts, chunks, dimension
order per chunk and phases, the round-robin state per group, and the Themis guard with a
predictor the caller hands in."""

from __future__ import annotations

import pytest

from trainsim.config.types import CollectiveImpl, SystemSpec
from trainsim.enums import CommType
from trainsim.errors import ConfigError
from trainsim.system.planner import CollectivePlanner
from trainsim.topology import MultiDimTopology

AR, RS, AG = int(CommType.ALL_REDUCE), int(CommType.REDUCE_SCATTER), int(CommType.ALL_GATHER)
TOPO = MultiDimTopology(["Ring", "Switch"], [4, 2])
ALL = tuple(range(8))


def planner(**system):
    spec = SystemSpec(implementations=CollectiveImpl(("ring", "direct"), ("ring", "direct"), ("ring", "direct"), ("ring", "direct")), **system)
    return CollectivePlanner(spec, TOPO, [50e9, 25e9], compat_astra=False)


def _phases(plan):
    return [[(s.ldim, s.algo.name, s.comm_type, s.in_size) for s in chunk] for chunk in plan.chunks]


def test_local_bw_aware_all_reduce_is_rs_ar_ag_per_chunk():
    plan = planner(preferred_dataset_splits=2, collective_optimization="localBWAware").plan(AR, 1000, ALL, None)
    assert plan.themis is None
    assert plan.layout.sizes == [4, 2]
    # two chunks of 500 B: reduce-scatter on the ring (1/4 left), all-reduce on the switch,
    # all-gather back on the ring
    assert _phases(plan) == [[(0, "ring", RS, 500), (1, "direct", AR, 125), (0, "ring", AG, 125)]] * 2


def test_uninvolved_dimensions_are_skipped_and_chunks_sum_to_the_size():
    plan = planner(preferred_dataset_splits=3).plan(AR, 1001, ALL, None, involved_dims=[False, True])
    assert [[s.ldim for s in c] for c in plan.chunks] == [[1]] * 3
    assert sum(c[0].in_size for c in plan.chunks) == 1001


def test_round_robin_keeps_its_position_per_group():
    p = planner(preferred_dataset_splits=2, inter_dimension_scheduling="roundRobin")
    first = [[s.ldim for s in c] for c in p.plan(RS, 800, ALL, None).chunks]
    second = [[s.ldim for s in c] for c in p.plan(RS, 800, ALL, None).chunks]
    assert first[0] != first[1]  # rotates per chunk
    assert first + second == [first[0], first[1], first[0], first[1]]


def test_themis_guard_asks_the_callers_predictor():
    asked = []

    def predict(layout, plan):
        asked.append(plan)
        return 1.0 if len(asked) == 2 else 2.0  # the baseline plan (asked second) is faster

    spec = SystemSpec(
        implementations=CollectiveImpl(*((("ring", "ring"),) * 4)),
        inter_dimension_scheduling="themis",
        preferred_dataset_splits=4,
    )
    p = CollectivePlanner(spec, TOPO, [50e9, 25e9], compat_astra=False, predict=predict)
    plan = p.plan(RS, 4096, ALL, None)
    assert len(asked) == 2 and plan.themis is not None and not plan.themis.themis_kept
    assert plan.chunks is asked[1]
    unguarded = CollectivePlanner(spec, TOPO, [50e9, 25e9], compat_astra=False).plan(RS, 4096, ALL, None)
    assert unguarded.themis is None


def test_missing_implementation_list_names_the_field():
    spec = SystemSpec(implementations=CollectiveImpl(all_to_all=()), source="sys.json")
    with pytest.raises(ConfigError, match="all_to_all collectives") as err:
        CollectivePlanner(spec, TOPO, [1.0, 1.0], compat_astra=True).plan(int(CommType.ALL_TO_ALL), 64, ALL, None)
    assert err.value.field == "all-to-all-implementation" and err.value.file == "sys.json"


def _span_planner(impl, *, compat_astra=False, span=None, topo=TOPO):
    spec = SystemSpec(implementations=CollectiveImpl(impl, impl, impl, impl), collective_span=span)
    return CollectivePlanner(spec, topo, [50e9] * len(topo.sizes), compat_astra=compat_astra)


@pytest.mark.parametrize(
    ("compat_astra", "span", "sizes"),
    [(False, None, [4, 2]), (True, None, [4]), (False, "listed", [4]), (True, "all", [4, 2])],
)
def test_a_short_list_spans_every_dimension_outside_the_astra_mode(compat_astra, span, sizes):
    # issue 17: a whole-machine collective with a one-entry list crosses every dimension in the
    # default mode (ASTRA-sim's convention, stopping after the listed ones, in compat astra or
    # when the file says collective_span: listed)
    plan = _span_planner(("ring",), compat_astra=compat_astra, span=span).plan(AR, 800, ALL, None)
    assert plan.layout.sizes == sizes
    assert [s.ldim for s in plan.chunks[0]] == list(range(len(sizes)))


def test_the_extension_repeats_the_last_algorithm_where_it_can_run():
    topo = MultiDimTopology(["Switch", "Ring", "Switch"], [2, 2, 2])
    layout = _span_planner(("inSwitch",), topo=topo).layout(AR, None)
    assert [a.name for a in layout.algos] == ["inSwitch", "ring", "inSwitch"]
    layout = _span_planner(("direct",), topo=topo).layout(AR, None)
    assert [a.name for a in layout.algos] == ["direct"] * 3


def test_a_flat_algorithm_or_a_group_is_not_extended():
    assert _span_planner(("oneRing",)).layout(AR, None).sizes == [8]
    assert _span_planner(("ring",)).layout(AR, (0, 1, 2)).sizes == [3]
