"""Shift-exact memoization of symmetric collectives in the default mode (DESIGN.md, "Speed":
symmetry first, memoize where exact). Used by ``symmetry/collective.py``'s
``SymmetricRunner`` for backends priced pairwise (the analytical one) with a time-invariant
endpoint, where the compatibility mode's whole-ns memo does not apply.

The problem: the default mode's times are not whole ns, so a collective's duration added to a
new start time need not equal what simulating it from that start gives (``(s + a) + b`` is not
``s + (a + b)`` in floating point). The fact used here: inside one binade ``[2**e, 2**(e+1))``
every double is a multiple of ``u = 2**(e-52)``, so for ``x`` in the binade and a constant
``c`` whose exact sum with ``x`` stays in it, ``fl(x + c) = x + r(c)``, where ``r(c)`` is ``c``
rounded to the nearest multiple of ``u`` - unless ``c`` lies exactly half-way between two
multiples (a tie, broken towards the even result, which depends on ``x``). ``r(c)`` does not
depend on ``x``. Likewise the difference of two doubles of the binade is exact (Sterbenz), and
comparing ``s + a`` with ``s + b`` is comparing ``a`` with ``b``.

So a simulation whose every time is derived from its start ``s`` by such steps - adding or
subtracting constants without a tie, subtracting two such times, comparing two such times, or
comparing one with a constant outside the binade - computes every time as ``s`` plus an offset
that does not depend on ``s``, takes the same branches, and ends with the same state shifted.
Started at any other ``s'`` of the same binade with every time of the run still in it, it
computes ``s' + offset`` for each: the replayed ``s' + offset`` (an exact addition) is what
simulating from ``s'`` gives, bit for bit. No claim is made beyond these conditions.

:class:`Traced` checks them while the collective is simulated once: the start time is a
``Traced`` (a ``float`` with the same value), every operation on it returns the true ``float``
result (so the traced run *is* the ordinary simulation), and any step outside the list above
(a product, a tie, a value leaving the binade, a comparison with a constant inside it, a hash,
a conversion, a time of another trace) marks the trace spoiled: that run is not memoized. :class:`ShiftMemo` keeps,
per collective and binade, the outputs' offsets and the range of every time's offset; a later
start of the same binade whose shifted range stays inside it is answered from the memo.
Times in ns.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from typing import Any


class _Trace:
    """The state of one traced simulation: the binade of its start, what it saw, and its own
    subclass of :class:`Traced` (a time of another trace met here is not one of its times)."""

    __slots__ = ("start", "lo", "hi", "half_ulp", "ok", "min_off", "max_off", "why", "cls")

    def __init__(self, start: float) -> None:
        self.lo, self.hi = binade(start)
        self.half_ulp = math.ulp(self.lo) / 2.0
        self.ok = True
        self.min_off = 0.0
        self.max_off = 0.0
        self.why = ""
        self.cls: type[Traced] = type("Traced", (Traced,), {"__slots__": ()})
        self.start = start

    def spoil(self, why: str) -> None:
        if self.ok:
            self.ok = False
            self.why = why


LEFT_BINADE = "a time left the binade"
"""How a trace spoiled by a time outside its start's binade says so."""

_TRACE: _Trace | None = None  # the trace being recorded (one at a time; the simulator is single-threaded)


def binade(x: float) -> tuple[float, float]:
    """``[2**e, 2**(e+1))`` holding the positive normal ``x``."""
    m, e = math.frexp(x)  # x = m * 2**e, 0.5 <= m < 1
    return math.ldexp(0.5, e), math.ldexp(1.0, e)


def _wrap(t: _Trace, value: float) -> Any:
    """``value`` as a time of trace ``t``, checked to stay in the binade."""
    if not (t.lo <= value < t.hi):
        t.spoil(f"{LEFT_BINADE}: {value!r}")
        return value
    off = value - t.start  # exact: both in the binade
    if off < t.min_off:
        t.min_off = off
    elif off > t.max_off:
        t.max_off = off
    return t.cls(value)


def _current(x: object) -> _Trace | None:
    """The trace being recorded when ``x`` is one of its times; None (and the trace spoiled)
    when ``x`` is a time of another trace, or no trace is being recorded."""
    t = _TRACE
    if t is None:
        return None
    if type(x) is not t.cls:
        t.spoil("a time of another run used")
        return None
    return t


def _add_const(x: Traced, c: float) -> Any:
    """``fl(x + c)`` for a time ``x`` and a constant ``c``; a tie spoils the trace."""
    a = float.__float__(x)
    r = a + c
    t = _current(x)
    if t is None:
        return r
    # TwoSum (Knuth, TAOCP 4.2.2): the exact rounding error of r = fl(a + c)
    bp = r - a
    err = (a - (r - bp)) + (c - bp)
    if abs(err) == t.half_ulp:
        t.spoil(f"a rounding tie adding {c!r}")
    return _wrap(t, r)


def _spoil(why: str) -> None:
    if _TRACE is not None:
        _TRACE.spoil(why)


def _const(other: object) -> float | None:
    """``other`` as a constant operand (int or plain float), or None when it is not one."""
    if type(other) is float:
        return other  # type: ignore[return-value]
    if type(other) is int or type(other) is bool:
        return float(other)  # type: ignore[arg-type]
    return None


class Traced(float):
    """A time derived from a traced start (module docstring). Behaves as its ``float`` value;
    each trace uses its own subclass."""

    __slots__ = ()
    # numpy scalars on the left of an operator defer to the methods below (which spoil the
    # trace) instead of computing an untraced result; no numpy function takes a time here
    __array_ufunc__ = None

    def __add__(self, other: object) -> Any:
        if isinstance(other, Traced):
            _spoil("two times added")
            return float.__add__(self, other)
        c = _const(other)
        if c is None:
            _spoil(f"a time added to {type(other).__name__}")
            return float.__add__(self, other)  # type: ignore[operator]
        return _add_const(self, c)

    __radd__ = __add__

    def __sub__(self, other: object) -> Any:
        if isinstance(other, Traced):
            _current(self)
            _current(other)
            return float.__sub__(self, other)  # exact in the binade, and shift-free
        c = _const(other)
        if c is None:
            _spoil(f"{type(other).__name__} subtracted from a time")
            return float.__sub__(self, other)  # type: ignore[operator]
        return _add_const(self, -c)

    def __rsub__(self, other: object) -> Any:
        _spoil("a time subtracted from a constant")
        return float.__rsub__(self, other)  # type: ignore[operator]

    def _cmp(self, other: object) -> None:
        """Comparisons: between two times, or with a constant outside the binade."""
        t = _current(self)
        if t is None:
            return
        if isinstance(other, Traced):
            _current(other)
            return
        c = _const(other)
        if c is None:
            t.spoil(f"a time compared with {type(other).__name__}")
        elif t.lo <= c < t.hi:
            t.spoil(f"a time compared with the constant {c!r}")

    def __hash__(self) -> int:
        _spoil("a time hashed")
        return float.__hash__(self)


def _comparison(name: str) -> Callable[[Traced, object], Any]:
    base = getattr(float, name)

    def op(self: Traced, other: object) -> Any:
        self._cmp(other)
        return base(self, other)

    op.__name__ = name
    return op


for _name in ("__lt__", "__le__", "__gt__", "__ge__", "__eq__", "__ne__"):
    setattr(Traced, _name, _comparison(_name))

def _spoiling(name: str) -> Callable[..., Any]:
    base = getattr(float, name)

    def op(self: Traced, *args: Any) -> Any:
        _spoil(f"a time used by {name}")
        return base(self, *args)

    op.__name__ = name
    return op


# every other use of a time's value may depend on more than its offset: it spoils the trace
for _name in (
    "__mul__", "__rmul__", "__truediv__", "__rtruediv__", "__floordiv__", "__rfloordiv__",
    "__mod__", "__rmod__", "__divmod__", "__rdivmod__", "__pow__", "__rpow__", "__neg__",
    "__pos__", "__abs__", "__int__", "__float__", "__trunc__", "__floor__", "__ceil__",
    "__round__", "__format__", "__repr__", "__str__", "is_integer", "hex",
    "as_integer_ratio", "conjugate", "__getnewargs__", "__reduce__", "__reduce_ex__",
):  # fmt: skip
    setattr(Traced, _name, _spoiling(_name))


class Replay:
    """One memo entry: offsets (ns) from the start of the outputs and the range of every
    time's offset during the run."""

    __slots__ = ("lo", "hi", "min_off", "max_off", "outputs")

    def __init__(self, trace: _Trace, outputs: Any) -> None:
        self.lo, self.hi = trace.lo, trace.hi
        self.min_off, self.max_off = trace.min_off, trace.max_off
        self.outputs = outputs

    def fits(self, start: float) -> bool:
        """Whether every time of a run started at ``start`` stays in the recorded binade."""
        return self.lo <= start + self.min_off and start + self.max_off < self.hi and self.lo <= start


def trace(start: float, run: Callable[[float], Any]) -> tuple[Any, _Trace | None]:
    """``run(start)`` with ``start`` traced: its result and the trace (None when ``start`` is
    not a positive normal number, which has no binade to reason in)."""
    global _TRACE
    if not (sys.float_info.min <= start < math.inf):
        return run(start), None
    rec = _Trace(start)
    _TRACE = rec
    try:
        out = run(rec.cls(start))
    finally:
        _TRACE = None
    return out, rec


def offset(value: float, rec: _Trace) -> float | None:
    """``value - start`` for an output time of a traced run, or None when it is not a traced
    time (then the run's result does not move with its start)."""
    if type(value) is not rec.cls:
        return None
    return float.__sub__(value, rec.start)
