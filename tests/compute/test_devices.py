"""Device table and the per-operator roofline timer."""

import pytest

from trainsim.compute import OperatorTimer, device_table, get_device, load_kernel_times
from trainsim.errors import ConfigError


def test_shipped_devices():
    names = {d.name for d in device_table().values()}
    assert {"A100", "H100", "H200", "B200", "MI300X", "TPUv4"} <= names
    a100 = get_device("a100")
    assert a100.peak("bf16") == 312e12 and a100.hbm_bandwidth == 2039e9 and a100.hbm_capacity == 80e9
    assert get_device("H200").hbm_capacity == 141e9
    with pytest.raises(ConfigError, match="unknown device"):
        get_device("Z80")
    with pytest.raises(ConfigError, match="no 'fp8' peak"):
        a100.peak("fp8")


def test_roofline_bounds():
    t = OperatorTimer("A100")
    eff = t.eff
    big = t.op_time("gemm", 2 * 8192**3, 3 * 8192**2 * 2, (8192, 8192, 8192))
    ideal = 2 * 8192**3 / (312e12 * eff.gemm * eff.sustained * 8192 / (8192 + eff.gemm_half_size))
    assert big == pytest.approx(ideal + eff.kernel_overhead_s)
    # memory-bound kinds ignore FLOPs
    n = 1e9
    assert t.op_time("elementwise", 1e12, n) == pytest.approx(n / (2039e9 * eff.memory) + eff.kernel_overhead_s)
    # a skinny GEMM is slower per FLOP than a square one
    skinny = t.op_time("gemm", 2 * 8 * 8192 * 8192, 0, (8, 8192, 8192))
    assert skinny / (8 / 8192) > big
    with pytest.raises(ConfigError, match="unknown operator kind"):
        t.op_time("magic", 1, 1)


def test_sustained_scales_compute_bound_kinds_only():
    from dataclasses import replace

    base = get_device("A100").efficiency
    full = OperatorTimer("A100", efficiency=replace(base, sustained=1.0, kernel_overhead_s=0.0))
    half = OperatorTimer("A100", efficiency=replace(base, sustained=0.5, kernel_overhead_s=0.0))
    shape = (8192, 8192, 8192)
    assert half.op_time("gemm", 2 * 8192**3, 0, shape) == pytest.approx(2 * full.op_time("gemm", 2 * 8192**3, 0, shape))
    assert half.op_time("softmax", 1e9, 1e9) == pytest.approx(full.op_time("softmax", 1e9, 1e9))
    with pytest.raises(ConfigError, match="sustained"):
        replace(base, sustained=1.5)


def test_measured_kernel_override(tmp_path):
    path = tmp_path / "kernels.yaml"
    path.write_text("kernels:\n  - {kind: gemm, shape: [128, 256, 512], time_us: 7.5}\n")
    t = OperatorTimer("H100", overrides=load_kernel_times(path))
    assert t.op_time("gemm", 2 * 128 * 256 * 512, 0, (128, 256, 512)) == pytest.approx(7.5e-6)
    assert t.op_time("gemm", 2 * 128 * 256 * 512, 0, (128, 256, 1024)) != pytest.approx(7.5e-6)
    bad = tmp_path / "bad.yaml"
    bad.write_text("kernels:\n  - {kind: gemm, time_us: 1}\n")
    with pytest.raises(ConfigError, match=r"kernels\[0\]"):
        load_kernel_times(bad)


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("kernels:\n  - {kind: gemm, shape: [1, 2", r"invalid YAML at line 2"),
        ("- {kind: gemm}\n", "the top level is a list"),
        ("kernel: []\n", "unknown key 'kernel'.*did you mean 'kernels'"),
        ("kernels:\n  - {kind: gemm, shape: [8], time_us: 1, colour: red}\n", r"kernels\[0\]\.colour: unknown key"),
        ("kernels:\n  - {kind: gemmm, shape: [8], time_us: 1}\n", r"kernels\[0\]\.kind: got 'gemmm'"),
        ("kernels:\n  - {kind: gemm, shape: [8.5], time_us: 1}\n", r"shape\[0\]: got 8.5; expected an integer"),
        ("kernels:\n  - {kind: gemm, shape: [8], time_us: '5'}\n", r"time_us: got '5'; expected a number"),
        ("kernels:\n  - {kind: gemm, shape: [8], time_us: 1}\n  - {kind: gemm, shape: [8], time_us: 2}\n", r"kernels\[1\]: gemm of shape \[8\] again"),
        ("kernels:\n  - 5\n", r"kernels\[0\]: got 5; expected a mapping"),
    ],
)
def test_bad_kernel_tables_name_the_row_and_key(tmp_path, text, match):
    path = tmp_path / "k.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=match):
        load_kernel_times(path)


def test_binary_kernel_table_is_a_config_error(tmp_path):
    path = tmp_path / "k.yaml"
    path.write_bytes(b"\xff\xfe\x00\x01")
    with pytest.raises(ConfigError, match="not UTF-8 text"):
        load_kernel_times(path)
