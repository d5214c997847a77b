"""Frequent pattern compression (memory/pcm/fpc.py): sizes of known patterns, round trips."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trainsim.memory.pcm import fpc


def line_of(words: list[int]) -> np.ndarray:
    return np.frombuffer(np.array(words, dtype="<u4").tobytes(), dtype=np.uint8)


@pytest.mark.parametrize(
    ("word", "pattern", "bits"),
    [
        (0xFFFFFFFB, fpc.SE4, 3 + 4),  # -5
        (0x00000007, fpc.SE4, 3 + 4),
        (0x0000007F, fpc.SE8, 3 + 8),
        (0xFFFFFF80, fpc.SE8, 3 + 8),  # -128
        (0x00007FFF, fpc.SE16, 3 + 16),
        (0xFFFF8000, fpc.SE16, 3 + 16),
        (0x12340000, fpc.PAD_HALF, 3 + 16),
        (0x007FFF80, fpc.TWO_SE8, 3 + 16),
        (0x5A5A5A5A, fpc.REPEAT, 3 + 8),
        (0x12345678, fpc.RAW, 3 + 32),
        (0x00008000, fpc.RAW, 3 + 32),  # +32768: no halfword pattern fits
    ],
)
def test_word_patterns_and_sizes(word, pattern, bits):
    # one pattern word followed by 15 zero words (two zero runs: 8 + 7, 6 bits each)
    p, _, length = fpc.encode_codes(line_of([word] + [0] * 15))
    assert p[0, 0] == pattern
    assert length[0, 0] == bits
    assert fpc.compressed_bits(line_of([word] + [0] * 15))[0] == bits + 2 * 6


def test_zero_runs_are_at_most_eight_words():
    assert fpc.compressed_bits(line_of([0] * 16))[0] == 2 * (3 + 3)
    assert fpc.compressed_bits(line_of([0] * 9 + [1] * 7))[0] == 2 * 6 + 7 * 7


def test_incompressible_line_is_560_bits():
    words = [0x12345678 + 0x01010101 * i for i in range(16)]
    assert fpc.compressed_bits(line_of(words))[0] == 16 * 35 == fpc.MAX_BITS


def test_known_stream_bits():
    bits, n = fpc.compress(line_of([0x7F] + [0] * 15))
    # 010 01111111 | 000 111 (8 zeros) | 000 110 (7 zeros)
    assert n[0] == 23
    assert "".join(map(str, bits[0, :23])) == "010" + "01111111" + "000111" + "000110"


words_st = st.lists(
    st.one_of(
        st.just(0),
        st.integers(-8, 7),
        st.integers(-128, 127),
        st.integers(-(2**15), 2**15 - 1),
        st.integers(1, 0xFFFF).map(lambda h: h << 16),
        st.integers(0, 255).map(lambda b: b * 0x01010101),
        st.integers(-(2**31), 2**31 - 1),
    ).map(lambda v: v & 0xFFFFFFFF),
    min_size=16,
    max_size=16,
)


@settings(max_examples=200, deadline=None)
@given(words_st)
def test_round_trip(words):
    line = line_of(words)
    bits, n = fpc.compress(line)
    assert fpc.decompress(bits[0, : n[0]]) == line.tobytes()
    assert n[0] == fpc.compressed_bits(line)[0] <= fpc.MAX_BITS
