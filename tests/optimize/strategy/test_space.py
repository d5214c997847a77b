"""Enumeration of the strategy search: counts by hand on a small model, rejection reasons."""

import collections
import json

from trainsim.optimize.strategy.space import SearchSpace, enumerate_strategies
from trainsim.workload.models import get_model


def test_enumeration_counts_by_hand(tmp_path):
    path = tmp_path / "m.json"
    path.write_text(
        json.dumps(
            {
                "model_type": "gpt2",
                "n_embd": 512,
                "n_layer": 4,
                "n_head": 2,
                "vocab_size": 1000,
                "n_positions": 256,
            }
        )
    )
    spec = get_model(str(path))
    space = SearchSpace(zero=(0, 1), recompute=("none", "full"), schedules=("1f1b", "interleaved"))
    cands = list(enumerate_strategies(spec, 4, 8, space))
    # 4 GPUs, batch 8, 4 layers, 2 heads; per (TP, PP, DP):
    #  1,1,4: mb {1,2} x ZeRO {0,1} x recompute 2                          =  8
    #  1,2,2: {1f1b, interleaved v2} x mb {1,2,4} x ZeRO 2 x recompute 2   = 24 (interleaved at mb 4: 1 micro-batch, 4 rejected)
    #  1,4,1: 1f1b (1 layer a stage: no interleaving) x mb {1,2,4,8} x recompute 2 (ZeRO needs DP > 1) = 8
    #  2,1,2: mb {1,2,4} x SP 2 x ZeRO 2 x recompute 2                       = 24
    #  2,2,1: {1f1b, interleaved v2} x mb {1,2,4,8} x SP 2 x recompute 2     = 32 (interleaved at mb 8: 4 rejected)
    #  4,1,1: mb {1,2,4,8} x SP 2 x recompute 2, TP 4 does not divide 2 heads = 16 rejected
    assert len(cands) == 8 + 24 + 8 + 24 + 32 + 16
    reasons = collections.Counter(c.reason_class for c in cands if c.parallelism is None)
    assert reasons == {
        "TP does not divide 2 heads": 16,
        "the interleaved schedule needs the micro-batch count to be a multiple of PP": 8,
    }
    valid = [c for c in cands if c.parallelism is not None]
    assert len(valid) == 112 - 24
    assert all(c.parallelism.world == 4 and c.parallelism.global_batch == 8 for c in valid)
    keys = {json.dumps(c.params, sort_keys=True) for c in cands}
    assert len(keys) == len(cands)  # no strategy twice


def test_a_rejection_keeps_the_generators_message():
    cands = list(
        enumerate_strategies(
            get_model("gpt3-175b"),
            1024,
            1536,
            SearchSpace(tp=(64,), pp=(1,), micro_batch=(1,), zero=(0,), recompute=("full",)),
        )
    )
    assert [c.reason for c in cands] == ["TP=64 does not divide 96 heads"] * 2  # SP on and off
