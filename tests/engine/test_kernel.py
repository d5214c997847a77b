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
