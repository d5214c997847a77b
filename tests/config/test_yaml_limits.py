"""config/files: YAML nested too deep or expanded by aliases is refused, in every YAML input."""

import pytest

from trainsim.cli.main import EXIT_USER_ERROR, main
from trainsim.config.files import load_json_mapping, load_yaml_mapping
from trainsim.errors import ConfigError


def laughs(levels: int = 9) -> str:
    lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, levels + 1)]
    return "\n".join(lines) + "\n"


def test_billion_laughs_is_refused_without_expanding(tmp_path):
    path = tmp_path / "l.yaml"
    path.write_text(laughs())
    assert path.stat().st_size < 700
    with pytest.raises(ConfigError, match=r"l\.yaml: invalid YAML at line 1, column 1: aliases expand \d+ nodes into [\d,]+, more than 10 times"):
        load_yaml_mapping(path)


def test_anchors_that_share_a_few_blocks_still_load(tmp_path):
    path = tmp_path / "a.yaml"
    path.write_text("link: &l {bandwidth_gbps: 200, latency_ns: 500}\ndims: [*l, *l, *l, *l, *l, *l, *l, *l]\n")
    assert load_yaml_mapping(path)["dims"][7] == {"bandwidth_gbps": 200, "latency_ns": 500}


@pytest.mark.parametrize("text", ["a: " + "[" * 100_000 + "]" * 100_000 + "\n", "a: " + "{b: " * 5000 + "1" + "}" * 5000 + "\n"])
def test_deep_nesting_is_refused(tmp_path, text):
    path = tmp_path / "d.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=r"d\.yaml: invalid YAML at line 1.*nested deeper than 100 levels"):
        load_yaml_mapping(path)


def test_block_nesting_deeper_than_the_limit_is_refused_by_the_composer(tmp_path):
    path = tmp_path / "d.yaml"
    path.write_text("".join(" " * i + f"k{i}:\n" for i in range(150)) + " " * 150 + "x: 1\n")
    with pytest.raises(ConfigError, match="nested deeper than 100 levels"):
        load_yaml_mapping(path)
    ok = tmp_path / "ok.yaml"
    ok.write_text("".join(" " * i + f"k{i}:\n" for i in range(50)) + " " * 50 + "x: 1\n")
    assert "k0" in load_yaml_mapping(ok)


def test_deep_json_is_a_config_error(tmp_path):
    path = tmp_path / "d.json"
    path.write_text('{"a": ' + "[" * 100_000 + "]" * 100_000 + "}")
    with pytest.raises(ConfigError, match=r"d\.json: invalid JSON: nested too deep"):
        load_json_mapping(path)


@pytest.mark.parametrize("kind", ["sweep", "platform"])
def test_a_billion_laughs_input_exits_2_with_one_line(tmp_path, capsys, kind):
    path = tmp_path / "x.yaml"
    if kind == "sweep":
        path.write_text("base:\n  platform: p.yaml\n  workload: {collective: {type: all_reduce, size_bytes: 1}}\n" + laughs()
                        + "axes:\n  - {field: platform.system.x, values: [*a9]}\n")  # fmt: skip
        argv = ["sweep", str(path), "--store", str(tmp_path / "s.sqlite")]
    else:
        path.write_text(laughs() + "network:\n  dims: *a9\n")
        argv = ["run", str(path), "--workload", str(tmp_path / "w")]
    assert main(argv) == EXIT_USER_ERROR
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "x.yaml" in err[0] and "aliases expand" in err[0]
    assert not (tmp_path / "s.sqlite").exists()
