"""The event loop's livelock watchdog: events that keep running at one simulated time become a
LivelockError naming what repeats; bursts at one time that make progress do not."""

import pytest

from trainsim.engine import EventQueue
from trainsim.errors import DeadlockError, LivelockError


class Spinner:
    """Reschedules itself at the same time forever."""

    def __init__(self, q: EventQueue) -> None:
        self.q = q
        self.calls = 0

    def spin(self, _=None) -> None:
        self.calls += 1
        self.q.schedule(0.0, self.spin)


@pytest.mark.parametrize("tick", [None, lambda: None])
@pytest.mark.parametrize("until", [None, 1e9])
def test_a_livelock_is_an_error_naming_the_event(tick, until):
    q = EventQueue()
    q.stall_limit_events = 1 << 17
    q.stall_reports.append(lambda: "spinner: 1 active flow")
    s = Spinner(q)
    q.schedule(7.0, s.spin)
    with pytest.raises(
        LivelockError, match=r"no simulated time passed for [\d,]+ events at 7.0 ns"
    ) as err:
        q.run(until, tick=tick, tick_every=1 << 16)
    assert "Spinner.spin" in str(err.value) and "spinner: 1 active flow" in str(err.value)
    assert isinstance(err.value, DeadlockError)
    assert (1 << 17) < s.calls <= (1 << 17) + 3 * (1 << 16)
    assert q.events_processed == s.calls


def test_progress_at_one_time_is_not_a_livelock():
    q = EventQueue()
    q.stall_limit_events = 1 << 16
    done = [0]

    def work(n):
        done[0] += 1
        if n:
            q.schedule(0.0, work, n - 1)

    q.progress_probe = lambda: done[0]
    q.schedule(3.0, work, 1 << 19)
    assert q.run() == 3.0
    assert done[0] == (1 << 19) + 1 and q.events_processed == done[0]


def test_time_that_advances_is_never_a_livelock():
    q = EventQueue()
    q.stall_limit_events = 1 << 16
    left = [1 << 18]

    def step(_):
        left[0] -= 1
        if left[0]:
            q.schedule(1e-3, step)

    q.schedule(0.0, step)
    q.run()
    assert left[0] == 0 and q.events_processed == 1 << 18


def test_an_error_in_a_callback_still_counts_its_events():
    q = EventQueue()
    for t in range(5):
        q.schedule(float(t), lambda _: None)

    def boom(_):
        raise RuntimeError("x")

    q.schedule(10.0, boom)
    with pytest.raises(RuntimeError):
        q.run()
    assert q.events_processed == 6
