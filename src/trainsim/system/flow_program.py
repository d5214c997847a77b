"""Run a flow program (``collectives/wafer.py``) on a flow-level backend (DESIGN.md, system
layer; docs/fred.md): steps start when the steps they follow are done, unicasts go through
``send``, trees through ``send_tree`` (a backend declaring ``capabilities.in_network``). The
backend is any registered one; nothing here names it. Times in ns.
"""

from __future__ import annotations

from typing import Any

from trainsim.collectives.wafer import Program, Tree
from trainsim.errors import ConfigError


def run_program(backend: Any, program: Program) -> float:
    """Run ``program`` from the backend's current time to its end; the duration in ns."""
    queue = backend.queue
    start = queue.now
    steps = program.steps
    waiting = [len(s.after) for s in steps]
    followers: list[list[int]] = [[] for _ in steps]
    for i, s in enumerate(steps):
        for j in s.after:
            if not 0 <= j < i:
                raise ConfigError(f"flow program step {i} follows step {j}: steps may follow earlier steps only")
            followers[j].append(i)
    left = [len(s.transfers) for s in steps]
    done = [False] * len(steps)
    if any(isinstance(t, Tree) for s in steps for t in s.transfers) and not backend.capabilities.in_network:
        raise ConfigError(f"network backend {backend.name!r} cannot stream in-network trees (it does not declare in_network)")

    def finish(i: int) -> None:
        done[i] = True
        for f in followers[i]:
            waiting[f] -= 1
            if waiting[f] == 0:
                launch(f)

    def arrived(i: int) -> None:
        left[i] -= 1
        if left[i] == 0:
            finish(i)

    def launch(i: int) -> None:
        if not steps[i].transfers:
            finish(i)
            return
        for t in steps[i].transfers:
            if isinstance(t, Tree):
                backend.send_tree(t.links, t.nbytes, arrived, i, latency_ns=t.latency_ns)
            else:
                backend.send(t.src, t.dst, max(1, round(t.nbytes)), arrived, i)

    for i in [i for i in range(len(steps)) if waiting[i] == 0]:  # (an empty step launches its followers itself)
        launch(i)
    queue.run()
    if not all(done):
        raise ConfigError("flow program did not finish (a step waits on one that never ran)")
    return float(queue.now - start)
