"""Per-rank memory: ZeRO closed forms (Rajbhandari et al. 2020, §3.1 / Fig. 1) and activation
formulas (Korthikanti et al. 2022, §4, Table 2)."""

import pytest

from trainsim.compute import OperatorTimer
from trainsim.errors import InfeasibleError
from trainsim.workload.generate import Parallelism, generate, zero_model_states
from trainsim.workload.generate.memory import layer_activation_bytes
from trainsim.workload.models import get_model

from .conftest import toy

PSI = 7.5e9
K = 12


@pytest.mark.parametrize("nd", [1, 8, 64])
def test_zero_paper_closed_forms(nd):
    base = sum(zero_model_states(PSI, nd, 0))
    assert base == (2 + 2 + K) * PSI
    assert sum(zero_model_states(PSI, nd, 1)) == pytest.approx(2 * PSI + 2 * PSI + K * PSI / nd)
    assert sum(zero_model_states(PSI, nd, 2)) == pytest.approx(2 * PSI + (2 + K) * PSI / nd)
    assert sum(zero_model_states(PSI, nd, 3)) == pytest.approx((2 + 2 + K) * PSI / nd)


def test_zero_paper_figure1_example():
    # ZeRO §1 / Fig. 1: 7.5B parameters, N_d = 64: 120 GB, 31.4 GB, 16.6 GB, 1.9 GB
    for stage, gb in [(0, 120), (1, 31.4), (2, 16.6), (3, 1.9)]:
        assert sum(zero_model_states(PSI, 64, stage)) / 1e9 == pytest.approx(gb, abs=0.05)


@pytest.mark.parametrize("zero", [0, 1, 2, 3])
def test_generated_model_states_follow_zero(zero):
    spec = toy(layers=4)
    dp = 8
    w = generate(spec, Parallelism(dp=dp, micro_batch=1, zero=zero))
    mem = w.memory[0]
    psi = spec.total_params()
    expect = {0: (2 + 2 + K) * psi, 1: 4 * psi + K * psi / dp, 2: 2 * psi + (2 + K) * psi / dp, 3: (2 + 2 + K) * psi / dp}[zero]
    assert mem.weights + mem.gradients + mem.optimizer == pytest.approx(expect)


def test_korthikanti_activation_formulas():
    spec = get_model("megatron-18b")  # GPT shape: 4h MLP, multi-head attention
    s, h, a, b, t = spec.seq, spec.hidden, spec.heads, 1, 8
    sbh = s * b * h
    cases = {
        (1, False, "none"): sbh * (34 + 5 * a * s / h),
        (t, False, "none"): sbh * (10 + 24 / t + 5 * a * s / (h * t)),
        (t, True, "none"): sbh / t * (34 + 5 * a * s / h),
        (t, True, "selective"): sbh * 34 / t,
        (t, False, "full"): 2 * sbh,
    }
    for (tp, sp, rc), expected in cases.items():
        kept, _ = layer_activation_bytes(spec, Parallelism(tp=tp, sp=sp, recompute=rc, micro_batch=b))
        assert kept == pytest.approx(expected), (tp, sp, rc)


def test_gpt3_does_not_fit_one_a100():
    with pytest.raises(InfeasibleError, match="GB per rank"):
        generate(get_model("gpt3-175b"), Parallelism(micro_batch=1), OperatorTimer("A100"))


def test_first_stage_holds_p_microbatches_under_1f1b():
    spec = toy(layers=8)
    w = generate(spec, Parallelism(pp=4, micro_batch=1, global_batch=16, recompute="full"))
    kept, _ = layer_activation_bytes(spec, Parallelism(micro_batch=1, recompute="full"))
    assert w.memory[0].activations == pytest.approx(kept * 2 * 4)
    assert w.memory[3].activations == pytest.approx(kept * 2 * 1)
