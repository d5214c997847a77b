"""``InjectionPorts.all_idle``'s shortcut (the latest port end of all) answers as its
definition: every rank's last port free at ``now``."""

import random

from trainsim.network.injection import InjectionPorts
from trainsim.topology import MultiDimTopology


def test_all_idle_equals_every_rank_checked():
    topo = MultiDimTopology(["Ring", "Switch"], [4, 4])
    ports = InjectionPorts(topo, [50e9, 25e9])
    rng = random.Random(7)
    now = 0.0
    groups = [tuple(range(4)), (0, 4, 8, 12), (5, 6), tuple(range(16))]
    for _ in range(300):
        now += rng.choice([0.0, 1.0, 50.0, 400.0])
        if rng.random() < 0.5:
            src, dst = rng.sample(range(16), 2)
            ports.reserve(src, dst, rng.choice([1, 1000, 10**5]), now)
        for group in groups:
            expected = all(ports._last.get(r, 0.0) <= now for r in group)
            assert ports.all_idle(group, now) == expected
            assert ports.all_idle(group, now) == all(ports.idle(r, now) for r in group)
