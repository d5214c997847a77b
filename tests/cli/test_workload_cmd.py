"""`trainsim workload convert`: text workload -> Chakra ET files, and its error lines.

The conversion itself needs trainsim's Chakra writer (``trainsim.workload.chakra``); those tests
are skipped until it is importable. The error cases fail before it is needed and always run.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.workload.astra_text.helpers import TEXT_DIR
from trainsim.cli.main import main
from trainsim.enums import NodeType
from trainsim.workload.astra_text import parse_text_workload, text_to_graphs


def _convert(tmp_path: Path, name: str, *extra: str) -> tuple[int, Path]:
    prefix = tmp_path / "out" / name
    prefix.parent.mkdir(exist_ok=True)
    argv = [
        "workload",
        "convert",
        str(TEXT_DIR / f"{name}.txt"),
        "--out",
        str(prefix),
        *extra,
    ]
    return main(argv), prefix


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("Resnet50_DataParallel", ["--ranks", "4", "--passes", "2"]),
        ("Transformer_HybridParallel", ["--ranks", "8", "--dims", "4,2"]),
        ("DLRM_HybridParallel", ["--ranks", "2", "--no-update-delays"]),
    ],
)
def test_convert_writes_one_et_file_per_rank(
    tmp_path: Path, capsys, name: str, args: list[str]
) -> None:
    chakra = pytest.importorskip("trainsim.workload.chakra.reader")
    code, prefix = _convert(tmp_path, name, *args)
    assert code == 0
    assert "nodes per rank" in capsys.readouterr().out
    ranks = int(args[1])
    dims = [int(d) for d in args[args.index("--dims") + 1].split(",")] if "--dims" in args else None
    passes = int(args[args.index("--passes") + 1]) if "--passes" in args else 1
    expected = text_to_graphs(
        parse_text_workload(TEXT_DIR / f"{name}.txt"),
        ranks,
        num_passes=passes,
        dim_sizes=dims,
        update_delays="--no-update-delays" not in args,
    )[0]
    for rank in range(ranks):
        got = chakra.read_rank(Path(f"{prefix}.{rank}.et"))
        assert got.names == expected.names
        assert got.types.tolist() == expected.types.tolist()
        assert [got.deps_of(p) for p in range(len(got))] == [
            expected.deps_of(p) for p in range(len(got))
        ]
        comm = expected.types == NodeType.COMM_COLL_NODE
        assert got.comm_type[comm].tolist() == expected.comm_type[comm].tolist()
        assert got.comm_size[comm].tolist() == expected.comm_size[comm].tolist()
        assert got.involved_dim == expected.involved_dim
        assert got.is_cpu_op.tolist() == expected.is_cpu_op.tolist()
        # Chakra's duration_micros is an integer number of microseconds
        assert np.all(np.abs(got.duration_s - expected.duration_s) <= 1e-6)


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["--ranks", "8", "--dims", "2,x"], "--dims: '2,x' is not a list of positive integers"),
        (
            ["--ranks", "8", "--dims", "2,2"],
            "dim_sizes: the dimension sizes 2x2 make 4 ranks, not 8",
        ),
        (["--ranks", "8"], "needs the network's dimension sizes"),
        (["--ranks", "0"], "npus: the rank count must be at least 1, got 0"),
        (
            ["--ranks", "8", "--dims", "4,2", "--passes", "0"],
            "num_passes: passes must be at least 1",
        ),
        (["--ranks", "8", "--dims", "2,4"], "does not end on a dimension boundary"),
    ],
)
def test_bad_arguments_give_exit_2_and_one_line(
    tmp_path: Path, capsys, argv: list[str], fragment: str
) -> None:
    code, _ = _convert(tmp_path, "Transformer_HybridParallel", *argv)
    assert code == 2
    err = capsys.readouterr().err
    assert err.startswith("trainsim: error: ")
    assert fragment in err.splitlines()[0]
    assert "Traceback" not in err


def test_bad_file_gives_exit_2(tmp_path: Path, capsys) -> None:
    bad = tmp_path / "bad.txt"
    bad.write_text("DATA\n1\nl0 -1 10 NONE 0 20 NONE 0 30 ALLREDUC 1024 5\n")
    code = main(["workload", "convert", str(bad), "--ranks", "2", "--out", str(tmp_path / "x")])
    assert code == 2
    assert f"{bad}: line 3, column 10" in capsys.readouterr().err
