"""Output read by scripts: piped, a command prints plain text with every number whole; on a
narrow terminal a table cell wraps rather than being cut."""

import re
import subprocess
import sys

from rich.table import Table

from trainsim.cli.console import _Console

# a table cell: a number (with its sign, % or unit), a scheme name, or empty
CELL = re.compile(r"^([+-]?\d+(\.\d+)?(%| ns| us| ms| s)?|[a-z+]+|\d+\.\d+ / \d+\.\d+)?$")


def test_piped_pcm_study_prints_plain_whole_numbers(tmp_path):
    args = [sys.executable, "-m", "trainsim.cli.main", "pcm", "study", "--no-sweeps", "--instructions", "20000", "--out", str(tmp_path)]
    proc = subprocess.run(args, capture_output=True, text=True, timeout=300)  # stdout is a pipe
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "…" not in out and "\x1b[" not in out
    rows = [line for line in out.splitlines() if line.startswith("│")]
    assert len(rows) >= 5  # base, tri, tri+fpc; tri and tri+fpc again in the diagnosis
    for row in rows:
        cells = [c.strip() for c in row.strip("│").split("│")]
        assert len(cells) >= 7 and all(CELL.match(c) for c in cells), row
    assert re.search(r"│ +tri \│ +\d+ │ +\d+ │ +\+\d+\.\d% │", out)


def test_a_narrow_terminal_wraps_a_cell_instead_of_cutting_it():
    table = Table(title="t")
    for name in ("scheme", "read reduction", "write reduction", "instructions per cycle"):
        table.add_column(name, justify="right")
    table.add_row("tri+fpc", "+17.4%", "+24.0%", "0.086912345")
    console = _Console(force_terminal=True, width=40, no_color=True)
    with console.capture() as capture:
        console.print(table)
    text = capture.get()
    assert "…" not in text
    cells = "".join(c for line in text.splitlines() for c in line.split("│")[1:2])  # the first column
    assert "tri+fpc" in cells.replace(" ", "")


def test_a_long_list_of_ranks_is_shortened_between_numbers():
    from trainsim.cli.run_cmd import _rank_ranges

    ranks = list(range(0, 2000, 2))
    text = _rank_ranges(ranks)
    assert len(text) <= 40 and text.endswith("more)")
    shown = [int(n) for n in re.findall(r"\d+", text.rsplit("...", 1)[0])]
    assert shown == ranks[: len(shown)] and f"({len(ranks) - len(shown)} more)" in text
    assert _rank_ranges([0, 1, 2, 5]) == "0-2, 5"
