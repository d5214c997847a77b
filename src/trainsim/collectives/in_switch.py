"""In-switch reduction (``inSwitch``) on a Switch dimension, SHARP-like (Graham et al.,
"Scalable Hierarchical Aggregation Protocol (SHARP): A Hardware Architecture for Efficient Data
Reduction", COMHPC 2016). Not an ASTRA-sim algorithm.

Each member sends its whole phase input D once up to the switch; the switch reduces at line
rate (no reduction cost at the endpoints) once all n members' data has arrived (a join across
members) and sends the result down to every member. Per member (E = endpoint delay):

- all-reduce: up D, down D (output D);
- reduce-scatter: up D, down D/n (output D/n, integer division as the other algorithms);
- all-gather: up D, down n D (the switch multicasts the concatenation; output n D);
- all-to-all: not an in-switch operation (ConfigError; use direct).

Insertions as ASTRA-sim's conventions (B1): E at the phase start, then the upload; E after the
download arrives, then the phase ends. The host prices the upload, the join and the download
(``PhaseHost.switch_reduce``).
"""

from __future__ import annotations

from typing import Any

from trainsim.collectives.base import ALL_GATHER, ALL_TO_ALL, REDUCE_SCATTER, Phase
from trainsim.errors import ConfigError

_START, _UP, _DONE = range(3)


def in_switch_sizes(comm_type: int, data_size: int, n: int) -> tuple[int, int]:
    """(bytes up, bytes down) of one member's in-switch phase."""
    if comm_type == ALL_TO_ALL:
        raise ConfigError(
            "all-to-all cannot use inSwitch: a switch reduces or multicasts, it does not "
            "permute personalized data",
            hint="use direct (or ring) in all-to-all-implementation",
        )
    if comm_type == REDUCE_SCATTER:
        return data_size, data_size // n
    if comm_type == ALL_GATHER:
        return data_size, data_size * n
    return data_size, data_size


class InSwitchPhase(Phase):
    __slots__ = ("up", "down", "state")

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.up, self.down = in_switch_sizes(self.comm_type, self.data_size, len(self.members))
        self.state = _START

    def start(self) -> None:
        self.host.bundle(self, 0)

    def on_general(self, _arg: Any = None) -> None:
        if self.state == _START:
            self.state = _UP
            self.host.switch_reduce(self, self.up, self.down)
        else:
            self.host.finish(self)

    def on_recv(self, _arg: Any = None) -> None:
        # the reduced data is down: one insertion (E, no endpoint reduction), then done
        self.state = _DONE
        self.host.bundle(self, 0)
