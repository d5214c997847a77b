"""The root typer app every command module registers on (kept apart from ``main`` so that
``python -m trainsim.cli.main`` and the console script share one app object)."""

from __future__ import annotations

import typer

from trainsim import __version__

app = typer.Typer(
    name="trainsim",
    help="Simulate and optimize distributed deep-learning training platforms.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"trainsim {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version."),
) -> None:
    """Simulate and optimize distributed deep-learning training platforms."""
