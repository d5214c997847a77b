"""The discrete-event kernel: a heap of ``(time, seq, callback, arg)`` tuples (DESIGN.md, engine)."""

from trainsim.engine.kernel import EventQueue

__all__ = ["EventQueue"]
