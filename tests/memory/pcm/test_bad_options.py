"""`trainsim pcm study` options out of range (issue 24): a negative seed, a files: source in a
package that does not exist, a run that would hold trillions of requests. One line, exit 2,
before any work."""

import pytest
from tests.helpers.cli_errors import cli_error

from trainsim.errors import ConfigError
from trainsim.memory.pcm.config import MAX_MISSES, PcmConfig
from trainsim.memory.pcm.content import package_files


@pytest.mark.parametrize(
    ("args", "match"),
    [
        (["--seed", "-1"], "PcmConfig.seed: got -1, expected an integer in 0 .. 2**63-1"),
        (["--data", "files:nosuch.sub:.py"], "package 'nosuch.sub' is not installed"),
        (["--instructions", str(10**12)], "CoreConfig.instructions: got 1000000000000, expected at most 4,000,000 misses"),
    ],
    ids=["seed", "data", "instructions"],
)
def test_study_options_are_one_line(tmp_path, capsys, args, match):
    cli_error(capsys, ["pcm", "study", *args, "--no-sweeps", "--out", str(tmp_path / "o")], 2, match)


def test_config_limits():
    with pytest.raises(ConfigError, match="seed"):
        PcmConfig(seed=-5)
    cfg = PcmConfig()
    with pytest.raises(ConfigError, match="misses"):
        cfg.replace(**{"core.cores": 1000, "core.instructions": 10**6, "core.mpki": 10.0})
    assert cfg.replace(**{"core.instructions": int(MAX_MISSES / 4 / 0.01)}).core.instructions == 10**8


@pytest.mark.parametrize("name", ["nosuch.sub", "nosuch", "json.nosuch"])
def test_missing_packages(name):
    with pytest.raises(ConfigError, match=f"package {name!r} is not installed"):
        package_files(name, (".py",))
