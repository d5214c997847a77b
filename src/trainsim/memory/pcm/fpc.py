"""Frequent pattern compression (FPC) of 64 B lines, vectorized over many lines.

Part of ``memory/pcm`` (DESIGN.md, "Layers": memory). Sizes in bits.

Alameldeen and Wood, "Frequent Pattern Compression: A Significance-Based Compression Scheme
for L2 Caches", UW-Madison CS TR-1500 (2004), Table 1: a line is a sequence of 32-bit words
(little-endian here); each word, or a run of zero words, becomes a 3-bit prefix and a payload:

====== =========================================== ============ ==========
prefix pattern                                      payload bits example
====== =========================================== ============ ==========
000    run of 1-8 zero words (payload: length - 1) 3            0x00000000
001    4-bit sign-extended                         4            0xFFFFFFFB
010    one byte sign-extended                      8            0x0000007F
011    halfword sign-extended                      16           0xFFFF8000
100    halfword padded with a zero halfword        16           0x12340000
101    two halfwords, each a byte sign-extended    16           0x007FFF80
110    word of four repeated bytes                 8            0x5A5A5A5A
111    uncompressed word                           32           0x12345678
====== =========================================== ============ ==========

Patterns are tried in the table's order; the first that matches is used. A 16-word line thus
compresses to between 12 bits (two runs of eight zero words) and 560 bits; the stream is written most
significant bit first, prefix then payload, word by word. The PCM line stores it compressed
only when it is shorter than 512 bits.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from trainsim.errors import ConfigError
from trainsim.memory.pcm.cell import as_lines

PREFIX_BITS = 3
WORDS = 16
MAX_BITS = WORDS * (PREFIX_BITS + 32)
ZERO_RUN, SE4, SE8, SE16, PAD_HALF, TWO_SE8, REPEAT, RAW = range(8)
PAYLOAD_BITS = np.array([3, 4, 8, 16, 16, 16, 8, 32], dtype=np.int64)
PATTERN_NAMES = (
    "zero run",
    "4-bit sign-extended",
    "byte sign-extended",
    "halfword sign-extended",
    "halfword padded with zero halfword",
    "two sign-extended bytes",
    "repeated bytes",
    "uncompressed",
)


def _fits(v: NDArray[np.int64], bits: int) -> NDArray[np.bool_]:
    lim = 1 << (bits - 1)
    return (v >= -lim) & (v < lim)


def classify_words(words: NDArray[np.uint32]) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Pattern id (0..7) and payload value of each 32-bit word (zero words: id 0, payload 0)."""
    u = words.astype(np.int64)
    s = np.where(u >= 1 << 31, u - (1 << 32), u)
    hi, lo = u >> 16, u & 0xFFFF
    shi, slo = (
        np.where(hi >= 1 << 15, hi - (1 << 16), hi),
        np.where(lo >= 1 << 15, lo - (1 << 16), lo),
    )
    b0 = u & 0xFF
    repeated = (b0 == (u >> 8) & 0xFF) & (b0 == (u >> 16) & 0xFF) & (b0 == u >> 24)
    conditions = [
        u == 0,
        _fits(s, 4),
        _fits(s, 8),
        _fits(s, 16),
        lo == 0,
        _fits(shi, 8) & _fits(slo, 8),
        repeated,
    ]
    pattern = np.select(
        conditions, [ZERO_RUN, SE4, SE8, SE16, PAD_HALF, TWO_SE8, REPEAT], default=RAW
    )
    payload = np.select(
        [
            pattern == SE4,
            pattern == SE8,
            pattern == SE16,
            pattern == PAD_HALF,
            pattern == TWO_SE8,
            pattern == REPEAT,
            pattern == RAW,
        ],
        [u & 0xF, u & 0xFF, u & 0xFFFF, hi, ((hi & 0xFF) << 8) | (lo & 0xFF), b0, u],
        default=0,
    )
    return pattern.astype(np.int64), payload.astype(np.int64)


def line_words(lines: NDArray[np.uint8]) -> NDArray[np.uint32]:
    """``(n, 16)`` little-endian 32-bit words of ``(n, 64)`` lines."""
    return np.ascontiguousarray(as_lines(lines)).view("<u4").astype(np.uint32)


def encode_codes(
    lines: NDArray[np.uint8],
) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]:
    """Per word slot: pattern, payload and code length in bits (0 where a zero run continues)."""
    pattern, payload = classify_words(line_words(lines))
    n = pattern.shape[0]
    length = PREFIX_BITS + PAYLOAD_BITS[pattern]
    run_start = np.full(n, -1, dtype=np.int64)
    run_len = np.zeros(n, dtype=np.int64)
    rows = np.arange(n)
    for w in range(WORDS):
        zero = pattern[:, w] == ZERO_RUN
        extend = zero & (run_start >= 0) & (run_len < 8)
        # a zero word inside a running run adds one to the run's payload and emits nothing
        payload[rows[extend], run_start[extend]] += 1
        length[extend, w] = 0
        run_len = np.where(extend, run_len + 1, np.where(zero, 1, 0))
        run_start = np.where(extend, run_start, np.where(zero, w, -1))
    return pattern, payload, length


def compressed_bits(lines: NDArray[np.uint8]) -> NDArray[np.int64]:
    """Compressed size (bits) of each line."""
    return encode_codes(lines)[2].sum(axis=1)


def compress(lines: NDArray[np.uint8]) -> tuple[NDArray[np.uint8], NDArray[np.int64]]:
    """The compressed streams as an ``(n, 560)`` bit array (zero-padded) and their lengths."""
    pattern, payload, length = encode_codes(lines)
    n = pattern.shape[0]
    code = (pattern << PAYLOAD_BITS[pattern]) | payload  # prefix then payload, as one integer
    start = np.cumsum(length, axis=1) - length
    out = np.zeros((n, MAX_BITS), dtype=np.uint8)
    for j in range(PREFIX_BITS + 32):  # bit j of each code, counted from its most significant end
        take = length > j
        row, w = np.nonzero(take)
        shift = length[row, w] - 1 - j
        out[row, start[row, w] + j] = (code[row, w] >> shift) & 1
    return out, length.sum(axis=1)


def decompress(bits: NDArray[np.uint8] | list[int]) -> bytes:
    """Decode one compressed stream back to its 64 bytes (the reference inverse of ``compress``)."""
    stream = [int(b) for b in bits]
    pos = 0

    def take(k: int) -> int:
        nonlocal pos
        v = 0
        for b in stream[pos : pos + k]:
            v = (v << 1) | b
        pos += k
        return v

    def sext(v: int, bits_: int) -> int:
        return (v - (1 << bits_) if v >> (bits_ - 1) else v) & 0xFFFFFFFF

    words: list[int] = []
    while len(words) < WORDS:
        pat = take(PREFIX_BITS)
        val = take(int(PAYLOAD_BITS[pat]))
        if pat == ZERO_RUN:
            words.extend([0] * (val + 1))
        elif pat in (SE4, SE8, SE16):
            words.append(sext(val, int(PAYLOAD_BITS[pat])))
        elif pat == PAD_HALF:
            words.append(val << 16)
        elif pat == TWO_SE8:
            words.append((sext(val >> 8, 8) & 0xFFFF) << 16 | (sext(val & 0xFF, 8) & 0xFFFF))
        elif pat == REPEAT:
            words.append(val * 0x01010101)
        else:
            words.append(val)
    if len(words) != WORDS:
        raise ConfigError(
            f"stream decodes to {len(words)} words, expected {WORDS}", field="fpc.stream"
        )
    return np.array(words, dtype="<u4").tobytes()
