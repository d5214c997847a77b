"""Line-content generators (memory/pcm/content.py)."""

import numpy as np
import pytest

from trainsim.errors import ConfigError
from trainsim.memory.pcm import content


def test_each_kind_has_its_documented_shape():
    rng = np.random.default_rng(0)
    assert not content.generate_kind("zeros", 3, rng).any()
    small = content.generate_kind("small_int", 100, rng).view("<i4")
    assert small.min() >= -128 and small.max() <= 255
    i16 = content.generate_kind("int16", 100, rng).view("<i4")
    assert np.all((np.abs(i16) >= 256) & (np.abs(i16) < 32768))
    ptr = content.generate_kind("pointer", 100, rng).view("<u8")
    assert np.all(ptr >> 40 == 0x7F) and np.all(ptr % 16 == 0)
    assert np.all(ptr.max(axis=1) - ptr.min(axis=1) < 1 << 16)  # one region per line
    text = content.generate_kind("text", 10, rng)
    assert (
        bytes(text[0]).decode("ascii").replace(" ", "").replace(".", "").replace(",", "").isalpha()
    )


def test_mix_is_deterministic_and_follows_weights():
    a, ka = content.generate_mix(20_000, seed=3)
    b, kb = content.generate_mix(20_000, seed=3)
    assert np.array_equal(a, b) and np.array_equal(ka, kb)
    for i, kind in enumerate(content.KINDS):
        assert np.mean(ka == i) == pytest.approx(content.DEFAULT_MIX[kind], abs=0.015)
    assert not np.array_equal(a, content.generate_mix(20_000, seed=4)[0])


def test_package_lines_are_real_and_deterministic():
    a = content.content_lines("files:numpy:.py", 64)
    assert np.array_equal(a, content.package_lines(64, "numpy", (".py",)))
    first = content.package_files("numpy", (".py",))[0].read_bytes()[:64]
    assert bytes(a[0]) == first  # the first line is the first 64 bytes of the first file


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (
            lambda: content.generate_mix(4, {"zeros": 1, "floats": 1}),
            "unknown content kind 'floats'",
        ),
        (lambda: content.generate_mix(4, {"zeros": 0}), "sum to 0"),
        (lambda: content.content_lines("nonsense", 4), "unknown content source 'nonsense'"),
        (lambda: content.package_lines(4, "trainsim_no_such_pkg"), "not installed"),
        (lambda: content.package_lines(4, "numpy", (".nothing",)), "no files ending"),
    ],
)
def test_bad_content_requests_raise_config_error(call, match):
    with pytest.raises(ConfigError, match=match):
        call()
