"""Reading ASTRA-sim 1.0 text workloads: every reference file, and a table of bad inputs."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.workload.astra_text.helpers import LIBRA_DIR, TEXT_DIR
from trainsim.errors import TraceError
from trainsim.workload.astra_text import Phase, parse_text, parse_text_workload

EXPECTED = {
    "microAllReduce": ("MICRO", 1),
    "microAllToAll": ("MICRO", 1),
    "Resnet50_DataParallel": ("DATA", 54),
    "DLRM_HybridParallel": ("HYBRID_DLRM", 8),
    "MLP_ModelParallel": ("MODEL", 6),
    "MLP_HybridParallel_Data_Model": ("HYBRID_DATA_MODEL", 6),
    "MLP_HybridParallel_Model_Data": ("HYBRID_MODEL_DATA", 6),
    "Transformer_HybridParallel": ("HYBRID_TRANSFORMER", 57),
    "Transformer_HybridParallel_Fwd_In_Bckwd": ("HYBRID_TRANSFORMER_FWD_IN_BCKWD", 21),
    "sample_per_layer_parallel_HybridCustomized": ("HYBRID_CUSTOMIZED", 6),
}
LIBRA = {"DLRM": 20, "GPT_3": 18, "MSFT_1T": 18, "ResNet_50": 54, "Turing_NLG": 18}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_every_astra_sim_text_workload_parses(name: str) -> None:
    wl = parse_text_workload(TEXT_DIR / f"{name}.txt")
    mode, count = EXPECTED[name]
    assert wl.mode == mode
    assert len(wl.layers) == count
    assert all(layer.reserved == -1 for layer in wl.layers)
    assert [layer.line for layer in wl.layers] == list(range(3, 3 + count))


def test_all_ten_reference_files_are_covered() -> None:
    assert sorted(p.stem for p in TEXT_DIR.glob("*.txt")) == sorted(EXPECTED)


def test_header_parameters() -> None:
    dlrm = parse_text_workload(TEXT_DIR / "DLRM_HybridParallel.txt")
    assert dlrm.dlrm_last_bottom_layer == 4
    first = dlrm.layers[0]
    assert (first.name, first.fwd, first.ig, first.wg, first.update_cycles) == (
        "Embedding",
        Phase(300, "ALLTOALL", 98304),
        Phase(300, "ALLTOALL", 98304),
        Phase(300, "NONE", 0),
        98,
    )
    tf = parse_text_workload(TEXT_DIR / "Transformer_HybridParallel.txt")
    assert tf.model_parallel_npu_group == 4
    ckpt = parse_text_workload(TEXT_DIR / "Transformer_HybridParallel_Fwd_In_Bckwd.txt")
    assert ckpt.model_parallel_npu_group == 4
    assert ckpt.checkpoints == (2, 11)
    assert ckpt.checkpoint_initiates == (19, 10)
    custom = parse_text_workload(TEXT_DIR / "sample_per_layer_parallel_HybridCustomized.txt")
    assert [layer.parallelism for layer in custom.layers] == [
        "HYBRID_DATA_MODEL",
        "HYBRID_MODEL_DATA",
        "DATA",
        "MODEL",
        "MODEL",
        "HYBRID_MODEL_DATA",
    ]
    assert custom.layers[3].ig == Phase(14144, "REDUCESCATTER", 147456)


@pytest.mark.parametrize("name", sorted(LIBRA))
def test_libra_layers_only_workloads_parse(name: str) -> None:
    wl = parse_text_workload(LIBRA_DIR / f"{name}.txt")
    assert wl.mode is None
    assert len(wl.layers) == LIBRA[name]
    assert wl.layers[0].line == 1
    given = parse_text_workload(
        LIBRA_DIR / f"{name}.txt", header="HYBRID_TRANSFORMER model_parallel_NPU_group: 16"
    )
    assert given.mode == "HYBRID_TRANSFORMER"
    assert given.model_parallel_npu_group == 16
    assert given.layers == wl.layers


def test_whitespace_and_blank_lines_are_free() -> None:
    text = "DATA\r\n\n 2 \t\n\nl0 -1 1 NONE 0 2 NONE 0 3 ALLREDUCE 4 5\t\r\n\n  l1\t-1 1 NONE 0 2 NONE 0 3 ALLREDUCE 4 5\n\n"
    wl = parse_text(text)
    assert [layer.name for layer in wl.layers] == ["l0", "l1"]
    assert [layer.line for layer in wl.layers] == [5, 7]


LAYER = "l0 -1 10 NONE 0 20 NONE 0 30 ALLREDUCE 1024 5"
BAD = [
    # (label, text, header, fragments the message must contain)
    ("empty file", "", None, ["line 1", "empty"]),
    (
        "unknown header",
        f"PIPELINE\n1\n{LAYER}\n",
        None,
        ["line 1, column 1", "'PIPELINE'", "expected one of"],
    ),
    (
        "header parameter where none is taken",
        f"DATA 3\n1\n{LAYER}\n",
        None,
        ["line 1, column 2", "'3'"],
    ),
    (
        "DLRM without its layer index",
        f"HYBRID_DLRM\n1\n{LAYER}\n",
        None,
        ["line 1", "HYBRID_DLRM takes one parameter"],
    ),
    (
        "DLRM layer index not an integer",
        f"HYBRID_DLRM four\n1\n{LAYER}\n",
        None,
        ["line 1, column 2", "'four'", "non-negative integer"],
    ),
    (
        "DLRM layer index out of range",
        f"HYBRID_DLRM 3\n1\n{LAYER}\n",
        None,
        ["line 1", "last bottom layer is 3"],
    ),
    (
        "transformer without the group label",
        f"HYBRID_TRANSFORMER 4\n1\n{LAYER}\n",
        None,
        ["line 1, column 2", "model_parallel_NPU_group:", "'4'"],
    ),
    (
        "transformer group of 0",
        f"HYBRID_TRANSFORMER model_parallel_NPU_group: 0\n1\n{LAYER}\n",
        None,
        ["line 1, column 3", "'0'", "integer >= 1"],
    ),
    (
        "checkpoint list shorter than its count",
        f"HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 1 checkpoints: 2 0\n1\n{LAYER}\n",
        None,
        ["line 1", "announces 2 layer indices but 1 follow"],
    ),
    (
        "checkpoint layer out of range",
        f"HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 1 checkpoints: 1 5 checkpoint_initiates: 0\n1\n{LAYER}\n",
        None,
        ["line 1", "layer 5 does not exist"],
    ),
    (
        "initiating layer without a checkpoint below",
        f"HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 1 checkpoints: 1 1 checkpoint_initiates: 1 1\n2\n{LAYER}\n{LAYER}\n",
        None,
        ["line 1", "layer 1 is both a checkpoint and an initiating layer"],
    ),
    (
        "two initiating layers for one checkpoint",
        f"HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 1 checkpoints: 1 0 checkpoint_initiates: 2 1 2\n3\n{LAYER}\n{LAYER}\n{LAYER}\n",
        None,
        ["line 1", "layer 2 initiates a recomputation", "not a checkpoint"],
    ),
    ("count missing", "DATA\n", None, ["line 2", "layer count is missing"]),
    ("count not an integer", f"DATA\nsix\n{LAYER}\n", None, ["line 2, column 1", "'six'"]),
    (
        "count larger than the layers",
        f"DATA\n2\n{LAYER}\n",
        None,
        ["line 2", "layer count is 2 but 1 layer lines follow"],
    ),
    (
        "count smaller than the layers",
        f"DATA\n1\n{LAYER}\n{LAYER}\n",
        None,
        ["line 2", "layer count is 1 but 2 layer lines follow"],
    ),
    (
        "too few columns",
        "DATA\n1\nl0 -1 10 NONE 0 20 NONE 0 30 ALLREDUCE 1024\n",
        None,
        ["line 3", "11 columns", "expected 12"],
    ),
    ("too many columns", f"DATA\n1\n{LAYER} 7\n", None, ["line 3", "13 columns"]),
    (
        "customized layer without its parallelism",
        f"HYBRID_CUSTOMIZED\n1\n{LAYER}\n",
        None,
        ["line 3", "12 columns", "HYBRID_CUSTOMIZED"],
    ),
    (
        "customized layer with an unknown parallelism",
        f"HYBRID_CUSTOMIZED\n1\n{LAYER} PIPELINE\n",
        None,
        ["line 3, column 13", "'PIPELINE'"],
    ),
    (
        "unknown collective",
        "DATA\n1\nl0 -1 10 NONE 0 20 NONE 0 30 ALLREDUC 1024 5\n",
        None,
        ["line 3, column 10", "'ALLREDUC'", "weight-gradient collective"],
    ),
    (
        "lower-case collective",
        "DATA\n1\nl0 -1 10 allgather 0 20 NONE 0 30 ALLREDUCE 1024 5\n",
        None,
        ["line 3, column 4", "'allgather'", "forward collective"],
    ),
    (
        "compute time not an integer",
        "DATA\n1\nl0 -1 10.5 NONE 0 20 NONE 0 30 ALLREDUCE 1024 5\n",
        None,
        ["line 3, column 3", "'10.5'", "forward compute time"],
    ),
    (
        "negative compute time",
        "DATA\n1\nl0 -1 10 NONE 0 -20 NONE 0 30 ALLREDUCE 1024 5\n",
        None,
        ["line 3, column 6", "'-20'", "input-gradient compute time"],
    ),
    (
        "collective size not an integer",
        "DATA\n1\nl0 -1 10 NONE 0 20 NONE 0 30 ALLREDUCE 1MB 5\n",
        None,
        ["line 3, column 11", "'1MB'", "weight-gradient collective size"],
    ),
    (
        "update delay not an integer",
        "DATA\n1\nl0 -1 10 NONE 0 20 NONE 0 30 ALLREDUCE 1024 x\n",
        None,
        ["line 3, column 12", "'x'", "update delay"],
    ),
    (
        "reserved column not an integer",
        "DATA\n1\nl0 r 10 NONE 0 20 NONE 0 30 ALLREDUCE 1024 5\n",
        None,
        ["line 3, column 2", "'r'", "reserved"],
    ),
    (
        "header given to a file that has one",
        f"DATA\n1\n{LAYER}\n",
        "MODEL",
        ["line 1", "has its own header 'DATA'"],
    ),
    (
        "bad header given to a layers-only file",
        f"{LAYER}\n",
        "PIPELINE",
        ["given header, column 1", "'PIPELINE'"],
    ),
]


@pytest.mark.parametrize(("label", "text", "header", "fragments"), BAD, ids=[b[0] for b in BAD])
def test_bad_input_is_a_trace_error_naming_file_line_column_value(
    tmp_path: Path, label: str, text: str, header: str | None, fragments: list[str]
) -> None:
    path = tmp_path / "bad.txt"
    path.write_text(text)
    with pytest.raises(TraceError) as info:
        parse_text_workload(path, header=header)
    message = str(info.value)
    assert message.startswith(f"{path}: "), message
    for fragment in fragments:
        assert fragment in message, f"{label}: {fragment!r} not in {message!r}"
    assert info.value.file == str(path)


def test_unreadable_file_is_a_trace_error(tmp_path: Path) -> None:
    with pytest.raises(TraceError, match="cannot read"):
        parse_text_workload(tmp_path / "missing.txt")
