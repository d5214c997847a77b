"""Run the CLI in-process and check that bad input ends in one clear line (exit 2, 3 or 4)."""

from __future__ import annotations

import pytest

from trainsim.cli.main import main


def cli_error(
    capsys: pytest.CaptureFixture[str], argv: list[str], code: int = 2, match: str = ""
) -> str:
    """Run ``trainsim argv``; assert exit ``code``, one error line (plus an optional hint line)
    containing ``match`` and no traceback; return that line."""
    got = main(argv)
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if not line.startswith("hint: ")]
    assert got == code, err
    assert "Traceback" not in err, err
    assert len(lines) == 1 and lines[0].startswith("trainsim: "), err
    assert match in lines[0], err
    return lines[0]
