"""The discrete-event kernel: a heap of ``(time, seq, callback, arg)`` tuples (DESIGN.md, engine)."""

from trainsim.engine.kernel import EventQueue, TracingEventQueue, collector_paused

__all__ = ["EventQueue", "TracingEventQueue", "collector_paused"]
