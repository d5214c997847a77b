from trainsim.engine import EventQueue


def test_events_run_in_time_then_schedule_order():
    q = EventQueue()
    seen = []
    q.schedule(5, seen.append, "b")
    q.schedule(1, seen.append, "a")
    q.schedule(5, seen.append, "c")
    q.run()
    assert seen == ["a", "b", "c"]
    assert q.now == 5
    assert q.events_processed == 3


def test_zero_delay_runs_in_same_tick_after_current():
    q = EventQueue()
    seen = []

    def first(_):
        seen.append(("first", q.now))
        q.schedule(0, lambda _: seen.append(("same-tick", q.now)))

    q.schedule(3, first)
    q.schedule(3, lambda _: seen.append(("second", q.now)))
    q.run()
    assert seen == [("first", 3), ("second", 3), ("same-tick", 3)]


def test_run_until_stops_and_resumes():
    q = EventQueue()
    seen = []
    for t in (1, 2, 3):
        q.schedule(t, seen.append, t)
    q.run(until_ns=2)
    assert seen == [1, 2]
    q.run()
    assert seen == [1, 2, 3]


def test_collector_paused_restores_the_collectors_state():
    import gc

    from trainsim.engine import collector_paused

    was = gc.isenabled()
    try:
        gc.enable()
        with collector_paused():
            assert not gc.isenabled()
            with collector_paused():  # nested: the outer one turns it back on
                assert not gc.isenabled()
            assert not gc.isenabled()
        assert gc.isenabled()
        gc.disable()
        with collector_paused():
            pass
        assert not gc.isenabled()  # off before: left off
    finally:
        (gc.enable if was else gc.disable)()


def test_collector_paused_leaves_what_it_made_in_the_oldest_generation():
    """A young-generation pass right after the block would walk everything it made."""
    import gc

    from trainsim.engine import collector_paused

    was = gc.isenabled()
    try:
        gc.enable()
        gc.collect()
        with collector_paused():
            kept = [[i] for i in range(50_000)]
        young = {id(o) for o in gc.get_objects(generation=0)}
        assert not any(id(o) in young for o in kept[::1000])
        assert gc.is_tracked(kept[0]) and any(o is kept for o in gc.get_objects(generation=2))
        with collector_paused():  # a cycle made in the block is still collected by a full pass
            cycle: list[object] = []
            cycle.append(cycle)
            marker = id(cycle)
            del cycle
        gc.collect()
        assert all(id(o) != marker for o in gc.get_objects())
    finally:
        (gc.enable if was else gc.disable)()


def test_tracing_queue_says_when_the_running_event_was_scheduled():
    from trainsim.engine import TracingEventQueue

    q = TracingEventQueue()
    seen: list[tuple[float, float, str]] = []

    def second(name: str) -> None:
        seen.append((q.now, q.scheduled_ns, name))

    def first(_arg: object) -> None:
        seen.append((q.now, q.scheduled_ns, "first"))
        q.schedule(5.0, second, "later")
        q.schedule_at(7.0, second, "at 7")

    q.now = 1.0
    q.schedule_at(3.0, first)
    q.run()
    assert seen == [(3.0, 1.0, "first"), (7.0, 3.0, "at 7"), (8.0, 3.0, "later")]
