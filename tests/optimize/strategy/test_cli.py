"""`trainsim optimize strategy` end to end: the ranked table, the rejections, the store that
`sweep show` reads, JSON, and one-line errors."""

import json

from trainsim.cli.main import EXIT_USER_ERROR, main


def _args(model, platform, *extra):
    return ["optimize", "strategy", model, "--gpus", "16", "--platform", platform, "--global-batch", "64",
            "--tp", "1,2", "--pp", "1,2,8", "--micro-batch", "1,4", "--recompute", "none,full", *extra]  # fmt: skip


def test_table_rejections_and_store(tiny_model, dgx64, tmp_path, capsys):
    store = tmp_path / "out" / "s.sqlite"
    assert main(_args(tiny_model, dgx64, "--top-k", "1", "--store", str(store))) == 0
    text = capsys.readouterr().out
    assert "job on the first 16 of 64 NPUs" in text
    assert "strategies, best estimate first" in text and "estimate error" in text
    assert "PP does not divide 4 layers" in text  # PP 8
    assert (
        main(
            [
                "sweep",
                "show",
                str(store),
                "--sort",
                "estimate_s",
                "--metrics",
                "estimate_s,memory_per_gpu_bytes",
                "--top",
                "3",
            ]
        )
        == 0
    )
    assert "estimate_s" in capsys.readouterr().out


def test_json(tiny_model, dgx64, tmp_path):
    out = tmp_path / "r.json"
    assert main(_args(tiny_model, dgx64, "--top-k", "0", "--json", str(out))) == 0
    data = json.loads(out.read_text())
    assert data["fit"] >= len(data["rows"]) > 0
    assert data["rows"][0]["estimate_s"] <= data["rows"][-1]["estimate_s"]
    assert data["rejected"]["PP does not divide 4 layers"]["count"] > 0


def test_errors_are_one_line(tiny_model, dgx64, capsys):
    args = _args(tiny_model, dgx64, "--top-k", "0")
    args[args.index("--gpus") + 1] = "12"
    assert main(args) == EXIT_USER_ERROR
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "not a whole number of positions of dimension 0" in err
    assert main(_args(tiny_model, dgx64, "--zero", "5")) == EXIT_USER_ERROR
    assert "ZeRO stage 5" in capsys.readouterr().err
    assert main(_args("resnet50", dgx64)) == EXIT_USER_ERROR
    assert "not a transformer" in capsys.readouterr().err
