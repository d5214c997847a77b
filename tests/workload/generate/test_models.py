"""Model shapes: parameter counts against the papers, Hugging Face configs, FLOP formulas."""

import json

import pytest

from trainsim.workload.models import from_hf_config, get_model, megatron_flops, model_names
from trainsim.workload.models.zoo import MEGATRON_TABLE1


def test_gpt3_and_llama_parameter_counts():
    assert get_model("gpt3-175b").total_params() / 1e9 == pytest.approx(175, rel=0.01)
    assert get_model("llama3-8b").total_params() / 1e9 == pytest.approx(8.03, rel=0.005)
    assert get_model("llama3-70b").total_params() / 1e9 == pytest.approx(70.6, rel=0.005)
    assert get_model("llama3-405b").total_params() / 1e9 == pytest.approx(405.9, rel=0.005)
    mix = get_model("mixtral-8x7b")
    assert mix.total_params() / 1e9 == pytest.approx(46.7, rel=0.01)
    assert mix.active_params() / 1e9 == pytest.approx(12.9, rel=0.01)


@pytest.mark.parametrize("label", list(MEGATRON_TABLE1))
def test_megatron_table1_parameter_formula(label):
    # SC'21 Appendix: P = 12 l h^2 (1 + 13/(12h) + (V + s)/(12 l h))
    spec = get_model(f"megatron-{label}")
    n, h, v, s = spec.layers, spec.hidden, spec.vocab, spec.seq
    formula = 12 * n * h * h * (1 + 13 / (12 * h) + (v + s) / (12 * n * h))
    assert spec.total_params() == pytest.approx(formula, rel=1e-3)


def test_megatron_flops_formula():
    spec = get_model("megatron-1t")
    b = 3072
    f = megatron_flops(spec, b)
    assert f == pytest.approx(96 * b * 2048 * 128 * 25600**2 * (1 + 2048 / (6 * 25600) + 51200 / (16 * 128 * 25600)))


def test_cnn_flops():
    assert sum(x.flops for x in get_model("resnet50").layers) / 2e9 == pytest.approx(4.09, rel=0.01)  # GMACs
    assert get_model("resnet50").total_params() / 1e6 == pytest.approx(25.6, rel=0.01)
    assert get_model("resnet152").total_params() / 1e6 == pytest.approx(60.2, rel=0.01)
    assert {"resnet50", "resnet152", "gnmt", "dlrm"} <= set(model_names())


def test_hugging_face_config(tmp_path):
    cfg = {
        "model_type": "llama",
        "hidden_size": 4096,
        "intermediate_size": 14336,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "num_hidden_layers": 32,
        "vocab_size": 128256,
        "max_position_embeddings": 8192,
        "hidden_act": "silu",
        "tie_word_embeddings": False,
    }
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    spec = get_model(str(path))
    assert spec.total_params() == get_model("llama3-8b").total_params()
    gpt2 = from_hf_config({"model_type": "gpt2", "n_embd": 768, "n_layer": 12, "n_head": 12, "vocab_size": 50257, "n_positions": 1024})
    assert gpt2.total_params() / 1e6 == pytest.approx(124.4, rel=0.01)


_HF = {"hidden_size": 1024, "num_hidden_layers": 4, "num_attention_heads": 16, "vocab_size": 32000}


@pytest.mark.parametrize(
    ("text", "match"),
    [
        (json.dumps({**_HF, "hidden_size": "big"}), "config.json: hidden_size: got 'big'; expected an integer"),
        (json.dumps({**_HF, "hidden_size": 1024.5}), "hidden_size: got 1024.5; expected an integer"),
        (json.dumps({**_HF, "hidden_size": None}), "hidden: missing hidden_size"),
        (json.dumps({**_HF, "intermediate_size": [4096]}), "intermediate_size: got \\[4096\\]"),
        (json.dumps({**_HF, "hidden_size": 1000}), "config.json: model.head_dim: hidden 1000 is not a multiple"),
        ("[1, 2]", "the top level is a list"),
        ('{"hidden_size": 10', "invalid JSON at line 1"),
    ],
)
def test_bad_hugging_face_config_names_file_and_key(tmp_path, text, match):
    from trainsim.errors import ConfigError

    path = tmp_path / "config.json"
    path.write_text(text)
    with pytest.raises(ConfigError, match=match):
        get_model(str(path))


def test_hugging_face_config_that_is_a_folder_or_binary(tmp_path):
    from trainsim.errors import ConfigError

    (tmp_path / "c.json").mkdir()
    with pytest.raises(ConfigError, match="is a directory"):
        get_model(str(tmp_path / "c.json"))
    (tmp_path / "b.json").write_bytes(b"\xff\xfe\x00")
    with pytest.raises(ConfigError, match="not UTF-8"):
        get_model(str(tmp_path / "b.json"))
