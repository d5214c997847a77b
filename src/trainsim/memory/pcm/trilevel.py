"""Tri-level storage of MLC PCM lines: metadata encoding, qualification, storage decisions.

Part of ``memory/pcm`` (DESIGN.md, "Layers": memory). Sizes in bits and cells, times in ns.

The scheme (Rashidi, Jalili and Sarbazi-Azad, "Improving MLC PCM performance through relaxed
write and read for intermediate resistance levels", ACM TACO, 2018): the two
intermediate levels 01 and 10 of a 2-bit cell are merged into one wide level M, so a line's
cells hold 00, M or 11 (a tri-level line). M is written with fewer program-and-verify
iterations (``CellConfig.relaxed_iterations``) and the line is read with 3-level sensing. Which
M cells were 01 and which were 10 is metadata, kept in the line's spare bits (the storage
reserved for error-correcting pointers against future stuck-at faults, idle until then). A
line qualifies when its metadata fits; otherwise it is written as plain MLC. This module
follows the paper in the merge, the use of spare bits and the fallback; the metadata encoding
below, the one-bit-per-cell use of cells freed by compression and the selection rule are ours.

Metadata encoding (``encode_metadata``). Let ``m`` be the number of M cells of the line, in
cell order; a reader learns ``m`` by sensing the line, so it is never stored. Header bits come
first, always in the spare bits: ``mode`` (1: tri-level), under ``tri+fpc`` a ``compressed``
bit, then, in tri-level mode, a ``selector`` bit choosing the shorter of two payloads:

- bitmap (selector 0): ``m`` bits, bit ``i`` = 1 when the ``i``-th M cell was 10;
- minority list (selector 1): 1 bit naming the minority value (1: 10), a count ``k`` of
  ``ceil(log2(floor(m/2) + 1))`` bits, then ``k`` indices into the M cells of
  ``ceil(log2(m))`` bits each.

So a tri-level line needs ``header + min(m, 1 + ceil(log2(floor(m/2)+1)) + k ceil(log2 m))``
bits, ``k = min(#01, #10)``. ``enumerative_bits`` is the benchmark for this choice: the
shortest exact code that uses only how many M cells are 10; on the default mix it qualifies
34.9 % of lines against our 34.3 % (docs/pcm.md, "Why the targets are not reached"). Spare bits are one bit per cell, written with the single-pulse
levels 00 and 11 (no program-and-verify, so metadata never slows a write). Stuck-at faults
shrink the room: ``SpareConfig.available_bits``; with no room for the mode bit every line is MLC.

With FPC (``tri+fpc``) a line may be stored compressed (``fpc``): the stream takes the first
``ceil(bits/2)`` cells; the cells it frees stay RESET (00) except those holding metadata that
did not fit in the spare bits, one bit per cell, from the line's last cell backwards. A reader
decodes the header from the spare bits, then the payload from the spare bits and the tail.

Selection. Each line may be stored in one of four forms: uncompressed MLC (always possible),
uncompressed tri-level, compressed MLC, compressed tri-level (the last three only where the
scheme allows and the room suffices; tri-level forms only for lines with at least one
intermediate cell, since there is nothing to relax otherwise: a zero line gains nothing). The
controller picks the form of least expected write time (``cell.Spread``), ties to the earlier
form in that order. More room can only add forms, so the expected write time never rises with
spare capacity.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from trainsim.errors import ConfigError
from trainsim.memory.pcm import fpc
from trainsim.memory.pcm.cell import (
    Spread,
    as_lines,
    bits_to_levels,
    cell_levels,
    level_counts,
    mlc_groups,
    write_time_ns,
)
from trainsim.memory.pcm.config import (
    LINE_BYTES,
    LINE_CELLS,
    PcmConfig,
    Scheme,
    SpareConfig,
)

M = 4  # the merged intermediate state's code in a tri-level line's cells (00: 0, 11: 3)
FORMS = ("mlc", "tri", "fpc-mlc", "fpc-tri")
_CLOG2 = np.array([0] + [(x - 1).bit_length() for x in range(1, LINE_CELLS + 2)], dtype=np.int64)


def header_bits(scheme: Scheme | str, tri: bool = True) -> int:
    """Header bits in the spare storage: mode, compressed (``tri+fpc``), selector (tri-level)."""
    scheme = Scheme(scheme)
    if scheme is Scheme.BASE:
        return 0
    return 1 + (scheme is Scheme.TRI_FPC) + tri


def payload_bits(n01: NDArray[np.int64], n10: NDArray[np.int64]) -> NDArray[np.int64]:
    """Bits of the shorter payload (bitmap or minority list) that recovers ``n01 + n10`` M cells."""
    n01, n10 = np.asarray(n01, dtype=np.int64), np.asarray(n10, dtype=np.int64)
    m = n01 + n10
    k = np.minimum(n01, n10)
    listed = 1 + _CLOG2[m // 2 + 1] + k * _CLOG2[np.maximum(m, 1)]
    return np.minimum(m, listed)


def enumerative_bits(n01: NDArray[np.int64], n10: NDArray[np.int64]) -> NDArray[np.int64]:
    """Payload of an enumerative code for the M cells' 01/10 identity (a benchmark, bits).

    The code sends ``#10`` in ``ceil(log2(m + 1))`` bits, then the rank of the pattern among
    the ``C(m, #10)`` with that count; it is never taken longer than the plain bitmap (``m``).
    It is the shortest exact code that uses only how many M cells are 10, not where they are,
    so it bounds what any re-encoding of ``payload_bits`` could gain on a line.
    """
    n01, n10 = np.asarray(n01, dtype=np.int64), np.asarray(n10, dtype=np.int64)
    m = n01 + n10
    log2_choose = (
        np.vectorize(math.lgamma)(m + 1.0)
        - np.vectorize(math.lgamma)(n10 + 1.0)
        - np.vectorize(math.lgamma)(n01 + 1.0)
    ) / math.log(2.0)
    # 1e-9 absorbs lgamma rounding where C(m, k) is an exact power of two
    rank = np.ceil(np.maximum(log2_choose - 1e-9, 0.0)).astype(np.int64)
    return np.minimum(m, _CLOG2[m + 1] + rank)


def encode_metadata(levels: NDArray[np.uint8]) -> list[int]:
    """Selector and payload bits recovering the 01/10 identity of the M cells of ``levels``."""
    inter = [int(v) for v in levels if v in (0b01, 0b10)]
    m = len(inter)
    bitmap = [1 if v == 0b10 else 0 for v in inter]
    minority = 1 if sum(bitmap) * 2 < m else 0  # which value is rarer (1: 10)
    idx = [i for i, b in enumerate(bitmap) if b == minority]
    w, cw = int(_CLOG2[max(m, 1)]), int(_CLOG2[m // 2 + 1])
    listed = [minority] + _bits(len(idx), cw) + [b for i in idx for b in _bits(i, w)]
    return [0, *bitmap] if len(bitmap) <= len(listed) else [1, *listed]


def decode_levels(tri_cells: NDArray[np.uint8], meta: list[int]) -> NDArray[np.uint8]:
    """Exact 2-bit levels from sensed tri-level cells (00, M, 11) and selector + payload bits."""
    cells = np.array(tri_cells, dtype=np.uint8)
    where = np.nonzero(cells == M)[0]
    m = where.size
    if meta[0] == 0:
        is10 = np.array(meta[1 : 1 + m], dtype=bool)
    else:
        minority, pos = meta[1], 2
        cw, w = int(_CLOG2[m // 2 + 1]), int(_CLOG2[max(m, 1)])
        k = _int(meta[pos : pos + cw])
        pos += cw
        is10 = np.full(m, not minority, dtype=bool)
        for j in range(k):
            is10[_int(meta[pos + j * w : pos + (j + 1) * w])] = bool(minority)
    cells[where] = np.where(is10, 0b10, 0b01)
    return cells


def _bits(v: int, width: int) -> list[int]:
    return [(v >> (width - 1 - i)) & 1 for i in range(width)]


def _int(bits: list[int]) -> int:
    v = 0
    for b in bits:
        v = (v << 1) | b
    return v


@dataclass(frozen=True)
class LineProfiles:
    """How each line of a pool is stored under one scheme, as arrays over the lines.

    ``form``: index into ``FORMS``; ``groups``: the program-and-verify groups (nominal
    iterations, cells) for ``cell.write_time_ns``; ``fixed``: single-pulse iterations (0/1);
    ``expected_write_ns``: mean write time; ``read_ns``: sensing (3- or 4-level) plus FPC decode.
    """

    form: NDArray[np.int64]
    groups: tuple[tuple[NDArray[np.int64], NDArray[np.int64]], ...]
    fixed: NDArray[np.int64]
    expected_write_ns: NDArray[np.float64]
    read_ns: NDArray[np.float64]
    intermediate_cells: NDArray[np.int64]

    @property
    def tri(self) -> NDArray[np.bool_]:
        """Lines stored tri-level (relaxed writes, 3-level reads)."""
        return (self.form == 1) | (self.form == 3)

    @property
    def compressed(self) -> NDArray[np.bool_]:
        """Lines stored FPC-compressed."""
        return self.form >= 2

    def __len__(self) -> int:
        return int(self.form.size)


def profile_lines(
    lines: NDArray[np.uint8], scheme: Scheme | str, cfg: PcmConfig | None = None
) -> LineProfiles:
    """Decide the stored form of every line (see the module docstring) and its timings."""
    cfg = cfg or PcmConfig()
    scheme = Scheme(scheme)
    lines = as_lines(lines)
    cell, spare = cfg.cell, cfg.spare
    spread = Spread.of(cell)
    room = spare.available_bits
    n = lines.shape[0]
    big = np.full(n, np.inf)

    counts = level_counts(cell_levels(lines))
    cand_groups, cand_fixed, cand_time, cand_m = [], [], [], []

    def add(
        groups: tuple[tuple[NDArray[np.int64], NDArray[np.int64]], ...],
        fixed: NDArray[np.int64],
        ok: NDArray[np.bool_],
        m: NDArray[np.int64],
    ) -> None:
        cand_groups.append(groups)
        cand_fixed.append(fixed)
        cand_time.append(np.where(ok, write_time_ns(cell, spread, groups, fixed, None), big))
        cand_m.append(m)

    def add_tri(
        c: NDArray[np.int64], extra_room: NDArray[np.int64] | int, ok: NDArray[np.bool_]
    ) -> None:
        m = c[:, 1] + c[:, 2]
        need = header_bits(scheme) + payload_bits(c[:, 1], c[:, 2])
        fits = ok & (m > 0) & (room >= header_bits(scheme)) & (need <= room + extra_room)
        add(
            (
                (np.full(n, cell.relaxed_iterations), m),
                (np.zeros(n, np.int64), np.zeros(n, np.int64)),
            ),
            np.ones(n, np.int64),
            fits,
            m,
        )

    groups, fixed = mlc_groups(cell, counts)
    add(groups, fixed, np.ones(n, bool), counts[:, 1] + counts[:, 2])
    add_tri(counts, 0, np.full(n, scheme is not Scheme.BASE))
    if scheme is Scheme.TRI_FPC:
        stream, nbits = fpc.compress(lines)
        ccounts = level_counts(bits_to_levels(stream[:, : 2 * LINE_CELLS]))
        ok = (nbits < 8 * LINE_BYTES) & (room >= header_bits(scheme, tri=False))
        freed = LINE_CELLS - (nbits + 1) // 2
        cgroups, _ = mlc_groups(cell, ccounts)  # the compressed bit is a SET pulse: fixed 1
        add(cgroups, np.ones(n, np.int64), ok, ccounts[:, 1] + ccounts[:, 2])
        add_tri(ccounts, freed, ok)
    else:
        none = np.zeros(n, bool)
        add(groups, fixed, none, counts[:, 1] + counts[:, 2])
        add_tri(counts, 0, none)

    times = np.stack(cand_time, axis=1)
    form = np.argmin(times, axis=1)
    rows = np.arange(n)

    def pick(values: list[NDArray[np.int64]]) -> NDArray[np.int64]:
        return np.stack(values, axis=1)[rows, form]

    g = tuple(
        (pick([cg[i][0] for cg in cand_groups]), pick([cg[i][1] for cg in cand_groups]))
        for i in range(2)
    )
    tri = (form == 1) | (form == 3)
    read_ns = np.where(tri, cfg.read.sense_ns(3), cfg.read.sense_ns(4)) + np.where(
        form >= 2, cfg.read.fpc_decode_ns, 0.0
    )
    return LineProfiles(
        form=form.astype(np.int64),
        groups=g,
        fixed=pick(cand_fixed),
        expected_write_ns=times[rows, form],
        read_ns=read_ns,
        intermediate_cells=pick(cand_m),
    )


@dataclass(frozen=True)
class StoredLine:
    """One line as the cells and spare bits hold it: what a reader sees.

    ``cells``: 256 cell states, MLC levels 0..3, or 00 / M / 11 (0 / 4 / 3) in a tri-level
    form; ``spare``: header then payload bits, at most the available spare bits.
    """

    form: str
    cells: NDArray[np.uint8]
    spare: list[int]


def store_line(data: bytes, scheme: Scheme | str, cfg: PcmConfig | None = None) -> StoredLine:
    """Store one 64 B line the way ``profile_lines`` decides, building its cells and metadata."""
    cfg = cfg or PcmConfig()
    scheme = Scheme(scheme)
    arr = as_lines(data)
    form = FORMS[int(profile_lines(arr, scheme, cfg).form[0])]
    room = cfg.spare.available_bits
    header = [1 if form.endswith("tri") else 0] + (
        [1 if form.startswith("fpc") else 0] if scheme is Scheme.TRI_FPC else []
    )
    if form.startswith("fpc"):
        stream, nbits = fpc.compress(arr)
        levels = bits_to_levels(stream[:, : 2 * LINE_CELLS])[0]
    else:
        levels = cell_levels(arr)[0]
    if scheme is Scheme.BASE or room == 0:
        return StoredLine(form, levels, [])
    if not form.endswith("tri"):  # MLC forms: as much of the header as fits (at least the mode)
        return StoredLine(form, levels, header[:room])
    meta = header + encode_metadata(levels)
    cells = np.where((levels == 0b01) | (levels == 0b10), M, levels).astype(np.uint8)
    spare, tail = meta[:room], meta[room:]
    if tail:  # the rest goes into freed cells, from the last cell backwards, as 00 / 11
        cells[LINE_CELLS - len(tail) :] = np.array(tail[::-1], dtype=np.uint8) * 0b11
    return StoredLine(form, cells, spare)


def load_line(stored: StoredLine, scheme: Scheme | str, spare: SpareConfig | None = None) -> bytes:
    """Recover the 64 data bytes from what ``store_line`` left in the cells and spare bits."""
    scheme = Scheme(scheme)
    bits = stored.spare
    tri = bool(bits and bits[0])
    compressed = bool(scheme is Scheme.TRI_FPC and len(bits) > 1 and bits[1])
    cells = stored.cells
    if tri:
        h = header_bits(scheme)
        m = int((cells == M).sum())
        meta = list(bits[h - 1 :])
        need = _payload_length(meta, m, cells, len(bits) - (h - 1))
        tail_n = max(0, need - len(meta))
        tail = [int(c == 0b11) for c in cells[LINE_CELLS - tail_n :][::-1]] if tail_n else []
        meta = meta + tail
        levels = decode_levels(
            np.where(np.arange(LINE_CELLS) < LINE_CELLS - tail_n, cells, 0), meta
        )
    else:
        levels = cells
    raw = np.zeros(2 * LINE_CELLS, dtype=np.uint8)
    raw[0::2], raw[1::2] = levels >> 1, levels & 1
    if compressed:
        return fpc.decompress(raw)
    return np.packbits(raw).tobytes()


def _payload_length(meta: list[int], m: int, cells: NDArray[np.uint8], in_spare: int) -> int:
    """Selector + payload length, reading the count field from the tail if it lies there."""
    if not meta:
        raise ConfigError("tri-level line without a selector bit", field="spare")
    if meta[0] == 0:
        return 1 + m
    cw, w = int(_CLOG2[m // 2 + 1]), int(_CLOG2[max(m, 1)])
    head = 2 + cw
    if len(meta) < head:  # the count field runs into the tail: read it there
        tail = [int(c == 0b11) for c in cells[::-1][: head - len(meta)]]
        meta = meta + tail
    return head + _int(meta[2:head]) * w


__all__ = [
    "FORMS",
    "LineProfiles",
    "StoredLine",
    "decode_levels",
    "encode_metadata",
    "enumerative_bits",
    "header_bits",
    "load_line",
    "payload_bits",
    "profile_lines",
    "store_line",
]
