"""`trainsim run`'s fast parser (cli/run_impl.py) against the typer command it stands in for:
the same options and defaults, the same keyword arguments for every line it reads, and every
line it does not read left to typer (which then gives click's help or error)."""

from __future__ import annotations

import pytest
import typer.main

from trainsim.cli import run_cmd, run_impl
from trainsim.cli.app import app
from trainsim.cli.astra_args import astra_argv
from trainsim.cli.main import _register_commands


def _run_click_command():
    _register_commands()
    return typer.main.get_command(app).commands["run"]


def test_the_fast_table_names_every_option_and_default_of_the_command():
    command = _run_click_command()
    spelled = {}
    defaults = {}
    for param in command.params:
        defaults[param.name] = param.default
        if param.param_type_name == "argument":
            continue
        for flag in param.opts:
            spelled[flag] = param.name
        for flag in param.secondary_opts:
            spelled[flag] = param.name
    assert {flag: name for flag, (name, _) in run_impl.OPTIONS.items()} == spelled
    assert defaults == run_impl.DEFAULTS


def _typer_kwargs(monkeypatch, args: list[str]) -> dict | None:
    """The keyword arguments the typer command passes to run_impl.run, or None on a usage error."""
    seen = []
    monkeypatch.setattr(run_cmd, "run", lambda **kwargs: seen.append(kwargs))
    try:
        typer.main.get_command(app)(args=["run", *args], prog_name="trainsim", standalone_mode=False)
    except Exception:  # click's usage errors: the fast parser must not have read the line
        return None
    return seen[0] if seen else None


READ = [
    ["p.yaml", "--workload", "w/ring"],
    ["p.yaml", "--workload=w/ring", "-q", "--json", "out.json", "--trace=t.json", "--expand"],
    ["--workload-configuration=w", "--system-configuration=s.json", "--network-configuration=n.yml",
     "--remote-memory-configuration", "m.json", "--comm-group-configuration=g.json"],
    ["p.yaml", "--workload", "w", "--backend", "flow", "--compat", "default", "--astra-output"],
    ["--no-astra-output", "p.yaml", "--workload", "w", "--quiet", "--force"],
    ["p.yaml", "--workload", "w", "--comm-scale", "0.5", "--compute-scale=2", "--injection-scale", "1e-3"],
    ["p.yaml", "--workload", "w", "--comm-scale=.5", "--num-queues-per-dim", "3", "--json", "-"],
    ["p.yaml", "--workload", "w", "--rendezvous-protocol"],
    ["p.yaml", "--workload", "w", "--rendezvous-protocol", "false", "--logging-folder", "logs"],
    ["p.yaml", "--workload", "w", "--logging-configuration=l.toml", "--num-queues-per-dim=0"],
    ["p.yaml", "--workload", "w", "--comm-scale", "-1.5", "--num-queues-per-dim", "-2"],
    ["p.yaml", "--workload", "--quiet"],  # click too takes the next word as the value
]
LEFT_TO_TYPER = [  # help, mistakes and spellings the fast parser does not read
    ["--help"],
    ["p.yaml", "--help"],
    ["p.yaml", "q.yaml"],
    ["p.yaml", "--workload"],
    ["p.yaml", "--nope", "1"],
    ["p.yaml", "--workload", "a", "--workload", "b"],
    ["p.yaml", "--comm-scale", "x"],
    ["p.yaml", "--comm-scale", "1_0"],
    ["p.yaml", "--comm-scale", "inf"],
    ["p.yaml", "--num-queues-per-dim", "1.0"],
    ["p.yaml", "--num-queues-per-dim", "007"],
    ["p.yaml", "--expand=true"],
    ["p.yaml", "-qq"],
    ["p.yaml", "--", "x"],
    ["p.yaml", "--workload", ""],
    [""],
]


@pytest.mark.parametrize("line", READ + LEFT_TO_TYPER, ids=lambda line: " ".join(line) or "empty")
def test_a_line_the_fast_parser_reads_gives_the_arguments_typer_gives(monkeypatch, capsys, line):
    args = astra_argv(line)
    fast = run_impl.fast_parse(args)
    if fast is None:
        return  # typer takes the line: nothing to compare
    assert fast == _typer_kwargs(monkeypatch, args)


def test_the_fast_parser_reads_the_ordinary_lines():
    """Not everything falls back: the lines users type are read without typer."""
    assert all(run_impl.fast_parse(astra_argv(line)) is not None for line in READ)
    assert all(run_impl.fast_parse(astra_argv(line)) is None for line in LEFT_TO_TYPER)


def _rich_text(title: str, headers: list[str], rows: list[list[str]]) -> str:
    """What run's summary printed through rich on a piped standard output (console.stdout_console)."""
    import io

    from rich.table import Table

    from trainsim.cli.console import PIPED_WIDTH, _Console

    buffer = io.StringIO()
    console = _Console(file=buffer, width=PIPED_WIDTH, no_color=True, highlight=False, emoji=False)
    table = Table(title=title)
    for name in headers:
        table.add_column(name, justify="right")
    for row in rows:
        table.add_row(*row)
    console.print(table)
    return buffer.getvalue()


def test_the_plain_summary_is_the_text_rich_prints():
    """run_impl.plain_table against rich on random tables: equal to the byte, or None."""
    import random

    rng = random.Random(18)
    alphabet = "0123456789 .,-()abcxyz:/"
    compared = 0
    for _ in range(400):
        def word(low: int, high: int) -> str:
            text = "".join(rng.choice(alphabet) for _ in range(rng.randint(low, high)))
            return text + rng.choice("[]μ\t") if rng.random() < 0.02 else text

        headers = [word(1, 14) for _ in range(rng.randint(1, 6))]
        rows = [[word(0, 30) for _ in headers] for _ in range(rng.randint(0, 5))]
        title = word(0, 90)
        plain = run_impl.plain_table(title, headers, rows)
        if plain is not None:
            assert plain + "\n" == _rich_text(title, headers, rows), (title, headers, rows)
            compared += 1
    assert compared > 50
    summary = [["0-7", "90.174 us", "49.000 us", "41.174 us", "41.174 us"]]
    title = "8 ranks, makespan 90.174 us"
    assert run_impl.plain_table(title, list(run_impl.SUMMARY_COLUMNS), summary) + "\n" == _rich_text(title, list(run_impl.SUMMARY_COLUMNS), summary)
