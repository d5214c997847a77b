"""Request traces for the PCM memory model: open-loop generation and a simple text format.

Part of ``memory/pcm`` (DESIGN.md, "Layers": memory). Times in ns, addresses in bytes.

Text format (one request a line; ``#`` starts a comment; blank lines are skipped)::

    # trainsim pcm trace v1
    # time_ns  op  address  [data]
    0          R   0x1000
    12.5       W   4160     00000000000000000000000000000000...   (128 hex digits = 64 B)
    30         W   0x2040

- ``time_ns``: arrival time at the memory controller, a float, never decreasing;
- ``op``: ``R`` (line read) or ``W`` (line write);
- ``address``: a byte address, decimal or ``0x`` hexadecimal; the request is for the 64 B
  line that holds it (``address // 64``);
- ``data``: optional, writes only: the 64 bytes written, as 128 hexadecimal digits. A write
  without data stores a line of the study's content pool, picked by a hash of its position
  in the trace. Reads find whatever was last written to the line (or the initial image).

Open-loop generation (``open_loop_trace``): requests come in bursts whose starts form a
Poisson process; a burst has a geometric number of requests (mean ``burst_mean``, 1 = plain
Poisson arrivals) spaced ``burst_gap_ns`` apart; the mean rate is ``rate_per_ns``. Each request
is a read with probability ``read_fraction``, to a line uniform over ``footprint_lines``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from trainsim.errors import ConfigError, TraceError
from trainsim.memory.pcm.config import LINE_BYTES

HEADER = "# trainsim pcm trace v1"


@dataclass(frozen=True)
class Trace:
    """Requests as arrays: arrival (ns), write flag, line index and content.

    ``content[i]``: for a write, a row of ``data`` (>= 0) or -1 (take a pool line); -1 for reads.
    """

    time_ns: NDArray[np.float64]
    is_write: NDArray[np.bool_]
    line: NDArray[np.int64]
    content: NDArray[np.int64]
    data: NDArray[np.uint8]

    def __len__(self) -> int:
        return int(self.time_ns.size)


def open_loop_trace(
    n: int,
    rate_per_ns: float,
    read_fraction: float = 2 / 3,
    burst_mean: float = 1.0,
    burst_gap_ns: float = 5.0,
    footprint_lines: int = 1 << 20,
    seed: int = 0,
) -> Trace:
    """``n`` requests at mean rate ``rate_per_ns`` (see the module docstring)."""
    checks = (
        ("n", n, n >= 1, "an integer >= 1"),
        ("rate_per_ns", rate_per_ns, rate_per_ns > 0, "a rate > 0 (requests per ns)"),
        ("read_fraction", read_fraction, 0 <= read_fraction <= 1, "a fraction in [0, 1]"),
        ("burst_mean", burst_mean, burst_mean >= 1, "a mean burst length >= 1"),
        ("burst_gap_ns", burst_gap_ns, burst_gap_ns >= 0, "a gap >= 0 ns"),
        ("footprint_lines", footprint_lines, footprint_lines >= 1, "an integer >= 1"),
    )
    for name, value, ok, expected in checks:
        if not ok:
            raise ConfigError(f"got {value!r}, expected {expected}", field=f"trace.{name}")
    rng = np.random.default_rng(seed)
    sizes = rng.geometric(1.0 / burst_mean, size=n)  # requests per burst (>= 1)
    sizes = sizes[: int(np.searchsorted(np.cumsum(sizes), n)) + 1]
    starts = np.cumsum(rng.exponential(burst_mean / rate_per_ns, size=sizes.size))
    within = np.concatenate([np.arange(s) for s in sizes]) * burst_gap_ns
    time = (np.repeat(starts, sizes) + within)[:n]
    is_write = rng.random(n) >= read_fraction
    return Trace(
        time_ns=np.sort(time),
        is_write=is_write,
        line=rng.integers(0, footprint_lines, n),
        content=np.full(n, -1, dtype=np.int64),
        data=np.zeros((0, LINE_BYTES), dtype=np.uint8),
    )


def write_trace(path: str | Path, trace: Trace) -> None:
    """Write a trace in the text format (data of writes that carry it, as hex)."""
    with open(path, "w", encoding="ascii") as fh:
        fh.write(HEADER + "\n# time_ns op address [data]\n")
        for t, w, line, c in zip(
            trace.time_ns, trace.is_write, trace.line, trace.content, strict=True
        ):
            tail = f" {trace.data[c].tobytes().hex()}" if w and c >= 0 else ""
            fh.write(f"{t:.6g} {'W' if w else 'R'} {hex(int(line) * LINE_BYTES)}{tail}\n")


def read_trace(path: str | Path) -> Trace:
    """Read a text trace; a malformed line raises :class:`TraceError` naming file and line."""
    times: list[float] = []
    writes: list[bool] = []
    lines: list[int] = []
    content: list[int] = []
    data: list[bytes] = []
    last = -np.inf
    try:
        fh = open(path, encoding="ascii", errors="replace")  # noqa: SIM115 - the with below closes it
    except OSError as exc:
        raise TraceError(f"cannot read the trace: {exc.strerror}", file=str(path)) from None
    with fh:
        for no, raw in enumerate(fh, start=1):
            text = raw.split("#", 1)[0].strip()
            if not text:
                continue
            parts = text.split()

            def bad(what: str, expected: str, no: int = no) -> TraceError:
                return TraceError(f"line {no}: {what}, expected {expected}", file=str(path))

            if len(parts) not in (3, 4):
                raise bad(f"{len(parts)} fields in {text!r}", "'time_ns op address [data]'")
            try:
                t = float(parts[0])
            except ValueError:
                raise bad(f"time {parts[0]!r}", "a number of ns") from None
            if not 0 <= t < np.inf:
                raise bad(f"time {parts[0]!r}", "a finite number of ns >= 0")
            if not t >= last:
                raise bad(f"time {t} before the previous {last}", "non-decreasing times")
            op = parts[1].upper()
            if op not in ("R", "W"):
                raise bad(f"op {parts[1]!r}", "R or W")
            try:
                addr = int(parts[2], 0)
            except ValueError:
                raise bad(f"address {parts[2]!r}", "a decimal or 0x-hex byte address") from None
            if not 0 <= addr < 2**63:
                raise bad(f"address {parts[2]}", "an address in [0, 2**63)")
            c = -1
            if len(parts) == 4:
                if op != "W":
                    raise bad("data on a read", "data only on writes")
                try:
                    blob = bytes.fromhex(parts[3])
                except ValueError:
                    blob = b""
                if len(blob) != LINE_BYTES:
                    raise bad(f"data {parts[3][:16]!r}...", f"{2 * LINE_BYTES} hexadecimal digits")
                c = len(data)
                data.append(blob)
            last = t
            times.append(t)
            writes.append(op == "W")
            lines.append(addr // LINE_BYTES)
            content.append(c)
    if not times:
        raise TraceError("no requests in the trace", file=str(path))
    blob_arr = np.frombuffer(b"".join(data), dtype=np.uint8).reshape(-1, LINE_BYTES)
    return Trace(
        time_ns=np.array(times),
        is_write=np.array(writes),
        line=np.array(lines, dtype=np.int64),
        content=np.array(content, dtype=np.int64),
        data=blob_arr.copy(),
    )
