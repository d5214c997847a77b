"""``direct`` on a communicator group's Local ring: ASTRA-sim counts (n-1) x window "later"
insertions per round there, ``window`` elsewhere (docs/collectives.md, "direct on a
communicator group"; ``AllToAll::get_non_zero_latency_packets``), so a group's direct
all-reduce reduces on every receive. Checked by hand and on ASTRA-sim's own result for a group
that spans both dimensions of [Ring 4, Switch 4] (reference-data/reference-results/extra)."""

from __future__ import annotations

import json
import math

import pytest

from tests.helpers.reference_data import RESULTS
from trainsim.cli.main import main
from trainsim.config.astra import load_astra_platform
from trainsim.config.types import CollectiveImpl, DimSpec, NetworkSpec, Platform, SystemSpec
from trainsim.engine import EventQueue
from trainsim.enums import CommType
from trainsim.network import AnalyticalNetwork
from trainsim.system.api import simulate
from trainsim.system.collective_api import CollectiveRequest
from trainsim.system.collective_runtime import CollectiveRuntime
from trainsim.workload import read_workload

CASE = RESULTS / "extra" / "commgroup_1list_direct"

E_FAST = 10  # a group's Local ring: MemBus' fixed "Fast" path, not endpoint-delay
BW = 50 * 2**30 / 1e9  # bytes per ns
SWITCH_NS = math.trunc(2 * 500 + 65_536 / BW)  # one 65,536 B message over the switch
RED_NS = 3 * math.trunc(65_536 / 1600)  # red(65,536 B) at local-mem-bw 1600


def test_spanning_group_matches_astra_sim_on_every_rank(tmp_path):
    case = json.loads((CASE / "case.json").read_text())
    keys = {"network": "network", "system": "system", "remote-memory": "memory", "comm-group": "comm_group"}
    files = [CASE / case[k] for k in keys.values()]
    flags = [f"--{flag}-configuration={path}" for flag, path in zip(keys, files, strict=True)]
    out = tmp_path / "r.json"
    workload = f"--workload-configuration={CASE / case['workload']}"
    assert main(["run", workload, *flags, "--compat", "astra", "--json", str(out), "-q"]) == 0
    expected = case["finish_ns_by_rank"]
    assert expected == [26_840] * 16
    assert [round(r["finish_s"] * 1e9) for r in json.loads(out.read_text())["ranks"]] == expected
    # the same rank by rank, without any symmetry shortcut
    graphs = read_workload(CASE / case["workload"], 16)
    result = simulate(load_astra_platform(*files), graphs, symmetry=False)
    assert [round(r.finish_s * 1e9) for r in result.ranks] == expected


def _issue(platform, group_of, size, ctype, *, symmetry=True) -> list[float]:
    queue = EventQueue()
    network = AnalyticalNetwork(platform.network, queue, compat_astra=True)
    runtime = CollectiveRuntime(platform, network, queue, compat_astra=True, symmetry=symmetry)
    finish = [-1.0] * len(group_of)

    def done(rank: int) -> None:
        finish[rank] = queue.now

    for rank, (name, members) in sorted(group_of.items()):
        runtime.issue(CollectiveRequest(rank, 1, int(ctype), size, members, name, None), done, rank)
    queue.run()
    return finish


def _switch8(algo: str) -> Platform:
    return Platform(
        NetworkSpec((DimSpec("Switch", 8, 50 * 2**30, 500.0),)),
        SystemSpec(
            endpoint_delay_ns=50.0,  # ignored on a group's ring
            preferred_dataset_splits=4,
            local_mem_bw=1600e9,
            implementations=CollectiveImpl(*(((algo,),) * 4)),
        ),
    )


def _group_of_four(platform: Platform, ctype: CommType, *, symmetry: bool = True) -> list[float]:
    group = (0, 1, 2, 3)
    return _issue(platform, {r: ("g", group) for r in group}, 2**20, ctype, symmetry=symmetry)


@pytest.mark.parametrize("symmetry", [True, False])
def test_direct_all_reduce_on_a_group_reduces_every_receive(symmetry):
    """Group {0..3} of a Switch 8, 1 MiB in 4 chunks of 262,144 B, messages of 65,536 B.

    Window 3: round 0 is 3 first insertions and 3 x 3 = 9 later ones, so all 6 receives reduce
    (outside a group: 3 first + 3 later, only the first half's receives reduce). Per chunk:
    E, the first half's sends, E + red on their arrival, the second half's sends, E + red."""
    assert (SWITCH_NS, RED_NS) == (2220, 120)
    per_chunk = E_FAST + SWITCH_NS + E_FAST + RED_NS + SWITCH_NS + E_FAST + RED_NS
    assert per_chunk == 4710
    finish = _group_of_four(_switch8("direct"), CommType.ALL_REDUCE, symmetry=symmetry)
    assert finish == [4 * per_chunk] * 4 == [18_840] * 4


def test_windowed_direct_reduce_scatter_on_a_group_reduces_every_receive():
    """direct1 reduce-scatter on group {0..3}: one peer at a time, 3 sends. A round on the
    group's ring is 1 first insertion and 3 later ones, so each of the 3 receives reduces; with
    rounds of 1 + 1 (outside a group) the second receive would start a new round unreduced."""
    per_chunk = E_FAST + 3 * (SWITCH_NS + E_FAST + RED_NS)
    assert per_chunk == 7060
    assert _group_of_four(_switch8("direct1"), CommType.REDUCE_SCATTER) == [4 * per_chunk] * 4


def test_a_group_of_two_is_unchanged():
    """n = 2: (n-1) x window = window, so the group's rounds equal the network's."""
    group = (0, 1)
    finish = _issue(_switch8("direct"), {r: ("g", group) for r in group}, 2**20, CommType.ALL_REDUCE)
    msg = 2**20 // 4 // 2
    net = math.trunc(1000 + msg / BW)
    red = 3 * math.trunc(msg / 1600)
    assert finish == [4 * (E_FAST + net + E_FAST + red + net + E_FAST)] * 2
