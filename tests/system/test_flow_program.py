"""Flow programs run in dependency order (system/flow_program.py)."""

from __future__ import annotations

import pytest

from trainsim.collectives.wafer import Program, Step, Unicast
from trainsim.engine import EventQueue
from trainsim.errors import ConfigError
from trainsim.network.in_network import InNetworkFlow
from trainsim.system.flow_program import run_program
from trainsim.topology.fabrics import graph_from_edges


def _net():
    g = graph_from_edges(2, [(0, 1, 1e11, 0.0)])  # 100 B/ns each way
    return InNetworkFlow(None, EventQueue(), graph=g)


def test_steps_wait_for_the_steps_they_follow():
    prog = Program()
    a = prog.add([Unicast(0, 1, 1000)])
    prog.add([Unicast(1, 0, 500)])  # independent: runs with the first
    prog.add([Unicast(0, 1, 1000)], after=[a])
    assert run_program(_net(), prog) == pytest.approx(20.0)


def test_a_step_may_not_follow_a_later_one():
    prog = Program(steps=[Step((Unicast(0, 1, 10),), after=(1,)), Step((Unicast(0, 1, 10),))])
    with pytest.raises(ConfigError, match="earlier steps"):
        run_program(_net(), prog)


def test_empty_steps_finish_at_once():
    prog = Program()
    first = prog.add([])
    prog.add([Unicast(0, 1, 100)], after=[first])
    assert run_program(_net(), prog) == pytest.approx(1.0)
