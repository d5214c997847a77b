"""Configuration of the PCM model: cell timing, read sensing, the memory system and the cores.

Part of ``memory/pcm`` (DESIGN.md, "Layers": memory). Frozen dataclasses, validated on
construction; a bad value raises :class:`~trainsim.errors.ConfigError` naming the field, the
value and what was expected. Units: times in ns (the event kernel's tick, ``engine/kernel.py``),
sizes in bytes or bits as named, frequencies in GHz.

Defaults and where they come from (docs/pcm.md has the full table):

- Write: one RESET pulse (100 ns) then SET program-and-verify pulses (150 ns each); iterations
  per 2-bit level 00: 0, 11: 1, 01: 7, 10: 5 (issue 11, after Rashidi, Jalili and
  Sarbazi-Azad). Intermediate levels get a per-cell spread of round(clip(N(0, 1), -2, 2))
  iterations. The merged intermediate level of a tri-level line needs ``relaxed_iterations``;
  this is the one calibrated value: 1, against the paper's -56.1 % write latency (docs/pcm.md).
- Spare bits: 61 per 64 B line, the storage of ECP-6 (Schechter et al., ISCA 2010: six
  entries of a 9-bit pointer and a replacement bit, plus a full flag, for 512 data bits). A
  stuck-at fault consumes one entry, 10 bits (8-bit pointer to one of 256 cells + a 2-bit
  replacement cell).
- Memory: NVMain's MLC example configuration taken as a whole (``Config/PCM_MLC_example.config``
  of the NVMain simulator; docs/pcm.md cites each line): 1 channel, 1 rank, 2 banks, its
  ``MEM_CTL FRFCFS`` controller (one 32-entry transaction queue per channel, reads and writes
  alike, oldest ready first), write pausing off, 64 B bursts of ``tBURST`` 4 cycles at 400 MHz =
  10 ns. The FRFCFS-WQF controller its queue lines configure (read / write queues 32 / 32,
  drain between watermarks 32 and 16) and issue 11's per-bank read-first discipline (16 banks)
  are options.
- Core: ROB 128, width 4, 10 misses per kilo-instruction, 3 GHz, 0.5 dirty write-backs per miss.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from enum import StrEnum
from typing import Any

from trainsim.errors import ConfigError


class Scheme(StrEnum):
    """How lines are stored: plain 2-bit MLC, tri-level, or tri-level with FPC compression."""

    BASE = "base"
    TRI = "tri"
    TRI_FPC = "tri+fpc"


class ReadMetric(StrEnum):
    """Read sensing metric: resistance (R-metric) or the drift-resilient M-metric."""

    R = "R"
    M = "M"


LINE_BYTES = 64
CELL_BITS = 2
LINE_CELLS = LINE_BYTES * 8 // CELL_BITS  # 256 cells of 2 bits
LEVELS = (0b00, 0b01, 0b10, 0b11)


def _need(ok: bool, cls: str, name: str, value: Any, expected: str) -> None:
    if not ok:
        raise ConfigError(f"got {value!r}, expected {expected}", field=f"{cls}.{name}")


def _check_positive(obj: Any, names: tuple[str, ...], *, allow_zero: bool = False) -> None:
    cls = type(obj).__name__
    for name in names:
        v = getattr(obj, name)
        ok = isinstance(v, (int, float)) and not isinstance(v, bool)
        ok = ok and (v >= 0 if allow_zero else v > 0)
        _need(ok, cls, name, v, "a number >= 0" if allow_zero else "a number > 0")


def _check_ints(obj: Any, names: tuple[str, ...], minimum: int) -> None:
    cls = type(obj).__name__
    for name in names:
        v = getattr(obj, name)
        ok = isinstance(v, int) and not isinstance(v, bool) and v >= minimum
        _need(ok, cls, name, v, f"an integer >= {minimum}")


@dataclass(frozen=True)
class CellConfig:
    """Write pulses of a 2-bit cell (ns) and the program-and-verify iteration counts.

    ``iterations[level]`` is the nominal number of SET pulses for the 2-bit ``level`` (index
    0b00..0b11). Levels 00 (RESET) and 11 (one full SET pulse) are reached without verify; the
    intermediate levels 01 and 10 and the merged tri-level state are program-and-verify and get
    the spread when ``spread`` is on.
    """

    reset_ns: float = 100.0
    set_ns: float = 150.0
    iterations: tuple[int, int, int, int] = (0, 7, 5, 1)
    relaxed_iterations: int = 1
    spread: bool = True
    spread_sd: float = 1.0
    spread_clip: float = 2.0

    def __post_init__(self) -> None:
        _check_positive(self, ("reset_ns", "set_ns", "spread_sd"))
        _check_positive(self, ("spread_clip",), allow_zero=True)
        it = self.iterations
        _need(
            isinstance(it, tuple)
            and len(it) == 4
            and all(isinstance(i, int) and i >= 0 for i in it),
            "CellConfig",
            "iterations",
            it,
            "four integers >= 0 (levels 00, 01, 10, 11)",
        )
        _need(it[0] == 0, "CellConfig", "iterations", it, "level 00 (RESET) to need 0 SET pulses")
        r = self.relaxed_iterations
        _need(
            isinstance(r, int) and 1 <= r <= max(it[1], it[2]),
            "CellConfig",
            "relaxed_iterations",
            r,
            f"an integer in [1, {max(it[1], it[2])}] (no slower than the slowest intermediate level)",
        )


@dataclass(frozen=True)
class ReadConfig:
    """Sensing latency (ns) of a line read, by metric and by the number of levels sensed.

    Assumed defaults (not from the paper, which we could not consult for them): R-metric
    4-level 250 ns and 3-level 150 ns; M-metric, time-based and drift-resilient (Papandreou et
    al., IEDM 2011; used for MLC PCM reads by Awasthi et al., HPCA 2012), 4-level 450 ns and
    3-level 250 ns. ``fpc_decode_ns`` is added to reads of compressed lines (FPC decompression,
    five cycles in Alameldeen and Wood, 2004).
    """

    metric: ReadMetric = ReadMetric.M
    r_metric_4level_ns: float = 250.0
    r_metric_3level_ns: float = 150.0
    m_metric_4level_ns: float = 450.0
    m_metric_3level_ns: float = 250.0
    fpc_decode_ns: float = 2.0

    def __post_init__(self) -> None:
        _check_positive(
            self,
            (
                "r_metric_4level_ns",
                "r_metric_3level_ns",
                "m_metric_4level_ns",
                "m_metric_3level_ns",
            ),
        )
        _check_positive(self, ("fpc_decode_ns",), allow_zero=True)
        _need(self.metric in ("R", "M"), "ReadConfig", "metric", self.metric, "'R' or 'M'")
        object.__setattr__(self, "metric", ReadMetric(self.metric))  # accept the plain string

    def sense_ns(self, levels: int) -> float:
        """Sensing time (ns) of a line read with ``levels`` (3 or 4) levels under the metric."""
        if self.metric is ReadMetric.M:
            return self.m_metric_3level_ns if levels == 3 else self.m_metric_4level_ns
        return self.r_metric_3level_ns if levels == 3 else self.r_metric_4level_ns


@dataclass(frozen=True)
class SpareConfig:
    """Spare storage of a line (bits) and how much of it stuck-at faults have consumed.

    ``faults`` stuck-at cells per line each take ``bits_per_fault`` spare bits (an ECP entry);
    the rest is room for tri-level metadata.
    """

    spare_bits: int = 61
    faults: int = 0
    bits_per_fault: int = 10

    def __post_init__(self) -> None:
        _check_ints(self, ("spare_bits", "faults", "bits_per_fault"), 0)

    @property
    def available_bits(self) -> int:
        """Spare bits left for metadata after the faults took theirs."""
        return max(0, self.spare_bits - self.faults * self.bits_per_fault)


class Scheduler(StrEnum):
    """How the controller picks the next request for a free bank (``timing`` has the rules).

    ``frfcfs``: NVMain's ``FRFCFS`` controller, one transaction queue per channel, the oldest
    request whose bank is free; ``frfcfs-wqf``: NVMain's ``FRFCFS-WQF``, channel read and write
    queues, reads only until the write queue reaches ``drain_high``, then writes only down to
    ``drain_low``; ``read-first``: issue 11's per-bank queues, reads first, drain per bank.
    """

    FRFCFS = "frfcfs"
    FRFCFS_WQF = "frfcfs-wqf"
    READ_FIRST = "read-first"


@dataclass(frozen=True)
class MemoryConfig:
    """The memory system: channels x banks, the scheduler, its queues and drain watermarks.

    Defaults: NVMain's ``Config/PCM_MLC_example.config`` (module docstring). ``queue`` is the
    FRFCFS transaction queue per channel (NVMain's ``QueueSize``, 32 unless set; the example
    sets none); ``read_queue`` / ``write_queue`` / ``drain_*`` are the example's FRFCFS-WQF lines
    (per channel under ``frfcfs-wqf``, per bank under ``read-first``). ``bank_bytes``: the
    example's ``ROWS`` 65536 x ``COLS`` 1024 columns of one 64 B burst (``BusWidth`` 64 x 8
    beats), 4 GiB; two banks make the 8 GiB of eight 8 Gb devices of one rank.
    """

    channels: int = 1
    banks: int = 2
    read_queue: int = 32
    write_queue: int = 32
    drain_high: int = 32
    drain_low: int = 16
    burst_ns: float = 10.0
    scheduler: Scheduler = Scheduler.FRFCFS
    queue: int = 32
    bank_bytes: int = 65536 * 1024 * 64  # ROWS x COLS x 64 B bursts: 4 GiB per bank

    @property
    def capacity_bytes(self) -> int:
        """Bytes the memory holds: ``channels * banks * bank_bytes`` (one rank per channel)."""
        return self.channels * self.banks * self.bank_bytes

    def __post_init__(self) -> None:
        _check_ints(
            self,
            ("channels", "banks", "read_queue", "write_queue", "drain_high", "queue", "bank_bytes"),
            1,
        )
        _need(
            self.scheduler in tuple(Scheduler),
            "MemoryConfig",
            "scheduler",
            self.scheduler,
            "one of " + ", ".join(repr(s.value) for s in Scheduler),
        )
        object.__setattr__(self, "scheduler", Scheduler(self.scheduler))
        _need(
            isinstance(self.drain_low, int) and 0 <= self.drain_low < self.drain_high,
            "MemoryConfig",
            "drain_low",
            self.drain_low,
            f"an integer in [0, drain_high={self.drain_high})",
        )
        _need(
            self.drain_high <= self.write_queue,
            "MemoryConfig",
            "drain_high",
            self.drain_high,
            f"at most write_queue={self.write_queue}",
        )
        _check_positive(self, ("burst_ns",), allow_zero=True)


@dataclass(frozen=True)
class CoreConfig:
    """Closed-loop cores: a reorder-buffer model driven by last-level-cache misses.

    ``mpki`` misses per kilo-instruction each issue a line read; ``writebacks_per_miss`` of
    them also evict a dirty line (a posted write). ``instructions`` per core.
    """

    cores: int = 4
    rob: int = 128
    width: int = 4
    mpki: float = 10.0
    freq_ghz: float = 3.0
    writebacks_per_miss: float = 0.5
    instructions: int = 300_000

    def __post_init__(self) -> None:
        _check_ints(self, ("cores", "rob", "width", "instructions"), 1)
        _need(0 < self.mpki <= 1000, "CoreConfig", "mpki", self.mpki, "a number in (0, 1000]")
        _check_positive(self, ("freq_ghz",))
        _need(
            0 <= self.writebacks_per_miss <= 1,
            "CoreConfig",
            "writebacks_per_miss",
            self.writebacks_per_miss,
            "a fraction in [0, 1]",
        )


@dataclass(frozen=True)
class PcmConfig:
    """Everything a PCM study needs; each part has documented defaults."""

    cell: CellConfig = field(default_factory=CellConfig)
    read: ReadConfig = field(default_factory=ReadConfig)
    spare: SpareConfig = field(default_factory=SpareConfig)
    memory: MemoryConfig = field(default_factory=MemoryConfig)
    core: CoreConfig = field(default_factory=CoreConfig)
    seed: int = 1

    def replace(self, **changes: Any) -> PcmConfig:
        """A copy with dotted-path changes, e.g. ``replace(**{"spare.spare_bits": 32})``."""
        return _replace_dotted(self, changes)


def _replace_dotted(obj: Any, changes: dict[str, Any]) -> Any:
    from dataclasses import replace

    direct: dict[str, Any] = {}
    nested: dict[str, dict[str, Any]] = {}
    names = {f.name for f in fields(obj)}
    for path, value in changes.items():
        head, _, rest = path.partition(".")
        if head not in names:
            raise ConfigError(
                f"unknown field {head!r}, expected one of {sorted(names)}",
                field=f"{type(obj).__name__}.{path}",
            )
        if rest:
            nested.setdefault(head, {})[rest] = value
        else:
            direct[head] = value
    for head, sub in nested.items():
        direct[head] = _replace_dotted(getattr(obj, head), sub)
    return replace(obj, **direct)
