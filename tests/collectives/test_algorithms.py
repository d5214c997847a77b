"""The algorithm table (collectives.algorithms): the spellings it accepts and what they mean,
the errors it gives, and ``make_phase`` dispatching through it with no fallback."""

from __future__ import annotations

import pytest

from trainsim.collectives import (
    ALGORITHMS,
    ASYMMETRIC_KINDS,
    AlgoSpec,
    DoubleBinaryTreePhase,
    HalvingDoublingPhase,
    InSwitchPhase,
    PhaseSpec,
    RingPhase,
    make_phase,
    parse_algorithm,
)
from trainsim.collectives.algorithms import accepted_names, name_problem
from trainsim.enums import CommType
from trainsim.errors import ConfigError

AR = int(CommType.ALL_REDUCE)

ACCEPTED = {
    # ASTRA-sim 518bd51's names, as the config files accepted them before the table
    "ring": AlgoSpec("ring"),
    "oneRing": AlgoSpec("ring", 0, True),
    "direct": AlgoSpec("direct"),
    "direct4": AlgoSpec("direct", 4),
    "direct00007": AlgoSpec("direct", 7),
    "direct99999": AlgoSpec("direct", 99999),
    "oneDirect": AlgoSpec("direct", 0, True),
    "oneDirect12": AlgoSpec("direct", 12, True),
    "halvingDoubling": AlgoSpec("halvingDoubling"),
    "oneHalvingDoubling": AlgoSpec("halvingDoubling", 0, True),
    "doubleBinaryTree": AlgoSpec("doubleBinaryTree"),
    "inSwitch": AlgoSpec("inSwitch"),
    # capitalized spellings, as the parser accepted them before the table
    "Ring": AlgoSpec("ring"),
    "Direct": AlgoSpec("direct"),
    "Direct4": AlgoSpec("direct", 4),
    "HalvingDoubling": AlgoSpec("halvingDoubling"),
    "onering": AlgoSpec("ring", 0, True),
}
REJECTED = [
    "rign",
    "directX",
    "direct0",  # a window is N >= 1
    "direct123456",  # at most five digits
    "ring4",  # only direct takes a window
    "oneDoubleBinaryTree",  # no flat double binary tree
    "oneInSwitch",  # a switch is not a flat dimension
    "inSwitch4",
    "one",
    "",
    "ring ",
]


@pytest.mark.parametrize(("name", "spec"), ACCEPTED.items())
def test_accepted_spellings_keep_their_meaning(name, spec):
    assert parse_algorithm(name) == spec
    assert name_problem(name) is None


@pytest.mark.parametrize("name", REJECTED)
def test_unknown_spellings_are_config_errors_listing_the_table(name):
    with pytest.raises(ConfigError, match="unknown collective implementation") as err:
        parse_algorithm(name)
    assert accepted_names() in str(err.value)
    assert name_problem(name) == accepted_names()


def test_non_strings_are_problems():
    assert name_problem(3) == accepted_names()
    assert name_problem(None) == accepted_names()


def test_accepted_names_come_from_the_table():
    text = accepted_names()
    for algo in ALGORITHMS.values():
        assert (algo.name in text) == algo.listed
    assert "oneRing" in text and "directN" in text and "oneDirectN" in text
    assert "oneDoubleBinaryTree" not in text and "oneInSwitch" not in text
    assert "inSwitch" not in accepted_names(all_to_all=True)


def test_names_round_trip():
    for spec in ACCEPTED.values():
        assert parse_algorithm(spec.name) == spec


def test_asymmetric_kinds_are_the_tree_the_switch_and_custom_graphs():
    assert set(ALGORITHMS) == {"ring", "direct", "halvingDoubling", "doubleBinaryTree", "inSwitch", "custom"}
    assert {"doubleBinaryTree", "inSwitch", "custom"} == ASYMMETRIC_KINDS


@pytest.mark.parametrize("name", ["custom", "Custom", "oneCustom"])
def test_custom_is_named_by_its_graphs_not_in_an_implementation_list(name):
    assert name_problem(name) == accepted_names()
    with pytest.raises(ConfigError, match="unknown collective implementation"):
        parse_algorithm(name)


@pytest.mark.parametrize(
    ("name", "cls"),
    [
        ("ring", RingPhase),
        ("direct", RingPhase),
        ("halvingDoubling", HalvingDoublingPhase),
        ("doubleBinaryTree", DoubleBinaryTreePhase),
        ("inSwitch", InSwitchPhase),
    ],
)
def test_make_phase_builds_each_algorithm_from_the_table(name, cls):
    spec = PhaseSpec(0, parse_algorithm(name), AR, 1024)
    phase = make_phase(object(), spec, 2, [0, 1, 2, 3], 2)  # type: ignore[arg-type]
    assert type(phase) is cls and phase.rank == 2 and phase.data_size == 1024


def test_direct_window_defaults_to_every_peer():
    direct = PhaseSpec(0, parse_algorithm("direct"), AR, 1024)
    direct2 = PhaseSpec(0, parse_algorithm("direct2"), AR, 1024)
    members = list(range(8))
    assert make_phase(object(), direct, 0, members, 0).first == 7  # type: ignore[arg-type, attr-defined]
    assert make_phase(object(), direct2, 0, members, 0).first == 2  # type: ignore[arg-type, attr-defined]


def test_make_phase_unknown_kind_is_an_error_not_a_tree():
    spec = PhaseSpec(0, AlgoSpec("butterfly"), AR, 1024)
    with pytest.raises(ConfigError, match="'butterfly'.*ring, direct"):
        make_phase(object(), spec, 0, [0, 1], 0)  # type: ignore[arg-type]
