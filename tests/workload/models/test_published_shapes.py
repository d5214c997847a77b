"""Zoo models of published runs (docs/generator.md, "Other published runs") have the sources'
shapes and parameter counts."""

from trainsim.workload.models import get_model


def test_bloom_176b_is_the_papers_176247m_parameters():
    m = get_model("bloom-176b")
    assert (m.layers, m.hidden, m.heads, m.seq, m.vocab) == (70, 14336, 112, 2048, 250880)
    assert not m.learned_positions  # ALiBi
    # Le Scao et al. 2022: 176,247M parameters
    assert round(m.total_params() / 1e6) == 176247


def test_mt_nlg_530b_is_megatrons_530b_shape():
    m, table = get_model("mt-nlg-530b"), get_model("megatron-530b")
    assert (m.layers, m.hidden, m.heads, m.seq) == (105, 20480, 128, 2048)
    assert m.total_params() == table.total_params()
    assert 529e9 < m.total_params() < 531e9
