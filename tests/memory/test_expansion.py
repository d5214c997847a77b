"""The expanded-memory tier resolved from the platform file (memory/expansion.py): DRAM as
given, PCM from the PCM model (issue 23: the tier estimate consumed by the expansion model)."""

import json

import pytest
import yaml

from trainsim.compute import OperatorTimer
from trainsim.config.platform import load_platform
from trainsim.errors import ConfigError
from trainsim.memory.expansion import _pcm_tier, expansion_tier, resolve_memory, resolve_platform
from trainsim.memory.pcm import PcmConfig, pcm_expansion_tier
from trainsim.optimize.strategy.estimate import StepEstimator
from trainsim.system.symmetry.replica import simulate_generated
from trainsim.workload.generate import Parallelism, generate
from trainsim.workload.models import get_model

DIMS = [{"topology": "Switch", "size": 8, "bandwidth_gbps": 300, "latency_ns": 700},
        {"topology": "Switch", "size": 2, "bandwidth_gbps": 25, "latency_ns": 2000}]  # fmt: skip
PCM = {"scheme": "tri", "channels": 4, "banks": 16, "devices": 8}


@pytest.fixture
def tiny_model(tmp_path):
    """A GPT-2-shaped config.json: 4 layers of 512, 16 heads, sequence 256."""
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps({"model_type": "gpt2", "n_embd": 512, "n_layer": 4, "n_head": 16, "vocab_size": 1000, "n_positions": 256}))
    return str(path)


def write(tmp_path, memory, name="p.yaml"):
    path = tmp_path / name
    path.write_text(yaml.safe_dump({"network": {"dims": DIMS}, "system": {"local_mem_bw_gbps": 2039}, "memory": memory}))
    return str(path)


def dram(tmp_path, **extra):
    return write(tmp_path, {"mode": "per_npu", "latency_ns": 250, "bandwidth_gbps": 64, **extra}, "dram.yaml")


def pcm(tmp_path, name="pcm.yaml", **extra):
    return write(tmp_path, {"mode": "per_npu", "technology": "pcm", "pcm": {**PCM, **extra}}, name)


def test_a_pcm_tier_takes_the_pcm_models_numbers(tmp_path):
    spec = load_platform(pcm(tmp_path)).memory
    assert spec.technology == "pcm" and spec.bandwidth == 0  # unresolved as read
    tier = pcm_expansion_tier(PcmConfig().replace(**{"memory.channels": 4, "memory.banks": 16}), "tri", load=0.5, requests=4000)
    got = resolve_memory(spec)
    assert got.latency_ns == tier.latency_ns
    assert got.bandwidth == pytest.approx(8 * tier.bandwidth)
    assert got.capacity == pytest.approx(8 * tier.capacity)  # 8 memories of 4 x 16 banks of 4 GiB
    assert resolve_memory(got) is got
    assert expansion_tier(spec).name == "pcm:PER_NPU_MEMORY_EXPANSION"
    given = resolve_memory(load_platform(write(tmp_path, {"mode": "per_npu", "technology": "pcm", "capacity_gb": 100, "pcm": PCM})).memory)
    assert given.capacity == 100e9
    plain = load_platform(dram(tmp_path))
    assert resolve_platform(plain) is plain


@pytest.mark.parametrize(
    ("memory", "message"),
    [
        ({"mode": "per_npu", "technology": "pcm", "bandwidth_gbps": 64}, "takes latency and bandwidth from the PCM model; remove bandwidth_gbps"),
        ({"mode": "none", "technology": "pcm"}, "technology 'pcm' needs a mode"),
        ({"mode": "per_npu", "latency_ns": 250, "bandwidth_gbps": 64, "pcm": PCM}, "a pcm section needs technology: pcm"),
        ({"mode": "per_npu", "technology": "pcm", "pcm": {"scheme": "mlc"}}, "scheme"),
        ({"mode": "per_npu", "technology": "pcm", "pcm": {"load": 1.5}}, "load"),
    ],
)
def test_bad_pcm_sections_are_one_line_errors(tmp_path, memory, message):
    with pytest.raises(ConfigError, match=message) as err:
        load_platform(write(tmp_path, memory))
    assert "\n" not in str(err.value)


def _offloaded_step(path, spec, par, timer):
    platform = load_platform(path)
    return simulate_generated(platform, generate(spec, par, timer, network_sizes=platform.network.sizes)).makespan_s


def test_pcm_changes_the_step_by_the_transfer_time_its_latency_and_bandwidth_imply(tiny_model, tmp_path):
    """Optimizer offload puts the states' load and store on the critical path (both after the
    gradient synchronization, on the GPU communication slot): the step differs from the
    DRAM-backed tier's by 2 x (latency difference + bytes x (1 / bandwidth difference))."""
    spec = get_model(tiny_model)
    timer = OperatorTimer("A100")
    par = Parallelism(tp=1, pp=1, dp=16, micro_batch=1, global_batch=64, zero=1, offload_optimizer=True)
    states = generate(spec, par).memory[0].offloaded
    d_path, p_path = dram(tmp_path), pcm(tmp_path)
    d, p = load_platform(d_path).memory, resolve_memory(load_platform(p_path).memory)
    expected = 2 * ((p.latency_ns - d.latency_ns) * 1e-9 + states / p.bandwidth - states / d.bandwidth)
    diff = _offloaded_step(p_path, spec, par, timer) - _offloaded_step(d_path, spec, par, timer)
    assert abs(expected) > 1e-5  # the two tiers differ by tens of microseconds at least
    assert diff == pytest.approx(expected, rel=1e-6, abs=2e-9)
    # the estimate prices the same tier
    est = StepEstimator(spec, timer, load_platform(p_path)).estimate(par).step_s - StepEstimator(spec, timer, load_platform(d_path)).estimate(par).step_s
    assert est == pytest.approx(expected, rel=1e-6)
    # the tri-level scheme is a faster tier than the baseline MLC scheme, so a faster step
    base = _offloaded_step(pcm(tmp_path, "base.yaml", scheme="base"), spec, par, timer)
    assert base > _offloaded_step(p_path, spec, par, timer)


def test_the_pcm_estimate_is_cached(tmp_path):
    spec = load_platform(pcm(tmp_path)).memory
    resolve_memory(spec)
    hits = _pcm_tier.cache_info().hits
    resolve_memory(spec)
    assert _pcm_tier.cache_info().hits == hits + 1
